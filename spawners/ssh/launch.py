"""The ssh spawner's launch side: gasnetrun is the root of a tree of per-host agents started
over ssh (a host named like the starting agent's own is started as a plain process); each runs
its host's ranks with the local spawner's protocol and relays collectives, events, output and
signals over TCP."""
from __future__ import annotations

import os
import stat
import shlex
import socket
import sys
from typing import TYPE_CHECKING, Callable, Mapping

from gasnetrun import _native
from gasnetrun.thishost import is_this_host

if TYPE_CHECKING:
    from gasnetrun.agent.starter import SshSettings
    from gasnetrun.agent.node import TreeNode
    from gasnetrun.agent.topology import AgentNode
    from gasnetrun.job import Job, RunningJob
    from gasnetrun.plan import Plan
# The agent tree's modules (agent.main, node, tree, starter) load when a job uses this
# spawner: asking whether it applies is every job's, and must not cost their imports.

name = "ssh"

# Variables that describe the caller's own session or host: never sent to other hosts.
DENY = {"SSH_AUTH_SOCK", "SSH_AGENT_PID", "SSH_CLIENT", "SSH_CONNECTION", "SSH_TTY",
        "DISPLAY", "XAUTHORITY", "WAYLAND_DISPLAY", "HOSTNAME", "HOST", "PWD", "OLDPWD",
        "SHLVL", "_", "XDG_RUNTIME_DIR", "XDG_SESSION_ID", "XDG_SESSION_TYPE",
        "XDG_SESSION_CLASS", "DBUS_SESSION_BUS_ADDRESS", "TMUX", "TMUX_PANE", "STY",
        "WINDOWID", "TERM_SESSION_ID", "KRB5CCNAME", "MAIL", "LOGNAME", "USER", "HOME",
        "SHELL", "PS1", "PROMPT_COMMAND"}


def propagated(env: Mapping[str, str], exported: list[str], only: bool) -> dict[str, str]:
    """What every remote rank gets on top of its host's login environment: everything but the
    deny-list, or with --env-only just the -E names and GASNET_* knobs."""
    if only:
        return {k: v for k, v in env.items() if k in exported or k.startswith("GASNET_")}
    return {k: v for k, v in env.items()
            if (k not in DENY or k in exported) and not k.startswith("GASNETRUN_")}


def ssh_settings(env: Mapping[str, str]) -> SshSettings:
    from gasnetrun.agent.starter import SshSettings
    command = shlex.split(env.get("GASNET_SSH_CMD", "").strip() or "ssh")
    options = shlex.split(env.get("GASNET_SSH_OPTIONS", "").strip())
    remote = env.get("GASNET_SSH_REMOTE_PATH", "").strip() or os.getcwd()
    timeout = env.get("GASNET_SSH_START_TIMEOUT", "").strip()
    start_timeout = float(_native.check("GASNET_SSH_START_TIMEOUT", timeout).split(":")[1]) \
        if timeout else 60.0
    return SshSettings(command, options, remote, start_timeout)



def _stdin_kind(fd: int) -> str | None:
    """'pipe' (a pipe or socket: the event loop watches it), 'file' (a regular file: always
    readable, which epoll refuses to watch, so it is read in turns of the loop), or None (a
    device: left alone, as a read could block the launcher)."""
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return None
    if stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode):
        return "pipe"
    return "file" if stat.S_ISREG(mode) else None

