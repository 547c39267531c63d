#!/usr/bin/python3
"""trace_cost.py: what the tracing and statistics hooks cost a job that does not use them.

Runs the bundled am_bench and rma_bench (--quick --json) of two builds in turn, repeat after
repeat (so both see the same machine state): --base, a build without the instrumentation
(e.g. `git archive <commit before it> | tar -x -C /tmp/base && scons <the bench programs>`), and --new, this
tree's build, with no tracing knob set. For every result it prints the median over the
repeats of each build and the ratio new/base as a cost (positive: the new build is slower),
then the median cost over all results of each benchmark.

usage: trace_cost.py --base DIR --new DIR [--conduit smp] [--repeats N] [--json]
       [--env NAME=VALUE ...] [--benches am_bench,rma_bench]"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

BENCHES = ("am_bench", "rma_bench")


def run(launcher: Path, build: Path, conduit: str, bench: str,
        env: dict[str, str]) -> dict[tuple, dict]:
    cmd = [str(launcher), "-n", "2",
           str(build / conduit / "bench" / f"{bench}-seq"), "--quick", "--json"]
    clean = {k: v for k, v in os.environ.items() if not k.startswith("GASNET")}
    out = subprocess.run(cmd, env={**clean, **env}, capture_output=True, text=True,
                         check=True, timeout=600).stdout
    results = {}
    for line in out.splitlines():
        if line.startswith("{"):
            r = json.loads(line)
            results[(bench, r["bench"], r.get("size", 0))] = r
    return results


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--base", type=Path, required=True)
    p.add_argument("--new", type=Path, required=True)
    p.add_argument("--conduit", default="smp")
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--json", action="store_true")
    p.add_argument("--env", action="append", default=[], metavar="NAME=VALUE")
    p.add_argument("--benches", default=",".join(BENCHES), help="comma-separated")
    p.add_argument("--launcher", type=Path,
                   help="the gasnetrun both run under (default: --new's)")
    args = p.parse_args()
    env = dict(e.split("=", 1) for e in args.env)
    samples: dict[str, dict[tuple, list[float]]] = {"base": {}, "new": {}}
    better: dict[tuple, str] = {}
    # One launcher for both: only the programs differ.
    launcher = args.launcher or args.new / "bin" / "gasnetrun"
    for repeat in range(args.repeats):
        for bench in args.benches.split(","):
            # Each goes first every other repeat, so that neither gains from the order.
            pair = (("base", args.base), ("new", args.new))
            for name, build in (pair if repeat % 2 == 0 else pair[::-1]):
                for key, r in run(launcher, build, args.conduit, bench, env).items():
                    if r.get("unit") == "x":
                        continue  # ratios of two results, already in the table
                    samples[name].setdefault(key, []).append(float(r["median"]))
                    better[key] = r.get("better", "lower")
    rows = []
    for key in samples["base"]:
        if key not in samples["new"]:
            continue
        b, n = statistics.median(samples["base"][key]), statistics.median(samples["new"][key])
        if b <= 0 or n <= 0:
            continue
        cost = n / b - 1 if better[key] == "lower" else b / n - 1
        rows.append({"bench": key[0], "result": key[1], "size": key[2], "base": b, "new": n,
                     "cost": cost})
    for r in rows:
        if args.json:
            print(json.dumps(r))
        else:
            print(f"{r['bench']:10} {r['result']:28} {r['size']:>8} base {r['base']:12.5g} "
                  f"new {r['new']:12.5g} cost {100 * r['cost']:+6.2f}%")
    for bench in BENCHES:
        costs = [r["cost"] for r in rows if r["bench"] == bench]
        if costs:
            summary = {"bench": bench, "results": len(costs),
                       "median_cost": statistics.median(costs)}
            print(json.dumps(summary) if args.json else
                  f"{bench}: median cost over {len(costs)} results "
                  f"{100 * summary['median_cost']:+.2f}%")
    return 0


if __name__ == "__main__":
    sys.exit(main())
