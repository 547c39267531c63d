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
    # The baseline column shows the knob table's defaults here (nothing set by the caller),
    # never marked as the caller's own.
    assert "| knob | baseline |" in (out / "report.md").read_text()
    assert "(yours)" not in shown.stdout


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
    """On tune_target, whose figure is a known function of the knobs (credits=1 is worse than
    the default) with no noise: the verdict is the comparison's, whatever the machine's load
    does to a real benchmark's runs (docs/gasnet-tune-example.md compares real ones)."""
    a, b = tmp_path / "A.env", tmp_path / "B.env"
    a.write_text("# the defaults\n")
    b.write_text("GASNET_AM_CREDITS_PP=1\n")
    proc = tune(udp_opt, "compare", str(a), str(b), "-n", "2", "--conduit", "udp",
                "--program", str(udp_opt.path / "udp" / "tests" / "tune_target-seq"),
                "--objective", "record:tune_target", "--budget", "8runs", env=NO_PSHM)
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


# ---- a time budget is a deadline (issue 37, item 1) -------------------------------------------

def test_a_time_budget_is_a_deadline_when_runs_grow_tenfold_mid_sweep(udp_opt, tmp_path):
    """tune_target's runs become ten times slower after its 8th run (it counts them in a
    file: a machine that got busy). The sweep starts no run that its measured pace says would
    end after the deadline, ends within the budget plus one run, and writes its report and
    tuned.env from what it has, saying how much of the first plan ran. Checked on the sweep's
    own clock (state.json's run start times and durations), not on the test's."""
    out, budget = tmp_path / "deadline", 40.0
    count = tmp_path / "runs.count"
    env = {"TUNE_TARGET_SLEEP": "0.3", "TUNE_TARGET_SLOWDOWN": f"{count}:8:6",
           "GASNET_WAIT_MODE": "block", "COLUMNS": "400"}  # the terminal's lines unwrapped
    args = ["sweep", "-n", "1", "--conduit", "udp", "--program",
            str(udp_opt.path / "udp" / "tests" / "tune_target-seq"), "--objective",
            "record:tune_target", "--knobs", TARGET_KNOBS, "--budget", f"{budget:g}s",
            "--out", str(out)]
    start = time.monotonic()
    proc = tune(udp_opt, *args, env=env)
    took = time.monotonic() - start
    assert proc.returncode == 0, proc.stdout + proc.stderr
    doc = json.loads((out / "report.json").read_text())
    runs = json.loads((out / "state.json").read_text())["runs"]
    durations = [r["seconds"] for r in runs]
    # The slowdown happened (or this tested nothing): runs after the 8th took far longer.
    assert len(runs) > 8 and min(durations[8:]) > 4 * max(durations[:8]), durations
    # No run started when its expected end was past the deadline; each started before it.
    for r in runs[2:]:
        assert r["started"] + r["expected"] <= budget and r["started"] < budget, r
    # The sweep ended within the budget plus one run (the longest it measured).
    assert doc["time"]["ended"] <= budget + max(durations), (doc["time"], durations)
    # It re-planned: far fewer runs than the first plan, and the verdict says how many.
    first = doc["time"]["first_plan"]
    assert doc["runs"] < first / 2, (doc["runs"], first)
    verdict = f"{doc['runs']} of the {first} runs first planned ran"
    for name in ("tuned.env", "report.md"):
        assert verdict in (out / name).read_text(), name
    assert verdict in proc.stdout, proc.stdout
    assert (out / "report.md").stat().st_size > 0
    loads_in_gasnetrun(udp_opt, out / "tuned.env", NO_PSHM)
    # The old plan (a run count fixed from the first runs) would have run for many minutes;
    # a generous bound on the whole command, far below that, with slack for a loaded machine.
    assert took < budget + max(durations) + 90, took


# ---- issue 38, items 12 and 13 ---------------------------------------------------------------

