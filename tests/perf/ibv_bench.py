#!/usr/bin/python3
"""ibv_bench.py: the ibv conduit's figures on fakeverbs (no HCA here, so only relative figures
mean anything): every configuration runs in the same invocation, repeats interleaved.

  am_rtt_static, am_rtt_dynamic     AMShort round trip (am_bench am_short_rtt), 2 ranks, every
                                    connection made at start-up vs on first use
  put_1m_static, put_1m_dynamic     1 MiB put bandwidth (rma_bench put_bulk_bw), same pair
  startup_all_static                start to exit of an 8-rank ring_test (one round), every
  startup_ring_replay               connection at start-up vs a replayed connect file of the
                                    ring (recorded by gasnetrun --connect record first)
  connect_all_static, connect_ring  the slowest rank's start-up connection time of those jobs
  pinned_<ranks>x_<physmem>         memory each rank pins (segment of maxseg_test + buffers)
                                    next to its GASNET_PHYSMEM_MAX share

Ratios: <figure>_ratio = dynamic / static, ring replay / all static (lower is better for
times). --json prints one JSON record per result, like the C benchmarks.

usage: ibv_bench.py [--json] [--quick] [--repeats N]"""
from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BUILD = ROOT / "build"
NODE = ROOT / "tests" / "fixtures" / "nodes" / "dual-hca-2socket"
GASNETRUN = str(BUILD / "bin" / "gasnetrun")


def program(kind: str, name: str) -> str:
    return str(BUILD / "ibv" / kind / f"{name}-seq")


