"""gasnetrun's command line: spellings, dry runs, usage errors and what they say."""
import re
import stat
import subprocess

import pytest

from conftest import job_env


def test_gasnet_single_dash_spellings_run_the_job(opt_build):
    result = opt_build.run(["-np", "2", "-spawner=local", "--",
                            opt_build.test_program("exit_test"), "collective", "0"])
    assert result.returncode == 0, result.describe()
    assert result.stdout.count("leaving with 0") == 2


def test_double_dash_spellings_run_the_job(opt_build):
    result = opt_build.run(["--np", "3", "--spawner", "local",
                            opt_build.test_program("exit_test"), "collective", "0"])
    assert result.returncode == 0, result.describe()
    assert result.stdout.count("leaving with 0") == 3


def test_program_options_are_not_taken_for_launcher_options(opt_build):
    # "-n" after the program belongs to the program (exit_test rejects it: usage, code 2).
    result = opt_build.run(["-n", "1", opt_build.test_program("exit_test"), "-np", "5"])
    assert "usage: exit_test" in result.stderr
    assert result.returncode == 2


def test_dry_run_prints_each_rank_and_runs_nothing(opt_build, tmp_path):
    marker = tmp_path / "ran"
    script = tmp_path / "prog.sh"
    script.write_text(f"#!/bin/sh\ntouch {marker}\n")
    script.chmod(0o755)
    result = opt_build.run(["-n", "3", "-t", str(script), "arg 1"])
    assert result.returncode == 0, result.describe()
    lines = [l for l in result.stdout.splitlines() if l.startswith("rank ")]
    assert len(lines) == 3 and "GASNETRUN_RANK=2" in lines[2] and "'arg 1'" in lines[0]
    assert not marker.exists()


def test_verbose_reports_the_plan_and_each_rank(opt_build):
    result = opt_build.run(["-v", "-n", "2", opt_build.test_program("exit_test"), "return"])
    assert result.returncode == 0
    assert "2 ranks on 1 host(s) via spawner 'local'" in result.stderr
    assert re.search(r"rank 1 \(pid \d+, host \S+\) finished \(code 0\)", result.stderr)


@pytest.mark.parametrize("args,message", [
    (["-n", "0", "/bin/true"], "-n 0: the number of ranks must be 1..65535"),
    (["-n", "x", "/bin/true"], "invalid rank count: 'x' (expected a number 1..65535 in ASCII"),
    (["-n", "\u0663", "/bin/true"], "invalid rank count: '\u0663'"),
    (["-n", "\uff14", "/bin/true"], "invalid rank count: '\uff14'"),
    (["/bin/true"], "the number of ranks is required: -n N"),
    (["-n", "2"], "the program to run is required"),
    (["-n", "2", "--frobnicate", "/bin/true"], "unrecognized arguments"),
    (["-n", "2", "-spawner=carrier-pigeon", "/bin/true"],
     "spawner 'carrier-pigeon' (from -spawner) is not available; this build has: local"),
    (["-n", "2", "./no/such/program"], "program './no/such/program' does not exist"),
    (["-n", "2", "no-such-program-in-path"], "program 'no-such-program-in-path' was not found in PATH"),
    (["-n", "2", "-E", "GOOD,bad-name", "/bin/true"], "'bad-name' is not a variable name"),
], ids=["zero-ranks", "bad-count", "arabic-indic-digit", "fullwidth-digit", "no-count", "no-program", "unknown-option", "bad-spawner",
        "missing-program", "not-in-path", "bad-export"])
def test_bad_input_is_named_and_exits_2(opt_build, args, message):
    result = opt_build.run(args)
    assert result.returncode == 2, result.describe()
    assert message in result.stderr, result.describe()


def test_non_executable_program_is_refused(opt_build, tmp_path):
    prog = tmp_path / "data.txt"
    prog.write_text("not a program")
    prog.chmod(stat.S_IRUSR | stat.S_IWUSR)
    result = opt_build.run(["-n", "2", str(prog)])
    assert result.returncode == 2
    assert f"program '{prog}' is not an executable file" in result.stderr


def test_output_and_exit_code_of_ranks_are_forwarded(opt_build, tmp_path):
    script = tmp_path / "rank.sh"
    script.write_text('#!/bin/sh\necho "out $GASNETRUN_RANK"\necho "err $GASNETRUN_RANK" >&2\n'
                      'exit $((GASNETRUN_RANK + 3))\n')
    script.chmod(0o755)
    result = opt_build.run(["-n", "2", str(script)])
    assert sorted(result.stdout.split("\n")[:2]) == ["out 0", "out 1"]
    assert "err 0" in result.stderr and "err 1" in result.stderr
    assert result.returncode in (3, 4)  # the first rank to end with a non-zero code


