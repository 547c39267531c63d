"""gasnet-tune sweep: calibrate on the baseline, plan the budget, search, confirm, decide,
and write the report; resumable from DIR/state.json after Ctrl-C."""
from __future__ import annotations

import argparse
import datetime
import math
import os
from typing import Any

import numpy as np
from rich.console import Console
from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn,
                           TimeElapsedColumn, TimeRemainingColumn)

from . import report, stats
from .common import budget_of, conduit_of, gasnet_env, make_runner, objective_of
from .deadline import Deadline
from .errors import TuneError, UsageError
from .objectives import Objective
from .runner import Runner
from .search import BASELINE, CALIBRATION, Plan, Search, make_plan
from .space import Space, file_space, table_space
from .state import SavedRun, State, open_state

MIN_RUNS = 6
# No recommendation from fewer runs than this on either side (the best point, the baseline):
# 6 is the fewest samples for which a distribution-free 95% interval of a median exists
# (the range of n samples holds the median with probability 1 - 2 / 2**n: 97% for 6, 94% for 5).
MIN_SIDE = 6
# A failed baseline run is tried again, up to this many runs in all, each with twice the
# time of the one before: on a loaded machine one run can exceed the run timeout (20 times
# the calibration runs' time) by bad luck, and that alone must not end a sweep. A baseline
# that fails every time ends the sweep: without it there is nothing to compare with.
BASELINE_ATTEMPTS = 3


class OutOfTime(Exception):
    """The deadline leaves no room for the next run: the sweep ends with what it has."""


class BaselineFailed(Exception):
    """The baseline failed BASELINE_ATTEMPTS runs in a row (or the deadline came before a
    retry could run): the sweep ends with what it has; the report says why."""


def _space(args: argparse.Namespace, conduit: str, env: dict[str, str]) -> Space:
    if args.knobs is not None and args.space is not None:
        raise UsageError("--knobs and --space exclude each other: give one")
    if args.space is not None:
        return file_space(args.space, conduit, env)
    names = None
    if args.knobs is not None:
        names = [n.strip() for n in args.knobs.split(",")]
        if not all(names):
            raise UsageError(f"--knobs {args.knobs!r}: expected K1,K2,... (knob names)")
    return table_space(conduit, names, env)


