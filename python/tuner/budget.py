"""--budget: a number of runs ("200runs") or a duration ("90s", "10m", "1h")."""
from __future__ import annotations

import re
from dataclasses import dataclass

from .errors import UsageError

UNITS = {"s": 1, "m": 60, "h": 3600}
ACCEPTED = "a number of runs (200runs) or a duration (90s, 10m, 1h)"


@dataclass(frozen=True)
class Budget:
    runs: int | None = None      # a run: one execution of each benchmark the objective needs
    seconds: float | None = None

    def __str__(self) -> str:
        return f"{self.runs}runs" if self.runs is not None else f"{self.seconds:g}s"


def parse_budget(text: str, minimum_runs: int) -> Budget:
    m = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]+)?)\s*(runs?|[smh])\s*", text)
    if not m:
        raise UsageError(f"--budget {text!r}: not {ACCEPTED}")
    number, unit = float(m.group(1)), m.group(2)
    if unit.startswith("run"):
        if not number.is_integer() or number < minimum_runs or number > 1e7:
            raise UsageError(f"--budget {text!r}: a whole number of runs from {minimum_runs} "
                             "(the baseline is measured twice before anything else) to 10000000")
        return Budget(runs=int(number))
    seconds = number * UNITS[unit]
    if not 0 < seconds < 1e9:
        raise UsageError(f"--budget {text!r}: the duration must be positive and under 30 "
                         f"years ({ACCEPTED})")
    return Budget(seconds=seconds)