def test_exported_variables_reach_every_rank(opt_build, tmp_path):
    script = tmp_path / "env.sh"
    script.write_text('#!/bin/sh\necho "rank $GASNETRUN_RANK sees $MY_SETTING"\n')
    script.chmod(0o755)
    proc = subprocess.run([opt_build.gasnetrun, "-n", "2", "-E", "MY_SETTING", str(script)],
                          env=job_env({"MY_SETTING": "42"}), capture_output=True,
                          text=True, timeout=30)
    assert proc.returncode == 0
    assert "rank 0 sees 42" in proc.stdout and "rank 1 sees 42" in proc.stdout


def test_rank_zero_reads_piped_standard_input(opt_build, tmp_path):
    script = tmp_path / "cat.sh"
    script.write_text('#!/bin/sh\necho "rank $GASNETRUN_RANK read: $(cat)"\n')
    script.chmod(0o755)
    proc = subprocess.run([opt_build.gasnetrun, "-n", "2", str(script)], input="hello",
                          env=job_env(), capture_output=True, text=True, timeout=30)
    assert "rank 0 read: hello" in proc.stdout and "rank 1 read: \n" in proc.stdout


def test_dry_run_as_json_describes_every_rank_and_hides_the_cookie(opt_build):
    import json
    result = opt_build.run(["-t", "--json", "-n", "3", "-E", "HOME",
                            opt_build.test_program("exit_test"), "return"])
    assert result.returncode == 0, result.describe()
    plan = json.loads(result.stdout)
    assert plan["spawner"] == "local" and plan["nranks"] == 3 and plan["exported"] == ["HOME"]
    assert [r["rank"] for r in plan["ranks"]] == [0, 1, 2]
    assert all(r["env"]["GASNETRUN_COOKIE"] == "<cookie>" for r in plan["ranks"])
    assert sum(len(h["ranks"]) for h in plan["hosts"]) == 3


# ---- the bootstrap carries its stated maximum through every spawner -------------------------
def test_bootstrap_exchange_carries_blob_max_through_the_local_spawner(build):
    result = build.job(3, "bootstrap_test")
    assert result.returncode == 0 and result.stdout.count("OK") == 3, result.describe()


