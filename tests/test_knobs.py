"""The knob table: C and Python parse every value identically, defaults parse, gasnetrun
validates every GASNET_* variable before a job starts, and documents the table."""
import json
import random
import re
import subprocess
from pathlib import Path

import pytest

from conftest import CONDUITS, ROOT, job_env

CASES = [
    # bool
    ("GASNET_VERBOSEENV", v) for v in ["1", "0", "yes", "NO", "on", "Off", "y", "true", " 1 ",
                                        "maybe", "", "2", "1.0"]
] + [
    # int, with range edges
    ("GASNET_AM_CREDITS_PP", v) for v in ["1", "1024", "12", "0", "1025", "-3", "1.5", "12x", "0x10"]
] + [
    ("GASNET_SUPERNODE_MAXSIZE", v) for v in ["0", "65535", "65536", "+7", " 8"]
] + [
    # size
    ("GASNET_PACKEDLONG_LIMIT", v) for v in ["0", "4012", "64K", "64k", "64KB", "65537", "1M",
                                              "4Q", "1.5K", "-1", "K"]
] + [
    # number
    ("GASNET_EXITTIMEOUT", v) for v in ["2.5", "0.001", "86400", "0", "86401", "1e3", "nan",
                                         "inf", "abc"]
] + [
    # fraction-or-size
    ("GASNET_PHYSMEM_MAX", v) for v in ["2/3", "0.5", "16G", "1T", "5/8", "3/2", "0", "1/0",
                                         "a/b", "100", "0.999", "1", "16GB", "2/3/4"]
] + [
    # segment size with per-host / per-process scope
    ("GASNET_MAX_SEGSIZE", v) for v in ["0.85/H", "512M/P", "512m/p", "2/3/H", "1G", "0.5",
                                         "16Q", "/H", "0/H", "4095", "4096", "8G/X"]
] + [
    # enum
    ("GASNET_BARRIER", v) for v in ["PSHM", "amdissem", " AMDISSEM ", "fast", ""]
] + [
    ("GASNET_SPAWNER", v) for v in ["local", "ssh", "srun"]
] + [
    # file names
    ("GASNET_CONNECTFILE_IN", v) for v in ["/tmp/conn.%", "conn", "  "]
] + [
    # port specs, plain and per-socket family
    ("GASNET_IBV_PORTS", v) for v in ["mlx5_0", "mlx5_0+mlx5_1:1,2", "mlx4_0:1,2+mlx4_1:2",
                                       "mlx5_0:", "mlx5_0:0", "mlx5_0:1,", "+mlx5_0", "mlx5_0+",
                                       "mlx 5", "mlx5_0:x", ""]
] + [
    ("GASNET_SSH_SERVERS", v) for v in ["node1,node2", " a , b ", "solo", "a,,b", ",", "a,"]
] + [
    ("GASNET_SSH_CMD", v) for v in ["ssh", "ssh -o BatchMode=yes", " "]
] + [
    # tracing: category masks and rank lists
    ("GASNET_TRACEMASK", v) for v in ["GPA", "PGP", "U", "gp", "GPQ", "G P"]
] + [
    ("GASNET_TRACENODES", v) for v in ["*", "0,2-4", " 1 , 3 ", "4-2", "0-", "a", "1,,2", "70000"]
] + [
    ("GASNET_IBV_PORTS_0", "mlx5_0:1"), ("GASNET_IBV_PORTS_12", "bad:port"),
    ("GASNET_IBV_PORTS_TYPE", "numa"), ("GASNET_IBV_PORTS_TYPE", "core"),
    ("GASNET_CONNECTFILE_BASE", "36"), ("GASNET_CONNECTFILE_BASE", "1"),
]


def c_results(variant_build, cases):
    tool = variant_build.test_program("knob_check_tool")
    text = "".join(f"{name}\t{value}\n" for name, value in cases)
    proc = subprocess.run([str(tool)], input=text, capture_output=True, text=True, check=True)
    return proc.stdout.splitlines()


def python_result(native, name, value):
    try:
        return "ok " + native.check(name, value)
    except native.ParseError as err:
        return f"error {err}"


