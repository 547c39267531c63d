"""Waiting on events, never on the clock: a running job's output read line by line on a
thread, so a test waits until a line it names appears (or the process ends), with a generous
deadline that fails loudly naming what was awaited and what was seen instead."""
from __future__ import annotations

import queue
import re
import subprocess
import threading
import time
from typing import IO


class Lines:
    """Every line of one stream of a process, as it arrives; also kept for the final check."""

    def __init__(self, stream: IO[str], name: str = "output") -> None:
        self.name = name
        self.seen: list[str] = []
        self._queue: queue.Queue[str | None] = queue.Queue()
        self._thread = threading.Thread(target=self._pump, args=(stream,), daemon=True)
        self._thread.start()

    def _pump(self, stream: IO[str]) -> None:
        for line in stream:
            self._queue.put(line)
        self._queue.put(None)

    def wait_for(self, pattern: str, timeout: float = 60.0) -> re.Match[str]:
        """The first line from now on that matches pattern (a regular expression)."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            try:
                line = self._queue.get(timeout=max(left, 0.0)) if left > 0 else None
            except queue.Empty:
                line = None
                left = 0
            if line is None:
                why = "the stream ended" if left > 0 else f"{timeout:g} s passed"
                raise AssertionError(f"awaited a line matching {pattern!r} on {self.name}, but "
                                     f"{why}; seen:\n" + "".join(self.seen[-40:]))
            self.seen.append(line)
            m = re.search(pattern, line)
            if m:
                return m

    def rest(self, timeout: float = 60.0) -> str:
        """Everything, once the stream has ended."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"{self.name} did not end within {timeout:g} s; seen:\n"
                                     + "".join(self.seen[-40:]))
            try:
                line = self._queue.get(timeout=left)
            except queue.Empty:
                continue
            if line is None:
                return "".join(self.seen)
            self.seen.append(line)


def watch(proc: subprocess.Popen) -> tuple[Lines, Lines]:
    """A text-mode process started with stdout and stderr pipes: both streams, watched."""
    assert proc.stdout is not None and proc.stderr is not None
    return Lines(proc.stdout, "stdout"), Lines(proc.stderr, "stderr")
