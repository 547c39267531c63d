"""A time budget as a deadline on the sweep's own clock.

The clock counts seconds of sweeping: it starts at 0 with the sweep and, on resume, goes on
from where the saved state left it (the time between a Ctrl-C and the resume is not the
sweep's). A run starts only when the clock plus the run's expected duration is within the
budget; a run still going one expected duration past the deadline is stopped (and dropped:
it says nothing about its point). So a sweep ends within the budget plus one run's time, however
slow its runs become.

Every decision made from saved runs uses only what the state file holds (each run's start on
the clock and its duration), so a resumed sweep replays into the same plan."""
from __future__ import annotations

import math
import time
from typing import Sequence

from .state import SavedRun

PACE_RUNS = 3   # the next run is expected to take as long as the slowest of the last 3
RATE_RUNS = 5   # re-planning counts on the mean of the last 5 runs' durations
MARGIN = 1.1    # and 10% more: a run's time is known only roughly


class Deadline:
    def __init__(self, seconds: float, elapsed: float) -> None:
        self.seconds = seconds
        self.origin = time.monotonic() - elapsed

    def now(self) -> float:
        return time.monotonic() - self.origin

    @staticmethod
    def expected(runs: Sequence[SavedRun]) -> float:
        """The next run's expected duration: the slowest of the last few, so that a run that
        got slower sets the pace at once (a faster one only after a few runs)."""
        return max(r.seconds for r in runs[-PACE_RUNS:])

    def fits(self, start: float, expected: float) -> bool:
        return start + expected <= self.seconds

    def timeout(self, start: float, expected: float) -> float:
        """How long a run that starts now may take before it is stopped at the deadline plus
        one expected run."""
        return max(0.0, self.seconds - start) + expected

    def runs_left(self, runs: Sequence[SavedRun]) -> int:
        """How many more runs fit after the last saved one, at the recent runs' pace."""
        last = runs[-1]
        end = (last.started + last.seconds if last.started is not None
               else sum(r.seconds for r in runs))
        recent = [r.seconds for r in runs[-RATE_RUNS:]]
        per_run = MARGIN * sum(recent) / len(recent)
        if per_run <= 0:
            return 0
        return max(0, math.floor((self.seconds - end) / per_run))
