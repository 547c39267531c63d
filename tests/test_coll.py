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
