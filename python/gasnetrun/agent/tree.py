"""The agent tree over TCP: a parent listens, each child agent connects and proves it belongs
to the job (HMAC of a fresh challenge with the per-job cookie; the cookie itself never crosses
the network), then sends its subtree's collective contributions, rank events and output up,
and receives results, signals and the order to shut down.

A connection that fails the challenge, sends garbage or stays silent is dropped without
disturbing the job; a child that vanishes after joining ends the job, naming its host."""
from __future__ import annotations

import hashlib
import hmac
import os
import select
import socket
import struct
import time
from functools import partial
from typing import Callable

from ..loop import Loop
from .agent import Agent, Upstream
from .protocol import (CARD_WANT, CARD_WIRE, EVENT, NONCE_LEN, OUTPUT_HEAD, T_AUTH, T_CARD,
                       T_CHALLENGE, T_CONTRIB, T_ERROR, T_EVENT, T_GET, T_OUTPUT, T_READY,
                       T_RESULT, T_SHUTDOWN, T_SIGNAL, TREE_HEADER, TREE_MAX_FRAME)

AUTH_DEADLINE = 20.0
AUTH = struct.Struct("!32sI")  # HMAC-SHA256, agent index
SEQ = struct.Struct("!I")
ENTRY = struct.Struct("!II")   # rank, length


def proof(cookie: str, nonce: bytes) -> bytes:
    return hmac.new(cookie.encode(), b"gasnetrun-agent" + nonce, hashlib.sha256).digest()


def frame(kind: int, payload: bytes = b"") -> bytes:
    return TREE_HEADER.pack(kind, len(payload)) + payload


def pack_contrib(seq: int, entries: dict[int, bytes]) -> bytes:
    parts = [SEQ.pack(seq)]
    for rank in sorted(entries):
        parts += [ENTRY.pack(rank, len(entries[rank])), entries[rank]]
    return b"".join(parts)


def card_frame(rank: int, flags: int, card: bytes) -> bytes:
    return frame(T_CARD, CARD_WIRE.pack(rank, flags) + card)


def take_card_frames(agent: Agent, kind: int, payload: bytes,
                     send: Callable[[bytes], None]) -> bool:
    """T_GET and T_CARD from another agent (send: back to it); False for other kinds. A frame
    of the wrong size is ignored (agents authenticated with the job's cookie send none)."""
    if kind == T_GET and len(payload) == CARD_WANT.size:
        (rank,) = CARD_WANT.unpack(payload)
        agent.find_card(rank, lambda flags, card: send(card_frame(rank, flags, card)))
    elif kind == T_CARD and len(payload) >= CARD_WIRE.size:
        rank, flags = CARD_WIRE.unpack_from(payload)
        agent.card_found(rank, flags, payload[CARD_WIRE.size:])
    else:
        return kind in (T_GET, T_CARD)
    return True


def unpack_contrib(payload: bytes) -> tuple[int, dict[int, bytes]]:
    (seq,) = SEQ.unpack_from(payload)
    entries, off = {}, SEQ.size
    while off < len(payload):
        rank, length = ENTRY.unpack_from(payload, off)
        off += ENTRY.size
        entries[rank] = payload[off:off + length]
        off += length
    return seq, entries


class FrameReader:
    """Splits a stream into (kind, payload) frames; raises ValueError on an oversized one."""

    def __init__(self, limit: int = TREE_MAX_FRAME) -> None:
        self.buffer = bytearray()
        self.limit = limit

    def feed(self, data: bytes) -> list[tuple[int, bytes]]:
        self.buffer += data
        out = []
        while len(self.buffer) >= TREE_HEADER.size:
            kind, length = TREE_HEADER.unpack_from(self.buffer)
            if length > self.limit:
                raise ValueError(f"a {length}-byte frame")
            if len(self.buffer) < TREE_HEADER.size + length:
                break
            out.append((kind, bytes(self.buffer[TREE_HEADER.size:TREE_HEADER.size + length])))
            del self.buffer[:TREE_HEADER.size + length]
        return out


