"""Running one job from gasnetrun: the root of the agent tree. It answers the collectives of
all ranks, applies the exit policy (csrc/core/exit/exit_policy.c) to every rank's events,
forwards signals, says what -v asks, and returns the job's exit code once every rank ended."""
from __future__ import annotations

import os
import signal
import sys
import time
from typing import Mapping, Protocol

from . import _native
from .agent.output import TerminalWriter
from .agent.protocol import EV_ABORT, EV_ENDED, EV_LEAVING
from .loop import Loop
from .plan import Plan
from .signames import signal_name

FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
PASSED_ON = (signal.SIGUSR1, signal.SIGUSR2)  # the application's own signals
# A rank that dies of one of these crashed (GASNET_BACKTRACE shows where).
FATAL_SIGNALS = (signal.SIGSEGV, signal.SIGBUS, signal.SIGILL, signal.SIGFPE, signal.SIGABRT)


def say(message: str) -> None:
    print(f"gasnetrun: {message}", file=sys.stderr, flush=True)


def new_jobid() -> str:
    return f"r{os.getpid()}x{os.urandom(3).hex()}"


class RunningJob(Protocol):
    """What a spawner's start() returns: how to reach every rank, and how to clean up."""

    def signal(self, signum: int) -> None: ...

    def close(self) -> list[str]: ...


class Spawner(Protocol):
    name: str

    def applies(self, env: Mapping[str, str], hosts: list[str]) -> str | None:
        """Why this spawner fits a job started in this environment on these hosts, or None."""
        ...

    def plan_notes(self, plan: Plan) -> list[str]:
        """What -v and -t say about how this spawner would run the plan."""
        ...

    def start(self, plan: Plan, job: "Job") -> RunningJob: ...


class SpawnerModule(Protocol):
    """A spawner's launch side (spawners/<name>/launch.py), as spawners.available() finds it."""
    name: str

    def create(self) -> Spawner: ...


