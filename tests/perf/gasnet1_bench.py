#!/usr/bin/python3
"""gasnet1_bench.py: AM latency, AM flood and barrier of this runtime and of GASNet-1 side by side.

GASNet-1 is not bundled: build it yourself (a GASNet 1.x source tree: ./Bootstrap if it has no
configure, then configure --enable-mpi --enable-smp, and in each conduit's build folder
`make seq testam testbarrier`), and give its build folder. Repeat after repeat, for each
conduit built there (smp-conduit, udp-conduit, mpi-conduit), it runs 2 ranks of

  ours      am_bench's AMShort round trip, one-way AMShort flood and anonymous barrier (smp:
            through PSHM; udp and mpi: every rank its own supernode, the round trip paired
            repeat by repeat with a raw UDP ping-pong, or an 8-byte MPI_Send/MPI_Recv one of
            the same MPI)
  GASNet-1  testam's "AMShort ping-pong roundtrip ReqRep" and "AMShort flood one-way Req"
            (section A, 100,000 iterations) and, when built, testbarrier's anonymous barrier
            (GASNET_PSHM_NODES=2 on smp; GASNET_SUPERNODE_MAXSIZE=1 on udp, started on this
            host by GASNET_SPAWNFN=L, and on mpi)

one right after the other, and prints the medians over the repeats and the median of the
repeats' ratios (GASNet-1's time over ours: above 1, ours is faster). testam's round trip and
flood are the average of one timing (am_bench's the median of its repeats). The mpi conduit's MPI is
the one GASNet-1's testam links (Open MPI's mpirun or MPICH's mpiexec.mpich starts both).

usage: gasnet1_bench.py --gasnet1 BUILD_DIR [--repeats N] [--json]"""
from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BUILD = ROOT / "build"
OPENMPI = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
           "OMPI_MCA_rmaps_base_oversubscribe": "1"}
# MPICH's UCX, left to itself, probes transports this VM lacks.
LAUNCHERS: dict[str, tuple[list[str], str, dict[str, str]]] = {
    "openmpi": (["mpirun", "-n", "2"], "mpirun -n %N %C", {}),
    "mpich": (["mpiexec.mpich", "-n", "2"], "mpiexec.mpich -n %N %C", {"UCX_TLS": "self,sm,tcp"})}
# What each GASNet-1 test prints, by the name of the figure of ours it stands beside.
PATTERNS = {"am_short_rtt": re.compile(r"AMShort\s+ping-pong roundtrip ReqRep:\s+\S+ sec\s+([0-9.]+) us"),
            "am_short_flood": re.compile(r"AMShort\s+flood\s+one-way\s+Req\s*:\s+\S+ sec\s+([0-9.]+) us"),
            "barrier": re.compile(r"Avg Anon\. Barrier latency:\s+([0-9.]+) us")}


def mpi_of(program: Path) -> str | None:
    """Which MPI a program links (ldd), or None."""
    libs = subprocess.run(["ldd", str(program)], capture_output=True, text=True).stdout
    if "libmpich" in libs:
        return "mpich"
    if re.search(r"libmpi\.so\.\d", libs):
        return "openmpi"
    return None


def run(argv: list[str], env: dict[str, str]) -> str:
    proc = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=300,
                          stdin=subprocess.DEVNULL)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} ended with {proc.returncode}: "
                           f"{proc.stdout[-1500:]}{proc.stderr[-1500:]}")
    return proc.stdout


def ours(conduit: str, env: dict[str, str]) -> dict[str, float]:
    raw = {"udp": ",raw_udp_rtt", "mpi": ",raw_mpi_rtt"}.get(conduit, "")
    out = run([str(BUILD / "bin" / "gasnetrun"), "-n", "2",
               str(BUILD / conduit / "bench" / "am_bench-seq"), "--json", "--only",
               "am_short_rtt,am_short_flood,barrier" + raw], env)
    return {r["bench"]: float(r["median"]) for r in map(json.loads, (
        line for line in out.splitlines() if line.startswith("{")))}