class Measurer:
    """Runs a point once, or replays the saved run the search asks for again on resume. With
    a time budget, starts a run only when it should end before the deadline, and re-plans
    the total from the measured run times after every run (saved or new alike, so that a
    resumed sweep re-plans as the first one did)."""

    def __init__(self, state: State, space: Space, runner: Runner, objective: Objective,
                 progress: Progress, task: Any, deadline: Deadline | None) -> None:
        self.state, self.space, self.runner, self.objective = state, space, runner, objective
        self.progress, self.task, self.deadline = progress, task, deadline
        self.plan: Plan | None = None  # set after the calibration
        self.pos = 0
        self.cut = False  # the deadline ended the sweep

    def __call__(self, pid: str) -> float:
        if self.pos < len(self.state.runs):
            saved = self.state.runs[self.pos]
            if saved.point != pid:
                raise TuneError(f"{self.state.path}: run {self.pos} was of {saved.point}, the "
                                f"search now asks for {pid}: the file does not belong to this "
                                "sweep (use --restart)")
            self.pos += 1
            self.progress.advance(self.task)
            self.replan()
            return math.inf if saved.cost is None else saved.cost
        if pid not in self.state.points:
            self.state.points[pid] = self.space.env(self.space.point_of(pid))
        run_index = sum(1 for r in self.state.runs if r.point == pid)
        # A failed point is a result (it is never recommended); a failed baseline is retried.
        attempts = BASELINE_ATTEMPTS if pid == BASELINE else 1
        for attempt in range(attempts):
            limit = self.runner.timeout * 2 ** attempt
            started, expected, timeout = self._slot(attempt, limit)
            result = self.runner.run(self.state.points[pid], timeout)
            if result.timed_out and timeout < limit:
                if not self.state.runs:  # no baseline at all: say so, not "out of time"
                    raise BaselineFailed(f"the deadline came during its run {attempt + 1}")
                self.cut = True  # stopped at the deadline: says nothing about the point
                raise OutOfTime()
            cost: float | None = None
            if result.error is None:
                try:
                    cost = self.objective.cost(result.records)
                except TuneError as err:  # no usable record: a failed run
                    result.error = str(err)
            if result.error is None and cost is not None:
                if not self.state.meta and self.objective.single:
                    unit, better = self.objective.unit_and_direction(result.records)
                    self.state.meta = {"unit": unit, "better": better}
                break
            if pid != BASELINE:
                break
            self._baseline_failed(run_index, result.records, result.error or "", started,
                                  result.seconds)
            if attempt + 1 == attempts:
                raise BaselineFailed(f"it failed {attempts} runs in a row, the last: "
                                     f"{result.error}")
        self.state.add_records(pid, run_index, result.records, result.error)
        self.state.runs.append(SavedRun(pid, cost, result.seconds, result.error, started,
                                        expected))
        if self.deadline is not None:
            self.state.elapsed = self.deadline.now()
        self.state.save()
        self.pos += 1
        self.progress.advance(self.task)
        self.replan()
        return math.inf if cost is None else cost

    def _slot(self, attempt: int, limit: float) -> tuple[float | None, float | None, float]:
        """When a run starts on the sweep's clock, how long it is expected to take (time
        budgets only) and its timeout; raises OutOfTime (or BaselineFailed) when the deadline
        leaves no room for it."""
        if self.deadline is None:
            return None, None, limit
        started = self.deadline.now()
        expected = self.deadline.expected(self.state.runs) if self.state.runs else 0.0
        # The calibration's first tries always run: they time a run, and the report needs a
        # baseline. Any other run, a retry of the baseline included, must fit the deadline.
        if len(self.state.runs) < CALIBRATION and attempt == 0:
            return started, expected, limit
        if not self.deadline.fits(started, expected):
            if not self.state.runs:
                raise BaselineFailed("the budget left no time to try it again")
            self.cut = True
            raise OutOfTime()
        return started, expected, min(limit, self.deadline.timeout(started, expected))

    def _baseline_failed(self, run_index: int, records: list[dict[str, Any]], error: str,
                         started: float | None, seconds: float) -> None:
        """Keeps a failed baseline run (its records, and in state.json why it failed) out of
        the measured runs: the search and a resume see only the runs that measured it."""
        self.state.add_records(BASELINE, run_index, records, error)
        self.state.baseline_failures.append({"after_run": len(self.state.runs), "error": error,
                                             "started": started, "seconds": seconds})
        if self.deadline is not None:
            self.state.elapsed = self.deadline.now()
        self.state.save()

    def replan(self) -> None:
        if self.deadline is None or self.plan is None:
            return
        done = self.pos
        self.plan.replan(done + self.deadline.runs_left(self.state.runs[:done]))
        self.progress.update(self.task, total=max(self.plan.total, done))


def _plan(args: argparse.Namespace, space: Space, runs: int) -> Plan:
    plan = make_plan(args.method, space, runs)
    if isinstance(plan, str):
        raise UsageError(f"--budget {args.budget} ({runs} runs): {plan}")
    return plan


