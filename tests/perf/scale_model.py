#!/usr/bin/python3
"""scale_model.py: fits the start-up model of docs/scale.md to scale_bench.py's records and
extrapolates it to a larger cluster.

  scale_bench.py --json --only phases,bytes_udp,rss_udp > records.jsonl
  scale_model.py records.jsonl [--hosts 10000] [--ppn 10] [--degree 32]

The fits (least squares, numpy), from the phases measured at several host counts H (P ranks
each, N = H x P ranks) and out-degrees d (tree depth D):

  agents    = a + b*D + c*(H - 1)     b: per tree level; c: per host (here: the hosts share
                                      this machine's cores, so every agent's start adds up)
  fork_exec = f0 + f1*N               f1: per rank forked (likewise serialised here)
  init      = e0 + e1*M               M: bytes the bootstrap collectives move in all (every
                                      rank receives every rank's blobs): N * N * B
  barrier   = g0 + g1*log2(N)         the conduit's barrier (dissemination)

On a real cluster every host has its own cores: per-host and per-rank costs do not add up
across hosts, only along the tree's path and inside one host. The extrapolation therefore
takes, per level, one agent start over ssh (measured alone) plus the parent's share of
starting its d children (forking d ssh clients), and for the exchange the bytes one agent
relays at the relay rate measured here."""
from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
from collections import defaultdict

import numpy as np


def depth_of(hosts: int, degree: int) -> int:
    """The depth of gasnetrun's agent tree (agent/topology.py: agent i's parent is
    (i - 1) // degree, the launcher's host being agent 0)."""
    deepest = 0
    for i in range(1, hosts):
        d, p = 1, (i - 1) // degree if degree > 0 else 0
        while p != 0:
            d, p = d + 1, (p - 1) // degree
        deepest = max(deepest, d)
    return deepest