def small_target_sweep(build: Build, out: Path, budget: str = "8runs",
                       space: Path | None = None) -> list[str]:
    knobs = ["--space", str(space)] if space else ["--knobs", "GASNET_AM_CREDITS_PP"]
    return ["sweep", "-n", "1", "--conduit", "udp", "--program",
            str(build.path / "udp" / "tests" / "tune_target-seq"), "--objective",
            "record:tune_target", *knobs, "--budget", budget, "--out", str(out)]


@pytest.mark.parametrize("full", ["state.json.tmp", "records/baseline.jsonl"])
def test_a_full_disk_in_out_is_a_message_and_leaves_no_debris(udp_opt, tmp_path, full):
    """ENOSPC while saving (the file is a link to /dev/full, where every write fails with
    ENOSPC): a message naming the file and the cause, exit 1, no traceback, no
    state.json.tmp left behind."""
    out = tmp_path / "out"
    (out / "records").mkdir(parents=True)
    (out / full).symlink_to("/dev/full")
    proc = tune(udp_opt, *small_target_sweep(udp_opt, out))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr
    assert "No space left on device" in proc.stderr and str(out / full.split(".tmp")[0]) in \
        proc.stderr, proc.stderr
    assert not (out / "state.json.tmp").exists()


@pytest.mark.parametrize("damage,message", [
    (lambda d: d["runs"][0].update(cost="abc"), "run 0: cost 'abc' is not a number or null"),
    (lambda d: d.update(points=None), "points None: expected an object"),
    (lambda d: d["runs"][1].update(cost=float("nan")), "run 1: cost nan is not a number"),
    (lambda d: d.update(runs={}), "runs {}: expected a list"),
    (lambda d: d["runs"][0].update(point="p9999"), "run 0: point 'p9999' is not in points"),
    (lambda d: d.update(baseline_failures=[{"error": 3}]), "baseline_failures 0: {'error': 3} is"),
    (lambda d: d["runs"][0].update(seconds=-5.0), "run 0: seconds -5.0 is negative"),
], ids=["cost-abc", "points-null", "cost-nan", "runs-object", "unknown-point",
        "baseline-failure", "negative-time"])
def test_a_damaged_state_file_is_refused_naming_the_field(udp_opt, tmp_path, damage, message):
    out = tmp_path / "out"
    first = tune(udp_opt, *small_target_sweep(udp_opt, out))
    assert first.returncode == 0, first.stdout + first.stderr
    state = out / "state.json"
    data = json.loads(state.read_text())
    damage(data)
    state.write_text(json.dumps(data))  # NaN as Python's json writes it, as json.load takes it
    proc = tune(udp_opt, *small_target_sweep(udp_opt, out))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr
    assert f"{state}: not a gasnet-tune state file ({message}" in proc.stderr, proc.stderr
    assert "use --restart" in proc.stderr


def test_a_gain_without_an_interval_is_said_in_words(opt_build, tmp_path):
    """A report whose gain has no interval (or no figure at all) says why instead of
    printing '95% interval - ..'."""
    import sys
    sys.path.insert(0, str(opt_build.path / "python"))
    from tuner.report import fmt_gain
    assert fmt_gain({"median": None, "low": None, "high": None}) == \
        "none (a side has no successful run)"
    assert fmt_gain({"median": 0.5, "low": float("-inf"), "high": float("inf")}) == \
        "+50.0% (no interval: a side has fewer than 2 successful runs)"
    assert fmt_gain({"median": 0.5, "low": 0.25, "high": 0.75}) == \
        "+50.0% (95% interval +25.0% .. +75.0%)"


