"""The Chrome/Perfetto trace-event form of a trace (open it at ui.perfetto.dev: "Open trace
file"): one track per rank; calls that waited are slices as long as the wait, others
instants. Every rank's time 0 is the end of gasnet_init's bootstrap exchange, which all ranks
leave together, so the tracks line up without further correction.

Written event by event as the trace is read (the format does not need them in time order),
into a file beside the output that replaces it only when the whole trace was read."""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from .parse import Event


def item(e: Event) -> dict[str, Any]:
    args: dict[str, Any] = {"message": e.text}
    if e.loc:
        args["source"] = e.loc
    if e.peer is not None:
        args["peer"] = e.peer
        args["bytes"] = e.nbytes
    out: dict[str, Any] = {"name": e.name, "cat": e.category, "pid": e.rank, "tid": 0,
                           "args": args}
    if e.duration is not None:
        # The line is written when the call returns: the slice ends there.
        out.update(ph="X", ts=(e.time - e.duration) * 1e6, dur=e.duration * 1e6)
    else:
        out.update(ph="i", s="t", ts=e.time * 1e6)
    return out


class TimelineWriter:
    def __init__(self, path: str) -> None:
        self.path = Path(path)
        self.partial = self.path.with_name(f".{self.path.name}.{os.getpid()}.partial")
        self.out = self.partial.open("w", encoding="utf-8")
        self.out.write('{"traceEvents": [')
        self.first = True
        self.ranks: set[int] = set()

    def _write(self, record: dict[str, Any]) -> None:
        self.out.write(("\n" if self.first else ",\n") + json.dumps(record))
        self.first = False

    def add(self, e: Event) -> None:
        if e.category == "I":
            return
        if e.rank not in self.ranks:  # its track's name and place, before its first event
            self.ranks.add(e.rank)
            self._write({"name": "process_name", "ph": "M", "pid": e.rank, "tid": 0,
                         "args": {"name": f"rank {e.rank}"}})
            self._write({"name": "process_sort_index", "ph": "M", "pid": e.rank, "tid": 0,
                         "args": {"sort_index": e.rank}})
        self._write(item(e))

    def finish(self) -> None:
        self.out.write('\n], "displayTimeUnit": "ns", "otherData": ' + json.dumps(
            {"source": "gasnet-trace", "clock": "time 0 of every rank is the end of "
             "gasnet_init's bootstrap exchange"}) + "}\n")
        self.out.close()
        self.partial.replace(self.path)

    def discard(self) -> None:
        self.out.close()
        self.partial.unlink(missing_ok=True)