def sweep(args: argparse.Namespace, bin_dir: str, console: Console) -> int:
    env = dict(os.environ)
    conduit = conduit_of(args)
    objective = objective_of(args)
    space = _space(args, conduit, env)
    budget = budget_of(args, MIN_RUNS)
    if budget.runs is not None:
        _plan(args, space, budget.runs)  # refuse a budget that cannot fit before any run
    runner = make_runner(args, bin_dir, objective, env)
    base_env = gasnet_env(env)
    if (conduit != "smp" and not args.hosts and base_env.get("GASNET_SUPERNODE_MAXSIZE") != "1"
            and args.program is None):
        console.print(f"[yellow]note:[/] all {args.n} ranks share one host, so they talk "
                      "through shared memory and the network knobs change nothing; set "
                      "GASNET_SUPERNODE_MAXSIZE=1 to tune the network path on one host")
    config = {"conduit": conduit, "ranks": args.n, "hosts": args.hosts,
              "spawner": args.spawner, "objective": args.objective,
              "program": os.path.abspath(args.program) if args.program else None,
              "space": space.describe(), "budget": str(budget), "seed": args.seed,
              "method": args.method, "base_env": base_env}
    state, resumed = open_state(args.out, config, args.restart)
    state.points[BASELINE] = {}
    if resumed:
        console.print(f"resuming: {len(state.runs)} runs of {state.path} are kept")
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
               TextColumn("runs"), TimeElapsedColumn(), TextColumn("ETA"),
               TimeRemainingColumn())
    search = Search(lambda pid: 0.0)
    deadline = None if budget.seconds is None else Deadline(budget.seconds, state.elapsed)
    plan: Plan | None = None
    baseline_failure: str | None = None  # why the sweep ended without its baseline
    try:
        with Progress(*columns, console=console, transient=False) as progress:
            task = progress.add_task("calibrating", total=state.plan_runs)
            measurer = Measurer(state, space, runner, objective, progress, task, deadline)
            search.measure = measurer
            try:
                for _ in range(CALIBRATION):
                    search.one(BASELINE)
                seconds = [r.seconds for r in state.runs[:CALIBRATION]]
                runner.timeout = max(30.0, 20 * max(seconds))
                if state.plan_runs is None:
                    # 10% margin: the baseline's runs time the average run only roughly.
                    per_run = 1.1 * sum(seconds) / len(seconds)
                    state.plan_runs = budget.runs if budget.runs is not None else max(
                        MIN_RUNS, int((budget.seconds or 0) / per_run))
                    state.save()
                plan = _plan(args, space, state.plan_runs)
                measurer.plan = plan
                measurer.replan()  # the calibration's own time counts against the budget
                progress.update(task, total=plan.total, description=plan.method)
                best = search.run(plan, space, np.random.default_rng(args.seed))
            except OutOfTime:
                best = search.leader()
            except BaselineFailed as err:
                baseline_failure = str(err)
                best = search.leader()
    except KeyboardInterrupt:
        if deadline is not None:
            state.elapsed = deadline.now()
            state.save()
        console.print(f"interrupted: {len(state.runs)} runs are kept in {state.path}; run the "
                      "same command again to resume")
        return 130
    state.finished = True
    if deadline is not None:
        state.elapsed = deadline.now()
    state.save()
    doc = _document(args, state, space, objective, search, best, plan, conduit, deadline,
                    measurer.cut, baseline_failure)
    from . import plots  # imported here: matplotlib takes a third of a second to load
    doc["plots"] = plots.write_plots(state.out_dir, doc)
    report.write(state.out_dir, doc)
    report.show(doc, console)
    if not search.samples.get(BASELINE):
        # No figure to compare with: the report says why, and a script must notice.
        console.print(f"[red]gasnet-tune: the baseline could not be measured ({baseline_failure})"
                      f"; nothing was tuned. Run the same command again to retry.[/]")
        return 1
    return 0


def _estimate(samples: list[float], seed: int) -> dict[str, Any]:
    e = stats.estimate(samples, seed)
    return {"median": e.median, "low": e.low, "high": e.high, "n": len(samples)}


