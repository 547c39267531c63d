"""GASNet's tracing and statistics (docs/tracing.md): a program whose traffic is known
(tests/c/trace_test.c) traced and counted on every conduit, over shared memory and (with
GASNET_SUPERNODE_MAXSIZE=1) over the network; the knobs' forms (`%`, rank lists, masks,
TRACELOCAL, stdout); bad values and unwritable files refused with a clear message."""
from __future__ import annotations

import json
import re
import subprocess
import tempfile
from collections import Counter
from pathlib import Path

import pytest

from conftest import Build, built, job_env

ROOT = Path(__file__).resolve().parent.parent
LINE = re.compile(r"^(\d+) (\d+\.\d+)s> (?:\[([^\]]*)\] )?\((\w)\) (\w+)(.*)$")
NRANKS = 3


def events(path: Path) -> list[tuple[int, float, str | None, str, str, str]]:
    """(rank, time, file:line, category, name, rest) of every line of a trace file."""
    out = []
    for text in path.read_text().splitlines():
        m = LINE.match(text)
        assert m, f"{path}: not a trace line: {text!r}"
        out.append((int(m[1]), float(m[2]), m[3], m[4], m[5].rstrip(":"), m[6]))
    return out


def expected_counts(local: bool) -> dict[str, int]:
    """Per rank, what trace_test does (its header comment)."""
    sfx = "_LOCAL" if local else ""
    return {f"PUT{sfx}": 3, f"PUT_NB{sfx}": 2, f"PUT_NBI{sfx}": 1, f"GET{sfx}": 2,
            f"GET_NB_BULK{sfx}": 1, "WAIT_SYNCNB": 3, "WAIT_SYNCNBI_PUTS": 1,
            "AMREQUEST_SHORT": 4, "AMREPLY_SHORT": 4, "AMREQUEST_MEDIUM": 1,
            "AMREQUEST_SHORT_HANDLER": 4, "AMREPLY_SHORT_HANDLER": 4,
            "AMREQUEST_MEDIUM_HANDLER": 1, "BARRIER_NOTIFY": 2, "BARRIER_WAIT": 2}


def source_lines(stdout: str) -> dict[str, int]:
    """The program's own report of where its calls are (rank 0: "line <what> <n>")."""
    return {m[1]: int(m[2]) for m in re.finditer(r"^line (\w+) (\d+)$", stdout, re.M)}


def check_job(build: Build, tmp_path: Path, env: dict[str, str], local: bool) -> None:
    trace, stats = tmp_path / "trace-%", tmp_path / "stats-%"
    result = build.job(NRANKS, "trace_test", env={**env, "GASNET_TRACEFILE": str(trace),
                                                  "GASNET_STATSFILE": str(stats)})
    assert result.returncode == 0, result.describe()
    where = source_lines(result.stdout)
    want = expected_counts(local)
    for rank in range(NRANKS):
        evs = events(tmp_path / f"trace-{rank}")
        assert {e[0] for e in evs} == {rank}
        counts = Counter(e[4] for e in evs if e[3] in "PGSAB")
        assert counts == want, f"rank {rank}"
        # The client's file and line on every call it made (handlers run with none).
        puts = [e for e in evs if e[4] == f"PUT{'_LOCAL' if local else ''}"]
        assert {e[2] for e in puts} == {f"tests/c/trace_test.c:{where['put']}"}
        assert all(e[2] for e in evs if e[3] in "PGS")
        # The barrier calls are functions, as in GASNet 1.x (clients declare their own names
        # that a macro would clash with): traced at the line the client set, here none.
        assert not any(e[2] for e in evs if e[3] == "B")
        assert {e[2] for e in evs if e[4] == "AMREQUEST_SHORT"} == \
            {f"tests/c/trace_test.c:{where['am_request_short']}"}
        assert {e[2] for e in evs if e[4] == "WAIT_SYNCNBI_PUTS"} == \
            {f"tests/c/trace_test.c:{where['wait_syncnbi_puts']}"}
        right, left = (rank + 1) % NRANKS, (rank - 1) % NRANKS
        assert all(f"to {right}" in e[5] for e in evs if e[4].startswith("PUT"))
        assert all(f"from {left}" in e[5] for e in evs if e[4] == "AMREQUEST_SHORT_HANDLER")
        # Statistics: the same counts, sizes and the traffic per peer.
        st = {e[4]: e[5] for e in events(tmp_path / f"stats-{rank}")}
        for name, n in want.items():
            assert re.match(rf"\s+{n} evnts", st[name]), (name, st[name])
        sfx = "_LOCAL" if local else ""
        assert "total=24 sz, min=8 sz, max=8 sz, avg=8.0 sz" in st[f"PUT{sfx}"]
        assert "total=100 sz" in st["AMREQUEST_MEDIUM"]
        peers = {int(m[1]): (int(m[2]), int(m[3])) for m in re.finditer(
            r"PEER (\d+): (\d+) msgs, (\d+) bytes", (tmp_path / f"stats-{rank}").read_text())}
        assert peers == {right: (14, 268), left: (4, 0)}


