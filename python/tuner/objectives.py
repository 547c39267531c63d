"""Objectives: which benchmark records a sweep optimizes, and how a run's records become one
cost (lower is better) that points can be compared by.

A run's cost is the weighted mean of ln(value) (ln(1/value) where higher is better), so that
objectives in different units mix, and a cost difference d is a ratio exp(d) of the figures."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from .errors import TuneError, UsageError

# name: (benchmark program, record "bench", record "size"); the records' own "better" field
# says which way is better.
BUILTIN: dict[str, tuple[str, str, int]] = {
    "am-latency": ("am_bench", "am_short_rtt", 0),
    "am-rate": ("am_bench", "am_short_flood", 0),
    "put-bw": ("rma_bench", "put_bulk_bw", 1048576),
    "get-latency": ("rma_bench", "get_latency", 8),
    "barrier": ("am_bench", "barrier", 0),
}
ACCEPTED = (", ".join(BUILTIN) + ", mix:NAME=W,NAME=W,... or record:BENCH[@SIZE] (a record "
            "of --program)")


@dataclass(frozen=True)
class Metric:
    name: str
    program: str      # a bundled benchmark's name, or "" for --program
    bench: str
    size: int | None  # None: the record of that name, whatever its size
    weight: float


@dataclass(frozen=True)
class Objective:
    text: str
    metrics: tuple[Metric, ...]

    @property
    def programs(self) -> list[str]:
        """The benchmark programs one run executes, in a fixed order."""
        return sorted({m.program for m in self.metrics})

    def only(self, program: str) -> str:
        """The --only argument for program."""
        return ",".join(sorted({m.bench for m in self.metrics if m.program == program}))

    @property
    def single(self) -> bool:
        return len(self.metrics) == 1

    def cost(self, records: list[dict[str, Any]]) -> float:
        total = weights = 0.0
        for m in self.metrics:
            rec = find_record(records, m)
            try:
                value = float(rec["median"])
            except (KeyError, TypeError, ValueError):
                raise TuneError(f"the '{m.bench}' record has no numeric median: "
                                f"{rec.get('median')!r}") from None
            if not value > 0 or not math.isfinite(value):
                raise TuneError(f"{m.bench} reported {value!r}: a positive figure is needed")
            sign = -1.0 if direction(rec) == "higher" else 1.0
            total += m.weight * sign * math.log(value)
            weights += m.weight
        return total / weights

    def unit_and_direction(self, records: list[dict[str, Any]]) -> tuple[str, str]:
        """For a single objective: the record's unit and which way is better."""
        rec = find_record(records, self.metrics[0])
        return str(rec.get("unit", "")), direction(rec)


def direction(rec: dict[str, Any]) -> str:
    """Which way a record's figure is better: "higher" only when it says so."""
    return "higher" if rec.get("better") == "higher" else "lower"


def find_record(records: list[dict[str, Any]], m: Metric) -> dict[str, Any]:
    for rec in records:
        if rec.get("bench") == m.bench and (m.size is None or rec.get("size") == m.size):
            return rec
    size = "" if m.size is None else f" of size {m.size}"
    raise TuneError(f"the benchmark printed no '{m.bench}' record{size} (objective {m.name})")


def _custom(text: str, weight: float) -> Metric:
    spec = text[len("record:"):]
    bench, at, size = spec.partition("@")
    if not bench or (at and not (size.isascii() and size.isdigit())):
        raise UsageError(f"--objective {text!r}: expected record:BENCH or record:BENCH@SIZE "
                         "(SIZE in bytes)")
    return Metric(text, "", bench, int(size) if at else None, weight)


def parse_objective(text: str, has_program: bool) -> Objective:
    if text in BUILTIN:
        program, bench, size = BUILTIN[text]
        return Objective(text, (Metric(text, program, bench, size, 1.0),))
    if text.startswith("record:"):
        if not has_program:
            raise UsageError(f"--objective {text!r}: a record objective needs --program (the "
                             "benchmark that prints it)")
        return Objective(text, (_custom(text, 1.0),))
    if text.startswith("mix:"):
        metrics: list[Metric] = []
        for part in text[4:].split(","):
            name, eq, weight = part.partition("=")
            try:
                w = float(weight) if eq else 1.0
            except ValueError:
                w = -1.0
            if name not in BUILTIN or not (w > 0 and math.isfinite(w)):
                raise UsageError(f"--objective {text!r}: '{part}' is not NAME=WEIGHT with NAME "
                                 f"one of {', '.join(BUILTIN)} and a positive weight")
            if any(m.name == name for m in metrics):
                raise UsageError(f"--objective {text!r}: {name} is listed twice")
            program, bench, size = BUILTIN[name]
            metrics.append(Metric(name, program, bench, size, w))
        if not metrics:
            raise UsageError(f"--objective {text!r}: the mix lists nothing ({ACCEPTED})")
        return Objective(text, tuple(metrics))
    raise UsageError(f"--objective {text!r}: not one of {ACCEPTED}")
