"""The search: which point to measure next, and which one wins.

- grid (auto up to 2 knobs): every point and the baseline once per round, each round in a new
  seeded order, as many rounds as the budget allows.
- coordinate (auto beyond 2 knobs): sequential coordinate search guided by a surrogate.
  From the baseline's values, one knob at a time takes each of its values with the others at
  the incumbent (the best median so far), and the incumbent moves as soon as a point beats it;
  when every knob has had its turn, the next pass starts. An additive surrogate (each knob
  value's effect on the log figure: a ridge fit by numpy least squares, refitted before every
  knob's turn) orders the knobs by the spread of their effects and each knob's values by
  predicted effect (a knob not yet varied: its extreme values first), so a budget that ends
  mid-pass has tried the most promising ones. Why:
  coordinate steps from a sensible start keep what the other knobs need (an interaction such
  as coalescing and credits is met in the incumbent's context), and an additive fit needs
  only as many runs as there are knob values (a Gaussian process, e.g. scikit-learn's, needs
  more to learn its length scales than these budgets give). Then the 3 best points get a
  second run and the best median wins.
- halving: successive halving from a balanced sample (all candidates once, the better half by
  median twice, and so on); auto uses it when the budget is too small for a coordinate pass.
- Then confirmation: the best point and the baseline alternate for the rest of the budget.

Repeats are always interleaved (never all of one point back to back), so a slow drift of the
machine touches every point alike. Every choice is a function of the seed and of the
measurements, so a resumed sweep that replays its saved runs asks for the same runs again."""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from .space import Space

BASELINE = "baseline"
CALIBRATION = 2   # baseline runs before anything else: they time a run for a duration budget
GRID_LIMIT = 5000  # a grid beyond this many points is not listed (use model or halving)
FINALISTS = 3
RIDGE = 0.1


