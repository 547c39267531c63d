"""The bundled benchmarks run and report every result as one record per line, with the same
fields for every benchmark. They check behaviour only; speed is reported by running the
benchmarks, never asserted here."""
import json

import pytest

from conftest import built

RECORD_FIELDS = {"bench", "path", "conduit", "ranks", "hosts", "size", "unit", "better",
                 "median", "min", "max", "n", "iters", "env"}
AM_EXPECTED = {"pshm_line_rtt", "am_short_rtt", "am_medium_rtt", "am_long_rtt",
               "am_short_flood", "am_short_rtt_pairs", "am_mix", "barrier", "idle_poll"}
RMA_EXPECTED = {"am_short_rtt", "memcpy_bw", "put_latency", "get_latency", "put_nb_latency",
                "get_nb_latency", "put_nbi_latency", "get_nbi_latency", "put_val_latency",
                "get_val_latency", "put_nb_val_latency", "get_nb_val_latency", "memcpy_rate",
                "put_rate", "get_rate", "put_nb_rate", "get_nb_rate", "put_nbi_rate",
                "get_nbi_rate", "put_bulk_bw", "get_bulk_bw", "put_nb_bw", "get_nb_bw",
                "put_nbi_bw", "get_nbi_bw"}
# Paired ratios: subject and baseline timed back to back in each repeat.
RMA_PAIRED = {"put_nb_latency_vs_put", "get_nb_latency_vs_get", "put_nbi_latency_vs_put",
              "get_nbi_latency_vs_get", "put_nb_rate_vs_put", "get_nb_rate_vs_get",
              "put_nbi_rate_vs_put", "get_nbi_rate_vs_get", "put_nb_val_latency_vs_put_val",
              "get_nb_val_latency_vs_get_val", "put_bulk_bw_vs_memcpy",
              "get_bulk_bw_vs_memcpy"}
RMA_AM_PAIRED = {"put_latency_vs_am_short", "get_latency_vs_am_short"}
HIGHER_IS_BETTER = {"GiB/s", "Mops/s"}


def better(record):
    if record["unit"] == "x":  # a ratio of speeds is better higher, of times lower
        return "higher" if "_rate_vs_" in record["bench"] or "_bw_vs_" in record["bench"] \
            else "lower"
    return "higher" if record["unit"] in HIGHER_IS_BETTER else "lower"


def records(result, conduit="smp"):
    assert result.returncode == 0, result.describe()
    out = [json.loads(line) for line in result.stdout.splitlines()]
    for r in out:
        assert set(r) == RECORD_FIELDS, r
        assert r["better"] == better(r), r
        assert (0 <= r["min"] if r["unit"] == "count" else 0 < r["min"]) and \
            r["min"] <= r["median"] <= r["max"], r
        assert r["conduit"] == conduit and r["hosts"] == 1 and r["n"] == 3
    return out


def test_am_bench_records_cover_every_benchmark_with_the_knob_environment(opt_build):
    result = opt_build.run(["-n", "2", opt_build.program("bench", "am_bench"), "--json",
                            "--quick"], env={"GASNET_BARRIER": "AMDISSEM"})
    recs = records(result)
    assert {r["bench"] for r in recs} == AM_EXPECTED
    assert all(r["ranks"] == 2 and r["env"] == {"GASNET_BARRIER": "AMDISSEM"} for r in recs)
    medium_sizes = sorted(r["size"] for r in recs if r["bench"] == "am_medium_rtt")
    assert medium_sizes[0] == 0 and medium_sizes[-1] == 65536


def test_only_runs_one_benchmark(opt_build):
    result = opt_build.run(["-n", "2", opt_build.program("bench", "am_bench"), "--json",
                            "--quick", "--only", "am_short_flood"])
    assert [r["bench"] for r in records(result)] == ["am_short_flood"]


def test_only_takes_a_list(opt_build):
    result = opt_build.run(["-n", "2", opt_build.program("bench", "am_bench"), "--json",
                            "--quick", "--only", "barrier,am_short_rtt"])
    assert sorted(r["bench"] for r in records(result)) == ["am_short_rtt", "barrier"]