@pytest.mark.parametrize("maxsize", [None, "1"], ids=["pshm", "network"])
def test_trace_and_stats_of_known_traffic(build, tmp_path, maxsize):
    env = {"GASNET_SUPERNODE_MAXSIZE": maxsize} if maxsize else {}
    check_job(build, tmp_path, env, local=maxsize is None)


def test_trace_and_stats_on_the_mpi_conduit(tmp_path):
    build = built("opt", "mpi", "openmpi")
    check_job(build, tmp_path, {"GASNET_SUPERNODE_MAXSIZE": "1"}, local=False)


def test_stats_go_to_the_end_of_the_trace_without_a_statsfile(variant_build, tmp_path):
    result = variant_build.job(2, "trace_test", env={"GASNET_TRACEFILE": str(tmp_path / "t%")})
    assert result.returncode == 0, result.describe()
    evs = events(tmp_path / "t1")
    names = [e[4] for e in evs]
    assert names.index("EXIT") < names.index("STATS")
    assert [e[4] for e in evs[-2:]] == ["PEER", "END"]  # the statistics, then the file's end


def test_tracenodes_picks_the_ranks_that_write(variant_build, tmp_path):
    result = variant_build.job(4, "trace_test", env={"GASNET_TRACEFILE": str(tmp_path / "t-%"),
                                                     "GASNET_TRACENODES": "0,2-2"})
    assert result.returncode == 0, result.describe()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t-0", "t-2"]
    # One rank may write a file without '%'.
    one = tmp_path / "one.trace"
    result = variant_build.job(4, "trace_test", env={"GASNET_TRACEFILE": str(one),
                                                     "GASNET_TRACENODES": "3"})
    assert result.returncode == 0, result.describe()
    assert {e[0] for e in events(one)} == {3}


def test_statsnodes_and_statsmask_choose_what_is_counted(variant_build, tmp_path):
    result = variant_build.job(3, "trace_test", env={"GASNET_STATSFILE": str(tmp_path / "s%"),
                                                     "GASNET_STATSNODES": "1",
                                                     "GASNET_STATSMASK": "B"})
    assert result.returncode == 0, result.describe()
    assert [p.name for p in tmp_path.iterdir()] == ["s1"]
    names = {e[4] for e in events(tmp_path / "s1") if e[3] != "I"}
    assert names == {"BARRIER_NOTIFY", "BARRIER_WAIT"}


