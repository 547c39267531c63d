"""gasnet-tune: sweeps with tiny budgets on smp and on udp (PSHM off) that finish and write an
env file gasnetrun loads; a harmful setting that is never recommended; Ctrl-C and resume that
give the uninterrupted answer; bad input refused with exit 2 and a message naming it.

The search logic is checked against tune_target (tests/c), a GASNet program whose figure is a
known, noise-free function of four udp knobs; the real benchmarks check everything else. Speed
is what gasnet-tune reports, never what these tests assert."""
from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path

import pytest

from conftest import Build, job_env

NO_PSHM = {"GASNET_SUPERNODE_MAXSIZE": "1"}
TARGET_KNOBS = ("GASNET_AM_CREDITS_PP,GASNET_NETWORKDEPTH_PP,GASNET_UDP_DATAGRAM,"
                "GASNET_UDP_COALESCE")


def tune(build: Build, *args: str, env: dict[str, str] | None = None, cwd: Path | None = None,
         timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(build.path / "bin" / "gasnet-tune"), *args], env=job_env(env),
                          capture_output=True, text=True, timeout=timeout, cwd=cwd)


def target_args(build: Build, out: Path, *more: str) -> list[str]:
    return ["sweep", "-n", "2", "--conduit", "udp", "--program",
            str(build.path / "udp" / "tests" / "tune_target-seq"),
            "--objective", "record:tune_target", "--out", str(out), *more]


def env_lines(path: Path) -> dict[str, str]:
    return dict(line.split("=", 1) for line in path.read_text().splitlines()
                if line and not line.startswith("#"))


@pytest.fixture(scope="module")
def udp_opt() -> Build:
    from conftest import built
    return built("opt", "udp")


def loads_in_gasnetrun(build: Build, env_file: Path, env: dict[str, str] | None = None) -> None:
    """The env file validates and a job runs with it."""
    result = build.run(["--env-file", str(env_file), "-n", "2",
                        build.program("examples", "hello_ring")], env=env, timeout=60)
    assert result.returncode == 0, result.describe()


def test_sweep_on_smp_with_a_tiny_budget_finishes_and_its_env_file_loads(opt_build, tmp_path):
    out = tmp_path / "smp"
    proc = tune(opt_build, "sweep", "-n", "2", "--budget", "8runs", "--out", str(out))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for name in ("tuned.env", "report.md", "report.json", "state.json", "objective_by_knob.png",
                 "progress.png"):
        assert (out / name).stat().st_size > 0, name
    doc = json.loads((out / "report.json").read_text())
    assert doc["conduit"] == "smp" and doc["runs"] == 8
    assert {k["name"] for k in doc["knobs"]} == {"GASNET_BARRIER", "GASNET_WAIT_MODE"}
    header = (out / "tuned.env").read_text()
    assert "# conduit: smp, ranks: 2" in header and "# objective: am-latency" in header
    assert "verdict:" in proc.stdout
    loads_in_gasnetrun(opt_build, out / "tuned.env")
    # Every run's raw records are kept, per point.
    kept = sum(len(p.read_text().splitlines()) for p in (out / "records").glob("*.jsonl"))
    assert kept == 8
    shown = tune(opt_build, "show", str(out))
    assert shown.returncode == 0 and "GASNET_WAIT_MODE" in shown.stdout, shown.stderr


def test_sweep_on_udp_without_pshm_finishes_and_its_env_file_loads(udp_opt, tmp_path):
    out = tmp_path / "udp"
    proc = tune(udp_opt, "sweep", "-n", "2", "--conduit", "udp", "--objective", "am-rate",
                "--knobs", "GASNET_UDP_COALESCE,GASNET_AM_CREDITS_SLACK", "--budget", "10runs",
                "--out", str(out), env=NO_PSHM)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    doc = json.loads((out / "report.json").read_text())
    assert doc["base_env"] == NO_PSHM and doc["runs"] == 10
    assert "GASNET_SUPERNODE_MAXSIZE=1" in (out / "tuned.env").read_text()
    loads_in_gasnetrun(udp_opt, out / "tuned.env", NO_PSHM)


