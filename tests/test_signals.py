"""GASNet-1's signal rules (docs/runtime.md, "Signals, as GASNet-1 defines them"): a rank
interrupted from outside, or left behind by a peer's non-collective exit, runs the client's
SIGQUIT handler, whose gasnet_exit code counts; GASNET_NO_CATCH_SIGNAL, GASNET_BACKTRACE,
GASNET_BACKTRACE_SIGNAL and GASNET_FREEZE_ON_ERROR. Every case on every conduit of both builds,
with its code; a case that must end without its exit timeout runs with one far beyond the test's
deadline (how long exits take is test_timing.py's)."""
import re
import signal
import subprocess

import pytest

from conftest import job_env
from watch import watch

TIMEOUT = 4.0  # GASNET_EXITTIMEOUT for jobs that need it to end
NEVER = 3600.0  # for jobs that must end without it: waiting for it outlives DEADLINE
DEADLINE = 120
NRANKS = 4


def job(build, *args, env=None, mode="seq", needs_timeout=False):
    """On network conduits every rank is its own supernode, so that exits travel through the
    conduit."""
    full = {"GASNET_EXITTIMEOUT": str(TIMEOUT if needs_timeout else NEVER), **(env or {})}
    if build.conduit != "smp":
        full["GASNET_SUPERNODE_MAXSIZE"] = "1"
    return build.job(NRANKS, "signal_test", *args, env=full, mode=mode, timeout=DEADLINE)


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


@pytest.mark.parametrize("handler,waiting", [
    ("exit:4", "wait"),     # peers polling in a barrier hear of it at once
    ("exit:4", "compute"),  # peers computing: the launcher's leave signal after the grace
                            # period (a quarter of the exit timeout) runs their handler
    ("return", "wait"),     # the handler returns: the runtime finishes the exit
    ("return", "compute"),  # the handler returns: the runtime leaves all the same
])
# MPICH's Hydra ends the peers of a rank that ended the job with SIGKILL: those computing never
# hear of it (those waiting in GASNet do).
@pytest.mark.applies(lambda flavour, waiting, **_: flavour != "mpich" or waiting == "wait")
def test_peers_of_a_non_collective_exit_get_sigquit_first_and_the_first_code_stands(
        build, handler, waiting):
    result = job(build, "peer-exit", "1", "3", handler, waiting,
                 needs_timeout=waiting == "compute")
    assert result.returncode == 3, result.describe()
    assert handlers_ran(result) == [0, 2, 3], result.describe()


def test_no_catch_signal_leaves_sigint_to_its_default_action(build):
    result = job(build, "interrupt", "1", str(int(signal.SIGINT)), "exit:4",
                 env={"GASNET_NO_CATCH_SIGNAL": "SIGINT"})
    # MPICH's Hydra ORs the codes of the rank that died (2) and of the peers it then killed (9)
    # when they had not left yet: 11, which it calls a segmentation fault.
    codes = {build.died_of(signal.SIGINT)} | \
        ({signal.SIGINT | signal.SIGKILL} if build.flavour == "mpich" else set())
    assert result.returncode in codes, result.describe()
    assert 1 not in handlers_ran(result), result.describe()  # it died of the signal itself


def test_backtrace_of_a_crashed_rank_names_the_faulting_function(build):
    result = job(build, "crash", "1", env={"GASNET_BACKTRACE": "1"})
    assert result.returncode == build.died_of(signal.SIGSEGV), result.describe()
    err = result.stderr
    assert "GASNet rank 1 (pid" in err and "caught a fatal signal: SIGSEGV" in err, err
    frames = re.findall(r"^\s+#(\d+)\s+(\S+)", err, re.M)
    assert frames and frames[0] == ("0", "crash_here"), err  # from the faulting frame on
    assert ("1", "main") in frames, err
    assert "signal_test.c:" in err, err                      # files and lines (-g)


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


