"""The extended API, run as real jobs: every call, sizes 0..4 MiB, aligned and unaligned, local
buffers in and out of the segment, 10,000 outstanding operations in every sync order, value
forms, and access regions in threads; over PSHM and, with GASNET_SUPERNODE_MAXSIZE=1, over AMs."""
import re

import pytest


# Under the sanitizers 2 ranks: 8 sanitized ranks on 2 cores take minutes for the same code.
# 8 ranks run the SEQ library only: what PAR adds (its locks) is the same at 2 ranks, and 8 PAR
# ranks on 2 cores cost the suite a minute for nothing SEQ's 8 do not already check.
@pytest.mark.applies(lambda variant, nranks, mode, **_:
                     nranks == 2 or (variant == "opt" and mode == "seq"))
@pytest.mark.parametrize("nranks", [2, 8])
@pytest.mark.parametrize("mode", ["seq", "par"])
@pytest.mark.parametrize("maxsize", [None, "1"], ids=["direct", "am-path"])
def test_every_extended_api_call_moves_the_right_bytes(build, nranks, mode, maxsize):
    env = {"GASNET_SUPERNODE_MAXSIZE": maxsize} if maxsize else None
    result = build.job(nranks, "rma_test", mode=mode, env=env)
    assert result.returncode == 0, result.describe()
    for rank in range(nranks):
        assert f"rma_test: rank {rank} OK" in result.stdout, result.describe()


def test_debug_build_names_rank_address_and_segment_of_a_bad_put(build):
    if build.name != "debug":
        pytest.skip("the remote-address check is compiled into debug builds only")
    result = build.job(2, "rma_test", "bad-put")
    assert result.returncode == 1, result.describe()
    assert re.search(r"gasnet_put of 8 bytes at 0x[0-9a-f]+ on rank [01]: outside its segment "
                     r"\[0x[0-9a-f]+, 0x[0-9a-f]+\)", result.stderr), result.describe()


@pytest.mark.parametrize("maxsize", [None, "1"], ids=["pshm", "no-pshm"])
def test_try_syncnb_nopoll_forms_never_serve_the_network(build, maxsize):
    """gasnet_try_syncnb_nopoll and its _some/_all forms: a get over the AM path stays not
    ready however often they ask, until the caller polls."""
    env = {"GASNET_SUPERNODE_MAXSIZE": maxsize} if maxsize else None
    result = build.job(2, "nopoll_test", env=env, timeout=120)
    assert result.returncode == 0, result.describe()
    assert result.stdout.count("OK") == 2, result.describe()
