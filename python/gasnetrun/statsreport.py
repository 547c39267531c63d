"""gasnetrun --stats: the job runs with GASNET_STATSFILE pointing into a directory of
gasnetrun's; after it ends, the ranks' statistics are read back (with gasnet-trace's parser,
installed beside this package) and shown as per-rank totals, the busiest peer pairs and the
conduit's own counters (category C: udp's datagrams, retransmissions, drops) over all ranks."""
from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from typing import Any, Callable

from rich.console import Console
from rich.table import Table

TOP_PAIRS = 10
# GASNet's names of what a rank starts: transfers (puts, gets, memsets) and AMs it sends.
PUTS = ("PUT", "MEMSET")
GETS = ("GET",)
AMS = ("AMREQUEST_", "AMREPLY_")


class StatsRun:
    """The directory the ranks write into, and the environment that makes them."""

    def __init__(self, directory: str | None) -> None:
        self.owned = directory is None
        self.directory = directory or tempfile.mkdtemp(prefix="gasnet-stats-")
        os.makedirs(self.directory, exist_ok=True)
        self.pattern = os.path.join(self.directory, "stats-%")

    def env(self) -> dict[str, str]:
        return {"GASNET_STATSFILE": self.pattern}

    def cleanup(self, keep: bool) -> None:
        if self.owned and not keep:
            shutil.rmtree(self.directory, ignore_errors=True)


def _kind(name: str) -> str | None:
    if name.endswith("_HANDLER"):
        return None  # run here for another rank: not what this rank sent
    if name.startswith(AMS):
        return "am"
    if name.startswith(PUTS):
        return "put"
    if name.startswith(GETS):
        return "get"
    return None


def conduit_counters(stats: list[Any]) -> list[dict[str, Any]]:
    """The conduit's counters (category C) in the order the ranks write them: the sum over
    ranks, the busiest rank and its count, and bytes where the counter has them."""
    rows: dict[str, dict[str, Any]] = {}
    for st in stats:
        if st.category != "C":
            continue
        row = rows.setdefault(st.name, {"name": st.name, "total": 0, "bytes": None,
                                        "max": -1, "max_rank": None, "ranks": 0})
        row["total"] += st.count
        row["ranks"] += 1
        if st.total:
            row["bytes"] = (row["bytes"] or 0) + int(st.total)
        if st.count > row["max"]:
            row["max"], row["max_rank"] = st.count, st.rank
    return list(rows.values())


# What tells the problems of read_ranks apart, for grouping ranks.
PROBLEM_KINDS = ("which wrote it there", "file: none", "is empty", "cut short", "ends before")


def full_file_system(path: str) -> str:
    """' (the file system of DIR is full)' when it is, else ''."""
    folder = os.path.dirname(path) or "."
    try:
        st = os.statvfs(folder)
    except OSError:
        return ""
    return f" (the file system of {folder} is full)" if st.f_bavail == 0 else ""


def read_ranks(run: StatsRun, nranks: int, host_of: Callable[[int], str]) -> tuple[
        Any, dict[int, str]]:
    """Every rank's file, read one by one: what they hold together, and for each rank whose
    statistics are missing or cut, why (its file is on another host, absent, empty, cut by a
    full file system, or ends early)."""
    from gasnet_trace.parse import Trace, TraceError, load  # installed beside gasnetrun
    from .thishost import is_this_host
    whole = Trace([])
    why: dict[int, str] = {}
    for rank in range(nranks):
        path = run.pattern.replace("%", str(rank))
        if not os.path.exists(path):
            host = host_of(rank)
            why[rank] = (f"file is on host {host}, which wrote it there: --stats-dir a "
                         "directory every host shares" if not is_this_host(host) else
                         "file: none; the rank ended before gasnet_init, or could not create it "
                         "(its error above says)")
            continue
        try:
            trace = load([path])
        except TraceError:
            why[rank] = f"file {path} is empty{full_file_system(path)}"
            continue
        whole.stats += trace.stats
        whole.peer_totals += trace.peer_totals
        if trace.warnings:
            why[rank] = "file " + trace.warnings[0] + full_file_system(path)
    return whole, why