def send_all(sock: socket.socket, data: bytes) -> bool:
    """For a fresh connection's first frames only (the challenge, its answer): a few bytes a
    new socket always takes at once. Everything after goes through an Outbox."""
    try:
        sock.setblocking(True)
        sock.settimeout(5.0)
        sock.sendall(data)
        return True
    except OSError:
        return False
    finally:
        sock.setblocking(False)


class Outbox:
    """Frames to one peer agent, sent without ever blocking the event loop: what the socket
    does not take at once waits here and leaves as the peer reads. A peer that stops reading
    (its host froze, its link went down) only fills this queue; the heartbeat watch gives that
    peer up, while this agent keeps serving its ranks, its other peers and its signals.
    on_full(True) when the queue passes HIGH bytes, on_full(False) when it drains below LOW:
    the owner stops producing meanwhile (the ranks' output waits in their pipes)."""

    HIGH = 8 << 20
    LOW = 1 << 20

    def __init__(self, loop: Loop, sock: socket.socket) -> None:
        self.loop = loop
        self.sock = sock
        self.fd = sock.fileno()
        self.queue: list[memoryview] = []
        self.queued = 0
        self.broken = False
        self.full = False
        self.on_full: Callable[[bool], None] = lambda full: None

    def send(self, data: bytes) -> bool:
        """Queues data (in order); False once the connection has failed."""
        if self.broken:
            return False
        view = memoryview(data)
        if not self.queue:
            try:
                view = view[self.sock.send(view):]
            except BlockingIOError:
                pass
            except OSError:
                self.broken = True
                return False
            if not view:
                return True
            self.loop.add_writer(self.fd, self._flush)
        self.queue.append(view)
        self.queued += len(view)
        if not self.full and self.queued > self.HIGH:
            self.full = True
            self.on_full(True)
        return True

    def _flush(self) -> None:
        while self.queue:
            head = self.queue[0]
            try:
                sent = self.sock.send(head)
            except BlockingIOError:
                return
            except OSError:
                self.broken = True
                self.queue.clear()
                self.queued = 0
                self.loop.remove_writer(self.fd)
                return
            self.queued -= sent
            if sent < len(head):
                self.queue[0] = head[sent:]
                return
            self.queue.pop(0)
        self.loop.remove_writer(self.fd)
        if self.full and self.queued < self.LOW:
            self.full = False
            self.on_full(False)

    def drain(self, seconds: float) -> None:
        """At the end: what is queued leaves if the peer takes it within seconds."""
        deadline = time.monotonic() + seconds
        while self.queue and not self.broken:
            left = deadline - time.monotonic()
            if left <= 0:
                return
            select.select([], [self.fd], [], left)
            self._flush()

    def close(self) -> None:
        if self.queue:
            self.loop.remove_writer(self.fd)
        self.queue.clear()
        self.queued = 0


# ---- the parent's side ---------------------------------------------------------------------
class ChildLink:
    """One authenticated child agent, as the parent sees it (a Downstream)."""

    def __init__(self, listener: "TreeListener", sock: socket.socket, index: int,
                 subtree: list[int], host: str) -> None:
        self.listener = listener
        self.sock = sock
        self.index = index
        self.subtree = subtree
        self.host = host
        self.reader = FrameReader()
        self.ready = False
        self.pid = 0  # the agent's process on its host (its T_READY says), for a reaper
        self.outbox = Outbox(listener.loop, sock)

    def sock_send(self, data: bytes) -> None:
        self.outbox.send(data)

    def send_result(self, seq: int, data: bytes) -> None:
        self.outbox.send(frame(T_RESULT, SEQ.pack(seq) + data))

    def send_signal(self, signum: int) -> None:
        self.outbox.send(frame(T_SIGNAL, struct.pack("!I", signum)))

    def send_want(self, rank: int) -> None:
        self.outbox.send(frame(T_GET, CARD_WANT.pack(rank)))

    def shutdown(self) -> None:
        self.outbox.send(frame(T_SHUTDOWN))


