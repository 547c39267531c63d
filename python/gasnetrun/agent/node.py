"""An agent in the tree: its own ranks (an Agent), the child agents it starts and serves over
its TCP listener, and its upstream. gasnetrun's root and every remote agent run this.

Start-up has two phases so that a job that cannot run on some host never starts anywhere:
every agent checks its host (the program, shared memory, descriptors) and reports up
(T_PROBLEM for each problem, then T_READY for its subtree); only when every host passed does
the root order T_GO, and the ranks start."""
from __future__ import annotations

import os
import signal
import subprocess
import time
from functools import partial
from typing import Callable

from ..loop import Loop
from ..signames import signal_name
from ..resources import HostMemory, ensure_descriptors, descriptors_needed, shared_memory_need
from .agent import Agent, AgentSpec, Upstream
from .output import Sink
from .protocol import (EVENT, EV_ENDED, HEARTBEAT, T_EVENT, T_GO, T_HEARTBEAT, T_NOTE,
                       T_PROBLEM, T_READY, T_STDIN, T_STDIN_ACK)
from .ranks import SpawnError
from .starter import LOGIN_MARK, SshSettings, reap_agent, start_agent, stop_agent
from .topology import AgentNode
from .tree import ChildLink, TreeListener, dispatch_child_frame, frame

# Each agent starts its children one after another: a subtree's last agent starts this much
# later per agent before it (an ssh start's cost), on top of the per-level timeout.
START_SPACING = 0.5
WARNING = "warning: "  # a note shown without -v
# A login still queued behind others' that keep ending waits at most this many deadlines.
LOGIN_QUEUE_CAP = 10
SLOW_LOGIN = 5.0  # seconds: a login at least this long is reported (or a quarter of the deadline)
KILL_SILENCE = 3 * HEARTBEAT  # a child's silence that gives it up once ranks are being killed


