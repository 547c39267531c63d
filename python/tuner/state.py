"""The sweep's state file (DIR/state.json) and raw records (DIR/records/<point>.jsonl).

Every finished run is saved before the next starts. A resumed sweep replays the saved runs in
order (the search is a deterministic function of the seed and of the measurements, so it asks
for the same runs again) and measures only what is left: the result is the one an
uninterrupted sweep with the same measurements would give."""
from __future__ import annotations

import contextlib
import json
import os
import shutil
from dataclasses import dataclass, field
from typing import Any

from .errors import TuneError, UsageError

VERSION = 1
OUTPUTS = ("state.json", "tuned.env", "report.md", "report.json", "objective_by_knob.png",
           "progress.png")


@dataclass
class SavedRun:
    point: str
    cost: float | None  # None: the run failed (error says why)
    seconds: float
    error: str | None = None


@dataclass
class State:
    out_dir: str
    config: dict[str, Any]
    points: dict[str, dict[str, str]] = field(default_factory=dict)
    runs: list[SavedRun] = field(default_factory=list)
    plan_runs: int | None = None
    finished: bool = False
    meta: dict[str, Any] = field(default_factory=dict)  # the objective's unit and direction

    @property
    def path(self) -> str:
        return os.path.join(self.out_dir, "state.json")

    def save(self) -> None:
        data = {"version": VERSION, "config": self.config, "points": self.points,
                "plan_runs": self.plan_runs, "finished": self.finished, "meta": self.meta,
                "runs": [vars(r) for r in self.runs]}
        tmp = self.path + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(data, f, indent=1)
        os.replace(tmp, self.path)  # never a half-written state, whenever Ctrl-C comes

    def add_records(self, point: str, run: int, records: list[dict[str, Any]],
                    error: str | None) -> None:
        path = os.path.join(self.out_dir, "records", f"{point}.jsonl")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "a", encoding="utf-8") as f:
            f.write(json.dumps({"run": run, "env": self.points[point], "error": error,
                                "records": records}) + "\n")


def open_state(out_dir: str, config: dict[str, Any], restart: bool) -> tuple[State, bool]:
    """The state of out_dir for this configuration: (state, resumed)."""
    try:
        os.makedirs(out_dir, exist_ok=True)
    except OSError as err:
        raise UsageError(f"--out {out_dir}: {err.strerror}") from None
    state = State(out_dir, config)
    if restart:  # nothing of the old sweep may pass for the new one's
        shutil.rmtree(os.path.join(out_dir, "records"), ignore_errors=True)
        for name in OUTPUTS:
            with contextlib.suppress(FileNotFoundError):
                os.remove(os.path.join(out_dir, name))
    if restart or not os.path.exists(state.path):
        return state, False
    try:
        with open(state.path, encoding="utf-8") as f:
            data = json.load(f)
        if data.get("version") != VERSION:
            raise ValueError(f"version {data.get('version')!r}, expected {VERSION}")
        saved = data["config"]
        runs = [SavedRun(**r) for r in data["runs"]]
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as err:
        raise TuneError(f"{state.path}: not a gasnet-tune state file ({err}); use --restart "
                        "to start over in this directory") from None
    if saved != config:
        differ = sorted(k for k in set(saved) | set(config) if saved.get(k) != config.get(k))
        raise UsageError(f"--out {out_dir} holds a sweep with other settings (they differ in: "
                         f"{', '.join(differ)}); use another --out, or --restart to discard it")
    state.points = data.get("points", {})
    state.runs = runs
    state.plan_runs = data.get("plan_runs")
    state.finished = bool(data.get("finished"))
    state.meta = data.get("meta", {})
    return state, True
