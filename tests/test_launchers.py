"""The same job suite through every spawner and site launcher: local; pmi under Open MPI's
mpirun (PMIx), MPICH's Hydra (PMI-1 over PMI_FD) and Slurm's srun (PMIx and PMI-2, inside an
allocation of a real single-host Slurm); mpi under Open MPI, MPICH and srun. AM, RMA and
barrier jobs, every exit case, Ctrl-C and kill -9 of gasnetrun: identical results, except
where a launcher imposes its own (Hydra reports a rank killed by signal N as exit code N).
Skipped with a reason where a launcher is not installed."""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from conftest import Build, built, job_env, wait_for_nothing_left
from slurmcluster import Slurm, why_not_available as slurm_missing

OPENMPI = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
           "OMPI_MCA_rmaps_base_oversubscribe": "1"}


@dataclass(frozen=True)
class Launcher:
    id: str
    spawner: str | None            # None: gasnetrun chooses (inside Slurm: pmi via srun)
    env: dict[str, str] = field(default_factory=dict)
    needs: tuple[str, ...] = ()    # executables
    slurm: bool = False            # runs inside a Slurm allocation
    killed_code: int = 128 + 9     # the job's code when a rank is SIGKILLed


LAUNCHERS = [
    Launcher("local", "local"),
    Launcher("pmi-openmpi", "pmi", OPENMPI, ("mpirun",)),
    Launcher("pmi-hydra", "pmi", {"PMIRUN_CMD": "mpiexec.mpich -n %N %C"}, ("mpiexec.mpich",),
             killed_code=9),
    Launcher("pmi-srun-pmix", None, {}, (), slurm=True),
    Launcher("pmi-srun-pmi2", "pmi", {"PMIRUN_CMD": "srun --mpi=pmi2 -n %N %C"}, (),
             slurm=True),
    Launcher("mpi-openmpi", "mpi", OPENMPI, ("mpirun",)),
    Launcher("mpi-hydra", "mpi", {"MPIRUN_CMD": "mpiexec.mpich -n %N %C"}, ("mpiexec.mpich",),
             killed_code=9),
    Launcher("mpi-srun", "mpi", {"MPIRUN_CMD": "srun --mpi=pmix -n %N %C", **OPENMPI}, (),
             slurm=True),
]


@pytest.fixture(scope="module")
def slurm(tmp_path_factory):
    why = slurm_missing()
    if why:
        pytest.skip(why)
    s = Slurm(tmp_path_factory.mktemp("slurm"))
    try:
        s.up()
    except (subprocess.CalledProcessError, RuntimeError) as err:
        s.down()
        pytest.fail(f"cannot start the test Slurm: {err}")
    yield s
    s.down()


@dataclass
class Runner:
    launcher: Launcher
    build: Build
    slurm: Slurm | None

    def argv(self, nranks: int, program: str, *args: str) -> list[str]:
        spawner = [f"-spawner={self.launcher.spawner}"] if self.launcher.spawner else []
        cmd = [self.build.gasnetrun, *spawner, "-n", str(nranks),
               self.build.test_program(program), *args]
        return self.slurm.salloc(nranks, cmd) if self.slurm else cmd

    def env(self) -> dict[str, str]:
        return job_env({**self.launcher.env, **(self.slurm.env if self.slurm else {})})

    def run(self, nranks: int, program: str, *args: str) -> subprocess.CompletedProcess:
        return subprocess.run(self.argv(nranks, program, *args), env=self.env(),
                              capture_output=True, text=True, timeout=120,
                              stdin=subprocess.DEVNULL)


def runner_for(launcher: Launcher, request, variant: str = "opt") -> Runner:
    for tool in launcher.needs:
        if not shutil.which(tool):
            pytest.skip(f"{tool} is not installed")
    build = built(variant, "udp")
    info = subprocess.run([build.gasnetrun, "--info", "--json"], capture_output=True,
                          text=True).stdout
    if launcher.spawner and f'"{launcher.spawner}"' not in info:
        pytest.skip(f"this build has no {launcher.spawner} spawner")
    if launcher.id.startswith("mpi") and not (build.path / "lib").glob("libgasnet-mpi-*.so"):
        pytest.skip("this build has no MPI plugin")
    slurm = request.getfixturevalue("slurm") if launcher.slurm else None
    return Runner(launcher, build, slurm)


@pytest.fixture(params=LAUNCHERS, ids=lambda launcher: launcher.id)
def runner(request) -> Runner:
    return runner_for(request.param, request)


@pytest.mark.parametrize("program", ["am_test", "rma_test", "barrier_test"])
def test_jobs_and_their_output(runner, program):
    result = runner.run(4, program)
    assert result.returncode == 0, result.stderr[-3000:]
    for rank in range(4):  # every rank's output reaches the caller
        assert f"{program}: rank {rank} OK" in result.stdout, result.stdout