def theirs(folder: Path, launcher: list[str], lead: list[str],
           env: dict[str, str]) -> dict[str, float]:
    """testam's figures, and testbarrier's when it is built. lead: the arguments a test takes
    before its own (udp's node count)."""
    found: dict[str, float] = {}
    for test, args in (("testam", ["100000", "8", "A"]), ("testbarrier", ["100000"])):
        if test == "testbarrier" and not (folder / test).is_file():
            continue
        out = run([*launcher, str(folder / test), *lead, *args], env)
        for name, pattern in PATTERNS.items():
            match = pattern.search(out)
            if match:
                found[name] = float(match.group(1))
    if "am_short_rtt" not in found:
        raise RuntimeError(f"{folder / 'testam'}: no AMShort ReqRep round trip in its output")
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gasnet1", required=True, type=Path,
                        help="a GASNet-1 build folder holding <conduit>-conduit/testam")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if args.repeats < 1:
        print(f"gasnet1_bench.py: --repeats {args.repeats}: must be at least 1", file=sys.stderr)
        return 2
    base = {k: v for k, v in os.environ.items() if not k.startswith(("GASNET_", "GASNETRUN_"))}
    cases: list[tuple[str, Path, list[str], list[str], dict[str, str]]] = []
    smp = args.gasnet1 / "smp-conduit"
    if (smp / "testam").is_file() and (BUILD / "smp" / "bench" / "am_bench-seq").exists():
        cases.append(("smp", smp, [], [], {**base, "GASNET_PSHM_NODES": "2"}))
    udp = args.gasnet1 / "udp-conduit"
    if (udp / "testam").is_file() and (BUILD / "udp" / "bench" / "am_bench-seq").exists():
        cases.append(("udp", udp, [], ["2"],
                      {**base, "GASNET_SPAWNFN": "L", "GASNET_SUPERNODE_MAXSIZE": "1"}))
    mpi = args.gasnet1 / "mpi-conduit"
    flavour = mpi_of(mpi / "testam") if (mpi / "testam").is_file() else None
    if flavour and (BUILD / "mpi" / "bench" / "am_bench-seq").exists():
        launcher, template, extra = LAUNCHERS[flavour]
        cases.append((f"mpi ({flavour})", mpi, launcher, [],
                      {**base, **OPENMPI, **extra, "MPIRUN_CMD": template,
                       "GASNET_SUPERNODE_MAXSIZE": "1"}))
    if not cases:
        print(f"gasnet1_bench.py: --gasnet1 {args.gasnet1}: expected a GASNet-1 build folder "
              "with smp-conduit/, udp-conduit/ or mpi-conduit/testam built (make testam), and "
              "this runtime's matching build/<conduit>/bench/am_bench-seq (scons)",
              file=sys.stderr)
        return 2
    samples: dict[str, list[float]] = {}
    for _ in range(args.repeats):
        for name, folder, launcher, lead, env in cases:
            mine = ours(name.split()[0], env)
            other = theirs(folder, launcher, lead, env)
            rows: list[tuple[str, float]] = []
            for figure, value in other.items():
                rows += [(f"ours {figure}_us", mine[figure]), (f"GASNet-1 {figure}_us", value),
                         (f"GASNet-1 / ours {figure}", value / mine[figure])]
            raw = next((mine[k] for k in ("raw_mpi_rtt", "raw_udp_rtt") if k in mine), None)
            if raw is not None:
                rows += [("raw ping-pong_us", raw),
                         ("ours am_short_rtt / raw ping-pong", mine["am_short_vs_raw"]),
                         ("GASNet-1 am_short_rtt / raw ping-pong", other["am_short_rtt"] / raw)]
            for row, value in rows:
                samples.setdefault(f"{name} {row}", []).append(value)
    for name, vals in samples.items():
        med = statistics.median(vals)
        if args.json:
            print(json.dumps({"result": name, "median": med, "min": min(vals),
                              "max": max(vals), "n": len(vals)}))
        else:
            print(f"{name:<50} {med:9.4f}   (min {min(vals):.4f}, max {max(vals):.4f}, "
                  f"n={len(vals)})")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except RuntimeError as err:
        print(f"gasnet1_bench.py: {err}", file=sys.stderr)
        sys.exit(1)
