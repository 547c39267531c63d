"""What sweep and compare share: the launch options, the objective, and the runner."""
from __future__ import annotations

import argparse
import os

from .budget import Budget, parse_budget
from .errors import UsageError
from .objectives import Objective, parse_objective
from .runner import Runner, bench_path


def add_launch_options(p: argparse.ArgumentParser, default_budget: str) -> None:
    p.add_argument("-n", "--np", dest="n", type=int, default=2, metavar="N",
                   help="ranks of every benchmark job (default 2)")
    p.add_argument("-H", "--hosts", default=None, help="hosts, as gasnetrun -H takes them")
    p.add_argument("--spawner", default=None, help="gasnetrun's -spawner (default: its choice)")
    p.add_argument("--conduit", default=None,
                   help="the benchmarks' conduit (default: udp with --hosts, else smp)")
    p.add_argument("--objective", default="am-latency",
                   help="am-latency | am-rate | put-bw | get-latency | barrier | "
                        "mix:NAME=W,... | record:BENCH[@SIZE] with --program (default am-latency)")
    p.add_argument("--program", default=None,
                   help="your own benchmark instead of the bundled ones: a GASNet program "
                        "taking --quick --json --only NAME and printing the bundled record "
                        "schema")
    p.add_argument("--budget", default=default_budget,
                   help=f"runs (200runs) or time (90s, 10m, 1h); default {default_budget}")
    p.add_argument("--seed", type=int, default=1, help="seed of every random choice (default 1)")


def conduit_of(args: argparse.Namespace) -> str:
    return args.conduit or ("udp" if args.hosts else "smp")


def objective_of(args: argparse.Namespace) -> Objective:
    return parse_objective(args.objective, args.program is not None)


def budget_of(args: argparse.Namespace, minimum_runs: int) -> Budget:
    return parse_budget(args.budget, minimum_runs)


def make_runner(args: argparse.Namespace, bin_dir: str, objective: Objective,
                base_env: dict[str, str]) -> Runner:
    if args.n < 1:
        raise UsageError(f"-n {args.n}: the number of ranks must be a positive integer")
    gasnetrun = os.path.join(bin_dir, "gasnetrun")
    conduit = conduit_of(args)
    programs: dict[str, str] = {}
    for name in objective.programs:
        if name:
            programs[name] = bench_path(bin_dir, conduit, name)
        else:
            path = os.path.abspath(args.program)
            if not os.access(path, os.X_OK) or os.path.isdir(path):
                raise UsageError(f"--program {args.program}: not an executable file")
            programs[name] = path
    launch = ["-n", str(args.n)]
    if args.hosts:
        launch += ["-H", args.hosts]
    if args.spawner:
        launch += [f"-spawner={args.spawner}"]
    return Runner(gasnetrun, programs, objective, launch, base_env)


def gasnet_env(env: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in sorted(env.items()) if k.startswith("GASNET_")}