def test_one_file_for_several_ranks_is_refused(variant_build, tmp_path):
    # Before launch by gasnetrun (usage: 2), with the runtime's own rule.
    result = variant_build.job(2, "trace_test", env={"GASNET_TRACEFILE": str(tmp_path / "t")})
    assert result.returncode == 2, result.describe()
    assert f"GASNET_TRACEFILE='{tmp_path / 't'}' names one file for several ranks" \
        in result.stderr
    assert "put '%' in it" in result.stderr and "the job was not started" in result.stderr
    assert "trace_test: rank" not in result.stdout and not (tmp_path / "t").exists()
    # By the ranks when no gasnetrun checked (GASNET_PSHM_NODES: the program forks its ranks).
    proc = subprocess.run([variant_build.test_program("trace_test")], env=job_env(
        {"GASNET_PSHM_NODES": "2", "GASNET_TRACEFILE": str(tmp_path / "u")}),
        capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0
    assert f"GASNET_TRACEFILE='{tmp_path / 'u'}' names one file for several ranks" in proc.stderr


def line_of(source: Path, text: str) -> int:
    """The line of a C source on which text first appears."""
    return next(i for i, line in enumerate(source.read_text().splitlines(), 1) if text in line)


def test_gasnet_ex_calls_are_traced_at_the_clients_lines(variant_build, tmp_path):
    """An EX client's calls are traced as GASNet-1's are, at the file and line of the call:
    gex_AM_RequestShort, gex_RMA_GetBlocking and _GetNB, gex_Coll_BarrierNB; its objects' creation
    goes under category O, which GASNET_TRACEMASK=O selects alone."""
    source = ROOT / "tests" / "c" / "ex_mixed_test.c"
    result = variant_build.job(2, "ex_mixed_test", "ex",
                               env={"GASNET_TRACEFILE": str(tmp_path / "t%")})
    assert result.returncode == 0, result.describe()
    evs = events(tmp_path / "t0")
    at = {(e[2], e[4]) for e in evs}
    here = "tests/c/ex_mixed_test.c"
    for call, name in (("gex_AM_RequestShort1(tm, targets[i]", "AMREQUEST_SHORT"),
                       ("gex_RMA_GetBlocking(", "GET_LOCAL"),
                       ("gex_RMA_GetNB(", "GET_NB_LOCAL"),
                       ("gex_Coll_BarrierNB(tm, 0)); /* one API", "BARRIER_NOTIFY")):
        assert (f"{here}:{line_of(source, call)}", name) in at, (call, sorted(at, key=str))
    objects = [(e[4], e[5]) for e in evs if e[3] == "O"]
    assert [n for n, _ in objects] == ["CLIENT_INIT", "SEGMENT_ATTACH"] + ["REGISTER_HANDLER"] * 4
    assert "name='EX_MIXED'" in objects[0][1] and "rank 0 of 2" in objects[0][1], objects
    assert [m[1] for m in (re.search(r"name=(\w+)", r) for _, r in objects[2:]) if m] == \
        ["g1_req", "g1_rep", "ex_req", "ex_rep"], objects
    stats = {e[4]: e[5] for e in evs[[e[4] for e in evs].index("STATS"):]}
    assert re.match(r"\s+4 evnts", stats["AMREQUEST_SHORT"]), stats  # 2 EX, 2 GASNet-1
    result = variant_build.job(2, "ex_mixed_test", "ex",
                               env={"GASNET_TRACEFILE": str(tmp_path / "o%"),
                                    "GASNET_TRACEMASK": "O"})
    assert result.returncode == 0, result.describe()
    evs = events(tmp_path / "o1")
    traced = evs[:[e[4] for e in evs].index("STATS")]
    assert {e[3] for e in traced} - {"I"} == {"O"}, traced


def test_tracemask_and_tracelocal_filter_the_lines(variant_build, tmp_path):
    result = variant_build.job(2, "trace_test", env={"GASNET_TRACEFILE": str(tmp_path / "a%"),
                                                     "GASNET_TRACEMASK": "BS"})
    assert result.returncode == 0, result.describe()
    evs = events(tmp_path / "a0")
    traced = evs[:[e[4] for e in evs].index("STATS")]  # the statistics follow the trace
    assert {e[3] for e in traced} - {"I"} == {"B", "S"}
    # TRACELOCAL=0: no line for a shared-memory transfer, but the statistics still count it.
    result = variant_build.job(2, "trace_test", env={"GASNET_TRACEFILE": str(tmp_path / "b%"),
                                                     "GASNET_TRACELOCAL": "0"})
    assert result.returncode == 0, result.describe()
    evs = events(tmp_path / "b0")
    stats_at = [e[4] for e in evs].index("STATS")
    assert not [e for e in evs[:stats_at] if e[3] in "PG"]
    assert any(e[4] == "PUT_LOCAL" for e in evs[stats_at:])


def test_trace_to_stdout(variant_build, tmp_path):
    result = variant_build.job(2, "trace_test", env={"GASNET_TRACEFILE": "stdout",
                                                     "GASNET_TRACEMASK": "B",
                                                     "GASNET_TRACEFLUSH": "1"})
    assert result.returncode == 0, result.describe()
    found = [m for m in map(LINE.match, result.stdout.splitlines()) if m]
    # Trace lines (their message follows the name and a colon; statistics lines do not).
    assert Counter((m[1], m[5]) for m in found if m[4] == "B" and m[6].startswith(":")) == {
        (r, n): 2 for r in "01" for n in ("BARRIER_NOTIFY", "BARRIER_WAIT")}


def said(stdout: str) -> dict[str, str]:
    """What client_trace_test's rank 0 printed ("key value" lines)."""
    return {m[1]: m[2] for m in re.finditer(r"^(\w+) ?(.*)$", stdout, re.M)}


def test_a_clients_own_lines_through_the_tools_header(variant_build, tmp_path):
    """GASNETT_TRACE_* and GASNETT_STATS_*: H messages at the line the client set, a frozen
    line naming the calls made under it, masks changed at run time, a statistics callback."""
    result = variant_build.job(2, "client_trace_test",
                               env={"GASNET_TRACEFILE": str(tmp_path / "t%"),
                                    "GASNET_STATSFILE": str(tmp_path / "s%")})
    assert result.returncode == 0, result.describe()
    out = said(result.stdout)
    assert (out["enabled"], out["stats"], out["mask"]) == ("1", "1", "GPSWXBLAICDNHUO")
    assert out["mask_after"] == "SBU" and out["tracelocal"] == "0"
    own = f"tests/c/client_trace_test.c:{out['put_line']}"
    assert out["getsourceline"] == own.replace(":", " ")
    assert out["barrier_line"].startswith("tests/c/client_trace_test.c ")
    assert out["barrier_line"] != out["getsourceline"]
    for rank in range(2):
        evs = events(tmp_path / f"t{rank}")
        said_by_client = [(e[2], e[3], e[4] + e[5]) for e in evs if e[3] in "HU"]
        assert said_by_client == [
            ("user.upc:10", "H", f"hello from rank {rank}"),
            (own, "H", "restored"),  # the saved line, set back after other calls
            ("tests/c/client_trace_test.c:77", "H", "line 77 of the same file"),
            # forced past a mask without H, under U, at the last traced call's line
            (f"tests/c/client_trace_test.c:{out['put_nb_line']}", "U", "forced past the mask")]
        # A call without a line of its own is traced without one (not at the previous call's).
        assert [e[2] for e in evs if e[4] == "WAIT_SYNCNB_SOME"] == [None]
        # The put under the frozen line is traced there; the third, under a mask without P,
        # not at all, yet all three are counted.
        assert [e[2] for e in evs if e[4] == "PUT_LOCAL"] == ["user.upc:20", own]
        stats = events(tmp_path / f"s{rank}")
        assert [e[4] + e[5] for e in stats if e[3] == "H"] == ["client stat puts=3"]
        assert re.match(r"\s+3 evnts", {e[4]: e[5] for e in stats}["PUT_LOCAL"])


def test_a_clients_own_lines_cost_nothing_when_the_rank_does_not_trace(opt_build):
    result = opt_build.job(2, "client_trace_test")
    assert result.returncode == 0, result.describe()
    out = said(result.stdout)
    assert (out["enabled"], out["stats"], out["mask"], out["mask_after"]) == ("0", "0", "", "")
    assert out["getsourceline"] == " 0"  # an empty file name and line 0: nothing is kept


def test_a_mask_letter_that_is_no_category_is_ignored_and_said(opt_build, tmp_path):
    """As GASNet-1 (a client may pass on its user's mask), but not silently."""
    result = opt_build.job(2, "client_trace_test", "badmask",
                           env={"GASNET_TRACEFILE": str(tmp_path / "t%")})
    assert result.returncode == 0, result.describe()
    assert said(result.stdout)["mask"] == "GPU"
    assert ("GASNETT_TRACE_SETMASK(\"GPQ\"): 'Q' is not a category letter and is ignored "
            "(letters: GPSWXBLAICDNHUO)") in result.stderr


@pytest.mark.parametrize("name,value,why", [
    ("GASNET_TRACEMASK", "GPQ", "'Q' is not a category letter"),
    ("GASNET_STATSMASK", "x", "'x' is not a category letter"),
    ("GASNET_TRACEMASK", "ÄÖ", "'Ä' is not a category letter"),  # the character, not a byte
    ("GASNET_TRACENODES", "0-", "expected the end of a range at ''"),
    ("GASNET_STATSNODES", "3-1", "range 3-1 ends before it starts"),
    ("GASNET_TRACELOCAL", "sometimes", "expected"),
])
def test_bad_values_are_refused_before_the_job_starts(opt_build, name, value, why):
    result = opt_build.job(2, "trace_test", env={"GASNET_TRACEFILE": "stderr", name: value})
    assert result.returncode == 2, result.describe()
    assert f"{name}='{value}'" in result.stderr and why in result.stderr
    assert "the job was not started" in result.stderr


def test_an_unwritable_trace_file_is_a_clear_fatal_error(variant_build, tmp_path):
    missing = tmp_path / "no-such-dir" / "t-%"
    result = variant_build.job(2, "trace_test", env={"GASNET_STATSFILE": str(missing)})
    assert result.returncode != 0
    # (Each rank says so; the first to fail ends the job, perhaps before the other spoke.)
    assert re.search(re.escape(f"GASNET_STATSFILE='{missing}': cannot write the statistics file "
                               f"{tmp_path / 'no-such-dir' / 't-'}") + r"[01]: No such file or "
                     r"directory \(accepted: a writable path", result.stderr), result.stderr


# ---- gasnetrun --stats, GASNET_VERBOSEENV, GASNET_SPAWN_VERBOSE ---------------------------------
def test_gasnetrun_stats_prints_per_rank_totals_and_top_pairs(variant_build, tmp_path):
    result = variant_build.run(["--stats", "--json", "--stats-dir", str(tmp_path), "-n", "3",
                                variant_build.test_program("trace_test")])
    assert result.returncode == 0, result.describe()
    doc = json.loads(result.stderr[result.stderr.index("{"):])
    assert [r["rank"] for r in doc["ranks"]] == [0, 1, 2] and doc["missing"] == []
    for r in doc["ranks"]:
        assert (r["puts"], r["put_bytes"], r["gets"], r["get_bytes"], r["ams"], r["am_bytes"],
                r["msgs"], r["bytes"]) == (6, 88, 3, 80, 9, 100, 18, 268)
    assert [(p["from"], p["to"], p["msgs"], p["bytes"]) for p in doc["pairs"]] == [
        (0, 1, 14, 268), (1, 2, 14, 268), (2, 0, 14, 268),
        (0, 2, 4, 0), (1, 0, 4, 0), (2, 1, 4, 0)]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["stats-0", "stats-1", "stats-2"]
    # The table form, and a temporary directory that does not outlive the job.
    before = set(Path(tempfile.gettempdir()).glob("gasnet-stats-*"))
    table = variant_build.run(["--stats", "-n", "2", variant_build.test_program("trace_test")])
    assert table.returncode == 0, table.describe()
    assert "GASNet statistics per rank" in table.stderr and "Top 10 peer pairs" in table.stderr
    assert "trace_test: rank 1 OK" in table.stdout and "GASNet statistics" not in table.stdout
    assert set(Path(tempfile.gettempdir()).glob("gasnet-stats-*")) == before


def test_gasnetrun_stats_refuses_a_statsfile_of_the_users(opt_build, tmp_path):
    result = opt_build.run(["--stats", "-n", "2", opt_build.test_program("trace_test")],
                           env={"GASNET_STATSFILE": str(tmp_path / "s%")})
    assert result.returncode == 2
    assert "--stats collects the statistics itself: unset GASNET_STATSFILE" in result.stderr


def test_verboseenv_lists_every_knob_once_from_rank_0(variant_build):
    result = variant_build.job(3, "trace_test", env={"GASNET_VERBOSEENV": "1",
                                                     "GASNET_TRACEMASK": "GP"})
    assert result.returncode == 0, result.describe()
    lines = [l for l in result.stderr.splitlines() if l.startswith("GASNET knob")]
    names = [l.split()[2] for l in lines]
    assert len(names) == len(set(names))
    assert {"GASNET_TRACEFILE", "GASNET_STATSNODES", "GASNET_EXITTIMEOUT",
            "GASNET_SPAWN_VERBOSE", "GASNET_BARRIER"} <= set(names)
    assert any(re.match(r"GASNET knob GASNET_TRACEMASK\s+= GP\s+\(environment\)", l) for l in lines)
    assert any(re.match(r"GASNET knob GASNET_TRACEFILE\s+= \(unset\)\s+\(default\)", l)
               for l in lines)


def test_spawn_verbose_narrates_the_launch(variant_build):
    result = variant_build.job(2, "trace_test", env={"GASNET_SPAWN_VERBOSE": "1"})
    assert result.returncode == 0, result.describe()
    for said in ("gasnetrun: spawner local:", "gasnetrun: rank 0 started (pid ",
                 "gasnetrun: rank 1 started (pid ", "gasnetrun: rank 1 (pid "):
        assert said in result.stderr, said
    quiet = variant_build.job(2, "trace_test", env={"GASNET_SPAWN_VERBOSE": "0"})
    assert quiet.returncode == 0 and "started (pid" not in quiet.stderr


# ---- a file system that fills up or fails ------------------------------------------------------
@pytest.fixture
def small_fs(tmp_path):
    """A 1 MiB tmpfs: a file system a trace fills."""
    mount = tmp_path / "small"
    mount.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mount)], check=True)
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def test_a_trace_that_fills_its_file_system_is_cut_at_a_whole_line_marked_and_said(
        opt_build, small_fs):
    result = opt_build.job(2, "flood_test", "20000",
                           env={"GASNET_TRACEFILE": str(small_fs / "t-%")})
    assert result.returncode == 0, result.describe()
    said = re.findall(r"GASNET_TRACEFILE: writing the trace and statistics file "
                      + re.escape(str(small_fs)) + r"/t-([01]) failed: No space left on device; "
                      r"it ends at byte \d+, its last whole line, marked TRUNCATED",
                      result.stderr)
    assert said, result.stderr
    for rank in said:  # whole lines, the last one the mark
        lines = events(small_fs / f"t-{rank}")
        assert lines[-1][3:5] == ("I", "TRUNCATED"), lines[-3:]
    assert len(said) == len(set(said)), "a rank said it more than once"
    trace = subprocess.run([str(opt_build.path / "bin" / "gasnet-trace"), str(small_fs / "t-%")],
                           env=job_env(), capture_output=True, text=True, timeout=120)
    assert trace.returncode == 0, trace.stderr
    for rank in said:
        assert (f"gasnet-trace: warning: {small_fs}/t-{rank}: cut short by its rank (No space "
                "left on device)") in trace.stderr, trace.stderr


