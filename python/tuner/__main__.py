"""gasnet-tune: sweep | compare | show. Bad input exits 2 with a message naming it."""
from __future__ import annotations

import argparse
import json
import os
import signal
import sys

from rich.console import Console

from .common import add_launch_options
from .errors import TuneError, UsageError


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="gasnet-tune", description=(
        "Sweep tunable GASNET_* knobs with the bundled benchmarks (run through gasnetrun) and "
        "recommend an environment only where the gain clears the noise."))
    sub = p.add_subparsers(dest="command", required=True, metavar="sweep|compare|show")
    s = sub.add_parser("sweep", help="search the knobs' space and write DIR/tuned.env")
    add_launch_options(s, "5m")
    s.add_argument("--knobs", default=None, metavar="K1,K2",
                   help="sweep these tunable knobs over the table's values (default: every "
                        "tunable knob of the conduit)")
    s.add_argument("--space", default=None, metavar="FILE",
                   help="the knobs and values to sweep: 'GASNET_X' or 'GASNET_X = v1,v2' lines")
    s.add_argument("--method", choices=["auto", "grid", "coordinate", "halving"], default="auto",
                   help="grid (every point, in rounds), coordinate (sequential, guided by an "
                        "additive surrogate), halving (successive halving); auto: grid up to 2 "
                        "knobs when the budget gives it 2 rounds, else coordinate, else "
                        "halving")
    s.add_argument("--out", default="gasnet-tune.out", metavar="DIR",
                   help="where state, records, report and tuned.env go (default "
                        "gasnet-tune.out); the same command again resumes there")
    s.add_argument("--restart", action="store_true",
                   help="discard a sweep DIR holds instead of resuming it")
    c = sub.add_parser("compare", help="measure two env files side by side")
    c.add_argument("a", metavar="A.env")
    c.add_argument("b", metavar="B.env")
    add_launch_options(c, "20runs")
    w = sub.add_parser("show", help="print the report of a finished sweep")
    w.add_argument("dir", metavar="DIR")
    return p


def show(directory: str, console: Console) -> int:
    from . import report
    path = os.path.join(directory, "report.json")
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except OSError as err:
        raise UsageError(f"{directory}: no report to show ({path}: {err.strerror}); a finished "
                         "gasnet-tune sweep --out DIR writes it") from None
    except ValueError as err:
        raise UsageError(f"{path}: not a gasnet-tune report ({err})") from None
    try:
        report.show(doc, console)
    except (KeyError, TypeError, AttributeError, IndexError) as err:
        raise UsageError(f"{path}: not a gasnet-tune report (missing or bad {err})") from None
    return 0


def main(bin_dir: str | None = None) -> int:
    from gasnetrun.closedpipe import quiet_on_closed_pipe
    # SIGINT saves the sweep and stops it, also when a script started gasnet-tune in the
    # background (a shell without job control starts those with SIGINT ignored, and Python
    # then leaves it so): `kill -INT` is how such a sweep is stopped.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    return quiet_on_closed_pipe(lambda: run(bin_dir))


def run(bin_dir: str | None) -> int:
    bin_dir = bin_dir or os.path.dirname(os.path.realpath(sys.argv[0]))
    args = parser().parse_args()
    console = Console(stderr=False)
    try:
        if args.command == "show":
            return show(args.dir, console)
        if args.command == "sweep":
            from .sweep import sweep
            return sweep(args, bin_dir, console)
        from .compare import compare
        return compare(args, bin_dir, console)
    except UsageError as err:
        print(f"gasnet-tune: {err}", file=sys.stderr)
        return 2
    except TuneError as err:
        print(f"gasnet-tune: {err}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("gasnet-tune: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
