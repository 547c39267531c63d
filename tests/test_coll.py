"""GASNet-1 collectives (gasnet_coll.h): random roots, sizes (1 B..200 KB, across the Medium
limit), synchronization flags, address modes and completion forms, on rank counts that make
full and partial trees; every result checked. Reduce uses a sum and a non-commutative matrix
product (the order of ranks must be kept)."""
import re

import pytest


@pytest.mark.parametrize("nranks", [1, 2, 5])
def test_every_collective_produces_the_right_result(build, nranks):
    result = build.job(nranks, "coll_test", "80", str(nranks * 11))
    assert result.returncode == 0, result.describe()
    assert result.stdout.count("OK") == nranks, result.describe()
    line = re.search(r"coll_test: (broadcast=.*)", result.stdout)
    assert line, result.describe()
    counts = dict(item.split("=") for item in line.group(1).split())
    assert all(int(v) > 0 for v in counts.values()), counts


def test_par_library_across_supernodes(build):
    result = build.job(6, "coll_test", "60", "3", mode="par",
                       env={"GASNET_SUPERNODE_MAXSIZE": "2"})
    assert result.returncode == 0, result.describe()


def test_conflicting_flags_are_refused_naming_them(build):
    result = build.job(2, "coll_test", "badflags")
    assert result.returncode != 0, result.describe()
    assert "gasnet_coll_broadcast: flags 0x93: give exactly one of GASNET_COLL_IN_NOSYNC" \
        in result.stderr, result.describe()


@pytest.mark.parametrize("nranks", [1, 4, 7])
@pytest.mark.parametrize("maxsize", [None, "2"], ids=["pshm", "2-per-supernode"])
def test_teams_split_map_barrier_and_run_every_collective(build, nranks, maxsize):
    """gasnet_coll_team_split (twice from GASNET_TEAM_ALL, once from a split team), the team and
    job rank maps, every collective on every team with GASNet's reduce arguments, and team
    barriers of several teams at once."""
    env = {"GASNET_SUPERNODE_MAXSIZE": maxsize} if maxsize else None
    result = build.job(nranks, "team_test", env=env, timeout=180)
    assert result.returncode == 0, result.describe()
    assert result.stdout.count("OK") == nranks, result.describe()


@pytest.mark.parametrize("mode,message", [
    # Every rank misuses the call at once; whichever dies first is the one reported.
    ("nonmember", r"gasnet_coll_team_node2rank: rank [0-3] of the job is not a member of the team"),
    ("badrelrank", r"gasnet_coll_team_split: rank "),
])
def test_team_misuse_is_a_fatal_error_naming_it(opt_build, mode, message):
    result = opt_build.job(4, "team_test", mode, timeout=120)
    assert result.returncode != 0, result.describe()
    assert re.search(message, result.stderr), result.describe()
    if mode == "badrelrank":
        assert "the relranks of one color must be 0..1" in result.stderr, result.describe()


@pytest.mark.parametrize("nranks,args", [(1, ["3"]), (3, ["2"]), (4, ["3", "uneven"])])
@pytest.mark.parametrize("maxsize", [None, "1"], ids=["pshm", "no-pshm"])
def test_several_images_per_rank_in_par(build, nranks, args, maxsize):
    """GASNet-1's PAR collectives with images: every thread calls gasnet_coll_init and every
    collective, roots and M lists by image number (uneven: ranks have 1..3 images)."""
    env = {"GASNET_SUPERNODE_MAXSIZE": maxsize} if maxsize else None
    result = build.job(nranks, "coll_images_test", *args, mode="par", env=env, timeout=300)
    assert result.returncode == 0, result.describe()
    assert result.stdout.count("OK") == nranks, result.describe()


def test_an_images_array_of_ones_in_seq(opt_build):
    """SEQ: gasnet_coll_init with an images array (one image per rank) is the plain case."""
    result = opt_build.job(2, "coll_images_test", "2", timeout=120)
    assert result.returncode == 0, result.describe()
    assert result.stdout.count("OK") == 2, result.describe()


@pytest.mark.parametrize("nranks", [2, 4])
def test_no_rank_leaves_coll_init_before_every_rank_entered_it(build, nranks):
    """gasnet_coll_init has GASNet 1.x's barrier inside (a client's start-up relies on it)."""
    env = None if build.conduit == "smp" else {"GASNET_SUPERNODE_MAXSIZE": "1"}
    result = build.job(nranks, "coll_init_order_test", env=env, timeout=120)
    assert result.returncode == 0, result.describe()
    assert "left early 0" in result.stdout, result.describe()
