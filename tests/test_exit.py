"""How jobs end: exit codes, how long it takes, and that nothing is left behind
(the autouse fixture in conftest.py checks processes and /dev/shm after every test)."""
import os
import re
import signal
import subprocess
import time
from pathlib import Path

import pytest

from conftest import job_env, wait_for_nothing_left

TIMEOUT = 4.0  # GASNET_EXITTIMEOUT for these jobs
ENV = {"GASNET_EXITTIMEOUT": str(TIMEOUT)}
SLACK = 3.0  # start-up of 8 sanitized ranks on 2 cores


# How a rank killed by SIGKILL is named: by gasnetrun's agents, or by the MPI launcher of an mpi
# flavour (Open MPI's mpirun; MPICH's Hydra).
KILLED_NAMED = {"": r"rank {rank} \(pid \d+, host \S+\) ended with signal SIGKILL",
                "openmpi": r"process rank {rank} with PID \d+ on node \S+ exited on signal 9",
                "mpich": r"PID \d+ RUNNING AT \S+\s+=\s+EXIT CODE: 9"}  # Hydra names the pid


@pytest.mark.parametrize("nranks", [2, 8])
@pytest.mark.parametrize("args,code,bound", [
    (["collective", "7"], 7, 0),
    (["collective", "0"], 0, 0),
    (["one-waiting", "1", "6"], 6, 0),       # peers wait in a barrier: they follow at once
    (["one", "1", "5"], 5, TIMEOUT),          # peers compute: SIGQUIT after the grace period
    (["return"], 0, 0),
    (["return-one", "1"], 0, TIMEOUT),        # peers of a finished rank are not cut short
    (["signal", "1", str(int(signal.SIGKILL))], 128 + signal.SIGKILL, TIMEOUT),
    (["signal", "0", str(int(signal.SIGSEGV))], 128 + signal.SIGSEGV, TIMEOUT),
    (["bad-handler", "0"], 1, TIMEOUT),       # a fatal error on the receiver ends the job
    (["before-attach", "4"], 4, 0),
    (["stubborn", "0", "3"], 3, TIMEOUT),     # SIGKILL once GASNET_EXITTIMEOUT has passed
], ids=lambda v: "-".join(v) if isinstance(v, list) else str(v))
def test_job_exit_code_and_duration(build, nranks, args, code, bound):
    if args[0] == "signal":
        code = build.died_of(int(args[2]))
    result = build.job(nranks, "exit_test", *args, env=ENV, timeout=60)
    assert result.returncode == code, result.describe()
    assert result.seconds < bound + SLACK + (2 if build.name == "debug" else 0), result.describe()
    if args[0] == "signal" and args[2] == str(int(signal.SIGKILL)):
        # A rank killed from outside is named even without -v (under an MPI launcher, by the
        # launcher, in its own words).
        assert re.search(KILLED_NAMED[build.flavour].format(rank=args[1]),
                         result.stderr + result.stdout), result.describe()  # (Hydra: stdout)


@pytest.mark.parametrize("maxsize", [None, "1"], ids=["pshm", "no-pshm"])
def test_a_barrier_the_leaving_rank_passed_completes_for_the_others_first(build, maxsize):
    # Rank 0 passes a barrier and calls gasnet_exit at once; the others print and leave once
    # through it (odd ranks wait in it; even ones look 0.3 s later with gasnet_barrier_try). Before, the exit posted while they
    # were away took them along inside the try, and their output was lost (a CI failure of
    # test_count_free_am_macros: rank 1 left between its barrier and its printf).
    env = {**ENV, **({"GASNET_SUPERNODE_MAXSIZE": maxsize} if maxsize else {})}
    result = build.job(4, "exit_test", "after-barrier", env=env, timeout=60)
    assert result.returncode == 0, result.describe()
    assert sorted(result.stdout.split("\n")[:-1]) == [f"rank {r} passed" for r in (1, 2, 3)], \
        result.describe()


def test_a_receive_thread_does_not_take_its_rank_out_of_such_a_barrier(udp_build):
    # PAR with udp's receive thread, which polls while the main thread sleeps between its
    # notify and its try: the barrier under way holds the exit for the whole process, not only
    # while a thread is inside wait or try. (PSHM on: rank 0 passes without the sleepers.)
    env = {**ENV, "GASNET_RCV_THREAD": "1"}
    result = udp_build.job(4, "exit_test", "after-barrier", mode="par", env=env, timeout=60)
    assert result.returncode == 0, result.describe()
    assert sorted(result.stdout.split("\n")[:-1]) == [f"rank {r} passed" for r in (1, 2, 3)], \
        result.describe()


def test_ranks_left_waiting_for_a_finished_rank_are_named_and_ended_within_the_timeout(build):
    result = build.job(4, "exit_test", "return-one", "2", env=ENV, timeout=60)
    assert result.returncode == 0, result.describe()
    assert "still running 4 s after rank 2 finished (GASNET_EXITTIMEOUT): ranks 0-1, 3" \
        in result.stderr, result.describe()
    assert result.seconds < TIMEOUT + SLACK + (2 if build.name == "debug" else 0)