class TreeListener:
    """The parent's TCP socket for its child agents. expected maps agent index -> (host, its
    subtree's ranks); on_join/on_frame/on_lost report to the parent agent."""

    def __init__(self, loop: Loop, cookie: str, expected: dict[int, tuple[str, list[int]]],
                 on_join: Callable[[ChildLink], None],
                 on_frame: Callable[[ChildLink, int, bytes], None],
                 on_lost: Callable[[ChildLink], None],
                 on_dropped: Callable[[str], None], bind: str = "0.0.0.0") -> None:
        self.loop = loop
        self.cookie = cookie
        self.expected = expected
        self.on_join, self.on_frame, self.on_lost = on_join, on_frame, on_lost
        self.on_dropped = on_dropped
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)
        self.sock.bind((bind, 0))
        self.sock.listen(max(16, len(expected) + 16))
        self.sock.setblocking(False)
        self.children: dict[int, ChildLink] = {}
        self.pending: dict[int, tuple[socket.socket, bytes, float, bytearray]] = {}
        loop.add_reader(self.sock.fileno(), self._accept)
        self._sweep_timer = loop.call_later(AUTH_DEADLINE / 2, self._sweep)

    @property
    def port(self) -> int:
        return int(self.sock.getsockname()[1])

    def _accept(self) -> None:
        while True:
            try:
                sock, _ = self.sock.accept()
            except BlockingIOError:
                return
            except OSError:
                return
            sock.setblocking(False)
            nonce = os.urandom(NONCE_LEN)
            if not send_all(sock, frame(T_CHALLENGE, nonce)):
                sock.close()
                continue
            if len(self.pending) > len(self.expected) + 64:
                oldest = min(self.pending, key=lambda fd: self.pending[fd][2])
                self._drop_pending(oldest, "too many connections waiting to authenticate")
            self.pending[sock.fileno()] = (sock, nonce, time.monotonic(), bytearray())
            self.loop.add_reader(sock.fileno(), partial(self._pending_readable, sock))

    def _drop_pending(self, fd: int, why: str) -> None:
        sock = self.pending.pop(fd)[0]
        self.loop.remove_reader(fd)
        sock.close()
        self.on_dropped(why)

    def _sweep(self) -> None:
        now = time.monotonic()
        for fd in [fd for fd, p in self.pending.items() if now - p[2] > AUTH_DEADLINE]:
            self._drop_pending(fd, f"no authentication within {AUTH_DEADLINE:g} s")
        self._sweep_timer = self.loop.call_later(AUTH_DEADLINE / 2, self._sweep)

    def _pending_readable(self, sock: socket.socket) -> None:
        fd = sock.fileno()
        _, nonce, _, buf = self.pending[fd]
        want = TREE_HEADER.size + AUTH.size
        try:
            data = sock.recv(want - len(buf))
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:
            self._drop_pending(fd, "a connection closed before authenticating")
            return
        buf += data
        if len(buf) < TREE_HEADER.size:
            return
        kind, length = TREE_HEADER.unpack_from(buf)
        if kind != T_AUTH or length != AUTH.size:
            self._drop_pending(fd, "a connection did not authenticate")
            return
        if len(buf) < want:
            return
        mac, index = AUTH.unpack_from(buf, TREE_HEADER.size)
        if not hmac.compare_digest(mac, proof(self.cookie, nonce)):
            self._drop_pending(fd, "a connection failed the cookie challenge")
            return
        if index not in self.expected or index in self.children:
            self._drop_pending(fd, f"a connection claimed agent {index}, which is not expected")
            return
        del self.pending[fd]
        host, subtree = self.expected[index]
        link = ChildLink(self, sock, index, subtree, host)
        self.children[index] = link
        self.loop.remove_reader(fd)
        self.loop.add_reader(fd, partial(self._child_readable, link))
        self.on_join(link)

    def _child_readable(self, link: ChildLink) -> None:
        try:
            data = link.sock.recv(1 << 16)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        try:
            frames = link.reader.feed(data) if data else None
        except ValueError:
            frames = None
        if frames is None:
            self.loop.remove_reader(link.sock.fileno())
            link.outbox.close()
            link.sock.close()
            del self.children[link.index]
            self.on_lost(link)
            return
        for kind, payload in frames:
            self.on_frame(link, kind, payload)

    def close(self) -> None:
        self.loop.cancel(self._sweep_timer)
        for fd in list(self.pending):
            self._drop_pending(fd, "closing")
        for link in list(self.children.values()):
            self.loop.remove_reader(link.sock.fileno())
            link.outbox.close()
            link.sock.close()
        self.children.clear()
        self.loop.remove_reader(self.sock.fileno())
        self.sock.close()


