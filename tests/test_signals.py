"""GASNet-1's signal rules (README, "How a job ends"): a rank interrupted from outside, or left
behind by a peer's non-collective exit, runs the client's SIGQUIT handler, whose gasnet_exit
code counts; GASNET_NO_CATCH_SIGNAL, GASNET_BACKTRACE, GASNET_BACKTRACE_SIGNAL and
GASNET_FREEZE_ON_ERROR. Every case on every conduit of both builds, with its code and a bound
on how long it took."""
import re
import signal
import subprocess
import time

import pytest

from conftest import job_env

TIMEOUT = 4.0  # GASNET_EXITTIMEOUT for these jobs
SLACK = 3.0    # start-up of 4 sanitized ranks on 2 cores
NRANKS = 4


def job(build, *args, env=None, mode="seq"):
    """On network conduits every rank is its own supernode, so that exits travel through the
    conduit."""
    full = {"GASNET_EXITTIMEOUT": str(TIMEOUT), **(env or {})}
    if build.conduit != "smp":
        full["GASNET_SUPERNODE_MAXSIZE"] = "1"
    return build.job(NRANKS, "signal_test", *args, env=full, mode=mode, timeout=60)


def bound(build, seconds):
    return seconds + SLACK + (2 if build.name == "debug" else 0)


def handlers_ran(result):
    return sorted(int(r) for r in re.findall(r"rank (\d+): SIGQUIT handler ran", result.stdout))


@pytest.mark.parametrize("sig,handler,code", [
    (signal.SIGINT, "exit:4", 4),    # GASNet-1's conformance case: the handler's code wins
    (signal.SIGTERM, "exit:5", 5),
    (signal.SIGHUP, "return", 128 + signal.SIGHUP),  # a handler that returns: the runtime exits
    (signal.SIGINT, "none", 128 + signal.SIGINT),    # no handler: the raw signal, as before
], ids=["int-exit4", "term-exit5", "hup-return", "int-none"])
@pytest.mark.parametrize("mode", ["seq", "par"])
def test_an_interrupted_rank_runs_the_client_sigquit_handler_and_so_do_its_peers(
        build, sig, handler, code, mode):
    result = job(build, "interrupt", "1", str(int(sig)), handler, mode=mode)
    assert result.returncode == code, result.describe()
    assert handlers_ran(result) == ([] if handler == "none" else list(range(NRANKS))), \
        result.describe()
    assert result.seconds < bound(build, 0), result.describe()


@pytest.mark.parametrize("handler,waiting,seconds", [
    ("exit:4", "wait", 0),            # peers polling in a barrier hear of it at once
    ("exit:4", "compute", TIMEOUT / 4),  # peers computing: the launcher's leave signal after
                                         # the grace period runs their handler
    ("return", "wait", 0),            # the handler returns: the runtime finishes the exit
    ("return", "compute", TIMEOUT / 4),  # the handler returns: the runtime leaves all the same
])
# MPICH's Hydra ends the peers of a rank that ended the job with SIGKILL: those computing never
# hear of it (those waiting in GASNet do).
@pytest.mark.applies(lambda flavour, waiting, **_: flavour != "mpich" or waiting == "wait")
def test_peers_of_a_non_collective_exit_get_sigquit_first_and_the_first_code_stands(
        build, handler, waiting, seconds):
    result = job(build, "peer-exit", "1", "3", handler, waiting)
    assert result.returncode == 3, result.describe()
    assert handlers_ran(result) == [0, 2, 3], result.describe()
    assert result.seconds < bound(build, seconds), result.describe()


def test_no_catch_signal_leaves_sigint_to_its_default_action(build):
    result = job(build, "interrupt", "1", str(int(signal.SIGINT)), "exit:4",
                 env={"GASNET_NO_CATCH_SIGNAL": "SIGINT"})
    assert result.returncode == build.died_of(signal.SIGINT), result.describe()
    assert 1 not in handlers_ran(result), result.describe()  # it died of the signal itself
    assert result.seconds < bound(build, 0), result.describe()


def test_backtrace_of_a_crashed_rank_names_the_faulting_function(build):
    result = job(build, "crash", "1", env={"GASNET_BACKTRACE": "1"})
    assert result.returncode == build.died_of(signal.SIGSEGV), result.describe()
    err = result.stderr
    assert "GASNet rank 1 (pid" in err and "caught a fatal signal: SIGSEGV" in err, err
    frames = re.findall(r"^\s+#(\d+)\s+(\S+)", err, re.M)
    assert frames and frames[0] == ("0", "crash_here"), err  # from the faulting frame on
    assert ("1", "main") in frames, err
    assert "signal_test.c:" in err, err                      # files and lines (-g)
    assert result.seconds < bound(build, 0), result.describe()


