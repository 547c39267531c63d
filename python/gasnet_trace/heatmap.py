"""The rank x rank picture of a job's traffic: bytes and messages each rank (row) sent to each
peer (column), from the trace's transfers and AMs, or from the statistics' PEER lines when the
files hold no traced transfer."""
from __future__ import annotations

import matplotlib

matplotlib.use("Agg")  # files only: no display is needed or wanted
import matplotlib.pyplot as plt  # noqa: E402

from .parse import PeerTotal  # noqa: E402
from .traffic import Traffic, matrices  # noqa: E402


def write_heatmap(traffic: Traffic, peer_totals: list[PeerTotal], path: str) -> None:
    ranks, nbytes, msgs = matrices(traffic, peer_totals)
    fig, axes = plt.subplots(1, 2, figsize=(11, 5.4))
    for ax, data, title in ((axes[0], nbytes, "bytes sent"), (axes[1], msgs, "messages sent")):
        image = ax.imshow(data, cmap="viridis", origin="upper")
        ax.set_title(title)
        ax.set_xlabel("to rank")
        ax.set_ylabel("from rank")
        ticks = list(range(ranks)) if ranks <= 32 else list(range(0, ranks, max(1, ranks // 16)))
        ax.set_xticks(ticks)
        ax.set_yticks(ticks)
        fig.colorbar(image, ax=ax, shrink=0.8)
        if ranks <= 16:
            top = max(max(row) for row in data) or 1
            for i in range(ranks):
                for j in range(ranks):
                    if data[i][j]:
                        ax.text(j, i, str(data[i][j]), ha="center", va="center", fontsize=8,
                                color="black" if data[i][j] > top / 2 else "white")
    fig.suptitle("GASNet job traffic by rank pair")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