def confirm_share(runs: int) -> int:
    return max(2, runs // 5)


def halving_cost(n0: int) -> int:
    """Runs successive halving from n0 candidates takes: rung k measures its candidates up to
    2**k runs each, until one is left (the confirmation then measures it further)."""
    runs, n, r, prev = 0, n0, 1, 0
    while n > 1:
        runs += n * (r - prev)
        n, prev, r = math.ceil(n / 2), r, r * 2
    return runs if n0 > 1 else 1


@dataclass
class Plan:
    method: str       # "grid", "coordinate" or "halving"
    total: int        # runs in all, calibration and confirmation included
    rounds: int = 0   # grid: rounds over every point
    sample: int = 0   # halving: the sample's size
    points: int = 0   # grid: its points
    first_total: int = 0  # the total first planned (a time budget's plan changes as it goes)

    def __post_init__(self) -> None:
        self.first_total = self.first_total or self.total

    def replan(self, total: int) -> None:
        """A new total (a time budget, re-planned from the measured run times): the grid's
        rounds follow it; the search and the confirmation read the total as they go."""
        self.total = total
        if self.method == "grid":
            left = total - CALIBRATION - confirm_share(total)
            self.rounds = max(1, left // (self.points + 1))

    @property
    def search_end(self) -> int:
        """coordinate: runs (calibration included) after which the finalists are measured."""
        return self.total - confirm_share(self.total) - FINALISTS

    def describe(self) -> str:
        if self.method == "grid":
            return f"grid, {self.rounds} rounds"
        if self.method == "coordinate":
            return f"surrogate-guided coordinate search, {FINALISTS} finalists"
        return f"successive halving from {self.sample} sampled points"


def make_plan(method: str, space: Space, runs: int) -> Plan | str:
    """The plan for a budget of runs (calibration included), or why none fits."""
    bound = space.size_bound()
    left = runs - CALIBRATION - confirm_share(runs)
    if method == "grid" or (method == "auto" and len(space.dims) <= 2 and bound <= GRID_LIMIT):
        if bound > GRID_LIMIT:
            return f"a grid of {bound} points is too large to list (use --method coordinate)"
        g = len(space.points())
        rounds = left // (g + 1) if left > 0 else 0
        if method == "grid" and rounds < 1:
            need = g + 1 + CALIBRATION
            return (f"a grid of {g} points and the baseline needs at least "
                    f"{need + confirm_share(need)} runs")
        if rounds >= (1 if method == "grid" else 2):  # auto wants 2 rounds for an interval
            return Plan("grid", runs, rounds=rounds, points=g)
    # One knob's whole turn, plus the start point and the finalists.
    widest = max(len(d.values) for d in space.dims)
    if method in ("coordinate", "auto") and left >= widest + FINALISTS:
        return Plan("coordinate", runs)
    if method == "coordinate":
        return (f"the coordinate search needs at least {widest + FINALISTS} runs after "
                "calibration and confirmation (the widest knob's values, and the finalists)")
    n0 = 0
    for n in range(2, min(bound, 4096) + 1):
        if halving_cost(n) > left:
            break
        n0 = n
    if bound < 2:
        return "the space has a single point: nothing to search (list more values)"
    if n0 < 2:
        return f"the search needs at least {CALIBRATION + 2 + confirm_share(6)} runs"
    return Plan("halving", runs, sample=n0)


def balanced_sample(space: Space, n: int, rng: np.random.Generator) -> list[str]:
    """n distinct allowed points in which every knob's values appear about equally often (a
    Latin hypercube over discrete levels: each knob's column is its values, repeated and
    shuffled)."""
    n = min(n, space.size_bound())
    columns = []
    for d in space.dims:
        reps = -(-n // len(d.values))  # whole shuffled passes over the values, so the first
        columns.append(np.concatenate(  # len(values) rows hold each value once
            [rng.permutation(len(d.values)) for _ in range(reps)])[:n])
    chosen: list[str] = []
    for row in zip(*columns):
        point = tuple(d.values[int(i)] for d, i in zip(space.dims, row))
        for _ in range(64):  # a clash or a constraint: move one knob at random
            if space.allowed(point) and space.pid(point) not in chosen:
                chosen.append(space.pid(point))
                break
            k = int(rng.integers(len(space.dims)))
            values = list(point)
            values[k] = space.dims[k].values[int(rng.integers(len(space.dims[k].values)))]
            point = tuple(values)
    if len(chosen) < n:  # constraints left few points: take them in the grid's order
        for point in itertools.product(*(d.values for d in space.dims)):
            if space.allowed(point) and space.pid(point) not in chosen:
                chosen.append(space.pid(point))
                if len(chosen) == n:
                    break
    return chosen


class Additive:
    """Ridge fit of cost = mean + sum over knobs of effect[knob][value] on one-hot values."""

    def __init__(self, space: Space, samples: dict[str, list[float]]) -> None:
        self.space = space
        self.offsets = list(itertools.accumulate([0] + [len(d.values) for d in space.dims]))
        rows, ys = [], []
        finite = [c for pid, cs in samples.items() if pid != BASELINE for c in cs
                  if math.isfinite(c)]
        penalty = (max(finite) if finite else 0.0) + math.log(4)  # a failure: 4x the worst
        for pid, costs in samples.items():
            if pid == BASELINE:
                continue
            x = self.features(space.point_of(pid))
            for c in costs:
                rows.append(x)
                ys.append(c if math.isfinite(c) else penalty)
        X, y = np.array(rows), np.array(ys)
        self.mean = float(y.mean())
        width = X.shape[1]
        A = np.vstack([X, math.sqrt(RIDGE) * np.eye(width)])
        b = np.concatenate([y - self.mean, np.zeros(width)])
        self.w = np.linalg.lstsq(A, b, rcond=None)[0]

    def features(self, point: tuple[str, ...]) -> np.ndarray:
        x = np.zeros(self.offsets[-1])
        for k, (d, v) in enumerate(zip(self.space.dims, point)):
            x[self.offsets[k] + d.values.index(v)] = 1.0
        return x

    def predict(self, point: tuple[str, ...]) -> float:
        return self.mean + float(self.features(point) @ self.w)

    def effects(self, k: int) -> np.ndarray:
        return self.w[self.offsets[k]:self.offsets[k + 1]]


@dataclass
class Search:
    measure: Callable[[str], float]         # runs (or replays) one run of a point: its cost
    samples: dict[str, list[float]] = field(default_factory=dict)
    history: list[tuple[str, float]] = field(default_factory=list)  # (point, cost) in order

    def one(self, pid: str) -> None:
        cost = self.measure(pid)
        self.samples.setdefault(pid, []).append(cost)
        self.history.append((pid, cost))

    def median(self, pid: str) -> float:
        xs = [c for c in self.samples.get(pid, []) if math.isfinite(c)]
        # A point that failed even once is never preferred to one that never failed.
        if not xs or len(xs) < len(self.samples.get(pid, [])):
            return math.inf
        return float(np.median(xs))

    def ranked(self, pids: list[str]) -> list[str]:
        return sorted(pids, key=lambda p: (self.median(p), pids.index(p)))

    def each_once(self, members: list[str], rng: np.random.Generator) -> None:
        for i in rng.permutation(len(members)):
            self.one(members[int(i)])

    def rounds_to(self, members: list[str], target: int, rng: np.random.Generator) -> None:
        """Brings every member to target samples, one run each per round, each round in a new
        order."""
        while True:
            behind = [m for m in members if len(self.samples.get(m, [])) < target]
            if not behind:
                return
            self.each_once(behind, rng)

    def run(self, plan: Plan, space: Space, rng: np.random.Generator) -> str:
        """Runs the plan after calibration, then the confirmation; returns the best point."""
        if plan.method == "grid":
            pids = [space.pid(p) for p in space.points()]
            done = 0
            while done < plan.rounds:  # the rounds may change as a time budget re-plans
                self.each_once([BASELINE, *pids], rng)
                done += 1
            best = self.ranked(pids)[0]
        elif plan.method == "coordinate":
            best = self.coordinate(plan, space, rng)
        else:
            candidates = balanced_sample(space, plan.sample, rng)
            r = 1
            while len(candidates) > 1:
                self.rounds_to(candidates, r, rng)
                candidates = self.ranked(candidates)[:math.ceil(len(candidates) / 2)]
                r *= 2
            if not self.samples.get(candidates[0]):
                self.one(candidates[0])
            best = candidates[0]
        if math.isfinite(self.median(best)):  # a failed best is not worth confirming
            i = 0
            while len(self.history) < plan.total:
                self.one(best if i % 2 == 0 else BASELINE)
                i += 1
        return best

    def leader(self) -> str:
        """The best point measured so far (the baseline when nothing else was): the answer of
        a search the deadline cut short."""
        measured = [p for p in self.samples if p != BASELINE]
        return self.ranked(measured)[0] if measured else BASELINE

    def start_point(self, space: Space, rng: np.random.Generator) -> tuple[str, ...]:
        """The baseline's values where the space has them (else the middle value); when the
        constraints forbid that, the allowed point of a balanced sample closest to it."""
        start = tuple(d.baseline if d.baseline in d.values else d.values[len(d.values) // 2]
                      for d in space.dims)
        if space.allowed(start):
            return start
        options = [space.point_of(p) for p in balanced_sample(space, 32, rng)]
        return max(options, key=lambda p: sum(a == b for a, b in zip(p, start)))

    def value_order(self, space: Space, k: int, current: str, model: Additive) -> list[int]:
        """The order knob k's values are tried in: by predicted effect once the data has seen
        it vary; before that, farthest from the current value first, alternating sides (the
        ends of a range tell the surrogate most, and a budget ending mid-turn has still tried
        both directions)."""
        d = space.dims[k]
        seen = {space.point_of(p)[k] for p in self.samples if p != BASELINE}
        if len(seen) > 1:
            return [int(j) for j in np.argsort(model.effects(k), kind="stable")]
        at = d.values.index(current)
        return sorted(range(len(d.values)), key=lambda j: (-abs(j - at), j > at))

    def coordinate(self, plan: Plan, space: Space, rng: np.random.Generator) -> str:
        incumbent = space.pid(self.start_point(space, rng))
        self.one(incumbent)
        visited = 0  # knob turns taken
        while len(self.history) < plan.search_end:
            model = Additive(space, self.samples)
            spreads = [float(np.ptp(model.effects(k))) for k in range(len(space.dims))]
            # A pass visits every knob once; within it, the knobs the surrogate finds most
            # influential first (the first pass, with no data, in a seeded order).
            pass_order = ([int(i) for i in rng.permutation(len(space.dims))] if visited == 0
                          else sorted(range(len(space.dims)), key=lambda k: -spreads[k]))
            progressed = False
            for k in pass_order:
                d = space.dims[k]
                base = list(space.point_of(incumbent))
                tries = []
                for j in self.value_order(space, k, base[k], model):
                    point = tuple(base[:k] + [d.values[int(j)]] + base[k + 1:])
                    if space.allowed(point) and space.pid(point) not in self.samples:
                        tries.append(space.pid(point))
                for pid in tries:
                    if len(self.history) >= plan.search_end:
                        break
                    self.one(pid)
                    progressed = True
                measured = [p for p in self.samples if p != BASELINE]
                incumbent = self.ranked(measured)[0]
                visited += 1
                if len(self.history) >= plan.search_end:
                    break
                model = Additive(space, self.samples)
            if not progressed:  # every neighbour measured: firm up the leaders instead
                leaders = self.ranked([p for p in self.samples if p != BASELINE])[:FINALISTS]
                self.one(min(leaders, key=lambda p: (len(self.samples[p]), leaders.index(p))))
        measured = [p for p in self.samples if p != BASELINE]
        finalists = self.ranked(measured)[:FINALISTS]
        self.rounds_to(finalists, 2, rng)
        return self.ranked(finalists)[0]