def test_c_and_python_parse_every_type_identically(variant_build, native):
    c = c_results(variant_build, CASES)
    assert len(c) == len(CASES)
    for (name, value), c_line in zip(CASES, c):
        assert python_result(native, name, value) == c_line, (name, value)
    # The cases cover every type of the table, with accepted and rejected values for each type
    # that can reject anything (any text is a valid string).
    by_type: dict[str, set[str]] = {}
    for (name, _), line in zip(CASES, c):
        by_type.setdefault(native.find(name).type, set()).add(line.split()[0])
    assert set(by_type) == {k.type for k in native.knobs()}
    for type_name, outcomes in by_type.items():
        assert outcomes == ({"ok"} if type_name == "string" else {"ok", "error"}), type_name


@pytest.mark.parametrize("value,canonical", [
    ("0.85/H", "fraction:0.84999999999999998/H"), ("512M/P", "size:536870912/P"),
    ("2/3", "fraction:0.66666666666666663/P"), ("1G", "size:1073741824/P")])
def test_segment_size_forms(native, value, canonical):
    assert native.check("GASNET_MAX_SEGSIZE", value) == canonical


def test_errors_name_the_variable_the_value_and_the_accepted_form(native):
    with pytest.raises(native.ParseError) as err:
        native.check("GASNET_IBV_PORTS_3", "mlx5_0:1,x")
    assert str(err.value) == ("GASNET_IBV_PORTS_3='mlx5_0:1,x': port must be a number 1..255, "
                              "not 'x': expected HCA[:port[,port...]][+HCA...] "
                              "(e.g. mlx5_0+mlx5_1:1,2)")
    with pytest.raises(native.ParseError) as err:
        native.check("GASNET_MAX_SEGSIZE", "16Q")
    assert "GASNET_MAX_SEGSIZE='16Q': 'Q' is not understood: expected a size" in str(err.value)


def test_a_range_error_shows_the_bounds_as_the_table_writes_them(native):
    """0.00001 is 1.0000000000000001e-05 at 17 digits, which a message must not show (issue 38,
    item 18)."""
    with pytest.raises(native.ParseError) as err:
        native.check("GASNET_REQUESTTIMEOUT_INITIAL", "100")
    assert "'100': out of range 1e-05..60 seconds" in str(err.value), str(err.value)
    with pytest.raises(native.ParseError) as err:
        native.check("GASNET_EXITTIMEOUT", "-1")
    assert "'-1': out of range 0.001..86400 seconds" in str(err.value), str(err.value)


def test_every_default_parses_and_every_knob_is_documented(native):
    for knob in native.knobs():
        assert knob.doc and knob.conduits and knob.type
        if knob.default:
            native.check(knob.name.replace("<n>", "0"), knob.default)


def test_ports_spec_structure(ibv_launch):
    assert ibv_launch.native.parse_ports("mlx5_0+mlx5_1:1,2") == [("mlx5_0", []),
                                                                   ("mlx5_1", [1, 2])]
    assert ibv_launch.native.parse_ports("") == []


def test_segment_budget_applies_both_limits(native):
    gib = 1 << 30
    assert native.segment_budget("8G/H", "1/1", 16 * gib, 16 * gib, 4, 0) == 2 * gib
    assert native.segment_budget("512M/P", None, 16 * gib, 16 * gib, 4, 0) == 512 << 20
    assert native.segment_budget(None, "4G", 16 * gib, 16 * gib, 4, 0) == gib  # physmem / ranks
    assert native.segment_budget(None, None, 16 * gib, 2 * gib, 4, 0) == gib // 2  # shm share
    # The host's AM queues come out of the same memory first.
    assert native.segment_budget(None, "4G", 16 * gib, 16 * gib, 4, gib) == 3 * gib // 4
    with pytest.raises(native.ParseError, match="GASNET_MAX_SEGSIZE='x'"):
        native.segment_budget("x", None, gib, gib, 1, 0)