def dispatch_child_frame(agent: Agent, upstream: Upstream, link: ChildLink, kind: int,
                        payload: bytes) -> None:
    """What a parent does with a frame from a child: contributions join its own gathering;
    events, output and errors go on up; card lookups are answered or passed on."""
    if take_card_frames(agent, kind, payload, link.sock_send):
        return
    if kind == T_CONTRIB:
        seq, entries = unpack_contrib(payload)
        agent.add_contribution(seq, entries)
    elif kind == T_EVENT:
        ev, rank, code, flag, pid = EVENT.unpack(payload)
        upstream.event(ev, rank, code, flag, pid)
    elif kind == T_OUTPUT:
        rank, stream = OUTPUT_HEAD.unpack_from(payload)
        upstream.output(rank, stream, payload[OUTPUT_HEAD.size:])
    elif kind == T_ERROR:
        upstream.error(payload.decode(errors="replace"))
    elif kind == T_READY:
        link.ready = True


# ---- the child's side ----------------------------------------------------------------------
class ParentLink:
    """A child agent's upstream: its parent over TCP."""

    def __init__(self, loop: Loop, host: str, port: int, cookie: str, index: int,
                 timeout: float = 30.0) -> None:
        self.loop = loop
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        reader = FrameReader(limit=NONCE_LEN)
        frames: list[tuple[int, bytes]] = []
        while not frames:
            data = self.sock.recv(TREE_HEADER.size + NONCE_LEN)
            if not data:
                raise ConnectionError("the parent agent closed the connection")
            frames = reader.feed(data)
        kind, nonce = frames[0]
        if kind != T_CHALLENGE or len(nonce) != NONCE_LEN:
            raise ConnectionError("the parent agent did not send a challenge")
        self.sock.sendall(frame(T_AUTH, AUTH.pack(proof(cookie, nonce), index)))
        self.sock.setblocking(False)
        self.reader = FrameReader()
        self.outbox = Outbox(loop, self.sock)

    def _send(self, data: bytes) -> None:
        if not self.outbox.send(data):
            raise ConnectionError("lost the parent agent")

    def contribute(self, seq: int, entries: dict[int, bytes]) -> None:
        self._send(frame(T_CONTRIB, pack_contrib(seq, entries)))

    def event(self, kind: int, rank: int, code: int, flag: int, pid: int) -> None:
        self._send(frame(T_EVENT, EVENT.pack(kind, rank, code, flag, pid)))

    def output(self, rank: int, stream: int, data: bytes) -> None:
        self._send(frame(T_OUTPUT, OUTPUT_HEAD.pack(rank, stream) + data))

    def error(self, message: str) -> None:
        self._send(frame(T_ERROR, message.encode()))

    def want(self, rank: int) -> None:
        self._send(frame(T_GET, CARD_WANT.pack(rank)))

    def send_raw(self, data: bytes) -> None:
        """An answer to the parent's question: a lost parent shows on the next read."""
        self.outbox.send(data)

    def send(self, kind: int, payload: bytes) -> None:
        self._send(frame(kind, payload))

    def read(self) -> list[tuple[int, bytes]] | None:
        """Frames from the parent, or None when it is gone."""
        try:
            data = self.sock.recv(1 << 16)
        except BlockingIOError:
            return []
        except OSError:
            return None
        if not data:
            return None
        try:
            return self.reader.feed(data)
        except ValueError:
            return None
