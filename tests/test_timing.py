"""How long things take: the only tests that assert durations (`-m timing`; never in the quick
tier). Every bound is the expected wait plus a margin scaled from a calibration measured in
the same run on the same build (the median start-to-exit of a clean job), so that a loaded
machine moves both together. Elsewhere a job that must end without its exit timeout runs with
one far beyond the test's deadline instead."""
from __future__ import annotations

import signal
import statistics

import pytest

from conftest import Build, built

pytestmark = pytest.mark.timing

TIMEOUT = 4.0  # GASNET_EXITTIMEOUT where it matters
NRANKS = 8
_calibration: dict[tuple[str, str], float] = {}


def calibration(build: Build, env: dict[str, str]) -> float:
    """Median seconds of three clean 8-rank jobs (start, attach, barrier, exit 0)."""
    key = (build.name, build.conduit)
    if key not in _calibration:
        runs = []
        for _ in range(3):
            result = build.job(NRANKS, "exit_test", "collective", "0",
                               env={**env, "GASNET_EXITTIMEOUT": str(TIMEOUT)}, timeout=120)
            assert result.returncode == 0, result.describe()
            runs.append(result.seconds)
        _calibration[key] = statistics.median(runs)
    return _calibration[key]


def margin(build: Build, env: dict[str, str]) -> float:
    return 3 * calibration(build, env) + 1.0


@pytest.fixture(params=["smp", "udp"], scope="module")
def timed(request) -> tuple[Build, dict[str, str]]:
    """The optimized build; udp with every rank its own supernode (exits travel the network)."""
    build = built("opt", request.param)
    return build, ({"GASNET_SUPERNODE_MAXSIZE": "1"} if request.param == "udp" else {})


@pytest.mark.parametrize("args,code", [
    (["collective", "7"], 7),
    (["one-waiting", "1", "6"], 6),    # peers waiting in a barrier follow at once
    (["before-attach", "4"], 4),
    (["return"], 0),
], ids=lambda v: "-".join(v) if isinstance(v, list) else str(v))
def test_prompt_exits_take_about_as_long_as_a_clean_job(timed, args, code):
    build, env = timed
    result = build.job(NRANKS, "exit_test", *args,
                       env={**env, "GASNET_EXITTIMEOUT": str(TIMEOUT)}, timeout=120)
    assert result.returncode == code, result.describe()
    bound = margin(build, env)
    assert bound < TIMEOUT, f"calibration too slow to tell ({bound:.2f} s)"
    assert result.seconds < bound, f"{result.seconds:.2f} s, bound {bound:.2f} s\n" \
                                   + result.describe()


@pytest.mark.parametrize("args,code", [
    (["one", "1", "5"], 5),             # peers compute: SIGQUIT after the grace period
    (["stubborn", "0", "3"], 3),        # SIGKILL once GASNET_EXITTIMEOUT has passed
    (["signal", "1", str(int(signal.SIGKILL))], 128 + signal.SIGKILL),
], ids=lambda v: "-".join(v) if isinstance(v, list) else str(v))
def test_exits_that_need_the_exit_timeout_end_within_it(timed, args, code):
    build, env = timed
    result = build.job(NRANKS, "exit_test", *args,
                       env={**env, "GASNET_EXITTIMEOUT": str(TIMEOUT)}, timeout=120)
    assert result.returncode == code, result.describe()
    bound = TIMEOUT + margin(build, env)
    assert result.seconds < bound, f"{result.seconds:.2f} s, bound {bound:.2f} s\n" \
                                   + result.describe()


def test_an_unreachable_udp_peer_ends_the_job_after_requesttimeout_max():
    build = built("opt", "udp")
    env = {"GASNET_SUPERNODE_MAXSIZE": "1"}
    result = build.job(3, "exit_test", "freeze", "1",
                       env={**env, "GASNET_REQUESTTIMEOUT_MAX": "2",
                            "GASNET_EXITTIMEOUT": str(TIMEOUT)}, timeout=120)
    assert result.returncode == 1, result.describe()
    assert "(GASNET_REQUESTTIMEOUT_MAX): it is unreachable" in result.stderr, result.describe()
    bound = 2 + TIMEOUT + margin(build, env)
    assert 2 <= result.seconds < bound, f"{result.seconds:.2f} s, bound {bound:.2f} s"
