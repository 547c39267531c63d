#!/usr/bin/python3
"""ofi_bench.py: the ofi conduit between two fake hosts against its baselines, in one run.

It builds two hosts (network namespaces with sshd, as tests/netcluster.py does; needs root)
and, repeat after repeat and interleaved (so every configuration sees the same machine state),
for each provider runs:

  fi_pingpong     libfabric's own 8-byte ping-pong over the provider (server on h2, client on
                  h1); its usec/xfer is half a round trip, reported here doubled
  am_bench        the ofi conduit's AMShort round trip and flood, and the raw fi_* ping-pong
                  and inject flood am_bench runs on an endpoint of its own (raw_ofi.h)
  rma_bench       1 MiB puts: blocking (put_bulk) and a stream of nbi puts (16 in flight), and
                  a raw fi_write stream of 1 MiB (raw_ofi.h)

and the udp conduit's AMShort round trip, flood and 1 MiB put on the same hosts. It prints
the medians and the ratios the ofi issue names (--json: one JSON object per line):

  am_short_rtt / fi_pingpong round trip     (target <= 1.15)
  put 1 MiB (nbi stream) / raw fi_write stream  (target >= 0.9)
  am_short_flood / raw inject per message    (target <= 1.2; also as the median of each
                                             run's repeat-by-repeat ratios, "paired")

--vary KNOB=V1,V2,... runs the ofi conduit's measurements once for each value of a GASNet knob
(interleaved in each repeat, as the rest), each labelled "provider [KNOB=V]": a sweep of one
knob against the same run's baselines (fi_pingpong, the raw fi_* measurements, the udp
conduit at its defaults).

usage: ofi_bench.py [--json] [--repeats N] [--providers P[,P...]] [--vary KNOB=V1,V2,...]"""
from __future__ import annotations

import argparse
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))
from netcluster import Cluster, why_not_available  # noqa: E402

BUILD = ROOT / "build"
PROVIDERS = ["tcp;ofi_rxm", "udp;ofi_rxd"]
PINGPONG_ITERS = 20000
MIB = 1 << 20


def run(argv: list[str], env: dict[str, str], timeout: float = 600) -> str:
    proc = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(argv[-8:])} failed ({proc.returncode}): "
                           f"{proc.stderr[-800:]}")
    return proc.stdout


def records(out: str) -> dict[tuple[str, int], float]:
    """The JSON records of a C benchmark, by (bench, size)."""
    found = {}
    for line in out.splitlines():
        if line.startswith("{"):
            r = json.loads(line)
            found[(r["bench"], int(r["size"]))] = float(r["median"])
    return found


def fi_pingpong(cluster: Cluster, provider: str, env: dict[str, str]) -> float:
    """Round trip in microseconds of fi_pingpong's 8-byte messages, h1 to h2."""
    args = ["fi_pingpong", "-p", provider, "-e", "rdm", "-I", str(PINGPONG_ITERS), "-S", "8"]
    server = subprocess.Popen(cluster.inside(2, args), env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True)
    try:
        # The client retries until the server listens (fi_pingpong's own out-of-band
        # connection): a few attempts cover the server's start-up.
        for attempt in range(20):
            proc = subprocess.run(cluster.inside(1, [*args, cluster.address(2)]), env=env,
                                  capture_output=True, text=True, timeout=300)
            if proc.returncode == 0:
                break
            if attempt == 19:
                raise RuntimeError(f"fi_pingpong -p {provider} failed: {proc.stderr[-400:]}")
        m = re.search(r"^8\s+\S+\s+\S+\s+\S+\s+\S+s\s+\S+\s+([\d.]+)", proc.stdout, re.M)
        if not m:
            raise RuntimeError(f"fi_pingpong printed no result: {proc.stdout[-400:]}")
        return 2 * float(m.group(1))
    finally:
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--providers", default=",".join(PROVIDERS))
    parser.add_argument("--vary", default="", metavar="KNOB=V1,V2,...")
    args = parser.parse_args()
    providers = [p for p in args.providers.split(",") if p]
    knob, _, values = args.vary.partition("=")
    variants: list[dict[str, str]] = [{}]
    if args.vary:
        if not knob.startswith("GASNET_") or not values:
            print(f"ofi_bench.py: --vary {args.vary}: expected GASNET_KNOB=V1,V2,...",
                  file=sys.stderr)
            return 2
        variants = [{knob: v} for v in values.split(",")]
    if args.repeats < 1:
        print(f"ofi_bench.py: --repeats {args.repeats}: must be at least 1", file=sys.stderr)
        return 2
    why = why_not_available()
    needed = [BUILD / "ofi" / "bench" / "am_bench-seq", BUILD / "udp" / "bench" / "am_bench-seq"]
    missing = [str(p) for p in needed if not p.exists()]
    if why or missing:
        print(f"ofi_bench.py: cannot run: {why or f'{missing[0]} is not built (run: scons)'}",
              file=sys.stderr)
        return 2
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    with tempfile.TemporaryDirectory(prefix="ofi-bench-") as tmp:
        cluster = Cluster(Path(tmp) / "cluster", 2, [], prefix="gf", net="10.80.0")
        try:
            cluster.up()
            return measure(cluster, providers, variants, args.repeats, args.json)
        finally:
            cluster.down()


