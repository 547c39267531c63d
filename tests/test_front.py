"""gasnetrun's compiled front (csrc/gasnetrun) against the Python gasnetrun it stands in for.

Jobs a site launcher starts are run by the front when every check passes; for those, the
launcher must get exactly the command line and environment the Python gasnetrun gives it,
and signals, exit codes and a kill -9 of gasnetrun must end the same way. Everything else must
reach Python unchanged (its messages and codes). A fake launcher per flavour (Open MPI, Hydra,
srun, one of none) records what it got and who started it."""
from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import BUILDS, job_env

FAKE = r"""#!/bin/sh
case "$1" in --version) echo "{version}"; exit 0;; esac
rec="$FAKE_RECORD"
readlink /proc/$PPID/exe > "$rec.parent"
printf '%s\0' "$@" > "$rec.argv"
env -0 > "$rec.env"
ls /proc/$$/fd > "$rec.fds" 2>/dev/null
while read -r key value; do  # a builtin loop: no fork under way while the shell reads it
  case "$key" in SigIgn:|SigBlk:) echo "$key $value";; esac
done < /proc/$$/status > "$rec.sigs"
if [ "$FAKE_MODE" = hang ]; then
  trap 'echo INT >> "$rec.signals"' INT
  trap 'echo TERM >> "$rec.signals"; exit 143' TERM
  echo ready > "$rec.ready"
  while :; do sleep 0.05; done
fi
exit "${{FAKE_EXIT:-0}}"
"""
VERSIONS = {"mpirun": "mpirun (Open MPI) 4.1.4", "mpiexec.hydra": "HYDRA build details:",
            "srun": "slurm 22.05.8", "plainrun": "plainrun 1.0"}


def front(variant: str = "opt") -> list[str]:
    path = BUILDS[variant] / "bin" / "gasnetrun"
    if not path.exists():
        pytest.skip(f"{path} is not built")
    return [str(path)]


def python_gasnetrun(variant: str = "opt") -> list[str]:
    return [sys.executable, str(BUILDS[variant] / "python" / "gasnetrun_entry.py")]


def program(variant: str = "opt") -> str:
    path = BUILDS[variant] / "udp" / "examples" / "hello_ring-seq"
    if not path.exists():
        pytest.skip("this build has no udp conduit")
    return str(path)


