"""Addresses on demand (GASNET_ON_DEMAND_ADDRESSES): a udp, ofi or ibv rank looks a peer's
address card up from its host's agent the first time the two talk (udp allocates its state for
that peer only then; ofi inserts it into its address vector; ibv, when it does not connect to
every peer at start-up, GASNET_CONNECT_STATIC=0 here, handshakes with it). A ring job looks up its neighbours
only; ranks that all meet at the same moment, from both ends, still exchange every message; a
peer that has already exited is reported, not waited for. Lookups through a tree of agents on
several hosts are in test_ssh_spawner.py."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

pytestmark = pytest.mark.applies(lambda conduit, **_: conduit in ("udp", "ofi", "ibv"))

NO_PSHM = {"GASNET_SUPERNODE_MAXSIZE": "1"}
# ibv connects to every peer at start-up by default, which needs every card: these jobs connect
# on first use instead.
DYNAMIC = {"GASNET_CONNECT_STATIC": "0"}


def on_demand_env(build, extra: dict[str, str] | None = None) -> dict[str, str]:
    return {**NO_PSHM, **(DYNAMIC if build.conduit == "ibv" else {}), **(extra or {})}
STARTUP = re.compile(r"STARTUP (\d+) bytes from the spawner \((\d+) exchanges, (\d+) lookups\)")


def startup_counts(stats_dir: Path, nranks: int) -> list[tuple[int, int]]:
    """(bytes received, lookups) of each rank, from its statistics file."""
    counts = []
    for rank in range(nranks):
        text = (stats_dir / f"stats.{rank}").read_text()
        found = STARTUP.search(text)
        assert found, f"rank {rank}'s statistics have no STARTUP line:\n{text[-2000:]}"
        counts.append((int(found.group(1)), int(found.group(3))))
    return counts


def test_a_ring_looks_up_its_neighbours_only(build, tmp_path):
    """ring_test talks to its right-hand neighbour only: each rank looks up that neighbour and
    (udp: when its first datagram comes; ofi: if it returns credits to it; ibv: when its
    connection request comes) the left-hand one,
    never the whole table; with GASNET_ON_DEMAND_ADDRESSES=0 it receives every card instead."""
    n = 8
    counts = {}
    for on_demand in ("1", "0"):
        stats = tmp_path / on_demand
        stats.mkdir()
        env = on_demand_env(build, {"GASNET_ON_DEMAND_ADDRESSES": on_demand,
                                    "GASNET_STATSFILE": str(stats / "stats.%")})
        result = build.job(n, "ring_test", "20", env=env, timeout=120)
        assert result.returncode == 0, result.describe()
        assert result.stdout.count("OK") == n, result.describe()
        counts[on_demand] = startup_counts(stats, n)
    lookups = [c[1] for c in counts["1"]]
    if build.conduit == "udp":
        assert lookups == [2] * n, f"lookups per rank {lookups}, expected 2 each"
    else:
        assert all(1 <= k <= 2 for k in lookups), f"lookups per rank {lookups}, expected 1-2"
    assert all(c[1] == 0 for c in counts["0"]), counts["0"]
    # Each rank received fewer bytes than with every card sent to every rank.
    assert all(a[0] < b[0] for a, b in zip(counts["1"], counts["0"])), counts


@pytest.mark.parametrize("mode,env", [("seq", {}), ("par", {"GASNET_RCV_THREAD": "1"})],
                         ids=["seq", "par-rcvthread"])
def test_every_pair_meets_from_both_ends_at_the_same_moment(build, mode, env):
    """Right after attach every rank sends to every other: most first messages reach a rank
    that has not met their sender yet (udp holds them while it looks the sender up)."""
    n = 8
    if build.conduit != "udp":
        env = {}  # the receive thread is udp's
    result = build.job(n, "first_contact_test", "all", mode=mode, env=on_demand_env(build, env),
                           timeout=120)
    assert result.returncode == 0, result.describe()
    assert result.stdout.count(f"met {n - 1} peers") == n, result.describe()


def test_a_peer_met_after_it_exited_is_reported_and_not_waited_for(build, tmp_path):
    """Rank 1 returns from main at once; rank 0 first sends to it once it is gone: its agent
    says so, rank 0 warns that what goes there is dropped, and the job ends normally instead of
    waiting for an acknowledgement that cannot come."""
    result = build.job(3, "first_contact_test", "exited", str(tmp_path),
                       env=on_demand_env(build), timeout=120)
    assert result.returncode == 0, result.describe()
    assert "rank 0 sent to rank 1 after it left" in result.stdout, result.describe()
    assert "rank 1 had already exited when this rank first sent to it" in result.stderr, \
        result.describe()


def test_a_rank_that_banked_a_peers_credits_tells_it_that_it_finished(build, tmp_path):
    """Rank 0 sends rank 1 two requests whose handler sends no reply: rank 1 banks their
    credits (up to GASNET_AM_CREDITS_SLACK, 4 by default) and returns from main having sent
    rank 0 nothing, so it never looked rank 0 up. Once it is gone rank 0 sends it 40 more: more
    than the credits left (GASNET_AM_CREDITS_PP, 12). Rank 1 must have told rank 0 that it
    finished (it met rank 0 on its way out), or rank 0 waits for those credits for good."""
    result = build.job(2, "first_contact_test", "banked", str(tmp_path),
                       env=on_demand_env(build), timeout=120)
    assert result.returncode == 0, result.describe()
    assert "rank 1 leaves" in result.stdout, result.describe()
    assert "rank 0 sent to rank 1 after it left" in result.stdout, result.describe()


def test_a_peer_that_left_without_meeting_this_rank_is_not_waited_for(build):
    """Rank 0 looks rank 1 up while rank 1 computes, then sends it a first request; rank 1
    returns from main without a GASNet call, so it never met rank 0 and tells it nothing. ibv's
    connection request goes unanswered: once it has waited the longest retry interval, rank 0
    asks the spawner again, learns that rank 1 ended, and drops what goes there. On ofi's
    tcp;ofi_rxm the send waits for a connection rank 1 never accepts: after a second of it,
    likewise (it used to wait until GASNET_EXITTIMEOUT ended the job with code 1)."""
    fast_retries = {"GASNET_CONNECT_RETRANS_MAX": "100000"} if build.conduit == "ibv" else {}
    result = build.job(2, "first_contact_test", "vanish", "1",
                       env=on_demand_env(build, fast_retries), timeout=120)
    assert result.returncode == 0, result.describe()
    assert "rank 1 leaves without a GASNet call" in result.stdout, result.describe()
    assert "rank 0's request to rank 1 is out or dropped" in result.stdout, result.describe()
    if build.conduit == "ibv":
        assert "rank 1 exited before answering this rank's connection request" in \
            result.stderr, result.describe()
    if build.conduit == "ofi" and build.flavour != "udp":
        assert "rank 1 exited while this rank waited to send to it" in result.stderr, \
            result.describe()


@pytest.mark.applies(lambda conduit, **_: conduit == "udp")  # liveness probes are udp's
def test_a_rank_first_probed_before_it_met_the_prober_is_waited_for(build):
    """Rank 1 computes right after attach while rank 0 sends it a first request: rank 1 has not
    met rank 0 (the datagram waits unread), so when rank 0 probes it (after a quarter of
    GASNET_REQUESTTIMEOUT_MAX) its liveness thread must still answer: alive, not met yet.
    It used to stay silent for a stranger, and rank 0 ended the job naming a live rank."""
    result = build.job(2, "first_contact_test", "busy", "3",
                       env={**NO_PSHM, "GASNET_REQUESTTIMEOUT_MAX": "1"}, timeout=120)
    assert result.returncode == 0, result.describe()
    assert "unreachable" not in result.stderr, result.describe()
    assert "rank 1 computed for 3 s, then served rank 0" in result.stdout, result.describe()
    assert "rank 0 heard from rank 1" in result.stdout, result.describe()
