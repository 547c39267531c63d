"""gasnet-tune compare A.env B.env: the two settings measured side by side (runs alternate
A B B A A B ..., so drift touches both alike), with the verdict and its confidence."""
from __future__ import annotations

import argparse
import math
import os

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from gasnetrun import _native
from gasnetrun.envcheck import EnvFileError, read_env_file

from . import stats
from .common import budget_of, gasnet_env, make_runner, objective_of
from .errors import TuneError, UsageError
from .report import fmt, fmt_gain, value_of


def _settings(path: str) -> dict[str, str]:
    try:
        settings = read_env_file(path)
    except EnvFileError as err:
        raise UsageError(str(err)) from None
    out = {}
    for name, s in settings.items():
        if name.startswith("GASNET_"):
            if _native.find(name) is None:
                raise UsageError(f"{s.origin}: {name} is not a GASNet knob (see gasnetrun "
                                 "--knobs)")
            try:
                _native.check(name, s.value)
            except _native.ParseError as err:
                raise UsageError(f"{s.origin}: {err}") from None
        out[name] = s.value
    return out


def compare(args: argparse.Namespace, bin_dir: str, console: Console) -> int:
    a, b = _settings(args.a), _settings(args.b)
    objective = objective_of(args)
    budget = budget_of(args, 4)
    env = dict(os.environ)
    runner = make_runner(args, bin_dir, objective, env)
    samples: dict[str, list[float]] = {"A": [], "B": []}
    unit, better = "score", "lower"
    # ABBA blocks: each setting runs first as often as second.
    order = ["A", "B", "B", "A"]
    with Progress(TextColumn("compare"), BarColumn(), MofNCompleteColumn(), TextColumn("runs"),
                  TimeRemainingColumn(), console=console) as progress:
        task = progress.add_task("compare", total=budget.runs)
        i = 0
        start = progress.get_time()
        while True:
            elapsed = progress.get_time() - start
            if budget.runs is not None and i >= budget.runs:
                break
            if budget.seconds is not None and elapsed >= budget.seconds and i % 4 == 0:
                break
            which = order[i % 4]
            result = runner.run(a if which == "A" else b)
            if result.error is not None:
                raise TuneError(f"{args.a if which == 'A' else args.b}: the run failed: "
                                f"{result.error}")
            samples[which].append(objective.cost(result.records))
            if objective.single:
                unit, better = objective.unit_and_direction(result.records)
            progress.advance(task)
            i += 1
    ea, eb = stats.estimate(samples["A"], args.seed), stats.estimate(samples["B"], args.seed)
    diff = stats.difference(samples["A"], samples["B"], args.seed)
    gain = {"median": math.exp(-diff.median) - 1, "low": math.exp(-diff.high) - 1,
            "high": math.exp(-diff.low) - 1}
    for name, path, e in (("A", args.a, ea), ("B", args.b, eb)):
        lo, hi = sorted((value_of(e.low, better), value_of(e.high, better)))
        console.print(f"{name} ({path}): {fmt(value_of(e.median, better))} {unit} (95% interval "
                      f"{fmt(lo)} .. {fmt(hi)}, {e.n} runs)")
    console.print(f"objective: {args.objective} ({better} is better); on top of: "
                  + (" ".join(f"{k}={v}" for k, v in gasnet_env(env).items()) or "(nothing)"))
    console.print(f"gain of B over A: {fmt_gain(gain)}")
    if stats.clears(eb, ea):
        console.print("verdict: B is better (its interval clears A's)")
    elif stats.clears(ea, eb):
        console.print("verdict: A is better (its interval clears B's)")
    else:
        console.print("verdict: no significant difference")
    return 0