def measure(cluster: Cluster, providers: list[str], variants: list[dict[str, str]],
            repeats: int, as_json: bool) -> int:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("GASNET_", "FI_"))}
    env = {**base, "GASNET_SSH_OPTIONS": f"-F {cluster.ssh_config}"}
    hosts = ",".join(cluster.hosts(2))
    gasnetrun = str(BUILD / "bin" / "gasnetrun")

    def bench(conduit: str, prog: str, only: str,
              extra: dict[str, str]) -> dict[tuple[str, int], float]:
        argv = cluster.inside(1, [gasnetrun, "-n", "2", "-H", hosts,
                                  str(BUILD / conduit / "bench" / f"{prog}-seq"), "--json", "--quick",
                                  "--only", only])
        return records(run(argv, {**env, **extra}))

    samples: dict[str, list[float]] = {}

    def add(name: str, value: float) -> None:
        samples.setdefault(name, []).append(value)

    for _ in range(repeats):
        for p in providers:
            add(f"{p} fi_pingpong_rtt_us", fi_pingpong(cluster, p, base))
            for variant in variants:
                ofi = {"GASNET_OFI_PROVIDER": p, **variant}
                v = p + "".join(f" [{k}={val}]" for k, val in variant.items())
                am = bench("ofi", "am_bench", "am_short_rtt,am_short_flood,raw_ofi_rtt", ofi)
                add(f"{v} am_short_rtt_us", am[("am_short_rtt", 0)])
                add(f"{v} am_short_flood_us", am[("am_short_flood", 0)])
                add(f"{v} raw_ofi_rtt_us", am[("raw_ofi_rtt", 8)])
                add(f"{v} raw_ofi_inject_flood_us", am[("raw_ofi_inject_flood", 8)])
                add(f"{v} flood_vs_raw_paired", am[("am_short_flood_vs_raw", 0)])
                rma = bench("ofi", "rma_bench", "put_bulk_bw,put_nbi_bw,raw_ofi_write_stream",
                            ofi)
                add(f"{v} put_bulk_1MiB_GiBps", rma[("put_bulk_bw", MIB)])
                add(f"{v} put_nbi_1MiB_GiBps", rma[("put_nbi_bw", MIB)])
                add(f"{v} raw_fi_write_1MiB_GiBps", rma[("raw_ofi_write_stream", MIB)])
        am = bench("udp", "am_bench", "am_short_rtt,am_short_flood", {})
        add("udp-conduit am_short_rtt_us", am[("am_short_rtt", 0)])
        add("udp-conduit am_short_flood_us", am[("am_short_flood", 0)])
        rma = bench("udp", "rma_bench", "put_bulk_bw,put_nbi_bw", {})
        add("udp-conduit put_bulk_1MiB_GiBps", rma[("put_bulk_bw", MIB)])
        add("udp-conduit put_nbi_1MiB_GiBps", rma[("put_nbi_bw", MIB)])

    med = {name: statistics.median(v) for name, v in samples.items()}
    for p, v in [(p, p + "".join(f" [{k}={val}]" for k, val in variant.items()))
                 for p in providers for variant in variants]:
        ratios = {
            f"{v} am_short_rtt/fi_pingpong_rtt (<=1.15)":
                med[f"{v} am_short_rtt_us"] / med[f"{p} fi_pingpong_rtt_us"],
            f"{v} put_nbi_1MiB/raw_fi_write (>=0.9)":
                med[f"{v} put_nbi_1MiB_GiBps"] / med[f"{v} raw_fi_write_1MiB_GiBps"],
            f"{v} put_bulk_1MiB/raw_fi_write":
                med[f"{v} put_bulk_1MiB_GiBps"] / med[f"{v} raw_fi_write_1MiB_GiBps"],
            f"{v} am_short_flood/raw_inject (<=1.2)":
                med[f"{v} am_short_flood_us"] / med[f"{v} raw_ofi_inject_flood_us"],
            # the median of each run's repeat-by-repeat ratios (am_bench times the two floods
            # back to back): the VM's between-run modes cancel out of it
            f"{v} am_short_flood/raw_inject, paired (<=1.2)":
                med[f"{v} flood_vs_raw_paired"],
            f"{v} am_short_rtt/raw_ofi_rtt":
                med[f"{v} am_short_rtt_us"] / med[f"{v} raw_ofi_rtt_us"],
            f"{v} am_short_rtt/udp-conduit":
                med[f"{v} am_short_rtt_us"] / med["udp-conduit am_short_rtt_us"],
        }
        med.update(ratios)
    for name, value in med.items():
        vals = samples.get(name, [value])
        if as_json:
            print(json.dumps({"result": name, "median": value, "min": min(vals),
                              "max": max(vals), "n": len(vals)}))
        else:
            print(f"{name:<48} {value:10.4f}   (min {min(vals):.4f}, max {max(vals):.4f}, "
                  f"n={len(vals)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