def test_a_trace_to_a_device_that_refuses_writes_is_said(opt_build):
    result = opt_build.job(2, "trace_test", env={"GASNET_TRACEFILE": "/dev/full",
                                                 "GASNET_TRACENODES": "0"})
    assert result.returncode == 0, result.describe()
    assert ("GASNET_TRACEFILE: writing the trace and statistics to /dev/full failed: No space "
            "left on device; what follows is lost") in result.stderr, result.stderr
    assert result.stderr.count("/dev/full failed") == 1, result.stderr


def test_stats_on_a_full_file_system_give_the_real_reason(opt_build, small_fs):
    filler = small_fs / "filler"
    with open(filler, "wb") as f:  # every byte of the file system taken
        try:
            while True:
                f.write(bytes(65536))
                f.flush()
        except OSError:
            pass
    result = opt_build.run(["--stats", "--stats-dir", str(small_fs), "-n", "2",
                            opt_build.test_program("trace_test")])
    assert result.returncode == 0, result.describe()
    assert "GASNET_STATSFILE: writing the statistics file" in result.stderr, result.stderr
    assert re.search(r"gasnetrun: no statistics from rank\(s\) 0,1: rank 0's file \S+/stats-0 is "
                     r"empty \(the file system of \S+ is full\)", result.stderr), result.stderr
    assert "other host" not in result.stderr


