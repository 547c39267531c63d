"""When a job ends and with which code: the same policy as the runtime's fork supervisor.

The job's code is the first non-zero rank code in order of termination (128 + signal for a
rank killed by a signal). After the first rank ends, the others get a grace period to leave on
their own (a collective gasnet_exit), then SIGQUIT, then SIGKILL once the exit timeout passed.
"""
from __future__ import annotations

import os
import time
from dataclasses import dataclass

from . import _native


def code_of_status(status: int) -> int:
    """A wait status as a shell reports it: the exit code, or 128 + the signal."""
    if os.WIFSIGNALED(status):
        return 128 + os.WTERMSIG(status)
    return os.WEXITSTATUS(status)


@dataclass
class ExitPolicy:
    timeout: float
    code: int = 0
    quit_at: float | None = None
    kill_at: float | None = None
    started: bool = False

    def _start(self, grace: float) -> None:
        if not self.started:
            self.started = True
            now = time.monotonic()
            self.quit_at = now + grace
            self.kill_at = now + self.timeout

    def _record(self, code: int) -> None:
        if code and not self.code:
            self.code = code

    def rank_ended(self, status: int) -> None:
        self._record(code_of_status(status))
        self._start(0 if os.WIFSIGNALED(status) else _native.exit_grace(self.timeout))

    def rank_aborted(self, code: int) -> None:
        """A rank hit a fatal error: end everyone now, not after a grace period."""
        self._record(code or 1)
        self._start(0)
        self.quit_at = time.monotonic()

    def launcher_signalled(self, signum: int) -> None:
        self._record(128 + signum)
        self._start(0)

    def due(self) -> tuple[bool, bool]:
        """(send SIGQUIT now, send SIGKILL now)."""
        now = time.monotonic()
        quit_now = self.quit_at is not None and now >= self.quit_at
        if quit_now:
            self.quit_at = None
        return quit_now, self.kill_at is not None and now >= self.kill_at

    def next_deadline(self) -> float | None:
        pending = [t for t in (self.quit_at, self.kill_at) if t is not None]
        return min(pending) if pending else None