def run(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([GASNETRUN, *args], env=env, capture_output=True, text=True,
                          timeout=600, stdin=subprocess.DEVNULL)
    if proc.returncode != 0:
        raise RuntimeError(f"gasnetrun {' '.join(args)} failed ({proc.returncode}):\n"
                           f"{proc.stderr[-1500:]}")
    return proc


def bench_value(args: list[str], env: dict[str, str], name: str, size: int) -> float:
    proc = run(args, env)
    for line in proc.stdout.splitlines():
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        if rec.get("bench") == name and int(rec.get("size", 0)) == size:
            return float(rec["median"])
    raise RuntimeError(f"no {name} at {size} bytes in:\n{proc.stdout[-1500:]}")


class Results:
    def __init__(self, as_json: bool) -> None:
        self.as_json = as_json
        self.samples: dict[str, list[float]] = {}
        self.units: dict[str, tuple[str, str]] = {}

    def add(self, name: str, value: float, unit: str, better: str) -> None:
        self.samples.setdefault(name, []).append(value)
        self.units[name] = (unit, better)

    def median(self, name: str) -> float:
        return statistics.median(self.samples[name])

    def emit(self, name: str, value: float | None = None, unit: str | None = None,
             better: str | None = None) -> None:
        samples = self.samples.get(name, [value] if value is not None else [])
        median = statistics.median(samples)
        u, b = self.units.get(name, (unit or "", better or "lower"))
        if self.as_json:
            print(json.dumps({"bench": name, "path": "ibv (fakeverbs)", "conduit": "ibv",
                              "unit": u, "better": b, "median": median, "min": min(samples),
                              "max": max(samples), "n": len(samples)}), flush=True)
        else:
            print(f"{name:<28} {median:12.4f} {min(samples):12.4f} {max(samples):12.4f}  {u}",
                  flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description="ibv conduit figures on fakeverbs")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--quick", action="store_true", help="3 repeats and shorter runs")
    parser.add_argument("--repeats", type=int, default=0)
    args = parser.parse_args()
    repeats = args.repeats or (3 if args.quick else 7)
    if repeats < 1:
        print("ibv_bench: --repeats must be at least 1", file=sys.stderr)
        return 2
    if not Path(program("tests", "ring_test")).exists():
        print("ibv_bench: build/ibv is missing (libibverbs-dev, then scons)", file=sys.stderr)
        return 2
    quick = ["--quick"] if args.quick else []
    with tempfile.TemporaryDirectory(prefix="ibv-bench-") as tmp:
        fabric = Path(tmp) / "fabric"
        subprocess.run([str(BUILD / "fakeverbs" / "fakeverbs-sm"), "up", str(fabric)], check=True)
        lib = str(BUILD / "fakeverbs")
        base = {k: v for k, v in os.environ.items() if not k.startswith("GASNET")}
        base.update({"LD_LIBRARY_PATH": lib, "FAKEVERBS_SYSFS": str(NODE / "sys"),
                     "FAKEVERBS_FABRIC": str(fabric), "GASNET_PROBE_ROOT": str(NODE),
                     "GASNET_SUPERNODE_MAXSIZE": "1"})
        results = Results(args.json)
        conn = Path(tmp) / "ring"
        run(["--connect", "record", str(conn), "-n", "8", program("tests", "ring_test"), "1"], base)
        static = {**base, "GASNET_IBV_VERBOSE": "1"}
        dynamic = {**base, "GASNET_CONNECT_STATIC": "0"}
        for _ in range(repeats):
            for label, env in (("static", base), ("dynamic", dynamic)):
                results.add(f"am_rtt_{label}", bench_value(
                    ["-n", "2", program("bench", "am_bench"), "--json", *quick, "--only",
                     "am_short_rtt"], env, "am_short_rtt", 0), "us", "lower")
                results.add(f"put_1m_{label}", bench_value(
                    ["-n", "2", program("bench", "rma_bench"), "--json", *quick, "--only",
                     "put_bulk_bw"], env, "put_bulk_bw", 1 << 20), "GiB/s", "higher")
            for label, extra in (("all_static", []), ("ring_replay", ["--connect", "replay", str(conn)])):
                env = {**static, "GASNET_CONNECT_DYNAMIC": "0"} if extra else static
                start = time.monotonic()
                proc = run([*extra, "-n", "8", program("tests", "ring_test"), "1"], env)
                results.add(f"startup_{label}", time.monotonic() - start, "s", "lower")
                made = [float(t) for t in re.findall(r"connections at start-up in ([0-9.]+) s",
                                                     proc.stderr)]
                results.add(f"connect_{label.replace('ring_replay', 'ring')}", max(made) * 1e3,
                            "ms", "lower")
        for name in ("am_rtt_static", "am_rtt_dynamic"):
            results.emit(name)
        results.emit("am_rtt_ratio", results.median("am_rtt_dynamic") / results.median("am_rtt_static"), "x")
        for name in ("put_1m_static", "put_1m_dynamic"):
            results.emit(name)
        results.emit("put_1m_ratio", results.median("put_1m_dynamic") / results.median("put_1m_static"), "x", "higher")
        for name in ("startup_all_static", "startup_ring_replay", "connect_all_static", "connect_ring"):
            results.emit(name)
        results.emit("startup_ratio", results.median("startup_ring_replay") /
                     results.median("startup_all_static"), "x")
        results.emit("connect_ratio", results.median("connect_ring") /
                     results.median("connect_all_static"), "x")
        # Pinned memory per rank against its GASNET_PHYSMEM_MAX share (one run each: exact).
        for ranks in (2, 8):
            for physmem in ("256M", "1G", "4G"):
                env = {**base, "GASNET_IBV_VERBOSE": "1", "GASNET_PHYSMEM_MAX": physmem}
                proc = run(["-n", str(ranks), program("tests", "maxseg_test")], env)
                pins = [int(p) for p in re.findall(r"pins (\d+) bytes", proc.stderr)]
                share = {"256M": 256, "1G": 1024, "4G": 4096}[physmem] / ranks
                results.emit(f"pinned_{ranks}x_{physmem}", max(pins) / 2**20, "MiB")
                results.emit(f"pinned_{ranks}x_{physmem}_share", share, "MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
