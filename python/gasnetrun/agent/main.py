"""A remote agent's process (`gasnetrun --agent`, started over ssh or by its parent agent):
reads its instructions from stdin, joins its parent over TCP, starts its own children and its
host's ranks, and relays. It ends when the parent orders it, or at once, killing its ranks,
when its stdin closes or the parent's connection drops (nothing outlives the launcher)."""
from __future__ import annotations

import os
import signal
import socket
import sys
import time
from dataclasses import asdict

from ..loop import Loop
from ..thishost import is_this_host
from .agent import AgentSpec
from .node import TreeNode
from .protocol import (HEARTBEAT, T_GO, T_HEARTBEAT, T_RESULT, T_SHUTDOWN, T_SIGNAL, T_STDIN,
                       T_STDIN_ACK)
from .ranks import SpawnError
from .starter import SshSettings, read_instructions
from .topology import AgentNode
from .tree import SEQ, ParentLink, take_card_frames


def local_address_towards(host: str) -> str:
    """The address of this host on the route to `host` (what a child there can connect to)."""
    try:
        target = socket.getaddrinfo(host, 9, socket.AF_INET, socket.SOCK_DGRAM)[0][4][0]
        probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:
            probe.connect((target, 9))
            return str(probe.getsockname()[0])
        finally:
            probe.close()
    except OSError:
        return socket.gethostname()


def subtree_of(nodes: list[AgentNode], index: int) -> list[int]:
    out, todo = [], [index]
    while todo:
        i = todo.pop()
        out.append(i)
        todo += nodes[i].children
    return sorted(out)


def instructions(nodes: list[AgentNode], specs: dict[int, AgentSpec], node: AgentNode,
                 cookie: str, ssh: SshSettings, parent_host: str, parent_port: int,
                 silence_limit: float) -> dict:
    return {"cookie": cookie, "parent": [parent_host, parent_port], "index": node.index,
            "silence_limit": silence_limit,
            "nodes": [asdict(n) for n in nodes],
            "specs": {str(i): asdict(specs[i]) for i in subtree_of(nodes, node.index)},
            "ssh": ssh.to_json()}


def main() -> int:
    # SIGINT to an agent: before its loop runs, end quietly (Python's default raises
    # KeyboardInterrupt, whose traceback ssh carries to the user's terminal); from then on,
    # pass it to its subtree's ranks, whose ends reach the launcher as a Ctrl-C's do.
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    try:
        instr = read_instructions(sys.stdin.buffer)
    except (EOFError, ValueError) as err:
        print(f"gasnetrun agent on {socket.gethostname()}: bad instructions: {err}",
              file=sys.stderr)
        return 2
    cookie = str(instr["cookie"])
    index = int(instr["index"])
    nodes = [AgentNode(**n) for n in instr["nodes"]]
    specs = {int(k): AgentSpec(**v) for k, v in instr["specs"].items()}
    ssh = SshSettings.from_json(instr["ssh"])
    host, port = instr["parent"]
    here = socket.gethostname()
    loop = Loop()
    try:
        parent = ParentLink(loop, host, int(port), cookie, index)
    except (OSError, ConnectionError) as err:
        print(f"gasnetrun agent on {here}: cannot join its parent at {host}:{port}: {err}",
              file=sys.stderr)
        return 1
    silence_limit = float(instr["silence_limit"])
    try:
        # Its log (each rank it starts...) only under gasnetrun -v: 480 lines at 512 ranks.
        log = (lambda m: print(f"gasnetrun agent on {here}: {m}", file=sys.stderr)) \
            if specs[index].verbose else None
        node = TreeNode(loop, nodes, index, lambda n: specs[n.index], parent, ssh, is_this_host,
                        log=log, silence_limit=silence_limit)
    except SpawnError as err:  # e.g. its control socket cannot be opened: the parent says so
        try:
            parent.error(f"on {here}: {err}")
        except ConnectionError:
            pass
        return 1
    node.send_up = parent.send
    state = {"shutdown": False, "lost": False}
    parent.outbox.on_full = node.agent.pause_output

    def consumed(count: int) -> None:
        try:
            parent.send(T_STDIN_ACK, count.to_bytes(4, "big"))
        except ConnectionError:
            state["lost"] = True

    node.agent.on_stdin_consumed = consumed
    heard = {"parent": time.monotonic()}

    def on_parent() -> None:
        frames = parent.read()
        if frames is None:
            state["lost"] = True
            return
        heard["parent"] = time.monotonic()
        for kind, payload in frames:
            if take_card_frames(node.agent, kind, payload, parent.send_raw):
                continue
            if kind == T_RESULT:
                (seq,) = SEQ.unpack_from(payload)
                node.deliver(seq, payload[SEQ.size:])
            elif kind == T_SIGNAL:
                node.signal(int.from_bytes(payload[:4], "big"))
            elif kind == T_SHUTDOWN:
                state["shutdown"] = True
            elif kind == T_GO:
                node.go()
            elif kind == T_STDIN:
                node.stdin(payload)

    def on_stdin() -> None:
        try:
            data = os.read(0, 4096)
        except OSError:
            data = b""
        if not data:
            state["lost"] = True

    def beat() -> None:
        """Tells the parent this agent is alive (a frozen one stops, and is given up), and
        gives up a parent that fell silent: its host froze or vanished with its network (no
        FIN or RST ever comes), so nobody would ever end this host's ranks."""
        silent = time.monotonic() - heard["parent"]
        if silent > silence_limit and not state["shutdown"]:
            print(f"gasnetrun agent on {here}: heard nothing from its parent at {host} for "
                  f"{silent:.0f} s (GASNET_EXITTIMEOUT): ending this host's ranks",
                  file=sys.stderr, flush=True)
            state["lost"] = True
            return
        try:
            parent.send(T_HEARTBEAT, b"")
        except ConnectionError:
            state["lost"] = True
            return
        loop.call_later(HEARTBEAT, beat)

    loop.on_signal(signal.SIGINT, node.signal)
    loop.add_reader(parent.sock.fileno(), on_parent)
    loop.add_reader(0, on_stdin)
    try:
        node.start(cookie, lambda n, port: instructions(
            nodes, specs, n, cookie, ssh, local_address_towards(n.host), port, silence_limit))
        loop.call_later(HEARTBEAT, beat)
        loop.run_until(lambda: state["lost"] or (state["shutdown"] and not node.agent.running))
    except SpawnError as err:
        try:
            parent.error(f"on {here}: {err}")
        except ConnectionError:
            pass
        node.close()
        return 1
    except ConnectionError:
        pass
    node.close()
    if not state["lost"]:  # the last frames (rank ends, output) leave before the socket goes
        parent.outbox.drain(2.0)
    return 0 if not state["lost"] else 1
