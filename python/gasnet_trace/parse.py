"""Reading trace files: GASNet's line form `rank time s> [file:line] (category) message`, the
`%` patterns of GASNET_TRACEFILE, and what each event says of its peer, size and duration.
Events are handed one at a time to the caller as they are read, never kept: a trace of any
size is read in memory that depends only on the job (its ranks, its statistics)."""
from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

# Categories whose lines are a client's own text (the tools header's GASNETT_TRACE_PRINTF: H;
# U, GASNet's "user" letter, the same), summarised as one kind of event.
CLIENT_CATEGORIES = "HU"
CLIENT_MESSAGE = "CLIENT_MESSAGE"
LINE = re.compile(r"^(\d+) (-?\d+\.\d+)s> (?:\[([^\]]*)\] )?\((\w)\) ?(.*)$")
NAME = re.compile(r"^(\w+):?(.*)$")  # the runtime's own events: a name, then what it says
RMA = re.compile(r"^ (\d+) bytes (to|from|at) (\d+)")
AM = re.compile(r"^ (to|from) (\d+), handler (\d+), (\d+) args, (\d+) bytes")
DURATION = re.compile(r"\((\d+(?:\.\d+)?)us\)$")
PEER_STATS = re.compile(r"^ (\d+): (\d+) msgs, (\d+) bytes$")
# The first line of every rank's file (csrc/core/trace/trace.c); older files lack the job id.
HEADER = re.compile(r"^ rank (\d+) of (\d+), host (\S+), pid (\d+), conduit \w+, \w+"
                    r"(?:, job (\S+))?")
MAX_BYTES = 1 << 62  # more than any transfer could move: a corrupt number
STAT = re.compile(r"^\s+(\d+) evnts(?:, total=(\d+(?:\.\d+)?)(us| sz))?")


class TraceError(Exception):
    """A file that is missing or not a trace: the message names it."""


@dataclass(frozen=True)
class Event:
    rank: int
    time: float            # seconds since the job's time 0 (gasnet_init's bootstrap exchange)
    loc: str | None        # the client's file:line
    category: str          # GASNet's letter
    name: str              # PUT_NB, AMREQUEST_SHORT, BARRIER_WAIT, ...
    text: str              # the rest of the message
    peer: int | None       # the other rank of a transfer or AM
    nbytes: int
    duration: float | None  # seconds, for calls that waited
    sent: bool              # this rank started it (a transfer, or an AM it sent)


@dataclass(frozen=True)
class PeerTotal:
    """A `PEER` line of a rank's statistics: what it sent to one peer."""
    rank: int
    peer: int
    msgs: int
    nbytes: int


@dataclass(frozen=True)
class StatTotal:
    """A line of a rank's statistics: how often an event happened, and its total (bytes, or
    seconds for waits; 0 for plain counts and try forms)."""
    rank: int
    category: str
    name: str
    count: int
    total: float


def _ignore(event: Event) -> None:
    pass


@dataclass
class Trace:
    files: list[Path]
    on_event: Callable[[Event], None] = _ignore  # each event of the files, in file order
    peer_totals: list[PeerTotal] = field(default_factory=list)
    stats: list[StatTotal] = field(default_factory=list)
    # What a reader should know of the files: one cut short by its rank (a full file system),
    # or one that ends before its rank's END line (the rank was killed, or it could not write);
    # lines skipped as corrupt; ranks of the job without a file.
    warnings: list[str] = field(default_factory=list)
    nranks: int | None = None  # the job's size, from the files' headers


def file_warning(path: Path, truncated: str | None, ended: bool) -> str | None:
    """What to say of a file from its TRUNCATED and END lines (None: it is whole)."""
    if truncated is not None:
        return f"{path}: cut short by its rank ({truncated}): what follows the cut is lost"
    if not ended:
        return (f"{path}: ends before its rank's END line: the rank was killed, or could not "
                "write the rest (a full file system?)")
    return None


def expand(patterns: list[str]) -> list[Path]:
    """Files named, with a GASNET_TRACEFILE `%` standing for any rank number."""
    out: list[Path] = []
    for pattern in patterns:
        if "%" not in pattern:
            path = Path(pattern)
            if not path.is_file():
                raise TraceError(f"{pattern}: no such file")
            out.append(path)
            continue
        folder = Path(pattern).parent
        name = re.compile(re.escape(Path(pattern).name).replace("%", r"\d+") + "$")
        found = sorted((p for p in folder.iterdir() if name.match(p.name)) if folder.is_dir()
                       else [], key=lambda p: [int(d) for d in re.findall(r"\d+", p.name)])
        if not found:
            raise TraceError(f"{pattern}: no file matches ('%' stands for a rank number)")
        out.extend(found)
    return out


Fields = tuple[int, float, str | None, str, str, str]


def fields(text: str) -> Fields | None:
    """(rank, time, file:line, category, name, rest) of a trace line; None: not one. A
    client's own message (GASNETT_TRACE_PRINTF) is free text: its name is CLIENT_MESSAGE and
    its rest the text as written."""
    m = LINE.match(text)
    if not m:
        return None
    rank, time, loc, category, rest = int(m[1]), float(m[2]), m[3], m[4], m[5]
    if category in CLIENT_CATEGORIES:
        return rank, time, loc, category, CLIENT_MESSAGE, rest
    n = NAME.match(rest)
    return (rank, time, loc, category, n[1], n[2]) if n else None


def parse_event(f: Fields) -> Event:
    rank, time, loc, category, name, text = f
    if category in CLIENT_CATEGORIES:
        return Event(rank, time, loc, category, name, text, None, 0, None, False)
    peer, nbytes, sent = None, 0, False
    if (r := RMA.match(text)):
        nbytes, peer, sent = int(r[1]), int(r[3]), True
    elif (a := AM.match(text)):
        peer, nbytes, sent = int(a[2]), int(a[5]), a[1] == "to"
    d = DURATION.search(text)
    return Event(rank, time, loc, category, name, text.strip(), peer, nbytes,
                 float(d[1]) * 1e-6 if d else None, sent)