@pytest.fixture
def fakes(tmp_path):
    """Fake launchers first in PATH, a private launcher cache, and where they record."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, version in VERSIONS.items():
        script = bin_dir / name
        script.write_text(FAKE.format(version=version))
        script.chmod(0o755)
    env = job_env({"PATH": f"{bin_dir}:{os.environ['PATH']}", "LANG": "C.UTF-8",
                   "XDG_CACHE_HOME": str(tmp_path / "cache"),
                   "FAKE_RECORD": str(tmp_path / "rec"),
                   # Open MPI told to oversubscribe, as a site with more ranks than cores sets
                   # it: without it, a job of more ranks than this host's cores goes to the
                   # Python launcher, which says how (test_the_slot_limit_hint_comes_from_python).
                   "OMPI_MCA_rmaps_base_oversubscribe": "1"})
    for name in ("SLURM_JOB_ID", "SLURM_JOB_NODELIST", "PMIRUN_CMD", "MPIRUN_CMD"):
        env.pop(name, None)
    return tmp_path, env


def run(cmd: list[str], env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(cmd + list(args), env=env, capture_output=True, text=True, timeout=60,
                          stdin=subprocess.DEVNULL)


def recorded(tmp_path: Path) -> tuple[list[str], dict[str, str], str]:
    rec = tmp_path / "rec"
    argv = rec.with_suffix(".argv").read_bytes().split(b"\0")[:-1]
    env = dict(e.split(b"=", 1) for e in rec.with_suffix(".env").read_bytes().split(b"\0") if e)
    parent = rec.with_suffix(".parent").read_text().strip()
    # What else the launcher inherited: descriptors, ignored and blocked signals.
    env[b"<fds>"] = rec.with_suffix(".fds").read_bytes()
    env[b"<signals>"] = rec.with_suffix(".sigs").read_bytes()
    for suffix in (".argv", ".env", ".parent", ".fds", ".sigs"):
        rec.with_suffix(suffix).unlink()
    return ([a.decode() for a in argv],
            {k.decode(errors="replace"): v.decode(errors="replace") for k, v in env.items()},
            parent)


CASES = {
    "openmpi-default": ({}, ["-spawner=pmi"], []),
    "openmpi-args": ({}, ["--spawner", "pmi"], ["a b", "-v", "--", "$HOME", "x=1"]),
    "hydra": ({"PMIRUN_CMD": "mpiexec.hydra -n %N %C"}, ["-np", "3", "-spawner=pmi"], ["arg"]),
    "slurm-allocation": ({"SLURM_JOB_ID": "42", "SLURM_JOB_NODELIST": "node[1-4],gpu7"}, [],
                         ["x"]),
    "slurm-pmi2": ({"PMIRUN_CMD": "srun --mpi=pmi2 -n %N %C"}, ["-spawner=pmi"], []),
    "template-gives-env": ({"PMIRUN_CMD": "mpirun -x FOO -np %N %C", "FOO": "1"},
                           ["-spawner=pmi"], []),
    "template-program-and-args": ({"PMIRUN_CMD": "  mpirun\t-np %N  --wrap=%P %A  "},
                                  ["-spawner=pmi"], ["one", "two"]),
    "srun-kill-given": ({"PMIRUN_CMD": "srun -K0 -n %N %C", "SLURM_JOB_ID": "7"}, [], []),
    "mpi-spawner": ({"MPIRUN_CMD": "mpiexec.hydra -n %N %C", "PMIRUN_CMD": "kept"},
                    ["-spawner=mpi"], []),
    "spawner-from-knob": ({"GASNET_SPAWNER": " PMI ", "GASNET_EXITTIMEOUT": "30"}, [], []),
    "unknown-launcher": ({"PMIRUN_CMD": "plainrun %N %C"}, ["-spawner=pmi"], []),
    "marked-already": ({"GASNETRUN_SPAWNER": "ssh", "OMPI_MCA_x": "1", "SSH_TTY": "/dev/pts/9"},
                       ["-spawner=pmi"], []),
    "double-dash": ({}, ["-n", "2", "-spawner=pmi", "--"], []),
    "program-own-double-dash": ({}, ["-spawner=pmi"], ["--", "x"]),
    "no-locale": ({"LANG": "", "LC_ALL": "", "LC_CTYPE": ""}, ["-spawner=pmi"], []),
    "slurm-node-ranges": ({"SLURM_JOB_ID": "9", "SLURM_JOB_NODELIST": "n[01-08,10]-ib,gpu7"},
                          [], []),
}


@pytest.mark.parametrize("case", list(CASES))
def test_the_front_gives_the_launcher_what_python_gives_it(fakes, case):
    tmp_path, env = fakes
    extra, options, args = CASES[case]
    env.update(extra)
    for name in [k for k, v in extra.items() if v == ""]:
        del env[name]  # "" in a case: unset
    if "-n" not in options and "-np" not in options:
        options = ["-n", "4"] + options
    argv = options + [program()] + args
    py = run(python_gasnetrun(), env, *argv)  # asks the launcher what it is, once
    assert py.returncode == 0, py.stderr
    py_argv, py_env, py_parent = recorded(tmp_path)
    fr = run(front(), env, *argv)
    assert fr.returncode == 0, fr.stderr
    fr_argv, fr_env, fr_parent = recorded(tmp_path)
    assert Path(fr_parent).name == "gasnetrun", f"the front did not run the job ({fr_parent})"
    assert "python" in Path(py_parent).name
    assert fr_argv == py_argv
    assert fr_env == py_env
    assert (fr.stdout, fr.stderr) == (py.stdout, py.stderr)


def test_the_slot_limit_hint_comes_from_python(fakes):
    """More ranks than cores under Open MPI, not told to oversubscribe: the front leaves the
    job to the Python launcher, which warns before the launch."""
    tmp_path, env = fakes
    del env["OMPI_MCA_rmaps_base_oversubscribe"]
    ranks = str((os.cpu_count() or 1) + 1)
    fr = run(front(), env, "-n", ranks, "-spawner=pmi", program())
    assert fr.returncode == 0, fr.stderr
    _, _, parent = recorded(tmp_path)
    assert "python" in Path(parent).name, parent
    assert "Open MPI's mpirun refuses more ranks than slots" in fr.stderr, fr.stderr


@pytest.mark.parametrize("where", ["outside-slurm", "inside-slurm"])
def test_an_mpi_conduit_program_goes_to_the_mpi_spawner_unasked_alike(fakes, where):
    """Its library has only the mpi spawner: both run it through MPIRUN_CMD, also where the
    environment suggests another (inside an allocation, pmi)."""
    tmp_path, env = fakes
    prog = BUILDS["opt"] / "mpi" / "examples" / "hello_ring-seq"
    if not prog.exists():
        pytest.skip("this build has no mpi conduit")
    env["MPIRUN_CMD"] = "mpiexec.hydra -n %N %C"
    if where == "inside-slurm":
        env.update({"SLURM_JOB_ID": "42", "SLURM_JOB_NODELIST": "node1"})
    argv = ["-n", "3", str(prog), "x"]
    py = run(python_gasnetrun(), env, *argv)
    assert py.returncode == 0, py.stderr
    py_argv, py_env, _ = recorded(tmp_path)
    fr = run(front(), env, *argv)
    assert fr.returncode == 0, fr.stderr
    fr_argv, fr_env, fr_parent = recorded(tmp_path)
    assert Path(fr_parent).name == "gasnetrun", f"the front did not run the job ({fr_parent})"
    assert fr_argv == py_argv and fr_argv[0] == "-genvlist", (fr_argv, py_argv)  # Hydra's
    assert fr_env == py_env and fr_env["GASNETRUN_SPAWNER"] == "mpi"


def test_a_relative_program_path_is_made_absolute_alike(fakes):
    tmp_path, env = fakes
    work = tmp_path / "work" / "sub"
    work.mkdir(parents=True)
    os.symlink(program(), tmp_path / "work" / "prog")
    argv = ["-n", "2", "-spawner=pmi", "./sub/.././/prog", "x"]
    py = subprocess.run(python_gasnetrun() + argv, env=env, cwd=tmp_path / "work", timeout=60)
    assert py.returncode == 0
    py_argv = recorded(tmp_path)[0]
    fr = subprocess.run(front() + argv, env=env, cwd=tmp_path / "work", timeout=60)
    assert fr.returncode == 0
    fr_argv, _, parent = recorded(tmp_path)
    assert Path(parent).name == "gasnetrun"
    assert fr_argv == py_argv and str(tmp_path / "work" / "prog") in fr_argv


def same_text(text: str) -> list[str]:
    """Output as two runs of one job can both give it: each job has its own id, and ranks
    print in any order."""
    return sorted(re.sub(r"\br[0-9]+x[0-9a-f]{6}\b", "<jobid>", text).splitlines())


def compare_runs(tmp_path: Path, env: dict[str, str], argv: list[str], **popen) -> None:
    """The same command through Python and through the front: the same code and output, and
    a launcher started with the same command line and environment (by whichever ran it)."""
    results = []
    for cmd in (python_gasnetrun(), front()):
        proc = subprocess.run(cmd + argv, env=env, capture_output=True, text=True, timeout=60,
                              **popen)
        launched = recorded(tmp_path)[:2] if (tmp_path / "rec.argv").exists() else None
        results.append((proc.returncode, same_text(proc.stdout), same_text(proc.stderr),
                        launched))
    assert results[0] == results[1]


@pytest.mark.parametrize("path", ["plain", "not-executable", "trailing-slash", "dot",
                                  "through-missing-dir", "percent-placeholders"])
def test_program_paths_are_judged_as_python_judges_them(fakes, path):
    tmp_path, env = fakes
    where = tmp_path / ("x%M%H" if path == "percent-placeholders" else "p")
    where.mkdir()
    shutil.copy(program(), where / "prog")
    if path == "not-executable":
        (where / "prog").chmod(0o644)
    given = {"trailing-slash": f"{where}/prog/", "dot": f"{where}/prog/.",
             "through-missing-dir": f"{where}/missing/../prog"}.get(path, f"{where}/prog")
    env["PMIRUN_CMD"] = "mpirun -np %N %P %A"
    compare_runs(tmp_path, env, ["-n", "2", "-spawner=pmi", given, "a"])


@pytest.mark.parametrize("nodelist", ["node[1-", "node[3-1]", "a,,b", "[]", "n]1[", "n[1-010]",
                                      "n[01-1]", "n[1,]", ",n1", "n[1-2]a[3-4]"])
def test_node_lists_python_would_refuse_go_to_python(fakes, nodelist):
    tmp_path, env = fakes
    env.update({"SLURM_JOB_ID": "5", "SLURM_JOB_NODELIST": nodelist})
    compare_runs(tmp_path, env, ["-n", "2", program()])


@pytest.mark.parametrize("blank", ["\u00a0", "\x1c", "\u2028 "])
def test_a_slurm_job_id_python_strips_to_nothing_means_no_allocation(fakes, blank):
    tmp_path, env = fakes
    env["SLURM_JOB_ID"] = blank
    run(python_gasnetrun(), env, "-n", "2", "-spawner=pmi", program())  # cache the flavour
    recorded(tmp_path)
    compare_runs(tmp_path, env, ["-n", "2", "-spawner=pmi", program()])


def test_an_ident_whose_spawner_list_does_not_fit_goes_to_python(fakes):
    tmp_path, env = fakes
    fake = tmp_path / "truncated"
    fake.write_text("#!/bin/sh\n# $GASNetIdent: conduit=udp spawners=" + "a" * 251 + ",pmiX $\n")
    fake.chmod(0o755)
    compare_runs(tmp_path, env, ["-n", "2", "-spawner=pmi", str(fake)])


def ignoring(*signums: int):
    def preexec() -> None:
        for signum in signums:
            signal.signal(signum, signal.SIG_IGN)
    return preexec


def test_signals_the_caller_ignores_are_not_passed_to_the_launcher(fakes):
    tmp_path, env = fakes
    run(python_gasnetrun(), env, "-n", "2", "-spawner=pmi", program())  # cache the flavour
    recorded(tmp_path)
    env["FAKE_EXIT"] = "3"
    compare_runs(tmp_path, env, ["-n", "2", "-spawner=pmi", program()],
                 preexec_fn=ignoring(signal.SIGINT, signal.SIGHUP, signal.SIGPIPE,
                                     signal.SIGCHLD))


def test_a_caller_with_stdin_and_stdout_closed_keeps_the_launchers_stderr(fakes):
    tmp_path, env = fakes
    run(python_gasnetrun(), env, "-n", "2", "-spawner=pmi", program())
    recorded(tmp_path)
    seen = []
    for cmd in (python_gasnetrun(), front()):
        script = (f"exec 0<&- 1>&-; exec {' '.join(cmd)} -n 2 -spawner=pmi {program()}")
        subprocess.run(["sh", "-c", script], env=env, timeout=60, stderr=subprocess.DEVNULL)
        seen.append(recorded(tmp_path)[1]["<fds>"].split())  # (1: the fake's own redirection)
        assert "2" in seen[-1] and "0" not in seen[-1], (cmd, seen[-1])
    assert seen[0] == seen[1]


@pytest.mark.skipif(not shutil.which("strace"), reason="strace is not installed")
def test_without_close_range_no_descriptor_leaks_into_the_launcher(fakes):
    tmp_path, env = fakes
    run(python_gasnetrun(), env, "-n", "2", "-spawner=pmi", program())
    recorded(tmp_path)
    script = (f"exec 7</etc/hostname; exec strace -f -o /dev/null -e inject=close_range:error="
              f"ENOSYS {front()[0]} -n 2 -spawner=pmi {program()}")
    subprocess.run(["sh", "-c", script], env=env, timeout=60, check=True)
    _, launched, parent = recorded(tmp_path)
    assert Path(parent).name == "gasnetrun"
    assert "7" not in launched["<fds>"].split()


# Each goes to Python: an option or setting only Python handles, or a problem Python names.
HANDED_OVER = {
    "verbose": (["-v"], {}),
    "dry-run": (["-t"], {}),
    "typo": ([], {"GASNET_EXITTIMOUT": "3"}),
    "bad-value": ([], {"GASNET_EXITTIMEOUT": "soon"}),
    "not-implemented": ([], {"GASNET_MALLOCFILE": "x"}),
    "local-spawner": (["-spawner=local"], {}),
    "spawner-not-built": (["-spawner=nope"], {}),
    "missing-launcher": ([], {"PMIRUN_CMD": "no-such-launcher -n %N %C"}),
    "bad-template": ([], {"PMIRUN_CMD": "mpirun -np 4 prog"}),
    "quoted-template": ([], {"PMIRUN_CMD": "mpirun '-np' %N %C"}),
    "hosts-template": ([], {"PMIRUN_CMD": "mpirun --host %H -np %N %C"}),
    "hostfile-variable": ([], {"GASNET_SSH_SERVERS": "h[1-2]"}),
}


@pytest.mark.parametrize("case", list(HANDED_OVER))
def test_what_the_front_does_not_run_reaches_python_unchanged(fakes, case):
    tmp_path, env = fakes
    options, extra = HANDED_OVER[case]
    env.update(extra)
    argv = ["-n", "2", "-spawner=nope" if case == "spawner-not-built" else "-spawner=pmi"]
    argv = [a for a in argv if not (case == "local-spawner" and a.startswith("-spawner"))]
    argv += options + [program()]
    py = run(python_gasnetrun(), env, *argv)
    rec_argv = tmp_path / "rec.argv"
    py_launched = rec_argv.exists() and (recorded(tmp_path)[2])
    fr = run(front(), env, *argv)
    fr_launched = rec_argv.exists() and (recorded(tmp_path)[2])
    assert fr.returncode == py.returncode
    assert same_text(fr.stdout) == same_text(py.stdout)
    assert same_text(fr.stderr) == same_text(py.stderr)
    if fr_launched:  # Python ran it (the front handed it over)
        assert "python" in Path(str(fr_launched)).name and py_launched


def test_an_unknown_option_and_no_program_are_python_usage_errors(fakes):
    _, env = fakes
    for argv in (["-n", "2", "--frobnicate", program()], ["-n", "2"], ["-n", "0", program()],
                 ["-n", "2", "-n", "3", program()], ["--help"]):
        py, fr = run(python_gasnetrun(), env, *argv), run(front(), env, *argv)
        assert fr.returncode == py.returncode
        assert (same_text(fr.stdout), same_text(fr.stderr)) == \
            (same_text(py.stdout), same_text(py.stderr))


@pytest.mark.parametrize("exit_code", [0, 3, 255])
def test_the_launchers_exit_code_is_the_jobs(fakes, exit_code):
    tmp_path, env = fakes
    env["FAKE_EXIT"] = str(exit_code)
    run(python_gasnetrun(), env, "-n", "2", "-spawner=pmi", program())
    fr = run(front(), env, "-n", "2", "-spawner=pmi", program())
    assert fr.returncode == exit_code
    assert Path(recorded(tmp_path)[2]).name == "gasnetrun"


@pytest.mark.parametrize("variable,spawner", [("PMIRUN_CMD", "pmi"), ("MPIRUN_CMD", "mpi")])
def test_open_mpi_is_told_to_pass_on_only_variables_its_environment_has(fakes, variable,
                                                                         spawner):
    """Open MPI warns `could not find environment variable` for each -x naming a variable
    missing from its environment: the template's own variable is left out of the launcher's
    environment, so no -x may name it (issue 38, item 10), from Python and the front alike."""
    tmp_path, env = fakes
    env[variable] = "mpirun -np %N %C"
    for cmd in (python_gasnetrun(), front()):  # Python's run also caches the flavour
        result = run(cmd, env, "-n", "2", f"-spawner={spawner}", program())
        assert result.returncode == 0, result.stderr
        argv, launched, _ = recorded(tmp_path)
        named = [argv[i + 1] for i, word in enumerate(argv[:-1]) if word == "-x"]
        assert named, argv
        assert [n for n in named if n not in launched] == [], (cmd, argv)


def start_hanging(cmd: list[str], env: dict[str, str], tmp_path: Path) -> subprocess.Popen:
    for suffix in (".ready", ".signals"):
        (tmp_path / f"rec{suffix}").unlink(missing_ok=True)
    job = subprocess.Popen(cmd + ["-n", "2", "-spawner=pmi", program()], env=env,
                           stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 30
    while not (tmp_path / "rec.ready").exists():
        assert time.monotonic() < deadline and job.poll() is None, "the launcher did not start"
        time.sleep(0.02)
    return job


def signals_seen(tmp_path: Path) -> list[str]:
    path = tmp_path / "rec.signals"
    return path.read_text().split() if path.exists() else []


@pytest.mark.parametrize("variant", ["opt", "debug"])
def test_ctrl_c_is_forwarded_then_the_launcher_is_ended_at_the_exit_timeout(fakes, variant):
    tmp_path, env = fakes
    env.update({"FAKE_MODE": "hang", "GASNET_EXITTIMEOUT": "1"})
    outcomes = []
    for cmd in (python_gasnetrun(variant), front(variant)):
        job = start_hanging(cmd, env, tmp_path)
        job.send_signal(signal.SIGINT)
        _, err = job.communicate(timeout=120)
        outcomes.append((job.returncode, signals_seen(tmp_path), err))
    assert outcomes[0] == outcomes[1]
    assert outcomes[1][:2] == (130, ["INT", "TERM"])
    assert "gasnetrun: received SIGINT: ending the job" in outcomes[1][2]


def test_a_second_ctrl_c_ends_the_launcher_at_once(fakes):
    tmp_path, env = fakes
    env.update({"FAKE_MODE": "hang", "GASNET_EXITTIMEOUT": "3600"})
    job = start_hanging(front(), env, tmp_path)
    job.send_signal(signal.SIGINT)
    deadline = time.monotonic() + 60  # the first one reached the launcher: then the second
    while signals_seen(tmp_path) != ["INT"]:
        assert time.monotonic() < deadline, f"the launcher got {signals_seen(tmp_path)}"
        time.sleep(0.02)
    job.send_signal(signal.SIGINT)
    job.communicate(timeout=120)  # long before GASNET_EXITTIMEOUT
    assert job.returncode == 130
    assert signals_seen(tmp_path) == ["INT", "TERM"]


def test_kill_9_of_gasnetrun_ends_its_launcher(fakes):
    tmp_path, env = fakes
    env["FAKE_MODE"] = "hang"
    for cmd in (python_gasnetrun(), front()):
        job = start_hanging(cmd, env, tmp_path)
        job.kill()
        job.communicate(timeout=10)
        deadline = time.monotonic() + 10
        while signals_seen(tmp_path) != ["TERM"]:
            assert time.monotonic() < deadline, f"{cmd}: the launcher got {signals_seen(tmp_path)}"
            time.sleep(0.05)


def test_the_application_signals_reach_the_launcher(fakes):
    tmp_path, env = fakes
    env["FAKE_MODE"] = "hang"
    job = start_hanging(front(), env, tmp_path)
    job.send_signal(signal.SIGUSR1)  # not trapped by the fake: it ends by it
    job.communicate(timeout=10)
    assert job.returncode == 128 + signal.SIGUSR1