def test_a_trace_file_without_its_end_is_warned_of(tmp_path, opt_build):
    cut = tmp_path / "t-0"
    cut.write_text("0 0.000010s> (I) TRACE rank 0 of 1, host h, pid 1, conduit smp, SEQ\n"
                   "0 0.000020s> [a.c:3] (P) PUT: 8 bytes to 0\n")
    trace = subprocess.run([str(opt_build.path / "bin" / "gasnet-trace"), str(cut)],
                           env=job_env(), capture_output=True, text=True, timeout=120)
    assert trace.returncode == 0, trace.stderr
    assert f"{cut}: ends before its rank's END line: the rank was killed" in trace.stderr


def test_a_second_job_given_the_same_trace_pattern_leaves_the_first_ones_files_alone(
        opt_build, tmp_path):
    """Two jobs at once with GASNET_TRACEFILE=dir/t-%: the second used to empty and overwrite
    the files the first was writing (issue 68). Each rank holds a lock on its file; the second
    job's ranks write beside them, under names with their job's id, and say so."""
    from watch import watch
    pattern = str(tmp_path / "t-%")
    env = job_env({**opt_build.conduit_env(), "GASNET_TRACEFILE": pattern})
    first = subprocess.Popen([opt_build.gasnetrun, "-n", "2",
                              opt_build.test_program("exit_test"), "hang"], env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        out, _ = watch(first)
        for _ in range(2):
            out.wait_for(r"^ready rank")
        before = {r: (tmp_path / f"t-{r}").read_text() for r in (0, 1)}
        second = opt_build.job(2, "trace_test", env={"GASNET_TRACEFILE": pattern})
        assert second.returncode == 0, second.describe()
        job = re.search(r"job (\S+)", next(iter(tmp_path.glob("t-0.*"))).read_text())
        assert job, "the second job's file has no header"
        for rank in (0, 1):
            assert (f"{tmp_path / f't-{rank}'} is being written by another running job, which "
                    f"keeps it: this rank writes its trace to {tmp_path / f't-{rank}'}."
                    f"{job[1]} instead") in second.stderr, second.stderr
            now = (tmp_path / f"t-{rank}").read_text()
            assert now.startswith(before[rank]) and job[1] not in now, now[:300]
            assert "PUT" in (tmp_path / f"t-{rank}.{job[1]}").read_text()
    finally:
        first.send_signal(2)
        first.communicate(timeout=60)
    rerun = opt_build.job(2, "trace_test", env={"GASNET_TRACEFILE": pattern})
    assert rerun.returncode == 0 and "another running job" not in rerun.stderr, rerun.describe()
