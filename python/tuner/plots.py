"""The sweep's plots (matplotlib, PNG): the objective over each knob's values, and the
search's progress run by run."""
from __future__ import annotations

import math
import os
import statistics
from typing import Any

import matplotlib

matplotlib.use("Agg")  # files only: no display is needed or wanted
import matplotlib.pyplot as plt  # noqa: E402

from .errors import TuneError  # noqa: E402
from .report import interval, value_of  # noqa: E402


def _save(fig: Any, path: str) -> None:
    try:
        fig.savefig(path, dpi=110)
    except OSError as err:
        raise TuneError(f"{path}: cannot write ({err.strerror}); what was saved before is "
                        "kept: fix that and run the same command again") from None
    finally:
        plt.close(fig)


def write_plots(out_dir: str, doc: dict[str, Any]) -> list[str]:
    better, unit = doc["better"], doc["unit"]
    label = f"{doc['objective']} ({unit}, {better} is better)"
    paths = []
    base, base_lo, base_hi = interval(doc["baseline"], better)
    knobs = doc["knobs"]
    fig, axes = plt.subplots(1, len(knobs), figsize=(4.2 * len(knobs), 3.6), squeeze=False)
    for ax, k in zip(axes[0], knobs):
        xs, ys = [], []
        for p in doc["points"]:
            if p["id"] == "baseline" or p["failed"] or k["name"] not in p["env"]:
                continue
            med = value_of(p["median"], better)
            if math.isfinite(med):
                xs.append(k["values"].index(p["env"][k["name"]]))
                ys.append(med)
        ax.scatter(xs, ys, s=14, alpha=0.6, label="points (median)")
        ax.axhline(base, color="black", lw=1, label="baseline")
        if math.isfinite(base_lo) and math.isfinite(base_hi):
            ax.axhspan(base_lo, base_hi, color="grey", alpha=0.2, label="baseline 95% interval")
        if ys and min(ys) > 0 and max(ys) / min(ys) > 10:
            ax.set_yscale("log")  # a harmful value would flatten everything else
        ax.set_xticks(range(len(k["values"])), k["values"], rotation=45, fontsize=7)
        ax.set_xlabel(k["name"], fontsize=8)
        ax.set_ylabel(label, fontsize=7)
    axes[0][0].legend(fontsize=6)
    fig.tight_layout()
    path = os.path.join(out_dir, "objective_by_knob.png")
    _save(fig, path)
    paths.append(path)

    fig, ax = plt.subplots(figsize=(7, 3.6))
    runs = [(i, pid, value_of(c, better)) for i, (pid, c) in enumerate(doc["history"])
            if c is not None and math.isfinite(c)]
    ax.scatter([i for i, pid, _ in runs if pid != "baseline"],
               [v for _, pid, v in runs if pid != "baseline"], s=8, label="point runs")
    ax.scatter([i for i, pid, _ in runs if pid == "baseline"],
               [v for _, pid, v in runs if pid == "baseline"], s=8, marker="x",
               color="black", label="baseline runs")
    # The best point's median so far (one lucky run is not a better point).
    best: list[float] = []
    seen: dict[str, list[float]] = {}
    for _, pid, v in runs:
        if pid != "baseline":
            seen.setdefault(pid, []).append(v)
        medians = [statistics.median(vs) for vs in seen.values()]
        best.append((min(medians) if better == "lower" else max(medians)) if medians
                    else math.nan)
    ax.step([i for i, _, _ in runs], best, where="post", color="tab:red",
            label="best point's median so far")
    ax.set_xlabel("run")
    ax.set_ylabel(label, fontsize=8)
    ax.legend(fontsize=7)
    fig.tight_layout()
    path = os.path.join(out_dir, "progress.png")
    _save(fig, path)
    paths.append(path)
    return paths