@pytest.mark.parametrize("args,code", [(["collective", "9"], 9), (["one", "2", "5"], 5),
                                       (["signal", "1", "9"], 137), (["return"], 0)])
# The mpi conduit's library has no fork spawner: its ranks need MPI, so an MPI launcher.
@pytest.mark.applies(lambda conduit, **_: conduit != "mpi")
def test_fork_mode_without_launcher_has_the_same_exit_semantics(build, args, code):
    env = job_env({**build.conduit_env(), "GASNET_PSHM_NODES": "4", **ENV})
    start = time.monotonic()
    proc = subprocess.run([build.test_program("exit_test"), *args], env=env, capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == code, proc.stderr
    assert time.monotonic() - start < TIMEOUT + SLACK


def test_program_without_launcher_is_a_one_rank_job(build):
    proc = subprocess.run([build.test_program("info_test")], env=job_env(build.conduit_env()),
                          capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "info_test: rank 0 OK" in proc.stdout


def start_hanging_job(build, nranks: int, mode: str) -> subprocess.Popen:
    proc = subprocess.Popen([build.gasnetrun, "-n", str(nranks), build.test_program("exit_test"),
                             mode], env=job_env({**build.conduit_env(), **ENV}),
                            stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    ready = 0
    while ready < nranks:
        line = proc.stdout.readline()
        assert line, f"job ended before all ranks were ready: {proc.stderr.read()}"
        ready += line.startswith("ready rank")
    return proc


@pytest.mark.parametrize("mode", ["hang", "hang-compute"])
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_signal_to_gasnetrun_ends_every_rank(build, mode, signum):
    proc = start_hanging_job(build, 8, mode)
    start = time.monotonic()
    proc.send_signal(signum)
    rc = proc.wait(timeout=30)
    assert rc == 128 + signum
    assert time.monotonic() - start < TIMEOUT + SLACK


def test_killed_launcher_takes_its_ranks_with_it(build):
    proc = start_hanging_job(build, 4, "hang")
    proc.kill()
    proc.wait(timeout=10)
    procs, shm = wait_for_nothing_left(10)
    assert not procs and not shm, (procs, shm)


def test_ctrl_c_reaches_the_job_through_the_terminal_process_group(build):
    """A terminal's Ctrl-C signals the whole foreground group, gasnetrun included."""
    proc = start_hanging_job(build, 8, "hang")
    os.killpg(proc.pid, signal.SIGINT)
    assert proc.wait(timeout=30) == 130


@pytest.mark.parametrize("conduit,runs", [("smp", 200), ("udp", 50)])
def test_a_finished_rank_never_cuts_short_a_peer_about_to_print(variant_build, conduit, runs):
    """Rank 1 returns at once; rank 0 polls from a second thread and prints after a delay. The
    line must reach gasnetrun's output in every job (two run at a time). On udp every rank is
    its own supernode, so the finished rank's leaving travels in datagrams."""
    from concurrent.futures import ThreadPoolExecutor

    from conftest import built
    build = built(variant_build.name, conduit)
    env = {**ENV, "GASNET_SUPERNODE_MAXSIZE": "1"} if conduit != "smp" else ENV

    def one(_):
        return build.job(2, "late_output", "20", mode="par", env=env, timeout=60)

    with ThreadPoolExecutor(2) as pool:
        results = list(pool.map(one, range(runs)))
    lost = [r for r in results if r.returncode != 0 or "rank 0 result" not in r.stdout]
    assert not lost, f"{len(lost)} of {runs} jobs lost rank 0's line:\n{lost[0].describe()}"


def test_objects_of_a_job_whose_agent_was_killed_are_removed_by_the_next_job(variant_build):
    """Ranks name their shared-memory objects after their agent's pid; an agent killed before
    its ranks unlinked them leaves them behind, and the next agent on the host removes those
    whose owner is gone (and keeps those of a live process that is not gasnetrun)."""
    dead = subprocess.Popen(["true"])
    dead.wait()
    orphan = Path(f"/dev/shm/gasnet-rdeadjob-host-q0.{dead.pid}")
    foreign = Path(f"/dev/shm/gasnet-rdeadjob-host-q1.{os.getpid()}")  # alive, not gasnetrun
    orphan.write_bytes(b"x")
    foreign.write_bytes(b"x")
    try:
        result = variant_build.job(2, "info_test")
        assert result.returncode == 0, result.describe()
        assert not orphan.exists(), "the orphaned object is still there"
        assert foreign.exists(), "an object of a live non-gasnetrun pid was removed"
    finally:
        orphan.unlink(missing_ok=True)
        foreign.unlink(missing_ok=True)