def plausible(f: Fields, event: Event | None, nranks: int | None) -> bool:
    """Whether a line's numbers can be those of its job: its rank and peer within the job,
    its byte count one a transfer could have (every put and get line names both)."""
    if event is not None and ((event.category in "PG" and event.peer is None)
                              or not 0 <= event.nbytes < MAX_BYTES):
        return False
    if nranks is None:
        return True
    if not 0 <= f[0] < nranks:
        return False
    return event is None or ((event.peer is None or 0 <= event.peer < nranks)
                             and 0 <= event.nbytes < MAX_BYTES)


def ranks_text(ranks: list[int]) -> str:
    shown = ",".join(map(str, ranks[:16]))
    return shown + ("..." if len(ranks) > 16 else "")


def load(patterns: list[str], on_event: Callable[[Event], None] = _ignore) -> Trace:
    """Reads the files, handing each event to on_event; what is not an event (statistics,
    PEER totals, warnings, the job's size) comes back in the Trace. A TraceError after some
    events were handed over (files of two jobs) means the caller must discard what it made of
    them."""
    files = expand(patterns)
    trace = Trace(files, on_event)
    jobs: dict[tuple[str, int], list[Path]] = {}  # (job id, ranks) -> its files
    have: set[int] = set()  # ranks whose header was read
    for path in files:
        try:
            stream = path.open(errors="replace")
        except OSError as err:
            raise TraceError(f"{path}: {err.strerror}") from None
        in_stats: set[int] = set()  # ranks whose statistics have begun in this file
        matched = 0
        truncated: str | None = None
        ended = False
        nranks: int | None = None
        bad: list[tuple[int, str]] = []  # (line number, text) of corrupt lines
        with stream:
            for number, text in enumerate(stream, 1):
                matched, truncated, ended, nranks = _line(
                    trace, path, number, text.rstrip("\n"), in_stats, matched, truncated, ended,
                    nranks, bad, jobs, have)
        if not matched:
            raise TraceError(f"{path}: not a GASNet trace (no line of the form "
                             "'rank time s> [file:line] (category) message')")
        if bad:
            first_at, first = bad[0]
            trace.warnings.append(f"{path}: {len(bad)} corrupt line(s) skipped (a rank or peer "
                                  f"outside the job's {nranks} ranks, an impossible size, or "
                                  f"bytes that are no text); the first, line {first_at}: "
                                  f"{first[:120]!r}")
        if (warning := file_warning(path, truncated, ended)):
            trace.warnings.append(warning)
    if len(jobs) > 1:
        described = "; ".join(f"job {job or '(unnamed)'} of {n} ranks: "
                              + ", ".join(p.name for p in paths[:4])
                              + ("..." if len(paths) > 4 else "")
                              for (job, n), paths in jobs.items())
        raise TraceError(f"the files are of {len(jobs)} different jobs ({described}): name "
                         "one job's files (two jobs given one trace pattern overwrite each "
                         "other's)")
    if jobs:
        (_, trace.nranks), = jobs.keys()
        missing = sorted(set(range(trace.nranks)) - have)
        if missing:
            trace.warnings.append(f"no file for rank(s) {ranks_text(missing)} of the job's "
                                  f"{trace.nranks} (not traced, or their files are elsewhere)")
    return trace


def _line(trace: Trace, path: Path, number: int, text: str, in_stats: set[int], matched: int,
          truncated: str | None, ended: bool, nranks: int | None, bad: list[tuple[int, str]],
          jobs: dict[tuple[str, int], list[Path]], have: set[int]
          ) -> tuple[int, str | None, bool, int | None]:
    """One line of a file, into the trace; the file's running state back."""
    f = fields(text)
    if not f:
        if "\0" in text:  # a file two writers clobbered: not a program's output
            bad.append((number, text))
        return matched, truncated, ended, nranks  # a program's own output (trace to stdout)
    matched += 1
    rank, _, _, category, name, rest = f
    if category == "I" and name == "TRACE" and (h := HEADER.match(rest)):
        nranks = int(h[2])
        have.add(int(h[1]))
        paths = jobs.setdefault((h[5] or "", nranks), [])
        if path not in paths:
            paths.append(path)
        return matched, truncated, ended, nranks
    if category == "I" and name in ("END", "TRUNCATED"):
        # The file's own state, written by its rank (csrc/core/trace/trace_output.c).
        ended = ended or name == "END"
        if name == "TRUNCATED":
            truncated = rest.strip()
    elif category == "I" and name == "STATS":
        in_stats.add(rank)
    elif category == "I" and name == "PEER" and (p := PEER_STATS.match(rest)):
        pair = PeerTotal(rank, int(p[1]), int(p[2]), int(p[3]))
        if nranks is not None and not (0 <= rank < nranks and 0 <= pair.peer < nranks
                                       and pair.nbytes < MAX_BYTES):
            bad.append((number, text))
        else:
            trace.peer_totals.append(pair)
    elif rank not in in_stats:
        event = parse_event(f)
        if plausible(f, event, nranks) and ("\0" not in text):
            trace.on_event(event)
        else:
            bad.append((number, text))
    elif category not in CLIENT_CATEGORIES and (st := STAT.match(rest)):
        # (a client's statistics lines are its own text, not counters)
        total = float(st[2] or 0) * (1e-6 if st[3] == "us" else 1)
        trace.stats.append(StatTotal(rank, category, name, int(st[1]), total))
    return matched, truncated, ended, nranks
