#!/usr/bin/python3
"""launch_bench.py: start-to-exit time of a hello job across hosts, through gasnetrun's ssh
spawner and, in the same run and over the same ssh configuration, through Open MPI's mpirun.

It builds its own fake hosts (network namespaces with sshd, as tests/netcluster.py does; needs
root), runs each configuration in turn, repeat after repeat (so both see the same machine
state), and prints one record per result like the C benchmarks (--json: one JSON object per
line). Results:

  gasnetrun_4x4      gasnetrun -n 16 on 4 hosts (examples/hello_ring on udp)
  mpirun_4x4         mpirun -n 16 on the same 4 hosts (tests/perf/mpi_hello.c)
  ratio_4x4          gasnetrun_4x4 / mpirun_4x4 (medians of the same run)
  gasnetrun_16_deg2  gasnetrun -n 16 on 16 hosts, agent tree of out-degree 2
  gasnetrun_16_deg32 the same with out-degree 32 (gasnetrun starts every agent itself)

usage: launch_bench.py [--json] [--quick] [--repeats N] [--only NAME[,NAME...]]"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))
from netcluster import Cluster, why_not_available  # noqa: E402

RESULTS = ["gasnetrun_4x4", "mpirun_4x4", "ratio_4x4", "gasnetrun_16_deg2",
           "gasnetrun_16_deg32"]


def timed(argv: list[str], env: dict[str, str]) -> float:
    start = time.monotonic()
    proc = subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                          stdin=subprocess.DEVNULL, timeout=300)
    seconds = time.monotonic() - start
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(argv[-6:])} failed ({proc.returncode}): "
                           f"{proc.stderr.decode(errors='replace')[-800:]}")
    return seconds


def record(name: str, ranks: int, hosts: int, unit: str, samples: list[float],
           as_json: bool) -> None:
    median = statistics.median(samples)
    if as_json:
        print(json.dumps({"bench": name, "path": "ssh", "conduit": "udp", "ranks": ranks,
                          "hosts": hosts, "size": 0, "unit": unit, "better": "lower",
                          "median": median, "min": min(samples), "max": max(samples),
                          "n": len(samples), "iters": 1, "env": {}}))
    else:
        print(f"{name:<20} {ranks:>5} ranks {hosts:>3} hosts {median:10.3f} {min(samples):10.3f} "
              f"{max(samples):10.3f}  {unit}")
    sys.stdout.flush()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--quick", action="store_true", help="3 repeats instead of 7")
    parser.add_argument("--repeats", type=int, default=None)
    parser.add_argument("--only", default="")
    args = parser.parse_args()
    repeats = args.repeats if args.repeats is not None else (3 if args.quick else 7)
    only = [n for n in args.only.split(",") if n] or RESULTS
    unknown = [n for n in only if n not in RESULTS]
    if unknown or repeats < 1:
        print(f"launch_bench.py: --only {','.join(unknown)}: no such result (accepted: "
              f"{', '.join(RESULTS)})" if unknown else
              f"launch_bench.py: --repeats {repeats}: must be at least 1", file=sys.stderr)
        return 2
    why = why_not_available()
    gasnetrun = ROOT / "build" / "bin" / "gasnetrun"
    hello = ROOT / "build" / "udp" / "examples" / "hello_ring-seq"
    if why or not hello.exists():
        print(f"launch_bench.py: cannot run: {why or f'{hello} is not built (run: scons)'}",
              file=sys.stderr)
        return 2
    want_mpi = any(n in only for n in ("mpirun_4x4", "ratio_4x4"))
    if want_mpi and not (shutil.which("mpicc") and shutil.which("mpirun")):
        print("launch_bench.py: mpirun_4x4 needs Open MPI (apt-get install openmpi-bin "
              "libopenmpi-dev), or leave it out with --only", file=sys.stderr)
        return 2

    # Interrupted or terminated, it still takes its hosts down (the finally below).
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    with tempfile.TemporaryDirectory(prefix="launch-bench-") as tmp:
        cluster = Cluster(Path(tmp) / "cluster", 16, [], prefix="gb", net="10.79.0")
        try:
            cluster.up()
            mpi_hello = Path(tmp) / "mpi_hello"
            if want_mpi:
                subprocess.run(["mpicc", "-O2", "-o", str(mpi_hello),
                                str(ROOT / "tests" / "perf" / "mpi_hello.c")], check=True)
            return measure(cluster, gasnetrun, hello, mpi_hello, only, repeats, args.json)
        finally:
            cluster.down()


def measure(cluster: Cluster, gasnetrun: Path, hello: Path, mpi_hello: Path, only: list[str],
            repeats: int, as_json: bool) -> int:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("GASNET_", "OMPI_"))}
    # The fake hosts share this machine's cores: ranks must yield while they wait.
    env = {**base, "GASNET_SSH_OPTIONS": f"-F {cluster.ssh_config}",
           "GASNET_WAIT_MODE": "block"}
    four = ",".join(cluster.hosts(4))
    sixteen = ",".join(cluster.hosts(16))
    runs = {
        "gasnetrun_4x4": (cluster.inside(1, [str(gasnetrun), "-n", "16", "-H", four,
                                             str(hello)]), env),
        "mpirun_4x4": (cluster.inside(1, [
            "mpirun", "--allow-run-as-root", "--oversubscribe", "-n", "16",
            "-H", ",".join(f"{h}:4" for h in cluster.hosts(4)),
            "--mca", "plm_rsh_args", f"-F {cluster.ssh_config}",
            "--mca", "btl", "self,vader,tcp", str(mpi_hello)]), base),
        "gasnetrun_16_deg2": (cluster.inside(1, [str(gasnetrun), "-n", "16", "-H", sixteen,
                                                 str(hello)]),
                              {**env, "GASNET_SSH_OUT_DEGREE": "2"}),
        "gasnetrun_16_deg32": (cluster.inside(1, [str(gasnetrun), "-n", "16", "-H", sixteen,
                                                  str(hello)]),
                               {**env, "GASNET_SSH_OUT_DEGREE": "32"}),
    }
    wanted = [n for n in runs if n in only or (n in ("gasnetrun_4x4", "mpirun_4x4")
                                               and "ratio_4x4" in only)]
    samples: dict[str, list[float]] = {n: [] for n in wanted}
    for _ in range(repeats):
        for name in wanted:  # interleaved: every configuration sees the same machine state
            argv, run_env = runs[name]
            samples[name].append(timed(argv, run_env))
    shape = {"gasnetrun_4x4": (16, 4), "mpirun_4x4": (16, 4), "gasnetrun_16_deg2": (16, 16),
             "gasnetrun_16_deg32": (16, 16)}
    for name in wanted:
        if name in only:
            record(name, *shape[name], "s", samples[name], as_json)
    if "ratio_4x4" in only:
        ratio = statistics.median(samples["gasnetrun_4x4"]) / statistics.median(
            samples["mpirun_4x4"])
        record("ratio_4x4", 16, 4, "x", [ratio], as_json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
