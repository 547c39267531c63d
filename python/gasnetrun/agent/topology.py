"""The shape of the agent tree: gasnetrun is agent 0 (it runs the ranks of its own host, if
the job has any there); every other host gets one agent, in a balanced tree of a given
out-degree (0: every agent is a child of gasnetrun)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from ..plan import HostShare


@dataclass
class AgentNode:
    index: int
    host: str
    ranks: list[int]
    parent: int | None
    children: list[int] = field(default_factory=list)
    subtree: list[int] = field(default_factory=list)  # ranks here and below


def build_tree(shares: list[HostShare], root_host: str, is_root_host: Callable[[str], bool],
               degree: int) -> list[AgentNode]:
    """is_root_host(name) says whether a host name means gasnetrun's own host."""
    root_ranks = [r for s in shares if is_root_host(s.name) for r in s.ranks]
    others = [s for s in shares if not is_root_host(s.name)]
    nodes = [AgentNode(0, root_host, sorted(root_ranks), None)]
    for i, share in enumerate(others, 1):
        parent = 0 if degree <= 0 else (i - 1) // degree
        nodes.append(AgentNode(i, share.name, list(share.ranks), parent))
        nodes[parent].children.append(i)
    for node in reversed(nodes):  # children have higher indices than their parent
        node.subtree = sorted(node.ranks + [r for c in node.children for r in nodes[c].subtree])
    return nodes


def depth(nodes: list[AgentNode]) -> int:
    deepest = 0
    for node in nodes:
        d, p = 0, node.parent
        while p is not None:
            d, p = d + 1, nodes[p].parent
        deepest = max(deepest, d)
    return deepest