def test_a_budget_that_rounds_to_nothing_is_an_error_with_the_numbers(native):
    with pytest.raises(native.ParseError, match=r"rounds to 0 bytes .*GASNET_MAX_SEGSIZE='1000' "
                                                r"gives 1000"):
        native.segment_budget("1000", None, 1 << 30, 1 << 30, 4, 0)


def test_exit_timeout_formula(native):
    assert native.exit_timeout({}, 8) == 4.0
    assert native.exit_timeout({"GASNET_EXITTIMEOUT_MIN": "1", "GASNET_EXITTIMEOUT_FACTOR": "1"},
                               1000) == 360.0
    assert native.exit_timeout({"GASNET_EXITTIMEOUT": "7.5"}, 8) == 7.5


# ---- gasnetrun validation -------------------------------------------------------------------
def run_gasnetrun(build, args, env=None, tmp=None):
    return subprocess.run([build.gasnetrun, *args], env=job_env(env), capture_output=True,
                          text=True, timeout=60)


def test_typo_gets_did_you_mean_and_the_job_never_starts(opt_build, tmp_path):
    marker = tmp_path / "started"
    script = tmp_path / "prog.sh"
    script.write_text(f"#!/bin/sh\ntouch {marker}\n")
    script.chmod(0o755)
    proc = run_gasnetrun(opt_build, ["-n", "2", str(script)], {"GASNET_AMCREDITS_PP": "4"})
    assert proc.returncode == 2
    assert ("GASNET_AMCREDITS_PP (from environment) is not a GASNet knob; did you mean "
            "GASNET_AM_CREDITS_PP?") in proc.stderr
    assert "the job was not started" in proc.stderr
    assert not marker.exists()


@pytest.mark.parametrize("name,warning", [
    ("GASNET_DUMMY", "GASNET_DUMMY (from environment) is not a GASNet knob; passed to the ranks "
                     "unchanged"),
    ("GASNET_MALLOCFILE", "GASNET_MALLOCFILE (from environment) is a GASNet variable this "
                         "implementation does not read; it has no effect"),
])
def test_unknown_names_that_are_not_typos_reach_the_ranks_with_a_warning(opt_build, tmp_path,
                                                                        name, warning):
    script = tmp_path / "prog.sh"
    script.write_text(f'#!/bin/sh\necho "seen: ${name}"\n')
    script.chmod(0o755)
    proc = run_gasnetrun(opt_build, ["-n", "2", str(script)], {name: "propagated"})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.count("seen: propagated") == 2
    assert f"gasnetrun: warning: {warning}" in proc.stderr


def test_a_likely_typo_runs_only_when_explicitly_allowed(opt_build, tmp_path):
    script = tmp_path / "prog.sh"
    script.write_text('#!/bin/sh\necho "seen: $GASNET_AMCREDITS_PP"\n')
    script.chmod(0o755)
    proc = run_gasnetrun(opt_build, ["--allow-unknown-knobs", "-n", "1", str(script)],
                         {"GASNET_AMCREDITS_PP": "4"})
    assert proc.returncode == 0, proc.stderr
    assert "seen: 4" in proc.stdout
    assert "(did you mean GASNET_AM_CREDITS_PP?); passed to the ranks unchanged" in proc.stderr


def test_bad_value_from_env_file_names_file_and_line(opt_build, tmp_path):
    env_file = tmp_path / "job.env"
    env_file.write_text("# settings\nGASNET_BARRIER=AMDISSEM\n\nGASNET_MAX_SEGSIZE=lots\n")
    proc = run_gasnetrun(opt_build, ["-n", "2", "--env-file", str(env_file), "/bin/true"])
    assert proc.returncode == 2
    assert f"GASNET_MAX_SEGSIZE='lots'" in proc.stderr
    assert f"(from --env-file {env_file}:4)" in proc.stderr


def test_malformed_env_file_line_is_an_error(opt_build, tmp_path):
    env_file = tmp_path / "job.env"
    env_file.write_text("GASNET_BARRIER AMDISSEM\n")
    proc = run_gasnetrun(opt_build, ["-n", "2", "--env-file", str(env_file), "/bin/true"])
    assert proc.returncode == 2
    assert f"{env_file}:1: 'GASNET_BARRIER AMDISSEM' is not NAME=VALUE" in proc.stderr


