"""Running one job: the control channel, the ranks, signals, exit codes and clean-up.

The spawner decides how ranks start; this module owns everything that is the same for every
spawner: what the ranks are told, how the job ends, and that nothing is left behind.
"""
from __future__ import annotations

import glob
import os
import secrets
import selectors
import shutil
import signal
import socket
import sys
import tempfile
import time
from dataclasses import dataclass, field
from typing import Protocol

from . import _native
from .control import ControlHub, ProtocolError
from .exitpolicy import ExitPolicy, code_of_status

FORWARDED_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT)


@dataclass
class JobSpec:
    nranks: int
    program: str
    args: list[str]
    env: dict[str, str]
    verbose: bool = False
    keep: bool = False


@dataclass
class Channel:
    """What every rank needs to reach the launcher (passed in GASNETRUN_* variables)."""
    socket_path: str
    cookie: str
    jobid: str
    launcher_pid: int

    def rank_env(self, rank: int, size: int) -> dict[str, str]:
        return {"GASNETRUN_SOCKET": self.socket_path, "GASNETRUN_COOKIE": self.cookie,
                "GASNETRUN_JOBID": self.jobid, "GASNETRUN_RANK": str(rank),
                "GASNETRUN_SIZE": str(size), "GASNETRUN_PID": str(self.launcher_pid)}


@dataclass
class RankLaunch:
    rank: int
    argv: list[str]
    env_additions: dict[str, str] = field(default_factory=dict)


class Spawner(Protocol):
    name: str

    def plan(self, spec: JobSpec, channel: Channel) -> list[RankLaunch]: ...

    def start(self, spec: JobSpec, launches: list[RankLaunch]) -> dict[int, int]:
        """Starts the ranks; returns rank -> pid (each rank leads its own process group)."""
        ...


def new_channel(workdir: str) -> Channel:
    return Channel(socket_path=os.path.join(workdir, "control.sock"),
                   cookie=secrets.token_hex(16),
                   jobid=f"r{os.getpid()}x{secrets.token_hex(3)}",
                   launcher_pid=os.getpid())


def say(message: str) -> None:
    print(f"gasnetrun: {message}", file=sys.stderr, flush=True)


def remove_shm_leftovers(jobid: str) -> list[str]:
    """Whatever a killed rank could not unlink; names carry the job id (csrc/core/pshm/shm.c)."""
    removed = []
    for path in glob.glob(f"/dev/shm/gasnet-{jobid}-*"):
        try:
            os.unlink(path)
            removed.append(path)
        except FileNotFoundError:
            pass
    return removed


class Job:
    def __init__(self, spec: JobSpec, spawner: Spawner) -> None:
        self.spec = spec
        self.spawner = spawner
        self.policy = ExitPolicy(_native.exit_timeout(spec.env, spec.nranks))
        self.alive: dict[int, int] = {}  # rank -> pid
        self.killed = False

    def _signal_ranks(self, signum: int) -> None:
        for pid in self.alive.values():
            try:
                os.killpg(pid, signum)
            except ProcessLookupError:
                pass

    def run(self) -> int:
        workdir = tempfile.mkdtemp(prefix="gasnetrun-")
        channel = new_channel(workdir)
        hub = ControlHub(channel.socket_path, channel.cookie, self.spec.nranks)
        wake_r, wake_w = socket.socketpair()
        wake_r.setblocking(False)
        wake_w.setblocking(False)
        old_wakeup = signal.set_wakeup_fd(wake_w.fileno(), warn_on_full_buffer=False)
        old_handlers = {s: signal.signal(s, lambda *_: None) for s in FORWARDED_SIGNALS}
        sel = selectors.DefaultSelector()
        try:
            launches = self.spawner.plan(self.spec, channel)
            if self.spec.verbose:
                say(f"job {channel.jobid}: {self.spec.nranks} ranks via spawner "
                    f"'{self.spawner.name}', exit timeout {self.policy.timeout:g} s, "
                    f"control socket {channel.socket_path}")
            self.alive = self.spawner.start(self.spec, launches)
            sel.register(hub.listener, selectors.EVENT_READ, ("listener", None))
            sel.register(wake_r, selectors.EVENT_READ, ("signal", None))
            for rank, pid in self.alive.items():
                sel.register(os.pidfd_open(pid), selectors.EVENT_READ, ("rank", rank))
            self._loop(sel, hub, wake_r)
            return self.policy.code
        finally:
            for key in list(sel.get_map().values()):
                if key.data[0] == "rank":
                    os.close(key.fd)
            sel.close()
            hub.close()
            signal.set_wakeup_fd(old_wakeup)
            for s, h in old_handlers.items():
                signal.signal(s, h)
            wake_r.close()
            wake_w.close()
            leftovers = remove_shm_leftovers(channel.jobid)
            if leftovers and self.spec.verbose:
                say(f"removed {len(leftovers)} shared-memory objects left by killed ranks")
            if self.spec.keep:
                say(f"kept the job's working directory {workdir}")
            else:
                shutil.rmtree(workdir, ignore_errors=True)

    def _loop(self, sel: selectors.BaseSelector, hub: ControlHub, wake_r: socket.socket) -> None:
        while self.alive:
            deadline = self.policy.next_deadline()
            timeout = None if deadline is None else max(0.0, deadline - time.monotonic())
            for key, _ in sel.select(timeout):
                kind, rank = key.data
                if kind == "listener":
                    conn = hub.accept()
                    if conn:
                        sel.register(conn.sock, selectors.EVENT_READ, ("conn", conn))
                elif kind == "signal":
                    self._on_signals(wake_r)
                elif kind == "conn":
                    self._on_control(sel, hub, rank)
                else:
                    self._on_rank_exit(sel, key.fd, rank)
            quit_now, kill_now = self.policy.due()
            if quit_now:
                self._signal_ranks(signal.SIGQUIT)
            if kill_now and not self.killed:
                self.killed = True
                if self.spec.verbose:
                    say(f"ranks {sorted(self.alive)} still running after "
                        f"{self.policy.timeout:g} s: killing them")
                self._signal_ranks(signal.SIGKILL)

    def _on_signals(self, wake_r: socket.socket) -> None:
        try:
            data = wake_r.recv(64)
        except BlockingIOError:
            return
        for signum in data:
            if self.policy.started and signum in (signal.SIGINT, signal.SIGTERM):
                self._signal_ranks(signal.SIGKILL)  # asked twice: stop waiting
                continue
            say(f"received {signal.Signals(signum).name}: ending the job")
            self.policy.launcher_signalled(signum)
            self._signal_ranks(signum)

    def _on_control(self, sel: selectors.BaseSelector, hub: ControlHub, conn) -> None:
        try:
            events, still_open = hub.on_readable(conn)
        except ProtocolError as err:
            say(f"control channel: {err}")
            self.policy.rank_aborted(1)
            events, still_open = [], False
        if not still_open:
            sel.unregister(conn.sock)
            conn.sock.close()
            if conn.rank is not None:
                hub.by_rank.pop(conn.rank, None)
        for event in events:
            if event.kind == "abort":
                self.policy.rank_aborted(event.code)

    def _on_rank_exit(self, sel: selectors.BaseSelector, fd: int, rank: int) -> None:
        sel.unregister(fd)
        os.close(fd)
        pid = self.alive.pop(rank)
        _, status = os.waitpid(pid, 0)
        self.policy.rank_ended(status)
        if self.spec.verbose:
            say(f"rank {rank} (pid {pid}) ended with code {code_of_status(status)}")

