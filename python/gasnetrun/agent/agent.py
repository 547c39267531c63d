"""The per-host agent: starts this host's ranks, serves their control connections, gathers the
collective contributions of its subtree (its ranks and its child agents') for its upstream,
hands results back down, reports every rank's leaving and end upward, relays signals down,
and cleans up the host (/dev/shm objects of the job) at the end."""
from __future__ import annotations

import bisect
import glob
import os
import signal
import socket
from dataclasses import dataclass, field
from functools import partial
from typing import Callable, Protocol

from ..loop import Loop
from .hub import ControlHub, Handlers, control_socket_name
from .output import LineSplitter, Sink
from .protocol import (CARD_ENDED, CARD_HEAD, EV_ABORT, EV_ENDED, EV_LEAVING, HEADER, OP_EXCHANGE,
                       OP_GET)
from .ranks import (RankProcess, SpawnError, same_addresses, signal_group, spawn_rank, status_of,
                    wants_same_addresses)


@dataclass
class AgentSpec:
    """One agent's share of a job; remote agents receive it as JSON on stdin."""
    jobid: str
    cookie: str
    index: int                # 0 for the root agent (inside gasnetrun)
    host: str
    ranks: list[int]          # ranks this agent starts
    subtree: list[int]        # ranks of this agent and of all agents below it
    nranks: int
    argv: list[str]
    env: dict[str, str]       # what every rank sees, before its GASNETRUN_* variables
    stdin_rank: int | None = None  # the rank that reads the agent's stdin, if any
    stdin_pipe: bool = False       # that rank's input arrives from the launcher (feed_stdin)
    pipe_output: bool = False
    host_env: bool = False         # ranks start from this host's environment (remote agents)
    children: list[int] = field(default_factory=list)  # agent indices below this one
    node_planner: str = ""         # the conduit whose launcher half plans this host first
    verbose: bool = False          # gasnetrun -v: the agent says what it does (its log)

    def rank_env(self, rank: int, socket_name: str) -> dict[str, str]:
        base = {k: v for k, v in os.environ.items() if not k.startswith("GASNETRUN_")} \
            if self.host_env else {}
        return {**base, **self.env, "GASNETRUN_SOCKET": socket_name, "GASNETRUN_COOKIE": self.cookie,
                "GASNETRUN_JOBID": self.jobid, "GASNETRUN_RANK": str(rank),
                "GASNETRUN_SIZE": str(self.nranks), "GASNETRUN_PID": str(os.getpid())}


class Upstream(Protocol):
    """Where an agent sends what its subtree produced: the root, or a parent over TCP."""

    def contribute(self, seq: int, entries: dict[int, bytes]) -> None: ...

    def event(self, kind: int, rank: int, code: int, flag: int, pid: int) -> None: ...

    def output(self, rank: int, stream: int, data: bytes) -> None: ...

    def error(self, message: str) -> None: ...

    def want(self, rank: int) -> None: ...  # a card from outside this subtree (T_GET up)


# An answer to a card lookup: (flags, card); an empty card means that rank published none.
CardReply = Callable[[int, bytes], None]


class Downstream(Protocol):
    """A child agent as its parent sees it."""
    subtree: list[int]

    def sock_send(self, data: bytes) -> None: ...

    def send_result(self, seq: int, data: bytes) -> None: ...

    def send_signal(self, signum: int) -> None: ...

    def send_want(self, rank: int) -> None: ...

    def shutdown(self) -> None: ...