def test_env_file_values_reach_the_ranks(opt_build, tmp_path):
    env_file = tmp_path / "job.env"
    env_file.write_text("export GASNET_BARRIER='AMDISSEM'\nMY_NOTE=hello\n")
    script = tmp_path / "show.sh"
    script.write_text('#!/bin/sh\necho "$GASNETRUN_RANK $GASNET_BARRIER $MY_NOTE"\n')
    script.chmod(0o755)
    proc = run_gasnetrun(opt_build, ["-n", "2", "--env-file", str(env_file), str(script)])
    assert proc.returncode == 0, proc.stderr
    assert sorted(proc.stdout.splitlines()) == ["0 AMDISSEM hello", "1 AMDISSEM hello"]


def test_verbose_shows_every_knob_its_origin_and_the_segment_budget(opt_build, tmp_path):
    env_file = tmp_path / "job.env"
    env_file.write_text("GASNET_MAX_SEGSIZE=1G/H\n")
    proc = run_gasnetrun(opt_build, ["-v", "-t", "-n", "4", "--env-file", str(env_file),
                                     "/bin/true"], {"GASNET_BARRIER": "AMDISSEM"})
    assert proc.returncode == 0, proc.stderr
    assert re.search(r"GASNET_MAX_SEGSIZE\s+= 1G/H\s+\(--env-file .*:1\)", proc.stderr)
    assert re.search(r"GASNET_BARRIER\s+= AMDISSEM\s+\(environment\)", proc.stderr)
    assert re.search(r"GASNET_EXITTIMEOUT_MIN\s+= 2\s+\(default\)", proc.stderr)
    assert re.search(r"host \S+: 4 ranks need [0-9.]+ MiB of AM queues in shared memory; "
                     r"segments up to 256.0 MiB per rank", proc.stderr), proc.stderr


def test_knobs_json_lists_the_whole_table(opt_build, native):
    proc = run_gasnetrun(opt_build, ["--knobs", "--json"])
    data = json.loads(proc.stdout)
    assert [k["name"] for k in data] == [k.name for k in native.knobs()]
    barrier = next(k for k in data if k["name"] == "GASNET_BARRIER")
    assert barrier["choices"] == ["PSHM", "AMDISSEM"] and barrier["scope"] == "job"


def test_knobs_table_and_single_knob(opt_build):
    table = run_gasnetrun(opt_build, ["--knobs"])
    assert table.returncode == 0 and "GASNET_AM_CREDITS_PP" in table.stdout
    one = run_gasnetrun(opt_build, ["-knobs", "GASNET_EXITTIMEOUT_FACTOR"])
    assert one.returncode == 0 and "seconds/rank" in one.stdout
    typo = run_gasnetrun(opt_build, ["--knobs", "GASNET_EXITTIMEOUT_FACTR"])
    assert typo.returncode == 2 and "did you mean GASNET_EXITTIMEOUT_FACTOR?" in typo.stderr


def test_info_reports_the_build(opt_build):
    info = json.loads(run_gasnetrun(opt_build, ["--info", "--json"]).stdout)
    assert {"smp", "udp"} <= set(info["conduits"]) <= set(CONDUITS)
    assert info["libs"]["smp"] == [] and info["libs"].get("ibv", ["ibverbs"]) == ["ibverbs"]
    assert info["threading"] == ["seq", "par"]
    assert info["limits"]["smp"]["am_max_medium"] == 65536 and info["am_max_args"] == 16
    assert "local" in info["spawners"]


# ---- the runtime reads knobs through the table ----------------------------------------------
@pytest.mark.parametrize("value,ranks,expected", [("1M/P", 2, 1 << 20), ("8M/H", 4, 2 << 20)])
def test_runtime_applies_max_segsize(variant_build, value, ranks, expected):
    result = variant_build.job(ranks, "info_test", env={"GASNET_MAX_SEGSIZE": value})
    # info_test attaches 256 KiB, so both settings allow it.
    assert result.returncode == 0, result.describe()
    assert f"info_test: max local segment {expected}" in result.stdout


