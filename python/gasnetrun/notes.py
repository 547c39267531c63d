"""Notes of many hosts, folded: at a thousand hosts, -v and --probe print one line per
distinct finding, not one per host."""
from __future__ import annotations


def group_notes(notes: list[str]) -> list[str]:
    """"host H: text" notes of many hosts, one line per text with the hosts folded
    (h[1-64]: ...), in the order first seen."""
    from ClusterShell.NodeSet import NodeSet
    order: list[str] = []
    hosts: dict[str, list[str]] = {}
    for note in notes:
        host, sep, text = note.partition(": ")
        if not sep or not host.startswith("host "):
            host, text = "", note
        if text not in hosts:
            order.append(text)
            hosts[text] = []
        if host:
            hosts[text].append(host[len("host "):])
    out = []
    for text in order:
        names = hosts[text]
        if not names:
            out.append(text)
        else:
            folded = str(NodeSet.fromlist(names))
            out.append(f"host{'s' if len(names) > 1 else ''} {folded}: {text}")
    return out
