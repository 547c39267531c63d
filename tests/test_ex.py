"""The GASNet-EX API on every conduit, checked by EX programs run as real jobs (tests/c/ex_*.c):
active messages of every category and arity with fixed and negotiated payloads, immediate mode
under back-pressure, RMA of every form byte for byte with events and NBI, a program mixing
GASNet-1 and EX calls, and misuse answered by an error naming the call."""
import re

import pytest

RANKS = [2, 4]
MODES = ["seq", "par"]


def assert_all_ok(result, name: str, nranks: int) -> None:
    assert result.returncode == 0, result.describe()
    for rank in range(nranks):
        assert f"{name}: rank {rank} OK" in result.stdout, result.describe()


# As test_core_am.py: 4 ranks on the SEQ library of the optimized build (PAR adds its locks,
# which 2 ranks exercise), 2 under the sanitizers.
@pytest.mark.applies(lambda variant, nranks, mode, **_:
                     nranks == 2 or (variant == "opt" and mode == "seq"))
@pytest.mark.parametrize("nranks", RANKS)
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("maxsize", [None, "1"], ids=["pshm", "no-pshm"])
def test_ex_ams_of_every_category_arity_and_size_and_negotiated_payloads(build, nranks, mode,
                                                                         maxsize):
    env = {"GASNET_SUPERNODE_MAXSIZE": maxsize} if maxsize else None
    result = build.job(nranks, "ex_am_test", mode=mode, env=env, timeout=180)
    assert_all_ok(result, "ex_am_test", nranks)


IMMEDIATE = re.compile(r"immediate (Short|Medium|Negotiated): rank 0 accepted (\d+), refused (\d+) of "
                       r"(\d+) attempts")


@pytest.mark.every_conduit
@pytest.mark.parametrize("maxsize", [None, "1"], ids=["pshm", "no-pshm"])
def test_immediate_requests_to_a_rank_that_does_not_poll_are_refused_and_none_is_lost(
        build, maxsize, tmp_path):
    """Rank 1 makes no GASNet call until rank 0 has seen GEX_FLAG_IMMEDIATE refused: credits,
    ring slots or send buffers run out, the requests return non-zero instead of waiting (and
    run no handler: rank 1's request to rank 0 stays unrun), and every accepted one arrives."""
    env = {"GASNET_SUPERNODE_MAXSIZE": maxsize} if maxsize else None
    result = build.job(2, "ex_am_test", "immediate", str(tmp_path), env=env, timeout=120)
    assert_all_ok(result, "ex_am_test immediate", 2)
    found = IMMEDIATE.findall(result.stdout)
    assert [kind for kind, *_ in found] == ["Short", "Medium", "Negotiated"], result.describe()
    for kind, accepted, refused, attempts in found:
        assert int(accepted) > 0 and int(refused) > 0, f"{kind}: {result.describe()}"
        assert int(accepted) + int(refused) == int(attempts)


@pytest.mark.applies(lambda variant, mode, **_: variant == "opt" or mode == "seq")
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("maxsize", [None, "1"], ids=["pshm", "no-pshm"])
def test_ex_rma_of_every_form_and_size_arrives_byte_for_byte(build, mode, maxsize):
    env = {"GASNET_SUPERNODE_MAXSIZE": maxsize} if maxsize else None
    result = build.job(2, "ex_rma_test", mode=mode, env=env, timeout=180)
    assert_all_ok(result, "ex_rma_test", 2)


# Every conduit, with and without shared memory between the ranks: atomics done in place by
# the caller (its own location, a neighbour's) and by the target's AM handler must agree.
@pytest.mark.applies(lambda variant, nranks, **_: nranks == 2 or variant == "opt")
@pytest.mark.parametrize("nranks", [2, 3])
@pytest.mark.parametrize("maxsize", [None, "1"], ids=["pshm", "no-pshm"])
def test_remote_atomics_match_a_sequential_model_and_count_exactly_under_contention(
        build, nranks, maxsize):
    env = {"GASNET_SUPERNODE_MAXSIZE": maxsize} if maxsize else {}
    result = build.job(nranks, "ex_ratomic_test", "40", env=env, timeout=240)
    assert_all_ok(result, "ex_ratomic_test", nranks)