class Job:
    def __init__(self, plan: Plan, spawner: Spawner) -> None:
        self.plan = plan
        self.spawner = spawner
        self.loop = Loop()
        self.cookie = os.urandom(16).hex()  # what secrets.token_hex does, without its imports
        self.policy = _native.ExitPolicy(plan.nranks, _native.exit_timeout(plan.env, plan.nranks))
        self.running: RunningJob | None = None
        self._timer: int | None = None
        self.deliver = lambda seq, result: None  # set by the spawner: hands results down
        self.started = False              # ranks were started (set by the spawner)
        self.end_code: int | None = None  # the launcher's code when no rank ever started
        self.interrupted = False          # a SIGINT or SIGTERM was received (the next kills)
        self.sink = TerminalWriter(plan.tag_output)

    # ---- the upstream of the root agent ---------------------------------------------------
    def contribute(self, seq: int, entries: dict[int, bytes]) -> None:
        lengths = {len(b) for b in entries.values()}
        if len(lengths) != 1:
            detail = ", ".join(f"rank {r}: {len(entries[r])}" for r in sorted(entries)[:8])
            self.error(f"ranks exchanged blobs of different lengths ({detail})")
            return
        self.deliver(seq, b"".join(entries[r] for r in range(self.plan.nranks)))

    def want(self, rank: int) -> None:
        # The root agent's subtree is the whole job: no card is ever asked beyond it.
        self.error(f"internal: no agent of the job holds rank {rank}'s address card")

    def event(self, kind: int, rank: int, code: int, flag: int, pid: int) -> None:
        now = time.monotonic()
        if kind == EV_LEAVING:
            self.policy.leaving(rank, code, bool(flag), now)
        elif kind == EV_ABORT:
            self.policy.abort(rank, code, now)
        elif kind == EV_ENDED:
            how = self.policy.ended(rank, code, flag, now)
            if self.plan.verbose:
                self._report_end(rank, pid, code, flag, how)
            elif flag and how == _native.ExitPolicy.ENDED_JOB:
                self._report_crash(rank, pid, flag)
            elif how == _native.ExitPolicy.BY_LAUNCHER and self.policy.stragglers:
                self._report_end(rank, pid, code, flag, how)
        self._act()

    def output(self, rank: int, stream: int, data: bytes) -> None:
        self.sink(rank, stream, data)

    def refuse(self, problems: list[str]) -> None:
        """The start-up checks failed somewhere: nothing started, and nothing will."""
        for problem in problems:
            say(f"error: {problem}")
        say(f"the job was not started ({len(problems)} problem{'s' if len(problems) > 1 else ''}"
            " found before launch)")
        self.end_code = 2

    def error(self, message: str) -> None:
        say(f"error: {message}")
        self.policy.fail(1, time.monotonic())
        self._act()

    # ---- policy ---------------------------------------------------------------------------
    def _report_end(self, rank: int, pid: int, code: int, sig: int, how: int) -> None:
        where = self._where(rank, pid)
        what = f"signal {signal_name(sig)}" if sig else f"code {code}"
        if how == _native.ExitPolicy.BY_LAUNCHER and self.policy.stragglers:
            say(f"{where} ended by the launcher after GASNET_EXITTIMEOUT ({what}): the job's "
                f"code is {self.policy.code}")
        elif how == _native.ExitPolicy.BY_LAUNCHER:
            say(f"{where} ended by the launcher ({what})")
        elif how == _native.ExitPolicy.FINISHED:
            say(f"{where} finished (code 0)")
        else:
            say(f"{where} ended with {what}")

    def _where(self, rank: int, pid: int) -> str:
        """pid 0: the rank's agent was lost before it reported the rank's end, pid and all."""
        return (f"rank {rank} (pid {pid if pid else 'unknown'}, "
                f"host {self.plan.host_of(rank)})")

    def _report_crash(self, rank: int, pid: int, sig: int) -> None:
        """A rank killed by a signal (a crash, or someone's kill -9) ends the job: that is worth
        a line even without -v, and for a crash the way to see where it happened."""
        hint = "" if sig not in FATAL_SIGNALS or \
            self.plan.env.get("GASNET_BACKTRACE", "").strip() not in ("", "0") else \
            " (run with GASNET_BACKTRACE=1 for its backtrace)"
        say(f"{self._where(rank, pid)} ended with signal "
            f"{signal_name(sig)}{hint}")

    def _act(self) -> None:
        now = time.monotonic()
        todo = self.policy.due(now)
        if todo & _native.ExitPolicy.STRAGGLERS:
            say(f"still running {self.policy.timeout:g} s after rank {self.policy.first_done} "
                f"finished (GASNET_EXITTIMEOUT): ranks {self.policy.running_list()}; ending them")
        if todo & _native.ExitPolicy.QUIT and self.running:
            self.running.signal(_native.leave_signal())
        if todo & _native.ExitPolicy.KILL and self.running:
            if self.plan.verbose:
                say(f"ranks {self.policy.running_list()} still running after "
                    f"{self.policy.timeout:g} s: killing them")
            self.running.signal(signal.SIGKILL)
        if self._timer is not None:
            self.loop.cancel(self._timer)
            self._timer = None
        deadline = self.policy.deadline()
        if deadline is not None:
            self._timer = self.loop.call_at(deadline, self._act)

    def _on_signal(self, signum: int) -> None:
        if not self.started:  # still checking hosts: nothing runs yet, so just stop
            say(f"received {signal.Signals(signum).name} during start-up: the job was not started")
            self.end_code = 128 + signum
            return
        if signum in PASSED_ON:
            if self.running:
                self.running.signal(signum)
            return
        name = signal.Signals(signum).name
        if self.interrupted and signum in (signal.SIGINT, signal.SIGTERM):
            say(f"received {name} again: killing the ranks still running")
            if self.running:
                self.running.signal(signal.SIGKILL)  # asked twice: stop waiting
            return
        if signum in (signal.SIGINT, signal.SIGTERM):
            self.interrupted = True
        # Also when the job was already ending (a rank failed, a host was lost): the user is
        # told the signal arrived, and the job's code stays that of what ended it first.
        say(f"received {name}: ending the job" + (
            f" (it was already ending: its code stays {self.policy.code}, from what ended it "
            "first)" if self.policy.ending and self.policy.code else ""))
        self.policy.signalled(signum, time.monotonic())
        if self.running:
            self.running.signal(signum)
        self._act()

    # ---- running --------------------------------------------------------------------------
    def run(self) -> int:
        for signum in FORWARDED + PASSED_ON + (signal.SIGQUIT,):
            self.loop.on_signal(signum, self._on_signal)
        try:
            if self.plan.verbose:
                say(f"job {self.plan.jobid}: {self.plan.nranks} ranks on {len(self.plan.hosts)} "
                    f"host(s) via spawner '{self.spawner.name}', exit timeout "
                    f"{self.policy.timeout:g} s")
            self.running = self.spawner.start(self.plan, self)
            self._act()
            self.loop.run_until(lambda: self.end_code is not None or
                                (self.started and self.policy.remaining == 0))
            return self.end_code if self.end_code is not None else self.policy.code
        finally:
            leftovers = self.running.close() if self.running else []
            if leftovers and self.plan.verbose:
                say(f"removed {len(leftovers)} shared-memory objects left by killed ranks")
            self.loop.close()
