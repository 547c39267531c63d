"""gasnet-trace: read the trace files of a GASNet job and summarise them by source line, by
operation or by peer pair (a table, or --json); write a Perfetto timeline (--timeline) or a
rank x rank heatmap of the traffic (--heatmap)."""
from __future__ import annotations

import argparse
import json
import re
import sys

from rich.console import Console
from rich.table import Table

from .parse import Event, TraceError, load
from .summary import GROUPINGS, SORTS, Row, Summary, selector
from .timeline import TimelineWriter
from .traffic import Traffic


class UsageError(Exception):
    pass


def parse_ranks(text: str) -> set[int]:
    """'0,2-4' as a set of ranks."""
    ranks: set[int] = set()
    for item in text.split(","):
        m = re.fullmatch(r"\s*(\d+)\s*(?:-\s*(\d+)\s*)?", item)
        if not m or (m[2] and int(m[2]) < int(m[1])):
            raise UsageError(f"--rank {text!r}: expected ranks and ranges separated by commas "
                             "(e.g. 0,2-4)")
        ranks.update(range(int(m[1]), int(m[2] or m[1]) + 1))
    return ranks


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="gasnet-trace", description=__doc__,
        epilog="FILE may be a GASNET_TRACEFILE pattern: trace-% reads trace-0, trace-1, ...")
    p.add_argument("files", nargs="+", metavar="FILE")
    p.add_argument("--by", choices=GROUPINGS, default="op",
                   help="group events by source line, operation or peer pair (default: op)")
    p.add_argument("--sort", choices=SORTS, default="count",
                   help="order of the rows (default: count, largest first)")
    p.add_argument("--rank", metavar="LIST", help="only these ranks (e.g. 0,2-4)")
    p.add_argument("--category", metavar="LETTERS",
                   help="only these categories (GASNet's letters, e.g. PG)")
    p.add_argument("--op", metavar="REGEX", help="only operations whose name matches")
    p.add_argument("--top", type=int, metavar="N", help="only the first N rows")
    p.add_argument("--json", action="store_true", help="the summary as JSON")
    p.add_argument("--timeline", metavar="OUT.json",
                   help="write the Chrome/Perfetto trace-event form (a track per rank)")
    p.add_argument("--heatmap", metavar="OUT.png",
                   help="write the rank x rank bytes and messages picture")
    return p


def print_table(rows: list[Row], by: str) -> None:
    table = Table(title=f"GASNet trace by {by}")
    table.add_column({"line": "source line", "op": "operation", "peer": "rank -> peer"}[by])
    for name in ("events", "bytes", "waited (us)", "ranks"):
        table.add_column(name, justify="right" if name != "ranks" else "left")
    for r in rows:
        ranks = sorted(r.ranks)
        shown = ",".join(map(str, ranks)) if len(ranks) <= 8 else f"{len(ranks)} ranks"
        table.add_row(r.key, str(r.count), str(r.nbytes), f"{r.time * 1e6:.1f}", shown)
    Console().print(table)


def main(argv: list[str] | None = None) -> int:
    from gasnetrun.closedpipe import quiet_on_closed_pipe  # installed beside this package
    return quiet_on_closed_pipe(lambda: run(argv))


def run(argv: list[str] | None) -> int:
    args = parser().parse_args(argv)
    try:
        if args.top is not None and args.top < 1:
            raise UsageError(f"--top {args.top}: expected a positive number of rows")
        if args.category and not re.fullmatch(r"[GPSWXBLAICDNHUO]+", args.category):
            raise UsageError(f"--category {args.category!r}: expected GASNet's category letters "
                             "(GPSWXBLAICDNHUO)")
        if args.op:
            try:
                re.compile(args.op)
            except re.error as err:
                raise UsageError(f"--op {args.op!r}: not a regular expression ({err})") from None
        ranks = parse_ranks(args.rank) if args.rank else None
    except UsageError as err:
        print(f"gasnet-trace: error: {err}", file=sys.stderr)
        return 2
    # One pass over the files, each event handed to what was asked for as it is read.
    wanted = selector(ranks, args.category, args.op)
    summary = Summary(args.by)
    traffic = Traffic() if args.heatmap else None
    try:
        timeline = TimelineWriter(args.timeline) if args.timeline else None
    except OSError as err:
        print(f"gasnet-trace: error: --timeline {args.timeline}: {err.strerror}", file=sys.stderr)
        return 2

    def take(e: Event) -> None:
        if not wanted(e):
            return
        summary.add(e)
        if traffic is not None:
            traffic.add(e)
        if timeline is not None:
            timeline.add(e)

    try:
        trace = load(args.files, take)
        if ranks is not None and trace.nranks is not None and max(ranks) >= trace.nranks:
            raise UsageError(f"--rank {args.rank}: the traced job has ranks 0-"
                             f"{trace.nranks - 1}")
    except (UsageError, TraceError) as err:
        if timeline is not None:
            timeline.discard()
        print(f"gasnet-trace: error: {err}", file=sys.stderr)
        return 2
    except BaseException:
        if timeline is not None:
            timeline.discard()
        raise
    for warning in trace.warnings:
        print(f"gasnet-trace: warning: {warning}", file=sys.stderr)
    if timeline is not None:
        timeline.finish()
    if traffic is not None:
        from .heatmap import write_heatmap
        write_heatmap(traffic, trace.peer_totals, args.heatmap)
    rows = summary.rows(args.sort)[:args.top]
    if args.json:
        print(json.dumps({"by": args.by, "files": [str(f) for f in trace.files],
                          "rows": [r.as_dict() for r in rows]}, indent=1))
    elif not (args.timeline or args.heatmap) or rows:
        print_table(rows, args.by)
    return 0


if __name__ == "__main__":
    sys.exit(main())
