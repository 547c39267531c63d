"""An agent's control hub: the Unix socket its ranks connect to. Only a connection that proves
it belongs to the job (the per-job cookie) is a rank; anything else (garbage, an HTTP request,
a frame claiming 100 MiB, connections left idle, more of them than file descriptors) is
dropped without disturbing the job. A rank that breaks the protocol after proving itself is a
failed rank: that ends the job with a message."""
from __future__ import annotations

import errno
import os
import secrets
import socket
import time
from dataclasses import dataclass, field
from functools import partial
from typing import Callable

from ..loop import Loop
from .ranks import SpawnError
from .secret import same_secret
from .protocol import (BLOB_MAX, GET, HEADER, HELLO, LEAVING, OP_ABORT, OP_EXCHANGE, OP_GET,
                       OP_HELLO, OP_LEAVING, OP_NAMES, OP_PUT)

AUTH_DEADLINE = 10.0  # seconds a connection may take to prove itself
EXTRA_PENDING = 64    # unauthenticated connections kept beyond the ranks still expected


class RankProtocolError(Exception):
    """A rank of this job broke the protocol; the job cannot continue."""


@dataclass
class Connection:
    sock: socket.socket
    opened: float
    rank: int | None = None
    pid: int | None = None
    buffer: bytearray = field(default_factory=bytearray)


class Handlers:
    """What the hub reports to its agent."""
    exchange: Callable[[int, bytes], None]
    put: Callable[[int, bytes], None]   # rank, its card
    get: Callable[[int, int], None]     # rank, the rank whose card it wants
    leaving: Callable[[int, int, bool], None]
    abort: Callable[[int, int], None]
    failed: Callable[[str], None]
    dropped: Callable[[str], None]


def control_socket_name(jobid: str, index: int) -> str:
    """The abstract socket an agent's ranks connect to. The job id is visible to every local
    user (/proc/net/unix lists the sockets of agents already up), so 64 random bits make the
    name of an agent not yet up impossible to guess and take first."""
    return f"gasnetrun-{jobid}-{index}-{secrets.token_hex(8)}"