class Agent:
    def __init__(self, loop: Loop, spec: AgentSpec, upstream: Upstream,
                 sink: Sink | None = None, log: Callable[[str], None] | None = None) -> None:
        self.loop = loop
        self.spec = spec
        self.upstream = upstream
        self.log = log or (lambda message: None)
        self.procs: dict[int, RankProcess] = {}
        self.children: list[Downstream] = []
        self.collect: dict[int, dict[int, bytes]] = {}
        # Address cards (published by this host's ranks, or cached: cards never change), the
        # lookups waiting for one, and the cards asked of another agent (answer pending).
        self.cards: dict[int, bytes] = {}
        self.ended_ranks: set[int] = set()
        self.card_waiters: dict[int, list[CardReply]] = {}
        self.cards_asked: set[int] = set()
        self.next_seq: dict[int, int] = {r: 0 for r in spec.ranks}
        self.splitter = LineSplitter(sink or upstream.output)
        self.stdin_pending: list[bytes] = []
        # Bytes of forwarded stdin taken by the rank (or dropped: its input had closed), told
        # to the launcher so that it sends more (T_STDIN_ACK); coalesced up to STDIN_ACK_EVERY.
        self.on_stdin_consumed: Callable[[int], None] = lambda count: None
        self.stdin_unacked = 0
        self.output_paused = False
        handlers = Handlers()
        handlers.exchange = self._on_exchange
        handlers.put = self._on_put
        handlers.get = self._on_get
        handlers.leaving = lambda r, code, ends: self._event(EV_LEAVING, r, code, int(ends))
        handlers.abort = lambda r, code: self._event(EV_ABORT, r, code, 1)
        handlers.failed = lambda message: self.upstream.error(f"on {spec.host}: {message}")
        handlers.dropped = lambda why: self.log(f"control socket: dropped a connection: {why}")
        self.hub = ControlHub(loop, control_socket_name(spec.jobid, spec.index), spec.cookie,
                              set(spec.ranks), handlers)

    # ---- ranks --------------------------------------------------------------------------
    def start(self) -> None:
        """Starts every rank of this host; on failure none is left running (SpawnError)."""
        for path in remove_orphaned_shm():
            self.log(f"removed {path}, left by a job whose agent was killed")
        try:
            with same_addresses(self._same_addresses()):
                for rank in self.spec.ranks:
                    stdin = None
                    if rank == self.spec.stdin_rank:
                        stdin = "pipe" if self.spec.stdin_pipe else ""
                    proc = spawn_rank(rank, self.spec.argv,
                                      self.spec.rank_env(rank, self.hub.address), stdin,
                                      self.spec.pipe_output)
                    self.procs[rank] = proc
                    self.log(f"rank {rank} started (pid {proc.pid}, host {self.spec.host})")
                    self.loop.add_reader(proc.pidfd, partial(self._on_end, proc))
                    for stream, fd in proc.pipes.items():
                        self.loop.add_reader(fd, partial(self._on_output, proc, stream, fd))
        except SpawnError:
            self.kill_all()
            raise

    def _same_addresses(self) -> bool:
        return wants_same_addresses(self.spec.rank_env(0, ""))

    def feed_stdin(self, data: bytes) -> None:
        """Input for the stdin rank, forwarded from the launcher; empty data ends it. Bytes the
        rank has not read yet wait here, so the agent never blocks on it."""
        proc = self.procs.get(self.spec.stdin_rank) if self.spec.stdin_rank is not None else None
        if proc is None or proc.stdin is None:
            self._consumed(len(data), flush=True)  # nobody will read it: let more come (dropped)
            return
        if not self.stdin_pending:
            self.loop.add_writer(proc.stdin, partial(self._write_stdin, proc))
        self.stdin_pending.append(data)

    def _write_stdin(self, proc: RankProcess) -> None:
        assert proc.stdin is not None
        data = self.stdin_pending[0]
        try:
            if not data:
                raise BrokenPipeError  # the launcher's input ended: so does the rank's
            n = os.write(proc.stdin, data)
        except BlockingIOError:
            return
        except OSError:  # ended, or the rank stopped reading
            self.loop.remove_writer(proc.stdin)
            os.close(proc.stdin)
            proc.stdin = None
            self._consumed(sum(map(len, self.stdin_pending)), flush=True)
            self.stdin_pending.clear()
            return
        if n < len(data):
            self.stdin_pending[0] = data[n:]
            self._consumed(n, flush=False)
            return
        self.stdin_pending.pop(0)
        self._consumed(n, flush=not self.stdin_pending)
        if not self.stdin_pending:
            self.loop.remove_writer(proc.stdin)

    STDIN_ACK_EVERY = 64 << 10

    def _consumed(self, count: int, flush: bool) -> None:
        self.stdin_unacked += count
        if self.stdin_unacked and (flush or self.stdin_unacked >= self.STDIN_ACK_EVERY):
            self.on_stdin_consumed(self.stdin_unacked)
            self.stdin_unacked = 0

    def pause_output(self, paused: bool) -> None:
        """While the way up is full (a parent that does not read), the ranks' output waits in
        their pipes (they block writing it) instead of piling up in this agent."""
        if paused == self.output_paused:
            return
        self.output_paused = paused
        for proc in self.procs.values():
            for stream, fd in proc.pipes.items():
                if paused:
                    self.loop.remove_reader(fd)
                else:
                    self.loop.add_reader(fd, partial(self._on_output, proc, stream, fd))

    def _on_output(self, proc: RankProcess, stream: int, fd: int) -> None:
        try:
            data = os.read(fd, 1 << 16)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if data:
            self.splitter.feed(proc.rank, stream, data)
            return
        self.loop.remove_reader(fd)
        os.close(fd)
        del proc.pipes[stream]
        self.splitter.flush(proc.rank, stream)

    def _drain_output(self, proc: RankProcess) -> None:
        """What a rank wrote before it ended is forwarded before its end is reported."""
        for stream, fd in list(proc.pipes.items()):
            while stream in proc.pipes:
                try:
                    data = os.read(fd, 1 << 16)
                except BlockingIOError:
                    break  # something the rank started still holds the pipe: keep reading later
                if not data:
                    self._on_output(proc, stream, fd)
                    break
                self.splitter.feed(proc.rank, stream, data)

    def _on_end(self, proc: RankProcess) -> None:
        self.loop.remove_reader(proc.pidfd)
        os.close(proc.pidfd)
        code, sig = status_of(proc.pid)
        proc.ended = True
        self.ended_ranks.add(proc.rank)
        if proc.rank not in self.cards:  # it will never publish: its lookups get no card
            self.card_found(proc.rank, CARD_ENDED, b"")
        self._drain_output(proc)
        self._event(EV_ENDED, proc.rank, code, sig)

    def _event(self, kind: int, rank: int, code: int, flag: int) -> None:
        proc = self.procs.get(rank)
        self.upstream.event(kind, rank, code, flag, proc.pid if proc else 0)

    @property
    def running(self) -> bool:
        return any(not p.ended for p in self.procs.values())

    def signal(self, signum: int) -> None:
        """Signals every rank of the subtree (this host's directly, the others' through their
        agents)."""
        for proc in self.procs.values():
            signal_group(proc, signum)
        for child in self.children:
            child.send_signal(signum)

    def kill_all(self) -> None:
        for proc in self.procs.values():
            signal_group(proc, signal.SIGKILL)
        for proc in self.procs.values():
            if not proc.ended:
                try:
                    os.waitpid(proc.pid, 0)
                except ChildProcessError:
                    pass
                proc.ended = True

    # ---- collectives --------------------------------------------------------------------
    def _on_exchange(self, rank: int, blob: bytes) -> None:
        seq = self.next_seq[rank]
        self.next_seq[rank] = seq + 1
        self.add_contribution(seq, {rank: blob})

    def add_contribution(self, seq: int, entries: dict[int, bytes]) -> None:
        got = self.collect.setdefault(seq, {})
        got.update(entries)
        if len(got) == len(self.spec.subtree):
            self.upstream.contribute(seq, self.collect.pop(seq))

    def deliver(self, seq: int, result: bytes) -> None:
        frame = HEADER.pack(OP_EXCHANGE, len(result)) + result
        for rank in self.spec.ranks:
            self.hub.send(rank, frame)
        for child in self.children:
            child.send_result(seq, result)

    # ---- address cards on demand (spawners/local/protocol.md: PUT, GET) ----------------------
    def _on_put(self, rank: int, card: bytes) -> None:
        if rank in self.cards:
            from .hub import RankProtocolError
            raise RankProtocolError(f"rank {rank} published its address card twice")
        self.card_found(rank, 0, card)

    def _on_get(self, rank: int, wanted: int) -> None:
        def answer(flags: int, card: bytes) -> None:
            body = CARD_HEAD.pack(wanted, flags) + card
            self.hub.send(rank, HEADER.pack(OP_GET, len(body)) + body)
        self.find_card(wanted, answer)

    def find_card(self, wanted: int, reply: CardReply) -> None:
        """Answers at once from this agent's cards, else when the card arrives: from a rank of
        this host that has not published it yet, or from the agent towards that rank (the child
        whose subtree holds it, else the parent). One question per card is in flight."""
        card = self.cards.get(wanted)
        if card is not None:
            reply(CARD_ENDED if wanted in self.ended_ranks else 0, card)
            return
        if not 0 <= wanted < self.spec.nranks:
            reply(0, b"")
            return
        if wanted in self.spec.ranks and wanted in self.ended_ranks:
            reply(CARD_ENDED, b"")
            return
        self.card_waiters.setdefault(wanted, []).append(reply)
        if wanted in self.spec.ranks or wanted in self.cards_asked:
            return
        self.cards_asked.add(wanted)
        child = self._child_holding(wanted)
        if child is not None:
            child.send_want(wanted)
        else:
            self.upstream.want(wanted)

    def _child_holding(self, rank: int) -> Downstream | None:
        for child in self.children:
            i = bisect.bisect_left(child.subtree, rank)
            if i < len(child.subtree) and child.subtree[i] == rank:
                return child
        return None

    def card_found(self, rank: int, flags: int, card: bytes) -> None:
        """A card arrived (published here, or the answer of another agent): kept, and handed to
        every lookup waiting for it."""
        self.cards_asked.discard(rank)
        if card:
            self.cards[rank] = card
        if flags & CARD_ENDED:
            self.ended_ranks.add(rank)
        for reply in self.card_waiters.pop(rank, []):
            reply(flags, card)

    # ---- the end ------------------------------------------------------------------------
    def close(self) -> list[str]:
        """Stops serving; returns the shared-memory objects of the job this host still had."""
        self.kill_all()
        for proc in self.procs.values():
            for fd in proc.pipes.values():
                self.loop.remove_reader(fd)
                os.close(fd)
            proc.pipes.clear()
            if proc.stdin is not None:
                self.loop.remove_writer(proc.stdin)
                os.close(proc.stdin)
                proc.stdin = None
        self.hub.close()
        return remove_shm_leftovers(self.spec.jobid)


