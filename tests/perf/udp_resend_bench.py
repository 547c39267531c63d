#!/usr/bin/python3
"""udp_resend_bench.py: how many data packets the udp conduit sends again, and for nothing,
between two fake hosts, with and without packet loss, for this build and (--old) another one,
interleaved in one run.

It builds two hosts (network namespaces with sshd, as tests/netcluster.py does; needs root),
drops a share of the UDP datagrams arriving at the second one (nftables, as the loss tests
do), and repeats two jobs of 2 ranks, one per host, with statistics on:

  bulk_test 64         64 MiB of puts and gets each way (a stream of full datagrams)
  mutual_get_test 4 4096  the two ranks get 4 MiB from each other at once, 4 times (Medium
                       replies sent from request handlers while the handler's own rank waits)

and prints, per build, loss and job, the median time and the summed counters: data packets
sent, sent again after a timeout (UDP_RESENT_TIMEOUT), sent again because later packets
arrived first (UDP_RESENT_HOLE), and copies that arrived twice (UDP_DUPLICATES: each a
needless resend). --old BUILD_DIR is another build's directory (its udp test programs run
under this build's gasnetrun).

usage: udp_resend_bench.py [--repeats N] [--loss P[,P...]] [--old BUILD_DIR] [--json]"""
from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))
from netcluster import Cluster, why_not_available  # noqa: E402

JOBS = [["bulk_test-seq", "64"], ["mutual_get_test-seq", "4", "4096"]]
COUNTERS = ["UDP_PACKETS_SENT", "UDP_RESENT_TIMEOUT", "UDP_RESENT_HOLE", "UDP_DUPLICATES"]


def set_loss(cluster: Cluster, percent: int) -> None:
    ns = ["ip", "netns", "exec", f"{cluster.prefix}_h2", "nft"]
    subprocess.run([*ns, "add", "table", "inet", "loss"], check=True)
    subprocess.run([*ns, "add", "chain", "inet", "loss", "input",
                    "{ type filter hook input priority 0 ; }"], check=True)
    subprocess.run([*ns, "flush", "chain", "inet", "loss", "input"], check=True)
    if percent:
        subprocess.run([*ns, "add", "rule", "inet", "loss", "input", "meta", "l4proto", "udp",
                        "numgen", "random", "mod", "100", "<", str(percent), "drop"], check=True)


def one_job(cluster: Cluster, build: Path, job: list[str], stats: Path) -> tuple[float, dict]:
    for old in stats.glob("s-*"):
        old.unlink()
    gasnetrun = str(ROOT / "build" / "bin" / "gasnetrun")
    argv = cluster.inside(1, [gasnetrun, "-n", "2", "-H", ",".join(cluster.hosts(2)),
                              str(build / "udp" / "tests" / job[0]), *job[1:]])
    env = {"PATH": "/usr/bin:/bin:/usr/sbin:/sbin", "GASNET_SSH_OPTIONS":
           f"-F {cluster.ssh_config}", "GASNET_STATSFILE": str(stats / "s-%")}
    start = time.monotonic()
    proc = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=600,
                          stdin=subprocess.DEVNULL)
    took = time.monotonic() - start
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(job)} failed ({proc.returncode}): {proc.stderr[-800:]}")
    counts = dict.fromkeys(COUNTERS, 0)
    for path in stats.glob("s-*"):
        for m in re.finditer(r"\(C\) (UDP_\w+) +(\d+) evnts", path.read_text()):
            if m[1] in counts:
                counts[m[1]] += int(m[2])
    return took, counts


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--loss", default="0,5", help="percentages of datagrams dropped")
    ap.add_argument("--old", type=Path, help="another build directory to compare with")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    why = why_not_available()
    if why:
        print(f"udp_resend_bench: {why}", file=sys.stderr)
        return 2
    builds = {"new": ROOT / "build", **({"old": args.old.resolve()} if args.old else {})}
    losses = [int(p) for p in args.loss.split(",")]
    results: dict[tuple[str, int, str], list[tuple[float, dict]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        cluster = Cluster(Path(tmp) / "cluster", 2, [], prefix="gr", net="10.81.0")
        stats = Path(tmp) / "stats"
        stats.mkdir()
        try:
            cluster.up()
            for loss in losses:
                set_loss(cluster, loss)
                for _ in range(args.repeats):
                    for job in JOBS:
                        for name, build in builds.items():
                            key = (name, loss, " ".join(job))
                            results.setdefault(key, []).append(one_job(cluster, build, job,
                                                                       stats))
        finally:
            cluster.down()
    for (name, loss, job), runs in results.items():
        row = {"build": name, "loss_percent": loss, "job": job,
               "median_s": round(statistics.median(t for t, _ in runs), 3),
               **{c: int(statistics.median(r[c] for _, r in runs)) for c in COUNTERS}}
        if args.json:
            print(json.dumps(row))
        else:
            print(f"{name:4} loss {loss:2}%  {job:28} {row['median_s']:6.2f} s  " +
                  "  ".join(f"{c[4:]}={row[c]}" for c in COUNTERS))
    return 0


if __name__ == "__main__":
    sys.exit(main())