def test_one_credit_per_peer_is_never_recommended(udp_opt, tmp_path):
    space = tmp_path / "harmful.space"
    space.write_text("# one credit per peer starves a flood\nGASNET_AM_CREDITS_PP = 1, 12\n"
                     "GASNET_AM_CREDITS_SLACK = 0, 1\n")
    out = tmp_path / "harm"
    proc = tune(udp_opt, "sweep", "-n", "2", "--conduit", "udp", "--objective", "am-rate",
                "--space", str(space), "--budget", "16runs", "--out", str(out), env=NO_PSHM)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    doc = json.loads((out / "report.json").read_text())
    assert doc["recommended"].get("GASNET_AM_CREDITS_PP") != "1"
    assert "GASNET_AM_CREDITS_PP=1\n" not in (out / "tuned.env").read_text()
    # The space held it and the sweep measured it (or the test tested nothing).
    harmful = [p for p in doc["points"] if p["env"].get("GASNET_AM_CREDITS_PP") == "1"]
    assert harmful and all(p["n"] >= 1 for p in harmful)


def test_grid_finds_the_known_optimum_and_recommends_only_a_significant_change(udp_opt,
                                                                                tmp_path):
    out, space = tmp_path / "grid", tmp_path / "two.space"
    space.write_text("GASNET_AM_CREDITS_PP = 4, 12, 16, 32\n"
                     "GASNET_UDP_DATAGRAM = 1472, 8K, 65507\n")
    proc = tune(udp_opt, *target_args(udp_opt, out, "--space", str(space), "--budget", "40runs"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    doc = json.loads((out / "report.json").read_text())
    assert doc["method"].startswith("grid")
    assert doc["significant"] and doc["recommended"] == {"GASNET_AM_CREDITS_PP": "16",
                                                         "GASNET_UDP_DATAGRAM": "8192"}
    assert env_lines(out / "tuned.env") == doc["recommended"]
    loads_in_gasnetrun(udp_opt, out / "tuned.env", NO_PSHM)


def test_interrupted_and_resumed_sweep_gives_the_uninterrupted_answer(udp_opt, tmp_path):
    whole, parts = tmp_path / "whole", tmp_path / "parts"
    args = ["--knobs", TARGET_KNOBS, "--budget", "40runs", "--seed", "7"]
    proc = tune(udp_opt, *target_args(udp_opt, whole, *args))
    assert proc.returncode == 0, proc.stdout + proc.stderr

    cmd = [str(udp_opt.path / "bin" / "gasnet-tune"), *target_args(udp_opt, parts, *args)]
    first = subprocess.Popen(cmd, env=job_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True)
    state = parts / "state.json"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:  # Ctrl-C once some runs are saved, well before the end
        try:
            if 5 <= len(json.loads(state.read_text())["runs"]) < 30:
                break
        except (OSError, ValueError):
            pass
        time.sleep(0.05)
    first.send_signal(signal.SIGINT)
    out, err = first.communicate(timeout=60)
    assert first.returncode == 130, out + err
    assert "run the same command again to resume" in out
    kept = len(json.loads(state.read_text())["runs"])
    assert 5 <= kept < 40

    again = tune(udp_opt, *target_args(udp_opt, parts, *args))
    assert again.returncode == 0, again.stdout + again.stderr
    assert f"resuming: {kept} runs" in again.stdout
    a = json.loads((whole / "report.json").read_text())
    b = json.loads((parts / "report.json").read_text())
    assert a["history"] == b["history"] and a["recommended"] == b["recommended"]
    # 40 runs over a 504-point space find tune_target's optimum (the baseline's coalescing
    # is already optimal, so it is kept).
    assert a["method"].startswith("surrogate-guided coordinate") and a["recommended"] == {
        "GASNET_AM_CREDITS_PP": "16", "GASNET_NETWORKDEPTH_PP": "32",
        "GASNET_UDP_DATAGRAM": "8192"}
    assert env_lines(whole / "tuned.env") == env_lines(parts / "tuned.env")
    # Another seed is another sweep: refused in the same directory, not mixed in.
    other = tune(udp_opt, *target_args(udp_opt, parts, "--knobs", TARGET_KNOBS, "--budget",
                                       "40runs", "--seed", "8"))
    assert other.returncode == 2 and "they differ in: seed" in other.stderr


def test_compare_calls_the_better_setting_with_confidence(udp_opt, tmp_path):
    a, b = tmp_path / "A.env", tmp_path / "B.env"
    a.write_text("# the defaults\n")
    b.write_text("GASNET_AM_CREDITS_PP=1\n")
    proc = tune(udp_opt, "compare", str(a), str(b), "-n", "2", "--conduit", "udp",
                "--objective", "am-rate", "--budget", "8runs", env=NO_PSHM)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "verdict: A is better" in proc.stdout, proc.stdout


@pytest.mark.parametrize("args,message", [
    (["sweep", "--budget", "3runs"], "--budget '3runs': a whole number of runs from 6"),
    (["sweep", "--budget", "10x"], "--budget '10x': not a number of runs (200runs) or a "
                                   "duration (90s, 10m, 1h)"),
    (["sweep", "--objective", "speed"], "--objective 'speed': not one of am-latency"),
    (["sweep", "--objective", "mix:am-latency=0"], "'am-latency=0' is not NAME=WEIGHT"),
    (["sweep", "--objective", "record:x"], "a record objective needs --program"),
    (["sweep", "--knobs", "GASNET_FOO"], "GASNET_FOO is not a GASNet knob"),
    (["sweep", "--knobs", "GASNET_VERBOSEENV"], "GASNET_VERBOSEENV is not tunable"),
    (["sweep", "--knobs", "GASNET_UDP_COALESCE"], "GASNET_UDP_COALESCE does not apply to the "
                                                 "smp conduit"),
    (["sweep", "--conduit", "udp", "--space", "{bad_value}"],
     "bad_value.space:2: GASNET_AM_CREDITS_PP"),
    (["sweep", "--conduit", "udp", "--space", "{unknown}"], "unknown.space:1: GASNET_CREDITS "
                                                             "is not a GASNet knob"),
    (["sweep", "--conduit", "udp", "--space", "{untunable}"],
     "untunable.space:1: GASNET_REQUESTTIMEOUT_MAX is not tunable"),
    (["sweep", "--space", "{missing}"], "--space"),
    (["sweep", "--knobs", "GASNET_BARRIER", "--space", "{unknown}"], "exclude each other"),
    (["sweep", "-n", "0"], "-n 0: the number of ranks must be a positive integer"),
    (["sweep", "--conduit", "portals4"], "--conduit portals4: this build has no am_bench"),
    (["sweep", "--knobs", "GASNET_BARRIER,GASNET_WAIT_MODE", "--method", "grid", "--budget",
      "6runs"], "a grid of 6 points and the baseline needs at least"),
    (["show", "{nowhere}"], "no report to show"),
    (["show", "{empty_report}"], "not a gasnet-tune report"),
    (["sweep", "--budget", "1" * 400 + "s"], "the duration must be positive and under 30 years"),
    (["sweep", "--conduit", "udp", "--program", "/bin/true", "--objective", "record:x@\u00b2"],
     "expected record:BENCH or record:BENCH@SIZE"),
    (["compare", "{missing}", "{missing}"], "--env-file"),
    (["compare", "{bad_env}", "{bad_env}"], "GASNET_AMCREDITS_PP is not a GASNet knob"),
])
def test_bad_input_is_refused_with_a_message_and_exit_2(opt_build, tmp_path, args, message):
    files = {"bad_value": "# credits\nGASNET_AM_CREDITS_PP = 4, 0\n",
             "unknown": "GASNET_CREDITS = 1,2\n", "untunable": "GASNET_REQUESTTIMEOUT_MAX\n",
             "bad_env": "GASNET_AMCREDITS_PP=4\n"}
    for name, text in files.items():
        (tmp_path / f"{name}.space").write_text(text)
    (tmp_path / "bad_env.space").rename(tmp_path / "bad_env.env")
    (tmp_path / "empty_report").mkdir()
    (tmp_path / "empty_report" / "report.json").write_text("{}")
    paths = {**{n: str(tmp_path / f"{n}.space") for n in files}, "missing": str(tmp_path / "no"),
             "nowhere": str(tmp_path / "nowhere"), "bad_env": str(tmp_path / "bad_env.env"),
             "empty_report": str(tmp_path / "empty_report")}
    args = [a.format(**paths) for a in args]
    if args[0] == "sweep":
        args += ["--out", str(tmp_path / "out")]
    proc = tune(opt_build, *args, cwd=tmp_path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert message in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize("method", ["auto", "grid", "coordinate", "halving"])
@pytest.mark.parametrize("space_text", [
    "GASNET_AM_CREDITS_PP = 2,4,8,12\nGASNET_UDP_COALESCE\n",
    "GASNET_AM_CREDITS_PP = 2,4,8\nGASNET_AM_CREDITS_SLACK = 0,8,16\nGASNET_UDP_GSO\n",
    "GASNET_AM_CREDITS_PP\nGASNET_NETWORKDEPTH_PP\nGASNET_UDP_DATAGRAM\nGASNET_UDP_COALESCE\n",
], ids=["2knobs", "constrained", "4knobs"])
def test_search_keeps_its_budget_and_never_picks_a_point_that_failed(opt_build, tmp_path,
                                                                       method, space_text):
    """The search alone, over a fake measurement (no job runs): every plan spends exactly its
    budget (less only when the best point failed), measures only allowed points, and a point
    that failed once never wins, even when its other runs are the best of all."""
    import sys
    sys.path.insert(0, str(opt_build.path / "python"))
    import numpy as np
    from tuner import search as S
    from tuner.space import file_space
    (tmp_path / "s.space").write_text(space_text)
    space = file_space(str(tmp_path / "s.space"), "udp", {})
    for runs in (12, 30, 90):
        plan = S.make_plan(method, space, runs)
        if isinstance(plan, str):
            continue
        flaky = set()
        counts: dict[str, int] = {}

        def measure(pid: str) -> float:
            assert pid == S.BASELINE or space.allowed(space.point_of(pid))
            counts[pid] = counts.get(pid, 0) + 1
            if pid != S.BASELINE and int(pid[1:]) % 3 == 0:
                flaky.add(pid)  # fails on its first run, then looks best of all
                return float("inf") if counts[pid] == 1 else -5.0
            return float(int(pid[1:]) % 7) if pid != S.BASELINE else 3.0

        search = S.Search(measure)
        for _ in range(S.CALIBRATION):
            search.one(S.BASELINE)
        best = search.run(plan, space, np.random.default_rng(3))
        assert best not in flaky or search.median(best) == float("inf")
        assert len(search.history) == plan.total or search.median(best) == float("inf")


def test_a_closed_pipe_ends_gasnet_tune_quietly(opt_build):
    """`gasnet-tune --help | head -1` (issue 38, item 19): no BrokenPipeError traceback."""
    import os
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader already left: every write fails with EPIPE
    try:
        proc = subprocess.run([str(opt_build.path / "bin" / "gasnet-tune"), "--help"],
                              stdout=write_end, stderr=subprocess.PIPE, text=True,
                              env=job_env(), timeout=60)
    finally:
        os.close(write_end)
    assert "Traceback" not in proc.stderr and "BrokenPipeError" not in proc.stderr, proc.stderr
    assert proc.returncode == 128 + signal.SIGPIPE, proc.stderr