def start(build, args, env):
    env = {**build.conduit_env(), "GASNET_EXITTIMEOUT": str(NEVER), **env}
    return subprocess.Popen([build.gasnetrun, "-n", "2", build.test_program("signal_test"),
                             *args], env=job_env(env),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_backtrace_signal_shows_where_every_rank_of_a_hung_job_is(variant_build):
    proc = start(variant_build, ["hang"], {"GASNET_BACKTRACE_SIGNAL": "SIGUSR1"})
    out, err = watch(proc)
    for _ in range(2):
        out.wait_for(r"^ready rank")
    proc.send_signal(signal.SIGUSR1)  # gasnetrun passes it on to every rank
    for _ in range(2):  # both backtraces through main, each to its last frame
        err.wait_for(r"#\d+\s+main at ")
    assert proc.poll() is None, "a backtrace request must not end the job"
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=DEADLINE) == 130, err.rest()
    text = err.rest()
    for rank in (0, 1):
        assert f"GASNet backtrace of rank {rank} (pid" in text, text


def sleeping_in_its_freeze(pid: int, timeout: float = 60.0) -> bool:
    """Whether the process is found asleep (clock_nanosleep, the freeze loop's wait) before it
    is gone or the deadline passes: an event, sampled, not a fixed sleep."""
    import time
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            call = open(f"/proc/{pid}/syscall").read().split()
        except OSError:
            return False  # gone
        if call and call[0] == "230":  # x86_64 clock_nanosleep
            return True
        time.sleep(0.01)
    return False


def test_freeze_on_error_keeps_the_failing_rank_for_a_debugger_until_interrupted(variant_build):
    proc = start(variant_build, ["fatal", "1"], {"GASNET_FREEZE_ON_ERROR": "1"})
    out, err = watch(proc)
    m = err.wait_for(r"GASNet rank 1 \(pid (\d+), host \S+\) is frozen \(GASNET_FREEZE_ON_ERROR"
                     r"\): attach a debugger \(gdb -p \1\)")
    assert sleeping_in_its_freeze(int(m.group(1))), "the frozen rank is not waiting for a debugger"
    assert proc.poll() is None, "the frozen rank must keep its job waiting"
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=DEADLINE) == 130, err.rest()


@pytest.mark.parametrize("name,value", [("GASNET_NO_CATCH_SIGNAL", "SIGINT,SIGFOO"),
                                        ("GASNET_BACKTRACE_SIGNAL", "SIGINT"),
                                        ("GASNET_BACKTRACE", "maybe")])
def test_bad_signal_knobs_are_refused_before_anything_starts(variant_build, name, value):
    result = variant_build.job(2, "signal_test", "hang", env={name: value})
    assert result.returncode == 2, result.describe()
    assert f"{name}='{value}'" in result.stderr and "expected" in result.stderr, result.stderr
    assert "ready rank" not in result.stdout


def test_fork_mode_runs_the_client_sigquit_handler_too(variant_build):
    env = job_env({"GASNET_PSHM_NODES": "3", "GASNET_EXITTIMEOUT": str(NEVER)})
    proc = subprocess.run([variant_build.test_program("signal_test"), "interrupt", "2",
                           str(int(signal.SIGINT)), "exit:4"], env=env, capture_output=True,
                          text=True, timeout=DEADLINE)
    assert proc.returncode == 4, proc.stderr
    assert sorted(int(r) for r in re.findall(r"rank (\d+): SIGQUIT handler ran", proc.stdout)) \
        == [0, 1, 2], proc.stdout


def test_a_signal_while_the_job_is_already_ending_is_said_and_the_first_cause_keeps_its_code(
        variant_build):
    """Rank 0 leaves with code 3 while rank 1 blocks every polite signal, under a long exit
    timeout: the job is ending. Ctrl-C then used to be taken silently as the second one (the
    ranks killed, no word of it); now it is said as the first, the second kills, and the code
    stays that of what ended the job first (a lost host's 1 in the case found: issue 68)."""
    env = {**variant_build.conduit_env(), "GASNET_EXITTIMEOUT": str(NEVER)}
    proc = subprocess.Popen([variant_build.gasnetrun, "-v", "-n", "2",
                             variant_build.test_program("exit_test"), "stubborn", "0", "3"],
                            env=job_env(env), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    out, err = watch(proc)
    err.wait_for(r"rank 0 \(pid \d+, host \S+\) ended with code 3")
    proc.send_signal(signal.SIGINT)
    err.wait_for(r"received SIGINT: ending the job \(it was already ending: its code stays 3, "
                 r"from what ended it first\)")
    assert proc.poll() is None, "the first Ctrl-C forwards the signal; it does not kill"
    proc.send_signal(signal.SIGINT)
    err.wait_for(r"received SIGINT again: killing the ranks still running")
    assert proc.wait(timeout=DEADLINE) == 3, err.rest()