def test_stderr_passes_through(runner):
    result = runner.run(2, "exit_test", "no-such-mode")
    assert result.returncode != 0, result.stderr[-3000:]
    assert "usage: exit_test" in result.stderr


@pytest.mark.parametrize("args,code", [
    (["collective", "0"], 0), (["collective", "3"], 3), (["one", "1", "7"], 7),
    (["return"], 0), (["signal", "2", str(int(signal.SIGKILL))], None),
    (["before-attach", "5"], 5),
])
def test_exit_codes_as_under_the_local_spawner(runner, args, code):
    expected = runner.launcher.killed_code if code is None else code
    result = runner.run(4, "exit_test", *args)
    assert result.returncode == expected, result.stderr[-3000:]


def children(pid: int) -> list[int]:
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return []
    return [int(p) for p in text.split()]


def start_hang(runner: Runner) -> tuple[subprocess.Popen, int]:
    """A 4-rank job whose ranks wait forever, once every rank is ready; returns the process
    and gasnetrun's pid (salloc's child inside an allocation)."""
    job = subprocess.Popen(runner.argv(4, "exit_test", "hang"), env=runner.env(),
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           stdin=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    assert job.stdout is not None
    ready = 0
    while ready < 4:
        assert time.monotonic() < deadline, "the ranks did not start"
        line = job.stdout.readline()
        assert line, "the job ended early"
        ready += line.startswith("ready rank")
    if not runner.slurm:
        return job, job.pid
    for _ in range(100):
        kids = children(job.pid)
        if kids:
            return job, kids[0]
        time.sleep(0.05)
    raise AssertionError("gasnetrun is not salloc's child")


def test_ctrl_c_ends_the_job_with_130(runner):
    job, gasnetrun = start_hang(runner)
    os.kill(gasnetrun, signal.SIGINT)
    _, err = job.communicate(timeout=120)
    assert job.returncode == 128 + signal.SIGINT, err[-3000:]
    procs, shm = wait_for_nothing_left(15)
    assert not procs and not shm, (procs, shm)


def test_kill_9_of_gasnetrun_leaves_nothing(runner):
    job, gasnetrun = start_hang(runner)
    os.kill(gasnetrun, signal.SIGKILL)
    job.communicate(timeout=60)
    procs, shm = wait_for_nothing_left(20)
    assert not procs and not shm, (procs, shm)


@pytest.mark.parametrize("launcher", [l for l in LAUNCHERS if l.id in ("pmi-hydra",
                                                                       "pmi-srun-pmi2",
                                                                       "mpi-hydra")],
                         ids=lambda launcher: launcher.id)
def test_sanitizer_build(request, launcher):
    r = runner_for(launcher, request, "debug")
    result = r.run(3, "am_test")
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.count("am_test: rank") == 3


def test_a_16_rank_job_in_an_allocation_needs_no_option(request):
    """README's promise: inside salloc, `gasnetrun -n 16 ./app` runs through srun."""
    r = runner_for(LAUNCHERS[3], request)
    cmd = r.slurm.salloc(16, [r.build.gasnetrun, "-v", "-n", "16",  # type: ignore[union-attr]
                              r.build.program("examples", "hello_ring")])
    result = subprocess.run(cmd, env=r.env(), capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "spawner pmi: inside Slurm allocation" in result.stderr
    assert "launch command: srun --export=ALL --kill-on-bad-exit=1 --mpi=pmix -n 16" in \
        result.stderr
    assert result.stdout.count("hello from") == 16


@pytest.mark.parametrize("spawner,variable,command,code", [
    ("mpi", "MPIRUN_CMD", "false %N %C", 1),
    ("pmi", "PMIRUN_CMD", "sh -c 'echo no such partition: debug >&2; exit 5' %N %C", 5),
])
@pytest.mark.parametrize("front", ["compiled", "python"])
def test_a_launcher_that_fails_before_any_rank_is_named_with_its_code(
        opt_build, spawner, variable, command, code, front):
    """A site launcher that fails on its own (a wrong partition, a module not loaded) is the
    user's to fix: gasnetrun names the command, its template and its code; what the launcher
    said passes through. The compiled front and the Python gasnetrun say the same."""
    gasnetrun = ([opt_build.gasnetrun] if front == "compiled" else
                 [sys.executable, str(opt_build.path / "python" / "gasnetrun_entry.py")])
    result = subprocess.run([*gasnetrun, f"-spawner={spawner}", "-n", "2",
                             opt_build.test_program("am_test")], env=job_env({variable: command}),
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == code, (result.stdout, result.stderr)
    program = command.split()[0]
    assert (f"gasnetrun: {program} (from {variable}) ended the job with exit code {code}"
            in result.stderr), result.stderr
    if spawner == "pmi":
        assert "no such partition: debug" in result.stderr
    assert "OK" not in result.stdout