def test_without_backtrace_gasnetrun_names_the_crash_and_how_to_see_where(opt_build):
    """(In the sanitizer build, AddressSanitizer reports the crash itself.)"""
    result = job(opt_build, "crash", "1")
    assert result.returncode == 128 + signal.SIGSEGV, result.describe()
    assert re.search(r"rank 1 \(pid \d+, host \S+\) ended with signal SIGSEGV \(run with "
                     r"GASNET_BACKTRACE=1 for its backtrace\)", result.stderr), result.describe()


def test_backtrace_of_a_fatal_error_starts_at_the_caller(build):
    result = job(build, "fatal", "2", env={"GASNET_BACKTRACE": "1"})
    assert result.returncode == 1, result.describe()
    assert "names handler 200, which is not registered" in result.stderr, result.describe()
    frames = [name for _, name in re.findall(r"^\s+#(\d+)\s+(\S+)", result.stderr, re.M)]
    assert "main" in frames and "gasneti_backtrace_print" not in frames, result.stderr
    assert result.seconds < bound(build, 0), result.describe()


def start(build, args, env):
    env = {**build.conduit_env(), "GASNET_EXITTIMEOUT": str(TIMEOUT), **env}
    return subprocess.Popen([build.gasnetrun, "-n", "2", build.test_program("signal_test"),
                             *args], env=job_env(env),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_backtrace_signal_shows_where_every_rank_of_a_hung_job_is(variant_build):
    proc = start(variant_build, ["hang"], {"GASNET_BACKTRACE_SIGNAL": "SIGUSR1"})
    ready = 0
    while ready < 2:
        line = proc.stdout.readline()
        assert line, proc.stderr.read()
        ready += line.startswith("ready rank")
    proc.send_signal(signal.SIGUSR1)  # gasnetrun passes it on to every rank
    time.sleep(2.0)
    assert proc.poll() is None, "a backtrace request must not end the job"
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    for rank in (0, 1):
        assert f"GASNet backtrace of rank {rank} (pid" in err, err
    assert len(re.findall(r"#\d+\s+main at ", err)) == 2, err


def test_freeze_on_error_keeps_the_failing_rank_for_a_debugger_until_interrupted(variant_build):
    proc = start(variant_build, ["fatal", "1"], {"GASNET_FREEZE_ON_ERROR": "1"})
    deadline = time.monotonic() + 30
    seen = ""
    while "is frozen" not in seen and time.monotonic() < deadline:
        line = proc.stderr.readline()
        assert line, seen
        seen += line
    assert re.search(r"GASNet rank 1 \(pid (\d+), host \S+\) is frozen \(GASNET_FREEZE_ON_ERROR"
                     r"\): attach a debugger \(gdb -p \1\)", seen), seen
    time.sleep(1.5)
    assert proc.poll() is None, "the frozen rank must wait"
    interrupted = time.monotonic()
    proc.send_signal(signal.SIGINT)
    proc.communicate(timeout=30)
    assert proc.returncode == 130
    assert time.monotonic() - interrupted < TIMEOUT + SLACK


@pytest.mark.parametrize("name,value", [("GASNET_NO_CATCH_SIGNAL", "SIGINT,SIGFOO"),
                                        ("GASNET_BACKTRACE_SIGNAL", "SIGINT"),
                                        ("GASNET_BACKTRACE", "maybe")])
def test_bad_signal_knobs_are_refused_before_anything_starts(variant_build, name, value):
    result = variant_build.job(2, "signal_test", "hang", env={name: value})
    assert result.returncode == 2, result.describe()
    assert f"{name}='{value}'" in result.stderr and "expected" in result.stderr, result.stderr
    assert "ready rank" not in result.stdout


def test_fork_mode_runs_the_client_sigquit_handler_too(variant_build):
    env = job_env({"GASNET_PSHM_NODES": "3", "GASNET_EXITTIMEOUT": str(TIMEOUT)})
    start_time = time.monotonic()
    proc = subprocess.run([variant_build.test_program("signal_test"), "interrupt", "2",
                           str(int(signal.SIGINT)), "exit:4"], env=env, capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 4, proc.stderr
    assert sorted(int(r) for r in re.findall(r"rank (\d+): SIGQUIT handler ran", proc.stdout)) \
        == [0, 1, 2], proc.stdout
    assert time.monotonic() - start_time < TIMEOUT + SLACK
