"""The bundled benchmark runs and reports every result as one JSON object per line.
It checks behaviour only; speed is reported by running the benchmark, never asserted here."""
import json

EXPECTED = {"pshm_line_rtt", "am_short_rtt", "am_medium_rtt", "am_long_rtt", "am_short_flood",
            "barrier"}


def test_am_bench_json_lines_cover_every_benchmark(opt_build):
    result = opt_build.run(["-n", "2", str(opt_build.path / "bench" / "am_bench-seq"), "--json",
                            "--quick"])
    assert result.returncode == 0, result.describe()
    records = [json.loads(line) for line in result.stdout.splitlines()]
    assert {r["bench"] for r in records} == EXPECTED
    for r in records:
        assert r["median"] > 0 and r["min"] <= r["median"] <= r["max"] and r["ranks"] == 2
    medium_sizes = sorted(r["size"] for r in records if r["bench"] == "am_medium_rtt")
    assert medium_sizes[0] == 0 and medium_sizes[-1] == 65536


def test_am_bench_rejects_unknown_arguments(opt_build):
    result = opt_build.run(["-n", "2", str(opt_build.path / "bench" / "am_bench-seq"), "--fast"])
    assert result.returncode == 2
    assert "unknown argument '--fast' (accepted: --json, --quick)" in result.stderr
