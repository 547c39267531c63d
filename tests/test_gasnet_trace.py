"""gasnet-trace on the trace files of a job whose traffic is known (tests/c/trace_test.c, as in
test_tracing.py): the summaries by operation, source line and peer pair, the filters and
orders, the Perfetto timeline (trace-event JSON: a track per rank, one event per traced call)
and the heatmap; bad input refused with a clear message."""
from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import Build, built, job_env
from test_tracing import NRANKS, expected_counts, events, source_lines


@pytest.fixture(scope="module", params=[("smp", None), ("udp", "1")], ids=["smp", "udp-network"])
def traced(request, tmp_path_factory) -> tuple[Build, Path, dict[str, int], bool]:
    """One traced job per module and target: (build, folder of trace-<rank>, source lines,
    whether the peers were local)."""
    conduit, maxsize = request.param
    build = built("opt", conduit)
    folder = tmp_path_factory.mktemp(f"trace-{conduit}")
    env = {"GASNET_TRACEFILE": str(folder / "trace-%")}
    if maxsize:
        env["GASNET_SUPERNODE_MAXSIZE"] = maxsize
    result = build.job(NRANKS, "trace_test", env=env)
    assert result.returncode == 0, result.describe()
    return build, folder, source_lines(result.stdout), maxsize is None


def gasnet_trace(build: Build, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(build.path / "bin" / "gasnet-trace"), *args], env=job_env(),
                          capture_output=True, text=True, timeout=120)


def summary(build: Build, folder: Path, *args: str) -> dict[str, dict[str, object]]:
    proc = gasnet_trace(build, str(folder / "trace-%"), "--json", *args)
    assert proc.returncode == 0, proc.stderr
    return {row["key"]: row for row in json.loads(proc.stdout)["rows"]}


def test_summary_by_operation_counts_every_rank(traced):
    build, folder, _, local = traced
    rows = summary(build, folder, "--by", "op")
    got = {k: r["count"] for k, r in rows.items() if k != "EXIT"}
    assert got == {k: NRANKS * n for k, n in expected_counts(local).items()}
    sfx = "_LOCAL" if local else ""
    assert rows[f"PUT{sfx}"]["bytes"] == NRANKS * 24
    assert rows["AMREQUEST_MEDIUM"]["bytes"] == NRANKS * 100
    assert rows[f"PUT{sfx}"]["ranks"] == list(range(NRANKS))


def test_summary_by_peer_pair_and_by_source_line(traced):
    build, folder, where, _ = traced
    rows = summary(build, folder, "--by", "peer", "--sort", "key")
    want = {}
    for r in range(NRANKS):
        want[f"{r} -> {(r + 1) % NRANKS}"] = (14, 268)
        want[f"{r} -> {(r - 1) % NRANKS}"] = (4, 0)
    assert {k: (v["count"], v["bytes"]) for k, v in rows.items()} == want
    assert list(rows) == sorted(rows, key=lambda k: [int(t) for t in re.findall(r"\d+", k)])
    lines = summary(build, folder, "--by", "line")
    assert lines[f"tests/c/trace_test.c:{where['put']}"]["count"] == 3 * NRANKS
    assert lines[f"tests/c/trace_test.c:{where['am_request_short']}"]["count"] == 4 * NRANKS


def test_filters_and_orders(traced):
    build, folder, _, local = traced
    rows = summary(build, folder, "--rank", "1", "--category", "P", "--op", "^PUT_NB")
    sfx = "_LOCAL" if local else ""
    assert {k: r["count"] for k, r in rows.items()} == {f"PUT_NB{sfx}": 2, f"PUT_NBI{sfx}": 1}
    assert all(r["ranks"] == [1] for r in rows.values())
    by_bytes = list(summary(build, folder, "--sort", "bytes", "--top", "2"))
    assert by_bytes == ["AMREQUEST_MEDIUM", "AMREQUEST_MEDIUM_HANDLER"]
    table = gasnet_trace(build, str(folder / "trace-%"), "--by", "peer")
    assert table.returncode == 0 and "0 -> 1" in table.stdout and "rank -> peer" in table.stdout


def test_timeline_is_trace_event_json_with_a_track_per_rank(traced, tmp_path):
    build, folder, _, _ = traced
    out = tmp_path / "timeline.json"
    proc = gasnet_trace(build, str(folder / "trace-%"), "--timeline", str(out))
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(out.read_text())
    evs = doc["traceEvents"]
    tracks = {e["pid"]: e["args"]["name"] for e in evs
              if e["ph"] == "M" and e["name"] == "process_name"}
    assert tracks == {r: f"rank {r}" for r in range(NRANKS)}
    for rank in range(NRANKS):
        lines = events(folder / f"trace-{rank}")
        lines = lines[:[e[4] for e in lines].index("STATS")]  # the statistics follow the trace
        mine = [e for e in evs if e["pid"] == rank and e["ph"] != "M"]
        assert len(mine) == len([e for e in lines if e[3] != "I"]) > 0
    assert {e["ph"] for e in evs} == {"M", "X", "i"}
    for e in evs:
        if e["ph"] == "X":
            assert e["dur"] >= 0 and e["ts"] >= 0
    waits = [e for e in evs if e["name"] == "BARRIER_WAIT"]
    assert len(waits) == 2 * NRANKS and all(e["ph"] == "X" for e in waits)


