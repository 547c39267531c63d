"""Who sent what to whom: the rank x rank sums behind the heatmap."""
from __future__ import annotations

from .parse import Event, PeerTotal


class Traffic:
    """What each rank sent to each peer (bytes, messages), summed as events come: its size
    is the number of rank pairs that talked, not of events."""

    def __init__(self) -> None:
        self.pairs: dict[tuple[int, int], list[int]] = {}
        self.top = 0  # the largest rank seen

    def add(self, e: Event) -> None:
        self.top = max(self.top, e.rank)
        if not e.sent or e.peer is None:
            return
        self.top = max(self.top, e.peer)
        pair = self.pairs.setdefault((e.rank, e.peer), [0, 0])
        pair[0] += e.nbytes
        pair[1] += 1


def matrices(traffic: Traffic, peer_totals: list[PeerTotal]
             ) -> tuple[int, list[list[int]], list[list[int]]]:
    """(ranks, bytes[src][dst], messages[src][dst]): from the traced transfers and AMs, or
    from the statistics' PEER lines when the files hold no traced transfer."""
    ranks = 1 + max([traffic.top] + [t.rank for t in peer_totals]
                    + [t.peer for t in peer_totals])
    nbytes = [[0] * ranks for _ in range(ranks)]
    msgs = [[0] * ranks for _ in range(ranks)]
    if traffic.pairs:
        for (src, dst), (b, m) in traffic.pairs.items():
            nbytes[src][dst] += b
            msgs[src][dst] += m
    else:
        for t in peer_totals:
            nbytes[t.rank][t.peer] += t.nbytes
            msgs[t.rank][t.peer] += t.msgs
    return ranks, nbytes, msgs
