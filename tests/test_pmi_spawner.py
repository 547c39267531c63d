"""The pmi spawner under Open MPI's mpirun (a PMIx server): the same jobs, exit codes and
interruptions as under the local spawner. Skipped where Open MPI or PMIx is not installed."""
from __future__ import annotations

import shutil
import signal
import subprocess
import time

import pytest

from conftest import Build, built, job_env, wait_for_nothing_left

# mpirun as root, and more ranks than this machine's cores, need Open MPI's consent.
OPENMPI = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
           "OMPI_MCA_rmaps_base_oversubscribe": "1"}


def pmi_build(variant: str, conduit: str) -> Build:
    if not shutil.which("mpirun"):
        pytest.skip("Open MPI's mpirun is not installed (apt-get install openmpi-bin)")
    build = built(variant, conduit)
    info = subprocess.run([build.gasnetrun, "--info", "--json"], capture_output=True,
                          text=True).stdout
    if '"pmi"' not in info:
        pytest.skip("this build has no pmi spawner (PMIx not found: apt-get install libpmix-dev)")
    return build


@pytest.fixture(params=["smp", "udp"])
def pmi_opt(request) -> Build:
    return pmi_build("opt", request.param)


def run(build: Build, args: list[str], env: dict[str, str] | None = None,
        timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([build.gasnetrun, "-spawner=pmi", *args],
                          env=job_env({**OPENMPI, **(env or {})}), capture_output=True,
                          text=True, timeout=timeout, stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("program", ["am_test", "rma_test", "barrier_test"])
def test_jobs_run_under_openmpi(pmi_opt, program):
    result = run(pmi_opt, ["-n", "4", pmi_opt.test_program(program)])
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.count(f"{program}: rank") == 4, result.stdout


def test_sanitizer_build_under_openmpi():
    build = pmi_build("debug", "udp")
    result = run(build, ["-n", "3", build.test_program("am_test")])
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.count("am_test: rank") == 3


@pytest.mark.parametrize("args,code", [
    (["collective", "0"], 0), (["collective", "3"], 3), (["one", "1", "7"], 7),
    (["return"], 0), (["signal", "2", str(int(signal.SIGKILL))], 128 + int(signal.SIGKILL)),
    (["before-attach", "5"], 5),
])
def test_exit_codes_as_under_the_local_spawner(args, code):
    build = pmi_build("opt", "udp")
    result = run(build, ["-n", "4", build.test_program("exit_test"), *args])
    assert result.returncode == code, result.stderr[-3000:]
    local = build.run(["-n", "4", build.test_program("exit_test"), *args])
    assert local.returncode == code, local.describe()


def start_hang() -> tuple[Build, subprocess.Popen]:
    build = pmi_build("opt", "udp")
    job = subprocess.Popen([build.gasnetrun, "-spawner=pmi", "-n", "4",
                            build.test_program("exit_test"), "hang"],
                           env=job_env(OPENMPI), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True, stdin=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    assert job.stdout is not None
    ready = 0
    while ready < 4:  # ready lines come once every rank has attached
        assert time.monotonic() < deadline, "the ranks did not start"
        line = job.stdout.readline()
        assert line, "the job ended early"
        ready += line.startswith("ready rank")
    return build, job


def test_ctrl_c_ends_the_job_with_130():
    _, job = start_hang()
    job.send_signal(signal.SIGINT)
    _, err = job.communicate(timeout=60)
    assert job.returncode == 128 + signal.SIGINT, err


def test_kill_9_of_gasnetrun_leaves_nothing():
    _, job = start_hang()
    job.kill()
    job.communicate(timeout=30)
    procs, shm = wait_for_nothing_left(15)
    assert not procs and not shm, (procs, shm)


@pytest.mark.parametrize("template,message", [
    ("mpirun -np 4", "must contain %N"),
    ("mpirun 'unclosed %N %C", "is not a valid command line"),
])
def test_bad_launch_template_is_a_usage_error(template, message):
    build = pmi_build("opt", "smp")
    result = run(build, ["-n", "2", build.program("examples", "hello_ring")],
                 env={"PMIRUN_CMD": template})
    assert result.returncode == 2, result.stderr
    assert f"PMIRUN_CMD='{template}'" in result.stderr and message in result.stderr
    assert "Traceback" not in result.stderr


def test_inside_a_slurm_allocation_pmi_is_chosen():
    """SLURM_JOB_ID makes pmi the spawner with no option given (here the template names
    mpirun: this machine runs no Slurm controller in this test)."""
    build = pmi_build("opt", "smp")
    result = subprocess.run([build.gasnetrun, "-v", "-n", "2",
                             build.program("examples", "hello_ring")],
                            env=job_env({**OPENMPI, "SLURM_JOB_ID": "4242",
                                         "PMIRUN_CMD": "mpirun -np %N %C"}),
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert "spawner pmi: inside Slurm allocation 4242" in result.stderr
    assert "launch command: mpirun -np 2 " in result.stderr
    assert result.stdout.count("hello from") == 2