def test_heatmap_draws_the_rank_pairs(traced, tmp_path):
    build, folder, _, _ = traced
    out = tmp_path / "heat.png"
    proc = gasnet_trace(build, str(folder / "trace-%"), "--heatmap", str(out))
    assert proc.returncode == 0, proc.stderr
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    sys.path.insert(0, str(build.path / "python"))
    from gasnet_trace.parse import load
    from gasnet_trace.traffic import Traffic, matrices
    traffic = Traffic()
    trace = load([str(folder / "trace-%")], traffic.add)
    ranks, nbytes, msgs = matrices(traffic, trace.peer_totals)
    assert ranks == NRANKS
    for r in range(NRANKS):
        assert nbytes[r][(r + 1) % NRANKS] == 268 and msgs[r][(r + 1) % NRANKS] == 14
        assert msgs[r][(r - 1) % NRANKS] == 4 and msgs[r][r] == 0


@pytest.mark.parametrize("args,message", [
    (["{dir}/nothing-%"], "nothing-%: no file matches ('%' stands for a rank number)"),
    (["{dir}/missing"], "missing: no such file"),
    (["{dir}/notes.txt"], "notes.txt: not a GASNet trace"),
    (["{dir}/trace-%", "--rank", "2-1"], "--rank '2-1': expected ranks and ranges"),
    (["{dir}/trace-%", "--category", "Q"], "--category 'Q': expected GASNet's category letters"),
    (["{dir}/trace-%", "--op", "("], "--op '(': not a regular expression"),
    (["{dir}/trace-%", "--top", "0"], "--top 0: expected a positive number of rows"),
])
def test_bad_input_is_refused_clearly(traced, args, message):
    build, folder, _, _ = traced
    (folder / "notes.txt").write_text("just some text\n")
    proc = gasnet_trace(build, *[a.format(dir=folder) for a in args])
    assert proc.returncode == 2, proc.stderr
    assert message in proc.stderr and "Traceback" not in proc.stderr


def test_a_clients_own_messages_are_one_kind_of_event_at_their_lines(tmp_path):
    """GASNETT_TRACE_PRINTF lines (category H) are free text: summarised as CLIENT_MESSAGE, at
    the source line the client set, their text kept in the timeline."""
    build = built("opt")
    result = build.job(2, "client_trace_test", env={"GASNET_TRACEFILE": str(tmp_path / "t-%")})
    assert result.returncode == 0, result.describe()
    proc = gasnet_trace(build, str(tmp_path / "t-%"), "--json", "--by", "op")
    assert proc.returncode == 0, proc.stderr
    rows = {row["key"]: row for row in json.loads(proc.stdout)["rows"]}
    assert rows["CLIENT_MESSAGE"]["count"] == 8 and "hello" not in rows
    proc = gasnet_trace(build, str(tmp_path / "t-%"), "--json", "--by", "line", "--category", "H")
    assert proc.returncode == 0, proc.stderr
    lines = {row["key"]: row["count"] for row in json.loads(proc.stdout)["rows"]}
    assert lines["user.upc:10"] == 2
    timeline = tmp_path / "timeline.json"
    proc = gasnet_trace(build, str(tmp_path / "t-%"), "--timeline", str(timeline))
    assert proc.returncode == 0, proc.stderr
    texts = {e["args"]["message"] for e in json.loads(timeline.read_text())["traceEvents"]
             if e.get("name") == "CLIENT_MESSAGE"}
    assert texts == {"hello from rank 0", "hello from rank 1", "restored",
                     "line 77 of the same file", "forced past the mask"}


def test_a_clients_messages_are_kept_as_written(tmp_path):
    """Free text: whatever it starts with, colons and all, even empty."""
    build = built("opt")
    texts = ["[tag] starts with a bracket", "  indented", "", "halo: step 7", "42 answers"]
    (tmp_path / "t-0").write_text("".join(
        f"0 0.00010{i}s> [a.c:{i}] (H) {text}\n" for i, text in enumerate(texts)))
    timeline = tmp_path / "timeline.json"
    proc = gasnet_trace(build, str(tmp_path / "t-%"), "--timeline", str(timeline))
    assert proc.returncode == 0, proc.stderr
    got = [e["args"]["message"] for e in json.loads(timeline.read_text())["traceEvents"]
           if e.get("name") == "CLIENT_MESSAGE"]
    assert got == texts


# ---- files that are not what they should be ------------------------------------------------------
def header(rank: int, nranks: int, job: str) -> str:
    return (f"{rank} 0.000010s> (I) TRACE rank {rank} of {nranks}, host h, pid {100 + rank}, "
            f"conduit smp, SEQ, job {job}\n")


def write_trace(path: Path, rank: int, nranks: int, job: str, body: str) -> None:
    path.write_text(header(rank, nranks, job) + body + f"{rank} 0.9s> (I) END of this rank's file\n")


