"""Forwarding ranks' output line by line: a line of one rank is never cut by a line of another,
and --tag-output prefixes each with [rank]. Partial lines wait for their end (or the rank's)."""
from __future__ import annotations

import os
import sys
from typing import Callable

Sink = Callable[[int, int, bytes], None]  # rank, stream (1 or 2), complete lines
MAX_PENDING_LINE = 64 << 10  # a "line" longer than this is passed on in pieces


class LineSplitter:
    def __init__(self, sink: Sink) -> None:
        self.sink = sink
        self.partial: dict[tuple[int, int], bytearray] = {}

    def feed(self, rank: int, stream: int, data: bytes) -> None:
        buf = self.partial.setdefault((rank, stream), bytearray())
        buf += data
        cut = buf.rfind(b"\n") + 1
        if cut == 0 and len(buf) > MAX_PENDING_LINE:
            cut = len(buf)
        if cut:
            self.sink(rank, stream, bytes(buf[:cut]))
            del buf[:cut]

    def flush(self, rank: int, stream: int) -> None:
        """The rank ended: its unfinished last line goes as it is, as a rank writing to the
        terminal directly leaves it (tagged output ends each piece, see TerminalWriter)."""
        buf = self.partial.pop((rank, stream), None)
        if buf:
            self.sink(rank, stream, bytes(buf))


class TerminalWriter:
    """The root's sink: writes whole lines to gasnetrun's own stdout/stderr."""

    def __init__(self, tag: bool) -> None:
        self.tag = tag

    def __call__(self, rank: int, stream: int, data: bytes) -> None:
        if self.tag:  # every piece on its own tagged line, even an unfinished last one
            prefix = f"[{rank}] ".encode()
            if not data.endswith(b"\n"):
                data += b"\n"
            data = b"".join(prefix + line for line in data.splitlines(keepends=True))
        fd = sys.stdout.fileno() if stream == 1 else sys.stderr.fileno()
        view = memoryview(data)
        while view:
            try:
                n = os.write(fd, view)
            except BlockingIOError:
                continue
            except OSError:
                return  # our reader went away (e.g. `| head`); the job goes on
            view = view[n:]