class SshSpawner:
    name = name

    def applies(self, env: Mapping[str, str], hosts: list[str]) -> str | None:
        remote = [h for h in hosts if not is_this_host(h)]
        if remote:
            return f"the job's hosts include {len(remote)} other than this one"
        return None

    def plan_notes(self, plan: Plan) -> list[str]:
        from gasnetrun.agent.topology import depth
        nodes = self._tree(plan)
        return [f"agent tree: {len(nodes)} agents, out-degree {self.degree(plan)}, depth "
                f"{depth(nodes)}"]

    def degree(self, plan: Plan) -> int:
        text = plan.env.get("GASNET_SSH_OUT_DEGREE", "").strip()
        return int(_native.check("GASNET_SSH_OUT_DEGREE", text).split(":")[1]) if text else 32

    def _tree(self, plan: Plan) -> list[AgentNode]:
        from gasnetrun.agent.topology import build_tree
        return build_tree(plan.hosts, socket.gethostname(), is_this_host, self.degree(plan))

    def start(self, plan: Plan, job: Job) -> RunningJob:
        from gasnetrun.agent.agent import AgentSpec
        from gasnetrun.agent.main import instructions, local_address_towards
        from gasnetrun.agent.node import WARNING, TreeNode
        nodes = self._tree(plan)
        ssh = ssh_settings(plan.env)
        remote_env = propagated(plan.env, plan.exported, plan.env_only)
        stdin_ok = sys.stdin is not None and not sys.stdin.isatty()
        # Input travels to another host's rank 0 from a pipe, a socket or a regular file (not
        # from a device: /dev/null gives it no input anyway); a local rank 0 inherits any stdin.
        stdin_kind = _stdin_kind(0) if stdin_ok else None
        stdin_forwardable = stdin_kind is not None
        specs = {}
        for node in nodes:
            local = node.index == 0
            specs[node.index] = AgentSpec(
                jobid=plan.jobid, cookie=job.cookie, index=node.index, host=node.host,
                ranks=node.ranks, subtree=node.subtree, nranks=plan.nranks, argv=plan.argv,
                env={**(plan.env if local else remote_env), **plan.host_env.get(node.host, {})},
                stdin_rank=0 if ((stdin_ok if local else stdin_forwardable)
                                 and 0 in node.ranks) else None,
                stdin_pipe=not local, pipe_output=plan.tag_output or not local,
                host_env=not local, children=node.children, node_planner=plan.node_planner,
                verbose=plan.verbose)
        log = (lambda m: print(f"gasnetrun: {m}", file=sys.stderr, flush=True)) \
            if plan.verbose else None
        silence_limit = job.policy.timeout
        root = TreeNode(job.loop, nodes, 0, lambda n: specs[n.index], job, ssh, is_this_host,
                        sink=job.sink, log=log, on_checked=lambda problems: checked(problems),
                        silence_limit=silence_limit)
        job.deliver = root.deliver
        if plan.verbose:
            job.deliver = stamped(root)

        def checked(problems: list[str]) -> None:
            # Warnings (a slow login) always; the rest of what agents found with -v.
            shown = [n for n in root.notes if plan.verbose or WARNING in n]
            if shown:
                from gasnetrun.notes import group_notes  # (jobs whose conduit plans nodes)
                for note in group_notes(shown):
                    print(f"gasnetrun: {note}", file=sys.stderr, flush=True)
            if problems:
                job.refuse(problems)
                return
            root.go()
            job.started = True
            if stdin_forwardable and 0 not in nodes[0].ranks:
                resume()

        # At most STDIN_WINDOW bytes of stdin on their way to rank 0 and not yet taken by it
        # (T_STDIN_ACK): a rank that does not read holds the launcher's reading, not memory.
        from gasnetrun.agent.protocol import STDIN_WINDOW
        flow = {"unacked": 0, "reading": False, "ended": False}

        def resume() -> None:
            if flow["reading"] or flow["ended"] or flow["unacked"] >= STDIN_WINDOW:
                return
            flow["reading"] = True
            if stdin_kind == "pipe":
                job.loop.add_reader(0, forward_stdin)
            else:
                job.loop.call_later(0, forward_file)

        def acked(count: int) -> None:
            flow["unacked"] = max(0, flow["unacked"] - count)
            if flow["unacked"] < STDIN_WINDOW // 2:
                resume()

        root.on_stdin_ack = acked

        def read_stdin() -> bytes:
            try:
                return os.read(0, 1 << 16)
            except OSError:
                return b""

        def forwarded(data: bytes) -> bool:
            """Sends data on; whether to go on reading."""
            root.stdin(data)
            if not data:
                flow["ended"] = True
                return False
            flow["unacked"] += len(data)
            return flow["unacked"] < STDIN_WINDOW

        def forward_stdin() -> None:
            if not forwarded(read_stdin()):
                job.loop.remove_reader(0)
                flow["reading"] = False

        def forward_file() -> None:
            """One chunk per turn of the loop, so that a large file does not hold up the
            job's other events; the empty read at its end tells rank 0 its input ended."""
            if forwarded(read_stdin()):
                job.loop.call_later(0, forward_file)
            else:
                flow["reading"] = False

        root.start(job.cookie, lambda n, port: instructions(
            nodes, specs, n, job.cookie, ssh, local_address_towards(n.host), port, silence_limit))
        return root


def stamped(root: TreeNode) -> Callable[[int, bytes], None]:
    """-v's start-up times: when each bootstrap collective (an exchange; a barrier is an empty
    one) completed, and what every rank received from it."""
    def deliver(seq: int, result: bytes) -> None:
        root.deliver(seq, result)
        root.stamp(f"bootstrap collective {seq} done: {len(result)} bytes to every rank")
    return deliver


def create() -> SshSpawner:
    return SshSpawner()