def test_corrupt_numbers_are_skipped_and_said_not_drawn(tmp_path):
    """A peer far outside the job (which drove the heatmap to 2 GB), a byte count no transfer
    has, a put without its peer: skipped, counted in one warning, the rest summarised."""
    build = built("opt")
    write_trace(tmp_path / "t-0", 0, 2, "j1", "0 0.1s> [a.c:1] (P) PUT: 8 bytes to 1\n"
                "0 0.2s> [a.c:2] (P) PUT: 8 bytes to 200000\n"
                "0 0.3s> [a.c:3] (P) PUT: 18446744073709551617 bytes to -1\n"
                "0 0.4s> [a.c:4] (P) PUT: 4611686018427387905 bytes to 1\n")
    write_trace(tmp_path / "t-1", 1, 2, "j1", "1 0.1s> [a.c:1] (G) GET: 16 bytes from 0\n")
    heat = tmp_path / "heat.png"
    proc = gasnet_trace(build, str(tmp_path / "t-%"), "--json", "--heatmap", str(heat))
    assert proc.returncode == 0, proc.stderr
    assert f"{tmp_path / 't-0'}: 3 corrupt line(s) skipped" in proc.stderr, proc.stderr
    assert "line 3: '0 0.2s> [a.c:2] (P) PUT: 8 bytes to 200000'" in proc.stderr
    rows = {row["key"]: row for row in json.loads(proc.stdout)["rows"]}
    assert (rows["PUT"]["count"], rows["PUT"]["bytes"]) == (1, 8) and rows["GET"]["count"] == 1
    assert heat.stat().st_size < 1 << 20


def test_files_of_two_jobs_are_refused_and_missing_ranks_said(tmp_path):
    build = built("opt")
    write_trace(tmp_path / "t-0", 0, 4, "jobA", "")
    write_trace(tmp_path / "t-1", 1, 4, "jobA", "")
    write_trace(tmp_path / "t-2", 0, 2, "jobB", "")
    proc = gasnet_trace(build, str(tmp_path / "t-%"))
    assert proc.returncode == 2, proc.stderr
    assert ("the files are of 2 different jobs (job jobA of 4 ranks: t-0, t-1; job jobB of 2 "
            "ranks: t-2): name one job's files") in proc.stderr, proc.stderr
    (tmp_path / "t-2").unlink()
    proc = gasnet_trace(build, str(tmp_path / "t-%"))
    assert proc.returncode == 0, proc.stderr
    assert "no file for rank(s) 2,3 of the job's 4" in proc.stderr, proc.stderr
    proc = gasnet_trace(build, str(tmp_path / "t-%"), "--rank", "7")
    assert proc.returncode == 2 and "--rank 7: the traced job has ranks 0-3" in proc.stderr


def test_a_file_two_writers_clobbered_is_said(tmp_path):
    build = built("opt")
    write_trace(tmp_path / "t-0", 0, 1, "j", "\0\0\0\0 0.1s> [a.c:1] (P) PUT: 8 bytes to 0\n")
    proc = gasnet_trace(build, str(tmp_path / "t-0"))
    assert proc.returncode == 0, proc.stderr
    assert f"{tmp_path / 't-0'}: 1 corrupt line(s) skipped" in proc.stderr, proc.stderr


# ---- memory -------------------------------------------------------------------------------------
def peak_kib(build: Build, folder: Path, events: int, *args: str) -> int:
    """gasnet-trace's peak resident size reading a 2-rank trace of this many puts."""
    header = "{r} 0.000001s> (I) TRACE: rank {r} of 2, host h, pid 9, conduit udp, SEQ, job j1\n"
    for rank in (0, 1):
        with (folder / f"t-{rank}").open("w") as out:
            out.write(header.format(r=rank))
            for i in range(events):
                out.write(f"{rank} {i * 1e-6:.6f}s> [app.c:{10 + i % 7}] (P) PUT_NBI: "
                          f"{8 << i % 10} bytes to {1 - rank}\n")
            out.write(f"{rank} 1.000000s> (I) END of this rank's file\n")
    proc = subprocess.run(["/usr/bin/time", "-f", "peak %M", str(build.path / "bin" / "gasnet-trace"),
                           str(folder / "t-%"), *args], env=job_env(), capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return int(re.findall(r"peak (\d+)", proc.stderr)[-1])


def test_memory_does_not_grow_with_the_trace(tmp_path):
    """The summary, the timeline and the heatmap are made as the lines are read: ten times
    the events (400,000 against 40,000) take no more memory (it once held every event: 84 MB
    of trace took 974 MB)."""
    build = built("opt")
    args = ("--by", "line", "--timeline", str(tmp_path / "tl.json"),
            "--heatmap", str(tmp_path / "heat.png"))
    small = peak_kib(build, tmp_path, 20000, *args)
    doc = json.loads((tmp_path / "tl.json").read_text())
    assert sum(e["ph"] == "i" for e in doc["traceEvents"]) == 40000
    big = peak_kib(build, tmp_path, 200000, *args)
    assert big - small < 12 * 1024, f"peak {small} KiB for 40,000 events, {big} KiB for 400,000"