def test_udp_benchmarks_measure_their_raw_baselines_in_the_same_run():
    udp = built("opt", "udp")
    env = {"GASNET_SUPERNODE_MAXSIZE": "1"}
    am = records(udp.run(["-n", "2", udp.program("bench", "am_bench"), "--json", "--quick",
                          "--only", "raw_udp_rtt,am_short_rtt"], env=env), "udp")
    assert {(r["bench"], r["path"]) for r in am} == {("raw_udp_rtt", "raw"),
                                                      ("am_short_rtt", "udp"),
                                                      ("am_short_vs_raw", "udp")}
    # The ratio is the median of per-repeat ratios (raw and AM timed back to back), so it
    # lies within the spread of the two figures' quotients.
    by = {r["bench"]: r for r in am}
    ratio = by["am_short_vs_raw"]
    assert ratio["unit"] == "x" and ratio["better"] == "lower"
    assert by["am_short_rtt"]["min"] / by["raw_udp_rtt"]["max"] <= ratio["median"] <= \
        by["am_short_rtt"]["max"] / by["raw_udp_rtt"]["min"]
    rma = records(udp.run(["-n", "2", udp.program("bench", "rma_bench"), "--json", "--quick",
                           "--only", "raw_udp_stream,put_bulk_bw"], env=env), "udp")
    assert {r["bench"] for r in rma} == {"raw_udp_stream", "put_bulk_bw"}
    assert all(r["median"] > 0 and r["better"] == "higher" for r in rma)


EX_PAIRED = {"ex_am_short_rtt_vs_gasnet1": (0, "am_short_rtt", "ex_am_short_rtt"),
             "ex_put_latency_vs_gasnet1": (8, "put_latency", "ex_put_latency"),
             "ex_np_medium_rtt_vs_fixed": (None, "ex_fixed_medium_rtt", "ex_np_medium_rtt")}


@pytest.mark.parametrize("conduit", ["smp", "udp"])
def test_ex_bench_times_each_ex_call_beside_its_gasnet1_form(conduit):
    """ex_bench: the EX AMShort round trip and 8-byte put next to GASNet-1's, the
    negotiated-payload Medium next to the fixed-payload one at 4 KiB and the largest Medium,
    each pair's ratio the median of per-repeat ratios; the immediate flood with its refusals."""
    build = built("opt", conduit)
    env = {"GASNET_SUPERNODE_MAXSIZE": "1"} if conduit != "smp" else None
    recs = records(build.run(["-n", "2", build.program("bench", "ex_bench"), "--json", "--quick"],
                             env=env), conduit)
    by = {(r["bench"], r["size"]): r for r in recs}
    medium = max(r["size"] for r in recs if r["bench"] == "ex_np_medium_rtt")
    # Remote atomics: a ping-pong of fetch-adds beside raw ones where the ranks share memory,
    # a fetch-add round trip beside an AMShort's across the network.
    atomics = ({"ad_fadd_pingpong_vs_raw": (8, "raw_fadd_pingpong", "ad_fadd_pingpong")}
               if conduit == "smp" else
               {"ad_fadd_rtt_vs_am_short": (8, "am_short_rtt", "ad_fadd_rtt")})
    for ratio, (size, base, subject) in {**EX_PAIRED, **atomics}.items():
        for sz in ([size] if size is not None else [4096, medium]):
            r = by[(ratio, sz)]
            assert r["unit"] == "x" and r["better"] == "lower", r
            lo = by[(subject, sz)]["min"] / by[(base, sz)]["max"]
            hi = by[(subject, sz)]["max"] / by[(base, sz)]["min"]
            assert lo <= r["median"] <= hi, (r, lo, hi)
    assert medium == (65536 if conduit == "smp" else 65024)
    assert by[("ex_imm_flood", 0)]["unit"] == "us"
    assert by[("ex_imm_refusals", 0)]["unit"] == "count"
    assert {r["path"] for r in recs} == {"pshm" if conduit == "smp" else conduit}