def test_runtime_rejects_a_malformed_knob_without_gasnetrun(variant_build):
    proc = subprocess.run([variant_build.test_program("info_test")],
                          env=job_env({"GASNET_SUPERNODE_MAXSIZE": "two"}), capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 1
    assert "GASNET_SUPERNODE_MAXSIZE='two'" in proc.stderr and "expected an integer" in proc.stderr


def test_verboseenv_prints_knobs_read_on_rank_0_only(variant_build):
    result = variant_build.job(2, "info_test", env={"GASNET_VERBOSEENV": "1",
                                            "GASNET_SUPERNODE_MAXSIZE": "1"})
    assert result.returncode == 0, result.describe()
    lines = [l for l in result.stderr.splitlines() if l.startswith("GASNET knob")]
    assert any(re.match(r"GASNET knob GASNET_SUPERNODE_MAXSIZE\s+= 1\s+\(environment\)", l)
               for l in lines), result.stderr
    assert any(re.match(r"GASNET knob GASNET_BARRIER\s+= PSHM\s+\(default\)", l) for l in lines)
    assert len(lines) == len(set(lines))  # once each, from one rank


@pytest.mark.parametrize("nranks", [2, 8])
def test_amdissem_barrier(variant_build, nranks):
    result = variant_build.job(nranks, "barrier_test", env={"GASNET_BARRIER": "AMDISSEM"})
    assert result.returncode == 0, result.describe()
    assert result.stdout.count("barrier_test: rank") == nranks


# What process managers and MPI launchers set for their ranks, which the pmi and mpi spawners
# read to learn that such a launcher started them.
LAUNCHER_VARIABLES = ('"PMIX_', '"PMI_', '"OMPI_COMM_WORLD_')


def test_no_gasnet_variable_is_read_outside_the_knob_table(native):
    """A scan of the C sources: getenv() on GASNET_* names only in csrc/core/knobs.c, and every
    GASNET_* name the runtime asks the table for is declared in it."""
    sources = list((ROOT / "csrc").rglob("*.c")) + list((ROOT / "spawners").rglob("*.c"))
    offenders = []
    for path in sources:
        text = path.read_text()
        for m in re.finditer(r"\bgetenv\s*\(([^)]*)\)", text):
            arg = m.group(1).strip()
            rel = path.relative_to(ROOT).as_posix()
            if rel == "csrc/core/knobs.c":
                continue
            if arg.startswith('"GASNETRUN_') or (rel == "csrc/core/errors.c" and arg == "name"):
                continue  # the launcher's private channel; gasnet_getenv for the client
            if rel == "csrc/core/exit/diagnose.c" and arg == '"PATH"':
                continue  # where addr2line is, found before any crash
            if rel == "csrc/gasnetrun/front_checks.c" and arg == "name":
                continue  # gasnetrun's front (a launcher): the GASNET_* it reads are knobs (below)
            if arg.startswith('"FI_') and rel.startswith("csrc/conduits/ofi/"):
                continue  # libfabric's own variables, named in the ofi conduit's messages
            if rel.startswith("csrc/tools/"):
                # the tools library runs without the runtime (no knob table); the GASNET_*
                # names it reads must still be knobs (checked below)
                continue
            if arg.startswith(LAUNCHER_VARIABLES) and rel.startswith(("spawners/pmi/",
                                                                      "spawners/mpi/")):
                continue  # the process manager's variables (not knobs: it sets them)
            offenders.append(f"{rel}: getenv({arg})")
        tool_names = re.findall(r'getenv\("(GASNET_\w+)"', text) if "csrc/tools/" in str(path) else []
        for name in tool_names:
            if native.find(name) is None:
                offenders.append(f"{path.relative_to(ROOT)}: {name} is not in the knob table")
        for name in re.findall(r"(?:gasneti_knob_\w+|gasneti_front_env)\(\s*\"(GASNET_\w+)\"", text):
            if native.find(name) is None:
                offenders.append(f"{path.relative_to(ROOT)}: {name} is not in the knob table")
    assert not offenders, offenders
    assert any("gasneti_knob_int(\"GASNET_SUPERNODE_MAXSIZE\")" in p.read_text() for p in sources)


# ---- connect files ---------------------------------------------------------------------------
BASES = [2, 3, 5, 8, 10, 11, 16, 20, 27, 32, 35, 36]


@pytest.mark.parametrize("seed", range(len(BASES)))
def test_connect_files_round_trip_random_graphs(ibv_launch, seed):
    rng = random.Random(seed)
    nodes = [1, 2, 7, 64, 500, 4096][seed % 6] if seed < 10 else 4096
    base = BASES[seed]
    density = rng.choice([0.0, 0.001, 0.05, 0.5]) if nodes < 600 else rng.choice([0.0005, 0.002])
    edges = set()
    target = int(density * nodes * (nodes - 1) / 2)
    while len(edges) < target:
        a, b = rng.randrange(nodes), rng.randrange(nodes)
        if a != b:
            edges.add((min(a, b), max(a, b)))
    if nodes > 10:  # runs of consecutive peers exercise ranges
        edges |= {(0, p) for p in range(1, min(nodes, 40))}
    text = ibv_launch.native.write_connectfile(edges, nodes, base)
    assert text.startswith(f"size: {nodes}\nbase: {base}\n")
    graph = ibv_launch.native.parse_connectfile(text, "rt.conn", nodes)
    assert graph.edges == edges and graph.size == nodes


def test_connect_file_documented_examples(ibv_launch):
    g = ibv_launch.native.parse_connectfile("7:0 4\n7:6\n6:9-12\n1:0\n0:1\n", "ex", 16)
    assert g.edges == {(0, 7), (4, 7), (6, 7), (6, 9), (6, 10), (6, 11), (6, 12), (0, 1)}
    g = ibv_launch.native.parse_connectfile("base: 36\nz: 10-11\n", "ex", 40)
    assert g.edges == {(35, 36), (35, 37)}


@pytest.mark.parametrize("text,message", [
    ("7: 0 x", "f.conn:1:6: expected a node number, found 'x'"),
    ("size: 8\n7: 0\n9: 1\n", "f.conn:3:1: node number is beyond the job's last rank"),
    ("size: 9\n", "f.conn:1:6: size does not match the job's 8 ranks"),
    ("base: 40\n", "f.conn:1:6: base must be 2..36"),
    ("3 4\n", "f.conn:1:3: expected ':' after the node number"),
    ("1: 5-2\n", "f.conn:1:4: range goes backwards"),
    ("1: 2,3\n", "f.conn:1:5: unexpected ','"),
    ("base: 2\n1: 2\n", "f.conn:2:4: expected a node number, found '2'"),
])
def test_connect_file_errors_carry_file_line_and_column(native, ibv_launch, text, message):
    with pytest.raises(native.ParseError) as err:
        ibv_launch.native.parse_connectfile(text, "f.conn", 8)
    assert str(err.value) == message


def test_filename_percent_becomes_the_rank(native):
    assert native.expand_filename("/tmp/conn.%.txt", 12) == "/tmp/conn.12.txt"


def test_knobs_json_carries_what_a_tuner_needs(opt_build, native):
    """Tunable knobs list sweep values that each parse and lie in range; others list none."""
    table = {k["name"]: k for k in json.loads(run_gasnetrun(opt_build, ["--knobs", "--json"]).stdout)}
    tunable = [k for k in table.values() if k["tunable"]]
    assert {"GASNET_AM_CREDITS_PP", "GASNET_UDP_COALESCE", "GASNET_BARRIER"} <= \
        {k["name"] for k in tunable}
    assert not table["GASNET_VERBOSEENV"]["tunable"] and table["GASNET_VERBOSEENV"]["sweep"] is None
    for k in tunable:
        assert k["sweep"], k["name"]
        for value in k["sweep"]:
            native.check(k["name"], value)  # raises on a value the runtime would refuse
    assert table["GASNET_AM_CREDITS_SLACK"]["constraint"] == "<=GASNET_AM_CREDITS_PP"