@pytest.mark.parametrize("how", ["gasnet1", "ex"])
@pytest.mark.parametrize("maxsize", [None, "1"], ids=["pshm", "no-pshm"])
def test_a_program_mixing_gasnet1_and_ex_calls(build, how, maxsize):
    env = {"GASNET_SUPERNODE_MAXSIZE": maxsize} if maxsize else None
    result = build.job(2, "ex_mixed_test", how, env=env, timeout=120)
    assert_all_ok(result, "ex_mixed_test", 2)


@pytest.mark.every_conduit
@pytest.mark.parametrize("api", ["gasnet1", "ex"])
def test_a_program_without_argc_and_argv_runs_on_every_conduit(build, api):
    """gasnet_init(NULL, NULL) and gex_Client_Init(..., NULL, NULL, 0), started by gasnetrun."""
    result = build.job(3, "null_args_test", env={"NULL_ARGS_API": api}, timeout=120)
    assert result.returncode == 0, result.describe()
    for rank in range(3):
        assert f"null_args_test: rank {rank} of 3 OK" in result.stdout, result.describe()


MISUSE = [
    ("before-init", "gex_System_QueryJobRank called before gex_Client_Init"),
    ("init-twice", "gex_Client_Init: this process already has its client"),
    ("index-range", "gex_EP_RegisterHandlers: entry 0 low asks for handler index 5: client "
                    "indices are 128..255"),
    ("index-twice", "gex_EP_RegisterHandlers: handler index 255 (entry 0, again) is taken "
                    "already"),
    ("bad-flags", "gex_EP_RegisterHandlers: entry 0 (index 0, flagless) has gex_flags 0x8"),
    ("commit-larger", "gex_AM_CommitRequestMedium of 200 bytes: larger than its Prepare's 100"),
    ("nested-prepare", "gex_AM_PrepareRequestMedium while this thread's "
                       "gex_AM_PrepareRequestMedium has not been committed"),
    ("commit-unprepared", "gex_AM_CommitRequestMedium: the descriptor is GEX_AM_SRCDESC_NO_OP"),
    ("request-in-handler", "gex_AM_RequestShort called inside an AM handler"),
    ("lc-defer", "gex_AM_RequestMedium: lc_opt GEX_EVENT_DEFER: accepted GEX_EVENT_NOW"),
    ("noop-event", "gex_Event_Wait: GEX_EVENT_NO_OP is not an event"),
    ("wrong-kind", "AM Medium request with 0 arguments from rank "),
    ("bad-rank", "gex_AM_RequestShort to rank 2: the job has ranks 0..1"),
    ("outside-segment", "gex_RMA_PutBlocking of 8 bytes at"),
    ("ad-float-bitwise", "gex_AD_Create: GEX_DT_FLT has no GEX_OP_AND (bitwise operations are "
                         "for integer types)"),
    ("ad-wrong-type", "gex_AD_OpNB_I64 on an atomic domain of GEX_DT_I32 (the call's type must "
                      "be the domain's)"),
    ("ad-op-not-created", "gex_AD_OpNB_I32: GEX_OP_SWAP is not among the operations its domain "
                          "was created with"),
    ("ad-bad-rank", "gex_AD_OpNBI_I64 to rank 2 of a team of 2 (ranks 0..1)"),
    ("ad-destroyed", "gex_AD_OpNB_I32: the atomic domain "),
    ("ad-outside-segment", "gex_AD_OpNB_I64: target "),
    ("ad-null-result", "gex_AD_OpNB_I64: GEX_OP_FADD fetches a value, and result_p is NULL"),
]


# Every misuse once per conduit in the optimized build (the checks are the core's); the debug
# build's extra checks (RMA outside a segment, a message its handler's registration did not
# allow) in the sanitizer build.
DEBUG_ONLY = {"outside-segment", "wrong-kind"}


@pytest.mark.applies(lambda variant, mode, **_: (mode in DEBUG_ONLY) == (variant == "debug"))
@pytest.mark.parametrize("mode,message", MISUSE, ids=[m for m, _ in MISUSE])
def test_ex_misuse_ends_the_job_with_an_error_naming_the_call(build, mode, message):
    result = build.job(2, "ex_misuse_test", mode, timeout=60)
    assert result.returncode != 0 and message in result.stderr, result.describe()
    assert "no error" not in result.stdout, result.describe()
