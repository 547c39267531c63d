"""A small event loop: file-descriptor readers, timers, and signals delivered as events.

Every process of the launcher (gasnetrun and each per-host agent) runs one: the agents' work
is reacting to sockets, pipes, process ends and deadlines, never computing."""
from __future__ import annotations

import heapq
import itertools
import os
import selectors
import signal
import time
from typing import Callable

Callback = Callable[[], None]


class Loop:
    def __init__(self) -> None:
        self._sel = selectors.DefaultSelector()
        self._timers: list[tuple[float, int, Callback]] = []
        self._seq = itertools.count()
        self._cancelled: set[int] = set()
        self._signal_handlers: dict[int, Callable[[int], None]] = {}
        self._old_signals: dict[int, object] = {}
        self._wake_r: int | None = None  # the signal wake-up pipe
        self._wake_w: int | None = None
        self._old_wakeup = -1

    # ---- readers and writers ----------------------------------------------------------
    # A descriptor may have both (a socket read from and written to without blocking): the
    # selector holds one registration per descriptor, with [reader, writer] as its data.
    def _set(self, fd: int, slot: int, callback: Callback | None) -> None:
        try:
            key = self._sel.get_key(fd)
            pair = list(key.data)
        except (KeyError, ValueError):
            key, pair = None, [None, None]
        pair[slot] = callback
        events = (selectors.EVENT_READ if pair[0] else 0) | \
            (selectors.EVENT_WRITE if pair[1] else 0)
        if key is None:
            if events:
                self._sel.register(fd, events, pair)
        elif events:
            self._sel.modify(fd, events, pair)
        else:
            self._sel.unregister(fd)

    def add_reader(self, fd: int, callback: Callback) -> None:
        self._set(fd, 0, callback)

    def remove_reader(self, fd: int) -> None:
        """Forgets fd's reader (a descriptor already closed is forgotten altogether)."""
        try:
            self._set(fd, 0, None)
        except (KeyError, ValueError, OSError):
            self._forget(fd)

    def add_writer(self, fd: int, callback: Callback) -> None:
        """callback runs whenever fd can take more bytes, until remove_writer(fd)."""
        self._set(fd, 1, callback)

    def remove_writer(self, fd: int) -> None:
        try:
            self._set(fd, 1, None)
        except (KeyError, ValueError, OSError):
            self._forget(fd)

    def _forget(self, fd: int) -> None:
        try:
            self._sel.unregister(fd)
        except (KeyError, ValueError, OSError):
            pass

    def has_reader(self, fd: int) -> bool:
        try:
            return self._sel.get_key(fd).data[0] is not None
        except (KeyError, ValueError):
            return False

    # ---- timers -------------------------------------------------------------------------
    def call_at(self, when: float, callback: Callback) -> int:
        """Runs callback at monotonic time `when`; returns an id for cancel()."""
        ident = next(self._seq)
        heapq.heappush(self._timers, (when, ident, callback))
        return ident

    def call_later(self, delay: float, callback: Callback) -> int:
        return self.call_at(time.monotonic() + delay, callback)

    def cancel(self, ident: int) -> None:
        self._cancelled.add(ident)

    # ---- signals ------------------------------------------------------------------------
    def on_signal(self, signum: int, handler: Callable[[int], None]) -> None:
        """Runs handler(signum) from the loop (not in signal context) when signum arrives."""
        if self._wake_r is None:
            self._wake_r, self._wake_w = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
            self._old_wakeup = signal.set_wakeup_fd(self._wake_w, warn_on_full_buffer=False)
            self.add_reader(self._wake_r, self._drain_signals)
        self._signal_handlers[signum] = handler
        self._old_signals[signum] = signal.signal(signum, lambda *_: None)

    def _drain_signals(self) -> None:
        assert self._wake_r is not None
        try:
            data = os.read(self._wake_r, 256)
        except BlockingIOError:
            return
        for signum in data:
            handler = self._signal_handlers.get(signum)
            if handler:
                handler(signum)

    # ---- running ------------------------------------------------------------------------
    def run_once(self, max_wait: float | None = None) -> None:
        now = time.monotonic()
        while self._timers and self._timers[0][1] in self._cancelled:
            self._cancelled.discard(heapq.heappop(self._timers)[1])
        wait = max_wait
        if self._timers:
            until = max(0.0, self._timers[0][0] - now)
            wait = until if wait is None else min(wait, until)
        ready = self._sel.select(wait)
        fds = self._sel.get_map()
        for key, events in ready:
            # The callbacks as they are now: an earlier one in this batch may have dropped (and
            # closed) this descriptor; its stale readiness must not reach anyone.
            for flag, slot in ((selectors.EVENT_READ, 0), (selectors.EVENT_WRITE, 1)):
                if events & flag:
                    now_key = fds.get(key.fd)
                    if now_key is not None and now_key.data[slot]:
                        now_key.data[slot]()
        now = time.monotonic()
        while self._timers and self._timers[0][0] <= now:
            _, ident, callback = heapq.heappop(self._timers)
            if ident in self._cancelled:
                self._cancelled.discard(ident)
                continue
            callback()

    def run_until(self, done: Callable[[], bool]) -> None:
        while not done():
            self.run_once()

    def close(self) -> None:
        for signum, old in self._old_signals.items():
            signal.signal(signum, old)  # type: ignore[arg-type]
        if self._wake_r is not None:
            signal.set_wakeup_fd(self._old_wakeup)
            os.close(self._wake_r)
            assert self._wake_w is not None
            os.close(self._wake_w)
        self._sel.close()


def set_nonblocking(fd: int) -> None:
    os.set_blocking(fd, False)
