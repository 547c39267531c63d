"""The bundled benchmark runs and reports every result as one JSON object per line.
It checks behaviour only; speed is reported by running the benchmark, never asserted here."""
import json

import pytest

EXPECTED = {"pshm_line_rtt", "am_short_rtt", "am_medium_rtt", "am_long_rtt", "am_short_flood",
            "barrier"}


def test_am_bench_json_lines_cover_every_benchmark(opt_build):
    result = opt_build.run(["-n", "2", opt_build.program("bench", "am_bench"), "--json",
                            "--quick"])
    assert result.returncode == 0, result.describe()
    records = [json.loads(line) for line in result.stdout.splitlines()]
    assert {r["bench"] for r in records} == EXPECTED
    for r in records:
        assert r["median"] > 0 and r["min"] <= r["median"] <= r["max"] and r["ranks"] == 2
    medium_sizes = sorted(r["size"] for r in records if r["bench"] == "am_medium_rtt")
    assert medium_sizes[0] == 0 and medium_sizes[-1] == 65536


def test_am_bench_rejects_unknown_arguments(opt_build):
    result = opt_build.run(["-n", "2", opt_build.program("bench", "am_bench"), "--fast"])
    assert result.returncode == 2
    assert "unknown argument '--fast' (accepted: --json, --quick)" in result.stderr


RMA_EXPECTED = {"memcpy_bw", "put_latency", "get_latency", "put_nbi_latency", "get_nbi_latency", "put_bulk_bw",
                "get_bulk_bw", "put_nb_bw", "get_nb_bw", "put_nbi_bw", "get_nbi_bw"}



@pytest.mark.parametrize("maxsize,path", [(None, "direct"), ("1", "am")])
def test_rma_bench_reports_every_result_with_its_path(opt_build, maxsize, path):
    env = {"GASNET_SUPERNODE_MAXSIZE": maxsize} if maxsize else None
    result = opt_build.run(["-n", "2", opt_build.program("bench", "rma_bench"), "--json",
                            "--quick"], env=env)
    assert result.returncode == 0, result.describe()
    records = [json.loads(line) for line in result.stdout.splitlines()]
    assert {r["bench"] for r in records} == RMA_EXPECTED
    assert {r["path"] for r in records} == {path}
    for r in records:
        assert r["unit"] == ("GiB/s" if r["bench"].endswith("_bw") else "us")
        assert r["median"] > 0 and r["min"] <= r["median"] <= r["max"]
    assert sorted({r["size"] for r in records if r["bench"] == "put_bulk_bw"}) == \
        [4096, 65536, 1 << 20, 4 << 20]