@pytest.mark.parametrize("args,message", [
    (["--fast"], "unknown argument '--fast' (accepted: --json, --quick, --only NAME[,NAME...], "
                 "--waitmode spin|block|spinblock)"),
    (["--waitmode", "nap"], "--waitmode nap: expected spin, block or spinblock"),
    (["--only", "warp_speed"], "--only warp_speed: no such benchmark (accepted: pshm_line_rtt "),
])
def test_am_bench_rejects_unknown_arguments(opt_build, args, message):
    result = opt_build.run(["-n", "2", opt_build.program("bench", "am_bench"), *args])
    assert result.returncode == 2
    assert message in result.stderr and result.stderr.count(message) == 1, result.describe()


@pytest.mark.parametrize("maxsize,path", [(None, "direct"), ("1", "am")])
def test_rma_bench_reports_every_result_with_its_path(opt_build, maxsize, path):
    env = {"GASNET_SUPERNODE_MAXSIZE": maxsize} if maxsize else None
    result = opt_build.run(["-n", "2", opt_build.program("bench", "rma_bench"), "--json",
                            "--quick"], env=env)
    recs = records(result)
    # The cache-line baseline exists only where ranks 0 and 1 share memory, the two-copy
    # pipeline only where smp's transfers copy twice (the AM path).
    assert {r["bench"] for r in recs} == RMA_EXPECTED | RMA_PAIRED | (
        {"pshm_line_rtt"} if path == "direct" else {"copy_pipe_bw"} | RMA_AM_PAIRED)
    assert {r["path"] for r in recs} == {path, "local"} | ({"pshm"} if path == "direct" else set())
    assert {r["path"] for r in recs if r["bench"].startswith(("memcpy_", "copy_pipe"))} == {"local"}
    for r in recs:
        unit = "x" if "_vs_" in r["bench"] else "GiB/s" if r["bench"].endswith(
            "_bw") else "Mops/s" if r["bench"].endswith("_rate") else "us"
        assert r["unit"] == unit, r
    # The targets' ratios: nb and nbi at 8 B, bulk transfers at 4 MiB.
    assert {r["size"] for r in recs if "_bw_vs_" in r["bench"]} == {4 << 20}
    assert {r["size"] for r in recs if "_vs_" in r["bench"] and "_bw_" not in r["bench"]} == {8}
    # nb and nbi latency and rates for 8 B..4 KiB sit next to the blocking form.
    for form in ("put", "get", "put_nb", "get_nb", "put_nbi", "get_nbi"):
        assert {r["size"] for r in recs if r["bench"] == f"{form}_rate"} == {8, 64, 512, 4096}
        assert {8, 64, 512, 4096} <= {r["size"] for r in recs if r["bench"] == f"{form}_latency"}
    assert sorted({r["size"] for r in recs if r["bench"] == "put_bulk_bw"}) == \
        [4096, 65536, 1 << 20, 4 << 20]
    if path == "am":
        assert sorted({r["size"] for r in recs if r["bench"] == "copy_pipe_bw"}) == \
            [4096, 65536, 1 << 20, 4 << 20]


@pytest.mark.parametrize("maxsize,path", [(None, "direct"), ("1", "am")])
def test_vis_bench_reports_strided_loop_and_memcpy_columns_in_one_run(opt_build, maxsize, path):
    env = {"GASNET_SUPERNODE_MAXSIZE": maxsize} if maxsize else None
    recs = records(opt_build.run(["-n", "2", opt_build.program("bench", "vis_bench"), "--json",
                                  "--quick"], env=env))
    benches = {"column_memcpy", "column_get_strided", "column_get_loop", "column_put_strided",
               "column_put_loop"}
    assert {r["bench"] for r in recs} == benches
    for bench in benches:
        assert sorted(r["size"] for r in recs if r["bench"] == bench) == [512, 4096, 32768]
    assert {r["path"] for r in recs if r["bench"] != "column_memcpy"} == {path}


def test_coll_bench_reports_collectives_beside_put_loops(opt_build):
    recs = records(opt_build.run(["-n", "3", opt_build.program("bench", "coll_bench"), "--json",
                                  "--quick"]))
    assert {r["bench"] for r in recs} == {"coll_broadcast", "loop_broadcast", "coll_exchange",
                                          "loop_exchange"}
    assert all(r["ranks"] == 3 for r in recs)
    assert sorted({r["size"] for r in recs}) == [8, 4096, 65536, 1 << 20]
