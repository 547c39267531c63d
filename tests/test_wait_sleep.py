"""Sleeping waits (csrc/core/pshm/wake.h): with GASNET_WAIT_MODE=block a rank that waits
sleeps in the kernel, and what it waits for wakes it. A sleep nothing ends lasts an hour here
(GASNET_WAIT_SLEEP_MIN and _MAX), so a wake that is never sent hangs the job (the test's
deadline fails it) instead of costing the default 10 ms; the CPU a waiting thread used shows
it slept rather than yielded."""
import re

import pytest

SLEEPING = {"GASNET_WAIT_MODE": "block", "GASNET_WAIT_SLEEP_MIN": "3600",
            "GASNET_WAIT_SLEEP_MAX": "3600"}
DEADLINE = 120
# A thread that yields while it waits uses a large part of a core (a third of one with two
# other polling ranks and stress-ng on two cores); one that sleeps, almost none: its last
# idle polls before sleeping, and its handlers. (A rank the machine's load held back may find
# what it waits for already there: a wait of no time, which proves nothing either way.)
MOSTLY_ASLEEP = 0.25
SPARE_CPU = 0.02

# SEQ builds of smp, udp and ofi on tcp;ofi_rxm sleep; other conduits and providers cannot
# yet (docs/runtime.md).
sleeps = pytest.mark.applies(lambda conduit, flavour, **_:
                             conduit in ("smp", "udp") or (conduit, flavour) == ("ofi", "tcp"))


@sleeps
@pytest.mark.parametrize("maxsize", [None, "1", "2"], ids=["pshm", "no-pshm", "2-per-supernode"])
def test_waiting_ranks_sleep_until_a_first_message_barrier_reply_put_memset_or_strided_put_wakes_them(
        build, maxsize):
    env = {**SLEEPING, **({"GASNET_SUPERNODE_MAXSIZE": maxsize} if maxsize else {})}
    result = build.job(4, "sleep_test", "300", env=env, timeout=DEADLINE)
    assert result.returncode == 0, result.describe()
    waits = re.findall(r"rank (\d+) waited ([\d.]+) s for (.+) using ([\d.]+) s of CPU",
                       result.stdout)
    assert len(waits) == 3 * 6, result.describe()  # ranks 1-3, six kinds of wait each
    for rank, waited, what, used in waits:
        assert float(used) <= MOSTLY_ASLEEP * float(waited) + SPARE_CPU, \
            f"rank {rank} used {used} s of CPU in {waited} s waiting for {what}: it did not " \
            f"sleep\n{result.describe()}"


@sleeps
@pytest.mark.parametrize("maxsize", [None, "1"], ids=["pshm", "no-pshm"])
def test_a_rank_that_ends_the_job_wakes_peers_sleeping_in_a_barrier(build, maxsize):
    # GASNET_EXITTIMEOUT of an hour: only the exit word (and, between supernodes, udp's exit
    # notice) can end the sleeping peers before the test's deadline.
    env = {**SLEEPING, "GASNET_EXITTIMEOUT": "3600",
           **({"GASNET_SUPERNODE_MAXSIZE": maxsize} if maxsize else {})}
    result = build.job(4, "sleep_test", "300", "exit", env=env, timeout=DEADLINE)
    assert result.returncode == 6, result.describe()