def _process_age() -> float:
    """Seconds since this process started (exec of the user's command: gasnetrun's compiled
    front execs Python in the same process), from its start time in /proc."""
    try:
        with open("/proc/self/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        started = int(fields[19]) / os.sysconf("SC_CLK_TCK")  # field 22: clock ticks after boot
        return max(0.0, time.clock_gettime(time.CLOCK_BOOTTIME) - started)
    except (OSError, ValueError, IndexError):
        return 0.0


_STARTED = time.monotonic() - _process_age()


def since_start() -> float:
    """Seconds since gasnetrun started: -v stamps start-up's steps with it."""
    return time.monotonic() - _STARTED


def plan_node(spec: AgentSpec, host: str, problems: list[str], notes: list[str]) -> None:
    """The job's conduit plans this host (its launcher half's plan_node: probe, per-node
    knobs): the knobs it adds join what the ranks see (never over the user's)."""
    from .. import conduits
    found = conduits.plan_node(spec.node_planner, host, len(spec.ranks), spec.nranks, spec.env)
    problems.extend(found.problems)
    for name, value in found.env.items():
        spec.env.setdefault(name, value)
    notes.extend(found.notes)


def check_host(spec: AgentSpec, host: str, notes: list[str] | None = None) -> list[str]:
    """What keeps this host from running its share of the job, if anything."""
    problems: list[str] = []
    program = spec.argv[0]
    if not os.path.exists(program):
        problems.append(f"host {host}: program {program} does not exist there")
    elif os.path.isdir(program) or not os.access(program, os.X_OK):
        problems.append(f"host {host}: program {program} is not an executable file there")
    if spec.ranks:
        need = shared_memory_need(host, len(spec.ranks), spec.env, HostMemory.here())
        if need.problem:
            problems.append(need.describe())
        fds = ensure_descriptors(descriptors_needed(len(spec.ranks), spec.pipe_output))
        if fds:
            problems.append(f"host {host}: {fds}")
        if spec.node_planner:
            plan_node(spec, host, problems, notes if notes is not None else [])
    return problems


class TreeNode:
    def __init__(self, loop: Loop, nodes: list[AgentNode], me: int,
                 make_spec: Callable[[AgentNode], AgentSpec], upstream: Upstream,
                 ssh: SshSettings, is_local: Callable[[str], bool],
                 sink: Sink | None = None, log: Callable[[str], None] | None = None,
                 on_checked: Callable[[list[str]], None] | None = None,
                 silence_limit: float = 60.0) -> None:
        self.loop = loop
        self.nodes = nodes
        self.me = nodes[me]
        self.upstream = upstream
        self.ssh = ssh
        self.is_local = is_local
        self.log = log or (lambda message: None)
        self.spec = make_spec(self.me)
        self.agent = Agent(loop, self.spec, upstream, sink=sink, log=log)
        self.procs: dict[int, subprocess.Popen] = {}
        self.joined: set[int] = set()
        self.checked: set[int] = set()   # children whose subtree finished its checks
        self.problems: list[str] = []
        self.notes: list[str] = []       # what agents found (the root keeps them for -v)
        self.own_checked = False
        self.reported = False
        self.started = False
        self.last_signal: int | None = None
        self.listener: TreeListener | None = None
        self.finished = False
        # The root decides: on_checked(problems) once the whole tree has checked. Other nodes
        # report up (T_PROBLEM, T_READY) through send_up.
        self.on_checked = on_checked
        self.send_up: Callable[[int, bytes], None] = lambda kind, payload: None
        self.stdin_buffer: list[bytes] = []
        self.ended: set[int] = set()      # ranks below this node that reported their end
        self.lost: set[int] = set()       # child agents given up for lost
        # A child silent this long (no frame, not even a heartbeat) has frozen or its host
        # has gone: the job's exit timeout, so a lost host ends the job within it.
        self.silence_limit = silence_limit
        self.last_heard: dict[int, float] = {}
        self._watch_timer: int | None = None
        # The launcher's: told how many bytes of stdin rank 0 took (T_STDIN_ACK).
        self.on_stdin_ack: Callable[[int], None] = lambda count: None
        self.reapers: list[subprocess.Popen] = []  # ssh commands killing frozen agents
        self._deadlines: dict[int, int] = {}  # per child: its start deadline's timer
        self._spawned: dict[int, float] = {}   # per remote child: when its ssh started
        self.login_took: dict[int, float] = {}  # ... and how long its login took (LOGIN_MARK)
        self._last_login = -1.0                 # when a child's login last ended

    # ---- phase 1: start the children, check this host --------------------------------------
    def stamp(self, what: str) -> None:
        """A step of start-up, for -v with the seconds since gasnetrun started (its "start-up
        times"). The root's only: other agents' lines reach the user's terminal (over ssh)
        with or without -v, and what their subtrees do shows in the root's view of them."""
        if self.on_checked is not None:
            self.log(f"+{since_start():.3f} s: {what}")

    def _agents_below(self, index: int) -> int:
        return sum(1 + self._agents_below(c) for c in self.nodes[index].children)

    def _levels(self, index: int) -> int:
        """Levels of the tree from this agent down (1: it has no children)."""
        return 1 + max((self._levels(c) for c in self.nodes[index].children), default=0)

    def start_deadline(self, child: int) -> float:
        """Seconds a child's subtree has to start and check: GASNET_SSH_START_TIMEOUT for each
        of its levels (an ssh login each, which a slow shell start-up lengthens), plus the
        spacing of the starts of its agents. A child's deadline is always longer than any of
        its own children's, so the agent nearest a lost host names it."""
        return (self.ssh.start_timeout * self._levels(child)
                + START_SPACING * (1 + self._agents_below(child)))

    def start(self, cookie: str, instructions_for: Callable[[AgentNode, int], dict]) -> None:
        if self.me.children:
            self.stamp(f"starting {len(self.me.children)} agent(s)")
            expected = {c: (self.nodes[c].host, self.nodes[c].subtree) for c in self.me.children}
            self.listener = TreeListener(self.loop, cookie, expected, self._joined,
                                         self._frame, self._lost,
                                         lambda why: self.log(f"agent socket: dropped a "
                                                              f"connection: {why}"))
            for c in self.me.children:
                node = self.nodes[c]
                try:
                    proc = start_agent(node.host, self.is_local(node.host), self.ssh,
                                       instructions_for(node, self.listener.port),
                                       self.ssh.remote_path)
                except OSError as err:
                    self._problem(f"host {node.host}: cannot start its agent: {err.strerror}")
                    self.checked.add(c)
                    continue
                self.procs[c] = proc
                self.log(f"agent for host {node.host} started (pid {proc.pid} here; its "
                         f"{len(node.ranks)} rank(s) start once every host is checked)")
                pidfd = os.pidfd_open(proc.pid)
                self.loop.add_reader(pidfd, partial(self._agent_ended, c, pidfd))
                if proc.stdout is not None:  # over ssh: its login's end is seen
                    self._spawned[c] = time.monotonic()
                    os.set_blocking(proc.stdout.fileno(), False)
                    self.loop.add_reader(proc.stdout.fileno(), partial(self._login_output, c))
            self.stamp(f"{len(self.procs)} agent(s) started, joining")
            self._deadlines = {c: self.loop.call_later(self.start_deadline(c),
                                                       partial(self._start_deadline, c))
                               for c in self.procs}
            self._watch_timer = self.loop.call_later(HEARTBEAT, self._watch)
        notes: list[str] = []
        for problem in check_host(self.spec, self.me.host, notes):
            self._problem(problem)
        for note in notes:
            self._note(note)
        self.own_checked = True
        self._maybe_checked()

    def _problem(self, text: str) -> None:
        self.problems.append(text)
        if self.on_checked is None:
            self.send_up(T_PROBLEM, text.encode())

    def _note(self, text: str) -> None:
        if self.on_checked is None:
            self.send_up(T_NOTE, text.encode())
        else:
            self.notes.append(text)

    def _maybe_checked(self) -> None:
        if self.reported or not self.own_checked or self.checked != set(self.me.children):
            return
        self.reported = True
        for timer in self._deadlines.values():
            self.loop.cancel(timer)
        if self.on_checked is not None:
            from .topology import depth
            self.stamp(f"every host checked ({len(self.nodes)} agent(s), depth "
                       f"{depth(self.nodes)})")
            self.on_checked(self.problems)
        else:
            self.send_up(T_READY, os.getpid().to_bytes(4, "big"))

    def slow_login(self) -> float:
        """A login longer than this is reported even when the job starts."""
        return max(SLOW_LOGIN, self.ssh.start_timeout / 4)

    def _login_output(self, c: int) -> None:
        """The child's ssh printed something: first the end of its login (LOGIN_MARK), then
        anything its agent writes to stdout (dropped). A login that took long is reported; the
        child's start deadline then runs again from the login's end, so a slow shell start-up
        does not leave its agent no time of its own."""
        proc = self.procs[c]
        assert proc.stdout is not None
        fd = proc.stdout.fileno()
        try:
            data = os.read(fd, 4096)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:
            self.loop.remove_reader(fd)
            proc.stdout.close()
            return
        if c in self.login_took or LOGIN_MARK not in data:
            return
        self._last_login = time.monotonic()
        took = self.login_took[c] = self._last_login - self._spawned[c]
        host = self.nodes[c].host
        self.stamp(f"host {host}: ssh login took {took:.3f} s")
        if took > self.slow_login():
            # Whole seconds: hosts alike fold into one line (gasnetrun.notes.group_notes).
            self._note(f"host {host}: {WARNING}ssh login took {took:.0f} s before the agent "
                       "ran: its shell start-up files (~/.bashrc, conda, environment modules)?")
        timer = self._deadlines.get(c)
        if timer is not None and c not in self.checked:
            self.loop.cancel(timer)
            self._deadlines[c] = self.loop.call_later(self.start_deadline(c),
                                                      partial(self._start_deadline, c))

    def _start_deadline(self, c: int) -> None:
        if c in self.checked:
            return
        now = time.monotonic()
        if (c in self._spawned and c not in self.login_took and self._last_login >= 0
                and now - self._last_login < self.ssh.start_timeout
                and now - self._spawned[c] < LOGIN_QUEUE_CAP * self.start_deadline(c)):
            # Its login has not ended, but other children's logins keep ending: logins that
            # queue behind each other (a shell start-up file taking a lock, as pyenv's rehash
            # does; a login node's limit) are slow, not lost. Wait while they move on.
            self._deadlines[c] = self.loop.call_at(self._last_login + self.ssh.start_timeout,
                                                   partial(self._start_deadline, c))
            return
        seconds, host = self.start_deadline(c), self.nodes[c].host
        below = self._agents_below(c)
        if c not in self.joined and c in self._spawned and c not in self.login_took:
            waited = time.monotonic() - self._spawned[c]
            what = (f"host {host}: its ssh login had not finished after {waited:.1f} s (slow "
                    "shell start-up files: ~/.bashrc, conda, environment modules?)")
        elif c not in self.joined and c in self.login_took:
            took = self.login_took[c]
            waited = time.monotonic() - self._spawned[c] - took
            what = (f"host {host}: its ssh login took {took:.1f} s, then its agent did not "
                    f"answer within {waited:.1f} s")
        elif c not in self.joined:
            what = f"host {host}: its agent did not answer within {seconds:g} s"
        else:  # it joined; its own deadlines name whoever below it was lost, before this one
            what = (f"host {host}: its agent joined, but it and the {below} agent(s) it starts "
                    f"did not finish their checks within {seconds:g} s")
        self._problem(f"{what}; GASNET_SSH_START_TIMEOUT={self.ssh.start_timeout:g} s for "
                      "each level of the agent tree gives more")
        self.checked.add(c)
        self._maybe_checked()

    # ---- phase 2: start the ranks ----------------------------------------------------------
    def go(self) -> None:
        """Every host passed: start the ranks here and below."""
        self.started = True
        for link in self.agent.children:
            link.sock_send(frame(T_GO))
        self.agent.start()
        if self.spec.ranks:
            self.stamp(f"this host's {len(self.spec.ranks)} rank(s) started")
        for data in self.stdin_buffer:
            self.stdin(data)
        self.stdin_buffer.clear()

    def stdin(self, data: bytes) -> None:
        """Bytes for rank 0's standard input (empty: end of input), towards whoever has it."""
        if not self.started:
            self.stdin_buffer.append(data)
            return
        if 0 in self.spec.ranks:
            self.agent.feed_stdin(data)
            return
        for link in self.agent.children:
            if 0 in link.subtree:
                link.sock_send(frame(T_STDIN, data))

    # ---- children ----------------------------------------------------------------------------
    def _joined(self, link: ChildLink) -> None:
        self.joined.add(link.index)
        self.stamp(f"agent of host {link.host} joined")
        self.last_heard[link.index] = time.monotonic()
        self.agent.children.append(link)
        if self.last_signal is not None:  # the job ended before it joined
            link.send_signal(self.last_signal)

    def _frame(self, link: ChildLink, kind: int, payload: bytes) -> None:
        self.last_heard[link.index] = time.monotonic()
        if kind == T_HEARTBEAT:
            return
        if kind == T_STDIN_ACK:
            if self.on_checked is not None:  # the root: the launcher reads more of its stdin
                self.on_stdin_ack(int.from_bytes(payload[:4], "big"))
            else:
                self.send_up(T_STDIN_ACK, payload)
        elif kind == T_PROBLEM:
            self._problem(payload.decode(errors="replace"))
        elif kind == T_NOTE:
            self._note(payload.decode(errors="replace"))
        elif kind == T_READY:
            if len(payload) >= 4:
                link.pid = int.from_bytes(payload[:4], "big")
            self.checked.add(link.index)
            below = self._agents_below(link.index)
            self.stamp(f"host {link.host} checked" +
                       (f" (and the {below} host(s) below it)" if below else ""))
            self._maybe_checked()
        else:
            if kind == T_EVENT and payload[0] == EV_ENDED:
                self.ended.add(EVENT.unpack(payload)[1])
            dispatch_child_frame(self.agent, self.upstream, link, kind, payload)

    def _lost(self, link: ChildLink) -> None:
        if link in self.agent.children:
            self.agent.children.remove(link)
        if self.finished:
            return
        if not self.reported:
            self._problem(f"host {link.host}: its agent closed the connection during start-up")
            self.checked.add(link.index)
            self._maybe_checked()
        else:
            self._subtree_lost(link.index, f"lost the agent of host {link.host} (its connection "
                                           "closed)")

    def _agent_ended(self, index: int, pidfd: int) -> None:
        self.loop.remove_reader(pidfd)
        os.close(pidfd)
        proc = self.procs[index]
        code = proc.wait()
        if self.finished:
            return
        host = self.nodes[index].host
        how = f"signal {signal_name(-code)}" if code < 0 else f"code {code}"
        what = "the agent" if self.is_local(host) else "ssh"
        if index not in self.checked:
            self._problem(f"host {host}: its agent could not start ({what} ended with {how}; "
                          "see the messages above)")
            self.checked.add(index)
            self._maybe_checked()
        elif self.started:
            self._subtree_lost(index, f"the agent of host {host} is gone ({what} ended with "
                                      f"{how}) before the job ended")

    def _watch(self) -> None:
        """Gives up on child agents that have been silent for the silence limit (start-up has
        its own deadline; after the job, silence does not matter)."""
        self._watch_timer = None
        if self.finished:
            return
        for link in list(self.agent.children):  # children give up a parent that falls silent
            link.sock_send(frame(T_HEARTBEAT))
        if self.started:
            now = time.monotonic()
            for link in list(self.agent.children):
                index = getattr(link, "index", None)
                if index is None or index in self.lost:
                    continue
                silent = now - self.last_heard.get(index, now)
                # Once ranks are being killed (Ctrl-C twice, or the exit timeout ran out), a
                # child that has not answered for a few heartbeats is not going to.
                limit = (min(self.silence_limit, KILL_SILENCE)
                         if self.last_signal == signal.SIGKILL else self.silence_limit)
                if silent > limit:
                    if isinstance(link, ChildLink):
                        self._reap(link)
                    self._subtree_lost(index, f"the agent of host {self.nodes[index].host} "
                                              f"stopped answering (nothing for {silent:.0f} s)")
        self._watch_timer = self.loop.call_later(HEARTBEAT, self._watch)

    def _subtree_lost(self, index: int, why: str) -> None:
        """A child agent is gone while its ranks ran: say so, and count every rank of its
        subtree that has not reported its end as ended (code 1), so the job ends (its other
        ranks are told to leave) instead of waiting for ranks nobody can hear from."""
        if index in self.lost:
            return
        self.lost.add(index)
        self.upstream.error(why)
        for rank in self.nodes[index].subtree:
            if rank not in self.ended:
                self.ended.add(rank)
                self.upstream.event(EV_ENDED, rank, 1, 0, 0)
        link = next((c for c in self.agent.children if getattr(c, "index", None) == index), None)
        if link is not None:
            self.agent.children.remove(link)
        proc = self.procs.get(index)
        if proc is not None and proc.poll() is None:
            stop_agent(proc, 1.0)

    def _reap(self, link: ChildLink) -> None:
        """A frozen agent (stopped, or its host stalled) keeps its ranks running: closing its
        ssh does not end it. Ask its host, over a new ssh, to kill it (its ranks die with it);
        a host that is really gone does not answer, and the reaper's ssh gives up by itself."""
        if link.pid and not self.is_local(link.host):
            proc = reap_agent(link.host, link.pid, self.ssh)
            if proc is not None:
                self.reapers.append(proc)

    # ---- running and ending --------------------------------------------------------------
    def deliver(self, seq: int, result: bytes) -> None:
        self.agent.deliver(seq, result)

    def signal(self, signum: int) -> None:
        self.last_signal = signum
        self.agent.signal(signum)

    def close(self) -> list[str]:
        self.finished = True
        if self._watch_timer is not None:
            self.loop.cancel(self._watch_timer)
            self._watch_timer = None
        children = [c for c in self.agent.children if isinstance(c, ChildLink)]
        for link in children:
            link.shutdown()
        deadline = time.monotonic() + 1.0  # shared: a frozen child costs no more than a second
        for link in children:
            link.outbox.drain(max(0.0, deadline - time.monotonic()))
        deadline = time.monotonic() + 5.0
        links = {link.index: link for link in children}
        for index, proc in self.procs.items():
            # An agent that joined gets time to end its ranks and leave; one that never
            # joined runs nothing yet, and its ssh may still be connecting: stop it now.
            grace = deadline - time.monotonic() if index in self.joined else 0.0
            if not stop_agent(proc, max(0.05, grace)) and index in links:
                self._reap(links[index])  # it did not go: frozen
        for reaper in self.reapers:  # bounded by its own ConnectTimeout; killed if not done
            try:
                reaper.wait(timeout=max(0.05, deadline + 5.0 - time.monotonic()))
            except subprocess.TimeoutExpired:
                reaper.kill()
                reaper.wait()
        if self.listener:
            self.listener.close()
        return self.agent.close()