def fit(rows: list[list[float]], ys: list[float]) -> tuple[np.ndarray, float]:
    """Coefficients and the root-mean-square residual."""
    a = np.array(rows, dtype=float)
    y = np.array(ys, dtype=float)
    coef, *_ = np.linalg.lstsq(a, y, rcond=None)
    rms = float(np.sqrt(np.mean((a @ coef - y) ** 2)))
    return coef, rms


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("records")
    parser.add_argument("--hosts", type=int, default=10000)
    parser.add_argument("--ppn", type=int, default=10)
    parser.add_argument("--degree", type=int, default=32)
    args = parser.parse_args()
    try:
        with open(args.records) as f:
            records = [json.loads(line) for line in f if line.startswith("{")]
    except (OSError, ValueError) as err:
        print(f"scale_model.py: {args.records}: cannot read the records: {err}",
              file=sys.stderr)
        return 2
    phases: dict[tuple[int, int, int], dict[str, float]] = defaultdict(dict)
    alone: dict[str, float] = {}
    extra: dict[str, dict] = {}
    for r in records:
        if r["bench"].startswith("phase_"):
            key = (r["hosts"], r["ranks"], r["degree"])
            phases[key][r["bench"][6:]] = r["median"]
            phases[key]["depth"] = r["depth"]
        elif r["bench"].startswith("alone_"):
            alone[r["bench"][6:]] = r["median"]
        elif r["bench"] in ("bytes_udp", "rss_udp"):
            extra.setdefault(r["bench"], {})[r["ranks"]] = r
    if len(phases) < 3 or "ssh" not in alone:
        print("scale_model.py: the records hold no phases (run scale_bench.py --only phases "
              "--json)", file=sys.stderr)
        return 2
    keys = sorted(phases)
    print("measured (medians, seconds):")
    names = ["launcher", "spawn_per_child", "agents", "fork_exec", "init", "attach", "barrier",
             "exit", "total"]
    print(f"  {'hosts':>5} {'ranks':>5} {'deg':>3} {'depth':>5} " +
          " ".join(f"{n:>9}" for n in names))
    for k in keys:
        p = phases[k]
        print(f"  {k[0]:>5} {k[1]:>5} {k[2]:>3} {int(p['depth']):>5} " +
              " ".join(f"{p.get(n, float('nan')):9.3f}" for n in names))
    bytes_per_rank = 0.0
    if "bytes_udp" in extra:
        n, rec = max(extra["bytes_udp"].items())
        bytes_per_rank = rec["median"] / n  # every rank's share of what each rank receives
    (a, b, c), rms_a = fit([[1, phases[k]["depth"], k[0] - 1] for k in keys],
                           [phases[k]["agents"] for k in keys])
    (f0, f1), rms_f = fit([[1, k[1]] for k in keys], [phases[k]["fork_exec"] for k in keys])
    moved = {k: float(k[1]) ** 2 * bytes_per_rank for k in keys}
    (e0, e1), rms_e = fit([[1, moved[k]] for k in keys], [phases[k]["init"] for k in keys])
    (g0, g1), rms_g = fit([[1, math.log2(k[1])] for k in keys],
                          [phases[k]["barrier"] for k in keys])
    spawn = statistics.median(phases[k]["spawn_per_child"] for k in keys)
    launcher = statistics.median(phases[k]["launcher"] for k in keys)
    attach = statistics.median(phases[k]["attach"] for k in keys)
    exit_ = {k: phases[k]["exit"] for k in keys}
    print("\nfits:")
    print(f"  agents    = {a:.3f} + {b:.3f}*D + {c:.4f}*(H-1)   (rms {rms_a:.3f} s)")
    print(f"  fork_exec = {f0:.3f} + {f1 * 1e3:.3f} ms*N           (rms {rms_f:.3f} s)")
    print(f"  init      = {e0:.3f} + {e1 * 1e9:.3f} s/GB*M          (rms {rms_e:.3f} s; "
          f"{bytes_per_rank:.0f} B per rank per job)")
    print(f"  barrier   = {g0:.4f} + {g1 * 1e3:.3f} ms*log2(N)    (rms {rms_g:.4f} s)")
    print(f"  alone: one ssh {alone['ssh']:.3f} s, ssh and an agent start "
          f"{alone.get('ssh_agent', float('nan')):.3f} s; the parent's share per child "
          f"{spawn * 1e3:.1f} ms; launcher before its first agent {launcher:.3f} s")

    hosts, ppn, degree = args.hosts, args.ppn, args.degree
    n = hosts * ppn
    depth = depth_of(hosts, degree)
    per_level = alone.get("ssh_agent", alone["ssh"]) + degree * spawn
    agents = launcher + depth * per_level
    fork = f0 + f1 * ppn
    relay = 1 / e1 if e1 > 0 else float("inf")  # bytes per second the agents relay here
    table = n * bytes_per_rank  # what every rank receives, all collectives together
    exchange = e0 + (depth * degree + ppn) * table / relay
    barrier = g0 + g1 * math.log2(n)
    ending = max(exit_.values())
    total = agents + fork + exchange + attach + barrier + ending
    print(f"\nextrapolated: {hosts} hosts x {ppn} ranks = {n} ranks, out-degree {degree}, "
          f"depth {depth}")
    for name, value, why in (
            ("agents", agents, f"launcher {launcher:.2f} s + {depth} levels x "
                               f"({alone.get('ssh_agent', alone['ssh']):.2f} s ssh and agent "
                               f"+ {degree} x {spawn * 1e3:.0f} ms the parent's share)"),
            ("fork_exec", fork, f"{ppn} ranks on one host"),
            ("exchange", exchange, f"{table / 1e6:.1f} MB to every rank; each agent relays "
                                   f"it to {degree} children and {ppn} ranks at "
                                   f"{relay / 1e6:.0f} MB/s, over {depth} levels"),
            ("attach", attach, "as measured"),
            ("barrier", barrier, f"log2({n}) rounds at this machine's cost per round, where "
                                 "every rank shares 2 cores: an upper bound"),
            ("exit", ending, "the slowest measured (all ranks ending on 2 cores): an upper "
                             "bound")):
        print(f"  {name:<10} {value:8.2f} s   {why}")
    print(f"  {'start':<10} {total - ending:8.2f} s   through gasnet_init, attach and a barrier")
    print(f"  {'total':<10} {total:8.2f} s   start to exit")
    rss = extra.get("rss_udp", {})
    if len(rss) >= 2:
        (lo, rlo), (hi, rhi) = sorted(rss.items())[0], sorted(rss.items())[-1]
        slope = (rhi["median"] - rlo["median"]) / (hi - lo)
        print(f"\nmemory per rank (VmHWM median): {rlo['median']:.1f} MiB at {lo} ranks, "
              f"{rhi['median']:.1f} MiB at {hi}: {slope * 1024:.2f} KiB per added rank; at "
              f"{n} ranks {rhi['median'] + slope * (n - hi):.0f} MiB (of which the start-up "
              f"table {table / 2**20:.1f} MiB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
