"""Summaries of a trace: events grouped by source line, by operation or by peer pair, with
their counts, bytes and time spent waiting."""
from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from .parse import Event

GROUPINGS = ("line", "op", "peer")
SORTS = ("count", "bytes", "time", "key")


@dataclass
class Row:
    key: str
    count: int = 0
    nbytes: int = 0
    time: float = 0.0  # seconds waited (calls that report it)
    ranks: set[int] = field(default_factory=set)

    def as_dict(self) -> dict[str, object]:
        return {"key": self.key, "count": self.count, "bytes": self.nbytes,
                "time_us": round(self.time * 1e6, 3), "ranks": sorted(self.ranks)}


def key_of(e: Event, by: str) -> str | None:
    if by == "line":
        return e.loc or "(no source line: handlers, library)"
    if by == "op":
        return e.name
    # peer: traffic a rank started, as "rank -> peer"
    return f"{e.rank} -> {e.peer}" if e.sent and e.peer is not None else None


def selector(ranks: set[int] | None, categories: str | None,
             op: str | None) -> Callable[[Event], bool]:
    """Whether an event is one the reader asked for."""
    pattern = re.compile(op) if op else None
    return lambda e: (e.category != "I"
                      and (ranks is None or e.rank in ranks)
                      and (categories is None or e.category in categories)
                      and (pattern is None or pattern.search(e.name) is not None))


class Summary:
    """Events grouped as they come: its size is the number of groups, not of events."""

    def __init__(self, by: str) -> None:
        self.by = by
        self.groups: dict[str, Row] = {}

    def add(self, e: Event) -> None:
        key = key_of(e, self.by)
        if key is None:
            return
        row = self.groups.get(key)
        if row is None:
            row = self.groups[key] = Row(key)
        row.count += 1
        row.nbytes += e.nbytes
        row.time += e.duration or 0.0
        row.ranks.add(e.rank)

    def rows(self, sort: str = "count") -> list[Row]:
        ordered = list(self.groups.values())
        if sort == "key":
            def natural(r: Row) -> list[object]:
                return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", r.key)]
            ordered.sort(key=natural)
        else:
            attr = {"count": "count", "bytes": "nbytes", "time": "time"}[sort]
            ordered.sort(key=lambda r: (-getattr(r, attr), r.key))
        return ordered