class ControlHub:
    def __init__(self, loop: Loop, name: str, cookie: str, ranks: set[int],
                 handlers: Handlers) -> None:
        self.loop = loop
        self.name = name  # abstract socket name, without the leading NUL
        self.cookie = cookie.encode()
        self.ranks = ranks
        self.handlers = handlers
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)
        try:
            self.listener.bind("\0" + name)
        except OSError as err:
            self.listener.close()
            raise SpawnError(f"cannot open the job's control socket @{name}: {err.strerror}"
                             + (" (another process holds that name)"
                                if err.errno == errno.EADDRINUSE else "")) from err
        self.listener.listen(min(len(ranks) + EXTRA_PENDING, 4096))
        self.listener.setblocking(False)
        self.by_rank: dict[int, Connection] = {}
        self.pending: dict[int, Connection] = {}  # fd -> unauthenticated connection
        self._reserve: int | None = os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC)
        loop.add_reader(self.listener.fileno(), self._accept)
        self._sweep_timer = loop.call_later(AUTH_DEADLINE / 2, self._sweep)

    @property
    def address(self) -> str:
        return "@" + self.name

    def close(self) -> None:
        self.loop.cancel(self._sweep_timer)
        for conn in list(self.by_rank.values()) + list(self.pending.values()):
            self._close(conn)
        self.loop.remove_reader(self.listener.fileno())
        self.listener.close()
        if self._reserve is not None:
            os.close(self._reserve)

    def send(self, rank: int, frame: bytes) -> None:
        conn = self.by_rank.get(rank)
        if conn is None:
            return  # gone: the supervisor sees its exit
        try:
            conn.sock.setblocking(True)
            conn.sock.settimeout(5.0)
            conn.sock.sendall(frame)
        except OSError:
            pass
        finally:
            conn.sock.setblocking(False)

    # ---- accepting ----------------------------------------------------------------------
    def _accept(self) -> None:
        while True:
            try:
                sock, _ = self.listener.accept()
            except BlockingIOError:
                return
            except OSError as err:
                if err.errno in (errno.EMFILE, errno.ENFILE):
                    self._shed_one()
                    continue
                return
            sock.setblocking(False)
            conn = Connection(sock, time.monotonic())
            # Room for every rank still expected, plus a margin; beyond, the oldest waiting
            # connection goes (a rank sends its HELLO at once, an idle intruder does not).
            if len(self.pending) >= len(self.ranks) - len(self.by_rank) + EXTRA_PENDING:
                oldest = min(self.pending.values(), key=lambda c: c.opened)
                self._drop(oldest, "too many connections waiting to authenticate")
            self.pending[sock.fileno()] = conn
            self.loop.add_reader(sock.fileno(), partial(self._readable, conn))
            self._readable(conn)  # its HELLO is usually there already

    def _shed_one(self) -> None:
        """Out of descriptors: accept with the reserve one and close at once, so the listener
        does not stay readable forever; then keep the reserve again."""
        if self._reserve is None:
            return
        os.close(self._reserve)
        self._reserve = None
        try:
            sock, _ = self.listener.accept()
            sock.close()
        except OSError:
            pass
        try:
            self._reserve = os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            pass
        self.handlers.dropped("out of file descriptors: refused a connection")

    def _sweep(self) -> None:
        now = time.monotonic()
        for conn in list(self.pending.values()):
            if now - conn.opened > AUTH_DEADLINE:
                self._drop(conn, f"no authentication within {AUTH_DEADLINE:g} s")
        self._sweep_timer = self.loop.call_later(AUTH_DEADLINE / 2, self._sweep)

    # ---- reading ------------------------------------------------------------------------
    def _close(self, conn: Connection) -> None:
        self.loop.remove_reader(conn.sock.fileno())
        self.pending.pop(conn.sock.fileno(), None)
        if conn.rank is not None and self.by_rank.get(conn.rank) is conn:
            del self.by_rank[conn.rank]
        conn.sock.close()

    def _drop(self, conn: Connection, why: str) -> None:
        self._close(conn)
        self.handlers.dropped(why)

    def _readable(self, conn: Connection) -> None:
        try:
            # Before authentication nothing larger than a HELLO is read.
            limit = HEADER.size + HELLO.size if conn.rank is None else 1 << 16
            data = conn.sock.recv(limit - len(conn.buffer) if conn.rank is None else limit)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            data = b""
        if not data:
            self._close(conn)
            return
        conn.buffer += data
        try:
            self._frames(conn)
        except RankProtocolError as err:
            self._close(conn)
            self.handlers.failed(str(err))

    def _frames(self, conn: Connection) -> None:
        while len(conn.buffer) >= HEADER.size:
            op, length = HEADER.unpack_from(conn.buffer)
            if conn.rank is None:
                if op != OP_HELLO or length != HELLO.size:
                    self._drop(conn, "a connection did not start with a HELLO")
                    return
            elif length > BLOB_MAX + 64:
                raise RankProtocolError(f"rank {conn.rank} sent a {length}-byte "
                                        f"{OP_NAMES.get(op, op)} frame (at most {BLOB_MAX})")
            if len(conn.buffer) < HEADER.size + length:
                return
            payload = bytes(conn.buffer[HEADER.size:HEADER.size + length])
            del conn.buffer[:HEADER.size + length]
            if conn.rank is None:
                if not self._hello(conn, payload):
                    return
            else:
                self._frame(conn, op, payload)

    def _hello(self, conn: Connection, payload: bytes) -> bool:
        cookie, rank, pid = HELLO.unpack(payload)
        if not same_secret(cookie, self.cookie):
            self._drop(conn, "a connection presented a wrong cookie")
            return False
        if rank not in self.ranks or rank in self.by_rank:
            raise RankProtocolError(f"a process announced itself as rank {rank}, which is "
                                    f"{'already connected' if rank in self.by_rank else 'not a rank of this host'}")
        del self.pending[conn.sock.fileno()]
        conn.rank, conn.pid = rank, pid
        self.by_rank[rank] = conn
        return True

    def _frame(self, conn: Connection, op: int, payload: bytes) -> None:
        rank = conn.rank
        assert rank is not None
        if op == OP_EXCHANGE:
            if len(payload) > BLOB_MAX:
                raise RankProtocolError(f"rank {rank} exchanged {len(payload)} bytes (at most "
                                        f"{BLOB_MAX})")
            self.handlers.exchange(rank, payload)
        elif op == OP_PUT and 0 < len(payload) <= BLOB_MAX:
            self.handlers.put(rank, payload)
        elif op == OP_GET and len(payload) == GET.size:
            self.handlers.get(rank, GET.unpack(payload)[0])
        elif op in (OP_LEAVING, OP_ABORT) and len(payload) == LEAVING.size:
            code, ends_job = LEAVING.unpack(payload)
            if op == OP_ABORT:
                self.handlers.abort(rank, code)
            else:
                self.handlers.leaving(rank, code, bool(ends_job))
        else:
            raise RankProtocolError(f"rank {rank} sent an unknown or malformed frame (op {op}, "
                                    f"{len(payload)} bytes)")
