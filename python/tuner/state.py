"""The sweep's state file (DIR/state.json) and raw records (DIR/records/<point>.jsonl).

Every finished run is saved before the next starts. A resumed sweep replays the saved runs in
order (the search is a deterministic function of the seed and of the measurements, so it asks
for the same runs again) and measures only what is left: the result is the one an
uninterrupted sweep with the same measurements would give."""
from __future__ import annotations

import contextlib
import json
import math
import os
import shutil
from dataclasses import dataclass, field
from typing import Any, Callable

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
    # On the sweep's clock (seconds of sweeping, across resumes): when the run started, and
    # how long it was expected to take when the deadline let it start (time budgets only).
    started: float | None = None
    expected: float | None = None


@dataclass
class State:
    out_dir: str
    config: dict[str, Any]
    points: dict[str, dict[str, str]] = field(default_factory=dict)
    runs: list[SavedRun] = field(default_factory=list)
    plan_runs: int | None = None
    finished: bool = False
    meta: dict[str, Any] = field(default_factory=dict)  # the objective's unit and direction
    elapsed: float = 0.0  # the sweep's clock when the state was last saved
    # Failed baseline runs, which were tried again (not in runs: they measured nothing):
    # {"after_run": saved runs before it, "error": why, "started", "seconds"}.
    baseline_failures: list[dict[str, Any]] = field(default_factory=list)

    @property
    def path(self) -> str:
        return os.path.join(self.out_dir, "state.json")

    def save(self) -> None:
        data = {"version": VERSION, "config": self.config, "points": self.points,
                "plan_runs": self.plan_runs, "finished": self.finished, "meta": self.meta,
                "elapsed": self.elapsed, "baseline_failures": self.baseline_failures,
                "runs": [vars(r) for r in self.runs]}
        tmp = self.path + ".tmp"
        try:
            with open(tmp, "w", encoding="utf-8") as f:
                json.dump(data, f, indent=1)
            os.replace(tmp, self.path)  # never a half-written state, whenever Ctrl-C comes
        except OSError as err:
            with contextlib.suppress(OSError):
                os.remove(tmp)  # a full disk leaves the last good state.json, and no debris
            raise TuneError(f"{self.path}: cannot save the sweep ({err.strerror}); the runs "
                            "saved before are kept: free some space and run the same command "
                            "again to resume") from None

    def add_records(self, point: str, run: int, records: list[dict[str, Any]],
                    error: str | None) -> None:
        path = os.path.join(self.out_dir, "records", f"{point}.jsonl")
        line = json.dumps({"run": run, "env": self.points[point], "error": error,
                           "records": records}) + "\n"
        write_out(path, lambda f: f.write(line), "a")


def write_out(path: str, write: Callable[[Any], object], mode: str = "w") -> None:
    """Writes a file of the sweep's; a full disk or a refused write is a clean error naming
    the file (the state saved so far stays usable)."""
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, mode, encoding="utf-8") as f:
            write(f)
    except OSError as err:
        raise TuneError(f"{path}: cannot write ({err.strerror}); what was saved before is "
                        "kept: fix that and run the same command again") from None


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
        saved, runs = _check(data)
        failures = _check_failures(data.get("baseline_failures", []))
    except (OSError, ValueError) as err:
        raise UsageError(f"{state.path}: not a gasnet-tune state file ({err}); use --restart "
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
    state.elapsed = float(data.get("elapsed", 0.0))
    state.baseline_failures = failures
    return state, True


def _number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def _check_failures(failures: Any) -> list[dict[str, Any]]:
    """The saved failed baseline runs, each field checked (ValueError says what is wrong)."""
    if not isinstance(failures, list):
        raise ValueError(f"baseline_failures {failures!r}: expected a list")
    for i, f in enumerate(failures):
        if not (isinstance(f, dict) and set(f) == {"after_run", "error", "started", "seconds"}
                and isinstance(f["after_run"], int) and not isinstance(f["after_run"], bool)
                and f["after_run"] >= 0 and isinstance(f["error"], str)
                and (f["started"] is None or (_number(f["started"]) and f["started"] >= 0))
                and _number(f["seconds"]) and f["seconds"] >= 0):
            raise ValueError(f"baseline_failures {i}: {f!r} is not an object of after_run (a "
                             "whole number >= 0), error (a string), started (a number or "
                             "null) and seconds (numbers >= 0)")
    return failures


def _check(data: Any) -> tuple[dict[str, Any], list[SavedRun]]:
    """The saved configuration and runs of a state file, every field checked (a hand-edited
    or damaged file is refused naming the field, never half used). ValueError says what is
    wrong."""
    if not isinstance(data, dict):
        raise ValueError("expected a JSON object")
    if data.get("version") != VERSION:
        raise ValueError(f"version {data.get('version')!r}, expected {VERSION}")
    if not isinstance(data.get("config"), dict):
        raise ValueError(f"config {data.get('config')!r}: expected an object")
    points = data.get("points", {})
    if not isinstance(points, dict) or not all(
            isinstance(env, dict) and all(isinstance(v, str) for v in env.values())
            for env in points.values()):
        raise ValueError(f"points {points!r}: expected an object of point -> {{knob: value}}")
    plan = data.get("plan_runs")
    if plan is not None and not (isinstance(plan, int) and not isinstance(plan, bool)
                                 and plan > 0):
        raise ValueError(f"plan_runs {plan!r}: expected a positive whole number or null")
    if not isinstance(data.get("meta", {}), dict):
        raise ValueError(f"meta {data.get('meta')!r}: expected an object")
    if not _number(data.get("elapsed", 0.0)) or data.get("elapsed", 0.0) < 0:
        raise ValueError(f"elapsed {data.get('elapsed')!r}: expected seconds (a number >= 0)")
    if not isinstance(data.get("runs"), list):
        raise ValueError(f"runs {data.get('runs')!r}: expected a list")
    runs = []
    for i, r in enumerate(data["runs"]):
        if not isinstance(r, dict):
            raise ValueError(f"run {i}: {r!r} is not an object")
        fields = {"point": "string", "cost": "number|null", "seconds": "number",
                  "error": "string|null", "started": "number|null", "expected": "number|null"}
        for key, kind in fields.items():
            v = r.get(key)
            if not (v is None and kind.endswith("|null")) and not (
                    isinstance(v, str) if kind.startswith("string") else _number(v)):
                raise ValueError(f"run {i}: {key} {v!r} is not a {kind.replace('|', ' or ')}"
                                 " (numbers finite)")
        if set(r) - set(fields):
            raise ValueError(f"run {i}: unknown fields {sorted(set(r) - set(fields))}")
        for key in ("seconds", "started"):  # times on the sweep's clock: never before it began
            if r[key] is not None and r[key] < 0:
                raise ValueError(f"run {i}: {key} {r[key]!r} is negative (expected seconds >= 0)")
        if r["point"] not in points:
            raise ValueError(f"run {i}: point {r['point']!r} is not in points")
        runs.append(SavedRun(**r))
    return data["config"], runs