def test_bootstrap_exchange_carries_blob_max_through_the_fork_spawner(variant_build):
    proc = subprocess.run([variant_build.test_program("bootstrap_test")],
                          env=job_env({"GASNET_PSHM_NODES": "3"}), capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0 and proc.stdout.count("OK") == 3, proc.stdout + proc.stderr


def test_bootstrap_exchange_beyond_blob_max_is_refused(variant_build):
    result = variant_build.job(2, "bootstrap_test", "too-big")
    assert result.returncode != 0, result.describe()
    assert "exceeds GASNETI_BOOTSTRAP_BLOB_MAX (1024)" in result.stderr


# ---- host lists: the user's order, any separator GASNet takes (issue 38, items 7 and 8) ------
# TEST-NET addresses: never resolved and never reached (-t starts nothing), not in sorted order.
UNSORTED_HOSTS = ["192.0.2.3", "192.0.2.2", "192.0.2.1"]


def planned_hosts(args: list[str], env: dict[str, str] | None = None) -> list[str]:
    """The hosts a dry run of the ssh spawner places ranks on, in rank order."""
    import json
    from conftest import built
    udp = built("opt", "udp")
    result = udp.run(["-t", "--json", "-spawner=ssh", *args, "-n", "3", "/bin/true"], env=env)
    assert result.returncode == 0, result.describe()
    return [h["name"] for h in json.loads(result.stdout)["hosts"]]


def test_hosts_are_used_in_the_order_given():
    assert planned_hosts(["-H", ",".join(UNSORTED_HOSTS)]) == UNSORTED_HOSTS
    assert planned_hosts(["-H", UNSORTED_HOSTS[0], "-H", ",".join(UNSORTED_HOSTS[1:])]) == \
        UNSORTED_HOSTS


@pytest.mark.parametrize("separator", [" ", ",", "\n", " ,\n\t"],
                         ids=["space", "comma", "newline", "mixed"])
def test_spaces_commas_and_newlines_all_separate_hosts(separator):
    text = separator.join(UNSORTED_HOSTS)
    assert planned_hosts([], env={"GASNET_SSH_SERVERS": text}) == UNSORTED_HOSTS
    assert planned_hosts(["-H", text]) == UNSORTED_HOSTS


def test_a_host_list_with_an_unbalanced_bracket_is_refused(opt_build):
    result = opt_build.run(["-H", "h[1-4", "-n", "2", "/bin/true"])
    assert result.returncode == 2, result.describe()
    assert "-H 'h[1-4': unbalanced '['" in result.stderr, result.describe()


# ---- -N and --ppn without hosts (issue 38, item 14) -------------------------------------------
@pytest.mark.parametrize("args,message", [
    (["-N", "2"], "-N 2: only 1 host is known"),
    (["--ppn", "1"], "-n 2 does not fit --ppn 1 on 1 hosts"),
], ids=["nodes", "ppn"])
def test_nodes_and_ppn_that_one_host_cannot_meet_are_refused_without_hosts(opt_build, args,
                                                                            message):
    result = opt_build.run(["-n", "2", *args, "/bin/true"])
    assert result.returncode == 2, result.describe()
    assert message in result.stderr, result.describe()
    assert "without -H, --hostfile or a host variable" in result.stderr, result.describe()


def test_nodes_and_ppn_that_one_host_meets_apply_without_hosts(opt_build):
    result = opt_build.run(["-n", "2", "-N", "1", "--ppn", "2",
                            opt_build.test_program("exit_test"), "collective", "0"])
    assert result.returncode == 0, result.describe()
    assert result.stdout.count("leaving with 0") == 2


# ---- -t runs the real run's checks (issue 38, item 15) ----------------------------------------
def test_dry_run_refuses_what_the_real_run_refuses(opt_build):
    """65535 ranks do not fit in this host's shared memory: the real run refuses the job
    before anything starts, and so must -t (it exited 0)."""
    result = opt_build.run(["-t", "-n", "65535", opt_build.test_program("exit_test"), "return"])
    assert result.returncode == 2, result.describe()
    assert "the job was not started (it does not fit in shared memory)" in result.stderr, \
        result.describe()
    assert "rank 0 on" not in result.stdout


# ---- the rank's channel to its agent stays its own (issue 38, item 5) -------------------------
def test_ranks_remove_the_job_channel_from_their_environment_at_init(opt_build):
    """A program a rank starts (system()) must not find the job's socket, cookie or rank and
    announce itself as a rank of the job."""
    names = ["GASNETRUN_SOCKET", "GASNETRUN_COOKIE", "GASNETRUN_RANK", "GASNETRUN_SIZE",
             "GASNETRUN_JOBID"]
    result = opt_build.run(["-n", "2", opt_build.test_program("env_test"), *names])
    assert result.returncode == 0, result.describe()
    seen = re.findall(r"^env_test: rank (\d) host \S+ cwd \S+ (\w+)=(.*)$", result.stdout, re.M)
    assert len(seen) == 2 * len(names), result.describe()
    assert all(value == "<unset>" for _, _, value in seen), seen


# ---- a closed standard output ends a printing command quietly (issue 38, item 19) -------------
@pytest.mark.parametrize("args", [["--knobs", "--json"], ["--info", "--json"],
                                  ["--probe", "--json"], ["--help"],
                                  ["-t", "-n", "2", "/bin/true"]],
                         ids=["knobs", "info", "probe", "help", "dry-run"])
def test_a_closed_pipe_ends_printing_commands_quietly(opt_build, args):
    import os
    read_end, write_end = os.pipe()
    os.close(read_end)  # `| head -1` that already left: every write fails with EPIPE
    try:
        proc = subprocess.run([opt_build.gasnetrun, *args], stdout=write_end,
                              stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True,
                              env=job_env(), timeout=120)
    finally:
        os.close(write_end)
    assert "Traceback" not in proc.stderr and "BrokenPipeError" not in proc.stderr, proc.stderr
    assert proc.returncode == 128 + 13, proc.stderr  # the shell's code for SIGPIPE


# ---- slot counts (issue 38, item 18) ---------------------------------------------------------
def test_a_hostfile_where_only_some_hosts_give_slots_keeps_their_counts(tmp_path):
    """A host without a count is one slot; those with one keep theirs (all were ignored)."""
    import json
    from conftest import built
    hostfile = tmp_path / "hosts"
    hostfile.write_text(f"{UNSORTED_HOSTS[0]} slots=3\n{UNSORTED_HOSTS[1]}\n")
    result = built("opt", "udp").run(["-t", "--json", "-spawner=ssh", "--hostfile",
                                      str(hostfile), "-n", "4", "/bin/true"])
    assert result.returncode == 0, result.describe()
    placed = {h["name"]: h["ranks"] for h in json.loads(result.stdout)["hosts"]}
    assert placed == {UNSORTED_HOSTS[0]: [0, 1, 2], UNSORTED_HOSTS[1]: [3]}, placed
