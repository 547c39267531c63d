"""The launcher's half of the bootstrap control channel (spawners/local/protocol.md).

Ranks connect to a Unix socket, prove they belong to the job with its cookie, and then issue
collectives (exchange, broadcast) that are answered once every rank has asked.
"""
from __future__ import annotations

import hmac
import socket
import struct
from dataclasses import dataclass, field

OP_HELLO, OP_EXCHANGE, OP_BCAST, OP_ABORT, OP_FINI = 1, 2, 3, 4, 5
OP_NAMES = {OP_HELLO: "HELLO", OP_EXCHANGE: "EXCHANGE", OP_BCAST: "BCAST",
            OP_ABORT: "ABORT", OP_FINI: "FINI"}
HEADER = struct.Struct("=II")
HELLO = struct.Struct("=32sII")
MAX_FRAME = 64 << 20


class ProtocolError(Exception):
    """A rank broke the protocol; the job cannot continue."""


@dataclass
class Connection:
    sock: socket.socket
    rank: int | None = None
    pid: int | None = None
    buffer: bytearray = field(default_factory=bytearray)


@dataclass
class Event:
    """Something the job supervisor must act on."""
    kind: str  # "abort" or "fini"
    rank: int
    code: int = 0


class ControlHub:
    """Accepts rank connections and answers their collectives."""

    def __init__(self, path: str, cookie: str, size: int) -> None:
        self.cookie = cookie.encode()
        self.size = size
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(path)
        self.listener.listen(size)
        self.listener.setblocking(False)
        self.by_rank: dict[int, Connection] = {}
        self.pending: dict[int, tuple[int, bytes]] = {}

    def close(self) -> None:
        for conn in list(self.by_rank.values()):
            conn.sock.close()
        self.listener.close()

    def accept(self) -> Connection | None:
        try:
            sock, _ = self.listener.accept()
        except BlockingIOError:
            return None
        sock.setblocking(False)
        return Connection(sock)

    def on_readable(self, conn: Connection) -> tuple[list[Event], bool]:
        """Reads what arrived; returns events and whether the connection is still open."""
        try:
            data = conn.sock.recv(1 << 16)
        except (BlockingIOError, InterruptedError):
            return [], True
        except ConnectionError:
            data = b""
        if not data:
            return [], False
        conn.buffer += data
        events: list[Event] = []
        while len(conn.buffer) >= HEADER.size:
            op, length = HEADER.unpack_from(conn.buffer)
            if length > MAX_FRAME:
                raise ProtocolError(f"rank {conn.rank} sent a {length}-byte frame")
            if len(conn.buffer) < HEADER.size + length:
                break
            payload = bytes(conn.buffer[HEADER.size:HEADER.size + length])
            del conn.buffer[:HEADER.size + length]
            events += self._on_frame(conn, op, payload)
        return events, True

    def _on_frame(self, conn: Connection, op: int, payload: bytes) -> list[Event]:
        if conn.rank is None:
            return self._hello(conn, op, payload)
        if op == OP_ABORT:
            (code,) = struct.unpack("=I", payload[:4])
            return [Event("abort", conn.rank, code)]
        if op == OP_FINI:
            return [Event("fini", conn.rank)]
        if op not in (OP_EXCHANGE, OP_BCAST):
            raise ProtocolError(f"rank {conn.rank} sent unknown op {op}")
        if conn.rank in self.pending:
            raise ProtocolError(f"rank {conn.rank} sent {OP_NAMES[op]} before its last "
                                "collective was answered")
        self.pending[conn.rank] = (op, payload)
        if len(self.pending) == self.size:
            self._answer()
        return []

    def _hello(self, conn: Connection, op: int, payload: bytes) -> list[Event]:
        if op != OP_HELLO or len(payload) != HELLO.size:
            raise ProtocolError("a connection did not start with HELLO")
        cookie, rank, pid = HELLO.unpack(payload)
        if not hmac.compare_digest(cookie, self.cookie):
            conn.sock.close()  # not one of ours
            return []
        if rank >= self.size or rank in self.by_rank:
            raise ProtocolError(f"a rank announced itself as rank {rank} twice or out of range")
        conn.rank, conn.pid = rank, pid
        self.by_rank[rank] = conn
        return []

    def _answer(self) -> None:
        ops = {op for op, _ in self.pending.values()}
        if len(ops) != 1:
            detail = ", ".join(f"rank {r}: {OP_NAMES[op]}" for r, (op, _) in
                               sorted(self.pending.items()))
            raise ProtocolError(f"ranks disagree on the next collective ({detail})")
        op = ops.pop()
        if op == OP_EXCHANGE:
            blobs = [self.pending[r][1] for r in range(self.size)]
            if len({len(b) for b in blobs}) != 1:
                raise ProtocolError("ranks exchanged blobs of different lengths")
            answer = b"".join(blobs)
        else:
            roots = {struct.unpack("=I", p[:4])[0] for _, p in self.pending.values()}
            if len(roots) != 1:
                raise ProtocolError(f"ranks disagree on the broadcast root: {sorted(roots)}")
            answer = self.pending[roots.pop()][1][4:]
        frame = HEADER.pack(op, len(answer)) + answer
        self.pending.clear()
        for conn in self.by_rank.values():
            conn.sock.setblocking(True)
            try:
                conn.sock.sendall(frame)
            except OSError:
                pass  # that rank is gone; the supervisor sees its exit
            finally:
                conn.sock.setblocking(False)
