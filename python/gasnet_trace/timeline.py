"""The Chrome/Perfetto trace-event form of a trace (open it at ui.perfetto.dev: "Open trace
file"): one track per rank; calls that waited are slices as long as the wait, others
instants. Every rank's time 0 is the end of gasnet_init's bootstrap exchange, which all ranks
leave together, so the tracks line up without further correction."""
from __future__ import annotations

from typing import Any

from .parse import Event


def trace_events(events: list[Event]) -> dict[str, Any]:
    out: list[dict[str, Any]] = []
    for rank in sorted({e.rank for e in events}):
        out.append({"name": "process_name", "ph": "M", "pid": rank, "tid": 0,
                    "args": {"name": f"rank {rank}"}})
        out.append({"name": "process_sort_index", "ph": "M", "pid": rank, "tid": 0,
                    "args": {"sort_index": rank}})
    for e in events:
        if e.category == "I":
            continue
        args: dict[str, Any] = {"message": e.text}
        if e.loc:
            args["source"] = e.loc
        if e.peer is not None:
            args["peer"] = e.peer
            args["bytes"] = e.nbytes
        item: dict[str, Any] = {"name": e.name, "cat": e.category, "pid": e.rank, "tid": 0,
                                "args": args}
        if e.duration is not None:
            # The line is written when the call returns: the slice ends there.
            item.update(ph="X", ts=(e.time - e.duration) * 1e6, dur=e.duration * 1e6)
        else:
            item.update(ph="i", s="t", ts=e.time * 1e6)
        out.append(item)
    return {"traceEvents": out, "displayTimeUnit": "ns",
            "otherData": {"source": "gasnet-trace", "clock": "time 0 of every rank is the "
                          "end of gasnet_init's bootstrap exchange"}}