def collect(run: StatsRun, nranks: int,
            host_of: Callable[[int], str] = lambda rank: "localhost") -> dict[str, Any]:
    trace, why = read_ranks(run, nranks, host_of)
    ranks: dict[int, dict[str, Any]] = {}
    for st in trace.stats:
        row = ranks.setdefault(st.rank, {"rank": st.rank, "puts": 0, "put_bytes": 0, "gets": 0,
                                         "get_bytes": 0, "ams": 0, "am_bytes": 0,
                                         "barrier_wait_us": 0.0, "sync_wait_us": 0.0})
        kind = _kind(st.name)
        if kind:
            row[f"{kind}s"] += st.count
            row[f"{kind}_bytes"] += int(st.total)
        elif st.name == "BARRIER_WAIT":
            row["barrier_wait_us"] += st.total * 1e6
        elif st.name.startswith("WAIT_SYNC"):
            row["sync_wait_us"] += st.total * 1e6
    for p in trace.peer_totals:  # ranks that sent nothing still have a row
        ranks.setdefault(p.rank, {"rank": p.rank, "puts": 0, "put_bytes": 0, "gets": 0,
                                  "get_bytes": 0, "ams": 0, "am_bytes": 0,
                                  "barrier_wait_us": 0.0, "sync_wait_us": 0.0})
    sent: dict[int, tuple[int, int]] = {}
    for p in trace.peer_totals:
        m, b = sent.get(p.rank, (0, 0))
        sent[p.rank] = (m + p.msgs, b + p.nbytes)
    for rank, row in ranks.items():
        row["msgs"], row["bytes"] = sent.get(rank, (0, 0))
        row["barrier_wait_us"] = round(row["barrier_wait_us"], 3)
        row["sync_wait_us"] = round(row["sync_wait_us"], 3)
    pairs = sorted(({"from": p.rank, "to": p.peer, "msgs": p.msgs, "bytes": p.nbytes}
                    for p in trace.peer_totals),
                   key=lambda d: (-d["bytes"], -d["msgs"], d["from"], d["to"]))[:TOP_PAIRS]
    return {"ranks": [ranks[r] for r in sorted(ranks)], "pairs": pairs,
            "conduit": conduit_counters(trace.stats),
            "missing": [r for r in range(nranks) if r not in ranks],
            "problems": {str(r): text for r, text in sorted(why.items())}}


def report(run: StatsRun, nranks: int, as_json: bool,
           host_of: Callable[[int], str] = lambda rank: "localhost") -> None:
    """Written to stderr: the program's own output keeps stdout."""
    doc = collect(run, nranks, host_of)
    if as_json:
        print(json.dumps(doc, indent=1), file=sys.stderr)
        return
    # Wide enough for every column also when stderr is a file or a pipe.
    console = Console(file=sys.stderr, width=None if sys.stderr.isatty() else 132)
    table = Table(title="GASNet statistics per rank (what each rank started)")
    for column in ("rank", "msgs", "bytes", "puts", "put bytes", "gets", "get bytes", "AMs",
                   "AM bytes", "barrier wait (us)", "sync wait (us)"):
        table.add_column(column, justify="right")
    for r in doc["ranks"]:
        table.add_row(*(str(r[k]) for k in ("rank", "msgs", "bytes", "puts", "put_bytes",
                                            "gets", "get_bytes", "ams", "am_bytes")),
                      f"{r['barrier_wait_us']:.1f}", f"{r['sync_wait_us']:.1f}")
    console.print(table)
    pairs = Table(title=f"Top {TOP_PAIRS} peer pairs by bytes")
    for column in ("from", "to", "msgs", "bytes"):
        pairs.add_column(column, justify="right")
    for p in doc["pairs"]:
        pairs.add_row(str(p["from"]), str(p["to"]), str(p["msgs"]), str(p["bytes"]))
    console.print(pairs)
    if doc["conduit"]:
        counters = Table(title="Conduit counters over all ranks")
        for column in ("counter", "total", "bytes", "busiest rank", "its count"):
            counters.add_column(column, justify="left" if column == "counter" else "right")
        for c in doc["conduit"]:
            counters.add_row(c["name"], str(c["total"]),
                             "" if c["bytes"] is None else str(c["bytes"]),
                             str(c["max_rank"]) if c["max"] > 0 else "",
                             str(c["max"]) if c["max"] > 0 else "")
        console.print(counters)
    # Ranks of one kind of problem on one line (512 ranks on other hosts are one line), with
    # the first one's reason.
    grouped: dict[tuple[bool, str], list[str]] = {}
    for rank, text in doc["problems"].items():
        kind = next((k for k in PROBLEM_KINDS if k in text), text)
        grouped.setdefault((int(rank) in doc["missing"], kind), []).append(rank)
    for (missing, _), ranks in grouped.items():
        shown = ",".join(ranks[:16]) + ("..." if len(ranks) > 16 else "")
        # One line, never folded: it names files.
        print(f"gasnetrun: {'no' if missing else 'incomplete'} statistics from rank(s) "
              f"{shown}: rank {ranks[0]}'s {doc['problems'][ranks[0]]}", file=sys.stderr)
