"""VIS (gasnet_vis.h): vector, indexed and strided puts and gets with random shapes (seeded),
in blocking, nb and nbi forms, each compared byte for byte with a naive loop of contiguous
puts/gets; over PSHM and, with GASNET_SUPERNODE_MAXSIZE=1, packed into AMs."""
import re

import pytest


@pytest.mark.parametrize("maxsize", [None, "1"], ids=["direct", "am-path"])
def test_random_shapes_move_the_same_bytes_as_a_naive_loop(build, maxsize):
    env = {"GASNET_SUPERNODE_MAXSIZE": maxsize} if maxsize else None
    result = build.job(3, "vis_test", "120", "7", env=env)
    assert result.returncode == 0, result.describe()
    for rank in range(3):
        assert f"vis_test: rank {rank} OK" in result.stdout, result.describe()
    # every family, direction and form was exercised
    for family in ("vector", "indexed", "strided"):
        line = re.search(rf"{family} put (\d+)/(\d+)/(\d+) get (\d+)/(\d+)/(\d+)", result.stdout)
        assert line and all(int(c) > 0 for c in line.groups()), result.describe()


def test_par_library_under_threads_free_client(build):
    result = build.job(2, "vis_test", "60", "99", mode="par",
                       env={"GASNET_SUPERNODE_MAXSIZE": "1"})
    assert result.returncode == 0, result.describe()


def test_sides_of_different_sizes_are_refused_naming_both(build):
    result = build.job(2, "vis_test", "mismatch")
    assert result.returncode != 0, result.describe()
    assert "gasnet_putv_bulk: the destination describes 32 bytes and the source 48" \
        in result.stderr, result.describe()
