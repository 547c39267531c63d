"""How jobs end: exit codes, that nothing is left behind (the autouse fixture in conftest.py
checks processes and /dev/shm after every test), and that a job which must end at once does
not wait for its exit timeout: those run with a GASNET_EXITTIMEOUT far beyond the test's own
deadline, so waiting for it fails the test whatever the machine's load. How long exits take
is test_timing.py's."""
import os
import re
import signal
import subprocess
from pathlib import Path

import pytest

from conftest import job_env, wait_for_nothing_left

# GASNET_EXITTIMEOUT for jobs that need it to end: what these tests check is who ends whom,
# with which code and words, never how long it took; the grace period of ranks left computing
# is a quarter of it (0.5 s).
TIMEOUT = 2.0
ENV = {"GASNET_EXITTIMEOUT": str(TIMEOUT)}
# For jobs that must end without it: a job that waited for it would outlive the test's
# deadline (DEADLINE) many times over.
NEVER = {"GASNET_EXITTIMEOUT": "3600"}
DEADLINE = 120


# (args, code, whether the job needs GASNET_EXITTIMEOUT to end)
EXITS = [
    (["collective", "7"], 7, False),
    (["collective", "0"], 0, False),
    (["one-waiting", "1", "6"], 6, False),   # peers wait in a barrier: they follow at once
    (["one", "1", "5"], 5, True),             # peers compute: SIGQUIT after the grace period
    (["return"], 0, False),
    (["return-one", "1"], 1, True),           # peers of a finished rank are not cut short, but
                                              # ended at the timeout they fail the job
    (["signal", "1", str(int(signal.SIGKILL))], 128 + signal.SIGKILL, True),
    (["signal", "0", str(int(signal.SIGSEGV))], 128 + signal.SIGSEGV, True),
    (["bad-handler", "0"], 1, True),          # a fatal error on the receiver ends the job
    (["before-attach", "4"], 4, False),
    (["stubborn", "0", "3"], 3, True),        # SIGKILL once GASNET_EXITTIMEOUT has passed
]


# How a rank killed by SIGKILL is named: by gasnetrun's agents, or by the MPI launcher of an mpi
# flavour (Open MPI's mpirun; MPICH's Hydra).
KILLED_NAMED = {"": r"rank {rank} \(pid \d+, host \S+\) ended with signal SIGKILL",
                "openmpi": r"process rank {rank} with PID \d+ on node \S+ exited on signal 9",
                "mpich": r"PID \d+ RUNNING AT \S+\s+=\s+EXIT CODE: 9"}  # Hydra names the pid


@pytest.mark.parametrize("nranks", [2, 8])
@pytest.mark.parametrize("args,code,needs_timeout", EXITS,
                         ids=lambda v: "-".join(v) if isinstance(v, list) else str(v))
def test_job_exit_code(build, nranks, args, code, needs_timeout):
    result = build.job(nranks, "exit_test", *args, env=ENV if needs_timeout else NEVER,
                       timeout=DEADLINE)
    if args[0] == "signal":
        code = build.died_of(int(args[2]))
    assert result.returncode == code, result.describe()
    if args[0] == "signal" and args[2] == str(int(signal.SIGKILL)):
        # A rank killed from outside is named even without -v (under an MPI launcher, by the
        # launcher, in its own words).
        named = KILLED_NAMED[build.flavour if build.conduit == "mpi" else ""]
        assert re.search(named.format(rank=args[1]),
                         result.stderr + result.stdout), result.describe()  # (Hydra: stdout)
    if args[0] == "return-one":
        assert "(GASNET_EXITTIMEOUT): ranks" in result.stderr, result.describe()


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


# Who ends a rank still at work GASNET_EXITTIMEOUT after a peer finished: gasnetrun's agents, or
# on the mpi conduit (whose ranks an MPI launcher starts) the conduit in the finished rank.
def ender(build) -> str:
    return "the conduit" if build.conduit == "mpi" else "the launcher"


def test_ranks_left_waiting_for_a_finished_rank_are_named_and_ended_at_the_timeout(build):
    result = build.job(4, "exit_test", "return-one", "2", env=ENV, timeout=DEADLINE)
    assert result.returncode == 1, result.describe()
    assert f"still running {TIMEOUT:g} s after rank 2 finished (GASNET_EXITTIMEOUT): ranks 0-1, 3" \
        in result.stderr, result.describe()
    for rank in (0, 1, 3):
        assert re.search(rf"rank {rank} \(pid \d+, host \S+\) ended by {ender(build)} after "
                         r"GASNET_EXITTIMEOUT \((signal \S+|code \d+)\): the job's code is 1",
                         result.stderr), result.describe()


def test_a_rank_ended_at_the_exit_timeout_after_the_others_returned_0_fails_the_job(build):
    """Ranks 1..3 return 0; rank 0 waits for them in a barrier until the launcher ends it."""
    result = build.job(4, "exit_test", "return-all-but", "0", env=ENV, timeout=DEADLINE)
    assert result.returncode == 1, result.describe()
    assert re.search(rf"rank 0 \(pid \d+, host \S+\) ended by {ender(build)} after "
                     r"GASNET_EXITTIMEOUT \((signal \S+|code \d+)\): the job's code is 1",
                     result.stderr), result.describe()


@pytest.mark.parametrize("args,code,needs_timeout", [
    (["collective", "9"], 9, False), (["one", "2", "5"], 5, True),
    (["return-all-but", "0"], 1, True),
    (["signal", "1", "9"], 137, True), (["return"], 0, False)])
# The mpi conduit's library has no fork spawner: its ranks need MPI, so an MPI launcher.
@pytest.mark.applies(lambda conduit, **_: conduit != "mpi")
def test_fork_mode_without_launcher_has_the_same_exit_semantics(build, args, code,
                                                                needs_timeout):
    env = job_env({**build.conduit_env(), "GASNET_PSHM_NODES": "4",
                   **(ENV if needs_timeout else NEVER)})
    proc = subprocess.run([build.test_program("exit_test"), *args], env=env, capture_output=True,
                          text=True, timeout=DEADLINE)
    assert proc.returncode == code, proc.stderr


def test_program_without_launcher_is_a_one_rank_job(build):
    proc = subprocess.run([build.test_program("info_test")], env=job_env(build.conduit_env()),
                          capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "info_test: rank 0 OK" in proc.stdout


def start_hanging_job(build, nranks: int, mode: str) -> subprocess.Popen:
    proc = subprocess.Popen([build.gasnetrun, "-n", str(nranks), build.test_program("exit_test"),
                             mode], env=job_env({**build.conduit_env(), **NEVER}),
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
    proc.send_signal(signum)
    rc = proc.wait(timeout=DEADLINE)
    assert rc == 128 + signum


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
    assert proc.wait(timeout=DEADLINE) == 130


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