def remove_orphaned_shm() -> list[str]:
    """Objects whose owning agent is gone (it was killed before its ranks unlinked them):
    their names end with that agent's pid. Any live process with that pid keeps them (it may
    be the agent, or the pid was reused: better to leave them than to remove a live job's)."""
    removed: list[str] = []
    try:
        names = os.listdir("/dev/shm")
    except OSError:
        return removed
    uid = os.getuid()
    for name in names:
        if not name.startswith("gasnet-"):
            continue
        owner = name.rsplit(".", 1)[-1] if "." in name else ""
        if not owner.isdigit() or os.path.exists(f"/proc/{owner}"):
            continue
        path = f"/dev/shm/{name}"
        try:
            if os.stat(path).st_uid != uid:
                continue
            os.unlink(path)
            removed.append(path)
        except OSError:
            pass
    return removed


def remove_shm_leftovers(jobid: str) -> list[str]:
    """Whatever a killed rank of this host could not unlink. Names carry the job id and the
    host (csrc/core/pshm/shm.c), since hosts may share /dev/shm (containers, test hosts)."""
    removed = []
    host = socket.gethostname()[:63]
    uid = os.getuid()
    for path in glob.glob(f"/dev/shm/gasnet-{glob.escape(jobid)}-{glob.escape(host)}-*"):
        try:
            # Another user's object under this job's name is theirs to remove (a hostile
            # neighbour's decoy: the ranks' names carry a tag it cannot know).
            if os.lstat(path).st_uid != uid:
                continue
            os.unlink(path)
            removed.append(path)
        except OSError:
            pass
    return removed