def test_no_recommendation_from_too_few_runs_and_the_report_says_so(udp_opt, tmp_path):
    """--budget 6runs on tune_target (noise-free), credits 16 (its optimum) against the
    default 12: the best point gets 2 runs against the baseline's 3, as in the issue, fewer
    than the minimum on each side, so nothing is recommended however clear the gain looks,
    and the report says the budget was too small, with the runs each side had."""
    out, space = tmp_path / "few", tmp_path / "credits.space"
    space.write_text("GASNET_AM_CREDITS_PP = 12, 16\n")
    proc = tune(udp_opt, *small_target_sweep(udp_opt, out, "6runs", space))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    doc = json.loads((out / "report.json").read_text())
    assert doc["best_point"]["GASNET_AM_CREDITS_PP"] == "16"  # the better value was found
    assert not doc["significant"] and doc["recommended"] == {}
    few = doc["too_few_runs"]
    assert few == {"minimum": 6, "best_runs": 2, "baseline_runs": 3}
    said = "the budget was too small: the best point had 2 runs and the baseline 3"
    assert said in (out / "tuned.env").read_text() and said in (out / "report.md").read_text()
    assert env_lines(out / "tuned.env") == {}


def test_an_interrupted_time_budget_sweep_resumes_on_its_own_clock(udp_opt, tmp_path):
    """Ctrl-C in a sweep with a time budget saves it; the same command resumes it with the
    clock where it stopped (the pause is not the sweep's time), and the whole sweep, both
    parts together, keeps the deadline."""
    out, budget = tmp_path / "clock", 20.0
    args = [str(udp_opt.path / "bin" / "gasnet-tune"), "sweep", "-n", "1", "--conduit", "udp",
            "--program", str(udp_opt.path / "udp" / "tests" / "tune_target-seq"),
            "--objective", "record:tune_target", "--knobs", TARGET_KNOBS, "--budget",
            f"{budget:g}s", "--out", str(out)]
    env = job_env({"TUNE_TARGET_SLEEP": "0.3", "GASNET_WAIT_MODE": "block"})
    first = subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True)
    state = out / "state.json"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:  # Ctrl-C once a few runs are saved
        try:
            if len(json.loads(state.read_text())["runs"]) >= 5:
                break
        except (OSError, ValueError):
            pass
        time.sleep(0.05)
    first.send_signal(signal.SIGINT)
    stdout, stderr = first.communicate(timeout=60)
    assert first.returncode == 130, stdout + stderr
    saved = json.loads(state.read_text())
    kept, clock = len(saved["runs"]), saved["elapsed"]
    assert kept >= 5 and 0 < clock < budget, saved
    again = subprocess.run(args, env=env, capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stdout + again.stderr
    assert f"resuming: {kept} runs" in again.stdout
    runs = json.loads(state.read_text())["runs"]
    # The resumed runs start on the clock where the first part left it, not at 0.
    assert len(runs) > kept and all(r["started"] >= clock for r in runs[kept:]), runs
    doc = json.loads((out / "report.json").read_text())
    assert doc["time"]["ended"] <= budget + max(r["seconds"] for r in runs), doc["time"]
    assert all(r["started"] + r["expected"] <= budget for r in runs[2:]), runs


def test_a_time_budget_the_calibration_uses_up_gives_a_report_not_a_traceback(udp_opt,
                                                                                tmp_path):
    """Runs of 2 s against a 5 s budget: the two calibration runs of the baseline leave no
    room for another run. The sweep still ends with a report and an empty tuned.env, saying
    the budget was too small (a loaded machine made a real udp sweep do this)."""
    out = tmp_path / "tiny"
    proc = tune(udp_opt, *small_target_sweep(udp_opt, out, "5s"),
                env={"TUNE_TARGET_SLEEP": "2", "GASNET_WAIT_MODE": "block"})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    doc = json.loads((out / "report.json").read_text())
    assert doc["runs"] == 2 and doc["recommended"] == {} and doc["best"]["id"] == "baseline"
    said = "the budget was too small: it ended after the baseline's 2 calibration runs"
    assert said in (out / "tuned.env").read_text() and env_lines(out / "tuned.env") == {}


# ---- a failed baseline run does not end a sweep (issue 37, item 3) ---------------------------

def failing_target_sweep(build: Build, tmp_path: Path, fail: str,
                         bad_credits: str = "") -> tuple[subprocess.CompletedProcess[str], Path]:
    """A 12-run grid over credits 12, 16, 32 (2 rounds) on tune_target, whose baseline runs
    fail as TUNE_TARGET_FAIL=FILE:FIRST:COUNT says (counted in tmp_path/baseline.count), and
    whose runs with credits bad_credits always fail."""
    out, space = tmp_path / "out", tmp_path / "credits.space"
    space.write_text("GASNET_AM_CREDITS_PP = 12, 16, 32\n")
    env = {"TUNE_TARGET_FAIL": f"{tmp_path / 'baseline.count'}:{fail}",
           "TUNE_TARGET_FAIL_CREDITS": bad_credits, "COLUMNS": "400"}
    proc = tune(build, *small_target_sweep(build, out, "12runs", space), env=env)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc, out


def baseline_runs_tried(tmp_path: Path) -> int:
    return len((tmp_path / "baseline.count").read_text().splitlines())


def test_a_baseline_run_that_fails_once_is_tried_again_and_the_sweep_goes_on(udp_opt,
                                                                                tmp_path):
    """The first baseline run fails (on a loaded machine: one run past the run timeout), the
    retry works: the sweep spends its whole budget and reports, the failure said and kept out
    of the figures. A point that always fails (credits 32) is a failed point, and the sweep
    goes on past it too."""
    proc, out = failing_target_sweep(udp_opt, tmp_path, "1:1", bad_credits="32")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    doc = json.loads((out / "report.json").read_text())
    state = json.loads((out / "state.json").read_text())
    assert doc["runs"] == 12 and doc["baseline_failed"] is None
    measured = sum(1 for r in state["runs"] if r["point"] == "baseline")
    assert baseline_runs_tried(tmp_path) == measured + 1  # the failed one was not counted
    [failure] = state["baseline_failures"]
    assert failure["after_run"] == 0 and "exited with 1" in failure["error"], failure
    said = "1 failed baseline run, left out of the figures (a failed baseline run is tried again"
    for text in ((out / "report.md").read_text(), (out / "tuned.env").read_text(), proc.stdout):
        assert said in text
    bad = [p for p in doc["points"] if p["env"].get("GASNET_AM_CREDITS_PP") == "32"]
    assert bad and bad[0]["failed"] and bad[0]["n"] == 2, bad  # tried in both rounds
    assert doc["recommended"].get("GASNET_AM_CREDITS_PP") != "32"


def test_a_baseline_that_never_runs_ends_the_sweep_with_a_report_saying_why(udp_opt,
                                                                              tmp_path):
    """Every baseline run fails: after 3 tries the sweep ends with exit 1, a report and an
    empty tuned.env whose verdict says the baseline could not be measured, and why."""
    proc, out = failing_target_sweep(udp_opt, tmp_path, "1:1000")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert baseline_runs_tried(tmp_path) == 3
    doc = json.loads((out / "report.json").read_text())
    assert doc["runs"] == 0 and doc["recommended"] == {}
    assert doc["baseline_failed"]["measured_runs"] == 0
    said = "the baseline could not be measured (it failed 3 runs in a row, the last: gasnetrun"
    for name in ("report.md", "tuned.env"):
        assert said in (out / name).read_text(), name
    assert said in proc.stdout and "exited with 1" in proc.stdout
    assert env_lines(out / "tuned.env") == {}


def test_a_baseline_that_stops_running_mid_sweep_ends_it_with_what_it_has(udp_opt, tmp_path):
    """The baseline runs of the calibration work, every later one fails: the sweep ends at the
    grid's first baseline run after 3 tries, with exit 0 and a report from the runs it has,
    saying why it ended early."""
    proc, out = failing_target_sweep(udp_opt, tmp_path, "3:1000")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert baseline_runs_tried(tmp_path) == 2 + 3
    doc = json.loads((out / "report.json").read_text())
    assert doc["baseline"]["n"] == 2 and 2 <= doc["runs"] < 12
    assert doc["baseline_failed"]["after_runs"] == doc["runs"]
    said = f"the sweep ended early, after {doc['runs']} runs, as the baseline could no longer"
    for name in ("report.md", "tuned.env"):
        assert said in (out / name).read_text(), name
    assert env_lines(out / "tuned.env") == {}