def _document(args: argparse.Namespace, state: State, space: Space, objective: Objective,
              search: Search, best: str, plan: Plan | None, conduit: str,
              deadline: Deadline | None, cut: bool,
              baseline_failure: str | None) -> dict[str, Any]:
    seed = args.seed
    # A baseline that failed every run has no samples (and then no plan was made).
    base_samples, best_samples = search.samples.get(BASELINE, []), search.samples.get(best, [])
    base = stats.estimate(base_samples, seed)
    top = stats.estimate(best_samples, seed)
    diff = stats.difference(base_samples, best_samples, seed)
    # The baseline is the best point when the deadline came before any other was measured.
    best_env = {d.name: d.baseline for d in space.dims} if best == BASELINE else state.points[best]
    changed = {d.name: best_env[d.name] for d in space.dims if best_env[d.name] != d.baseline}
    # A point that failed even once is never recommended, however its other runs went; nor
    # is one measured too few times, or against too few runs of the baseline, for a 95%
    # interval of each median to mean anything.
    enough = min(top.n, base.n) >= MIN_SIDE
    significant = (bool(changed) and math.isfinite(search.median(best)) and enough
                   and stats.clears(top, base))
    points = []
    for pid, samples in search.samples.items():
        points.append({"id": pid, "env": state.points[pid],
                       "failed": any(not math.isfinite(c) for c in samples),
                       **_estimate(samples, seed)})
    points.sort(key=lambda p: (p["failed"], p["median"]))
    m = objective.metrics[0]
    if objective.single:
        unit, better = state.meta.get("unit", ""), state.meta.get("better", "lower")
        size = f" of {m.size} bytes" if m.size else ""
        detail = f"{m.bench}{size}, {unit}, {better} is better"
    else:
        unit, better = "score", "lower"
        detail = ("weighted geometric mean of " + ", ".join(
            f"{x.bench} (weight {x.weight:g})" for x in objective.metrics)
            + "; the score is lower when the figures are better")
    # Why a changed best point is not recommended although it looks better, when the budget
    # is the reason: the report says so (and how many runs would do).
    too_few = None
    if baseline_failure is not None:
        pass  # the report says why the sweep ended instead
    elif best == BASELINE:
        too_few = {"best_runs": 0, "baseline_runs": base.n, "minimum": MIN_SIDE}
    elif (changed and not enough and math.isfinite(search.median(best))
            and top.median < base.median):
        too_few = {"best_runs": top.n, "baseline_runs": base.n, "minimum": MIN_SIDE}
    timing = None
    if deadline is not None:
        first = plan.first_total if plan else state.plan_runs or len(state.runs)
        timing = {"budget_seconds": deadline.seconds, "ended": state.elapsed,
                  "first_plan": first, "last_plan": plan.total if plan else first,
                  "stopped_at_deadline": cut}
    # Why the sweep ended early for want of a baseline, and every failed baseline run (the
    # ones a retry made good too): a report must show what its baseline went through.
    baseline_failed = None if baseline_failure is None else {
        "reason": baseline_failure, "measured_runs": base.n, "after_runs": len(state.runs)}
    method = (plan.describe() if plan else
              "none (the sweep ended in its calibration, before it had a plan)")
    return {
        "tool": "gasnet-tune", "date": datetime.datetime.now().astimezone().isoformat(
            timespec="seconds"),
        "out_dir": state.out_dir, "conduit": conduit, "ranks": args.n, "hosts": args.hosts,
        "spawner": args.spawner, "objective": args.objective, "objective_detail": detail,
        "unit": unit, "better": better, "method": method, "budget": args.budget,
        "runs": len(state.runs), "seed": seed, "base_env": gasnet_env(dict(os.environ)),
        "knobs": [{"name": d.name, "baseline": d.baseline, "values": list(d.values),
                   "best": best_env[d.name]} for d in space.dims],
        "baseline": _estimate(base_samples, seed),
        "best": {**_estimate(best_samples, seed), "id": best},
        "gain": {"median": math.exp(-diff.median) - 1 if math.isfinite(diff.median) else math.nan,
                 "low": math.exp(-diff.high) - 1, "high": math.exp(-diff.low) - 1},
        "significant": significant, "too_few_runs": too_few, "time": timing,
        "baseline_failed": baseline_failed,
        "baseline_retries": [dict(f) for f in state.baseline_failures],
        "recommended": changed if significant else {},
        "best_point": best_env, "points": points,
        "history": [[r.point, r.cost] for r in state.runs],
        "timeline": [{"point": r.point, "started": r.started, "seconds": r.seconds,
                      "expected": r.expected} for r in state.runs],
    }
