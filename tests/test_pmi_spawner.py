"""The pmi spawner's launch side under Open MPI's mpirun: the command template, the choice
inside a Slurm allocation, the smp conduit and the sanitizer build (the job suite under every
launcher is test_launchers.py). Skipped where Open MPI is not installed."""
from __future__ import annotations

import shutil
import subprocess

import pytest

from conftest import Build, built, job_env

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


def run(build: Build, args: list[str], env: dict[str, str] | None = None,
        timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([build.gasnetrun, "-spawner=pmi", *args],
                          env=job_env({**OPENMPI, **(env or {})}), capture_output=True,
                          text=True, timeout=timeout, stdin=subprocess.DEVNULL)


def test_sanitizer_build_under_openmpi():
    build = pmi_build("debug", "udp")
    result = run(build, ["-n", "3", build.test_program("am_test")])
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.count("am_test: rank") == 3


def test_smp_jobs_under_openmpi():
    build = pmi_build("opt", "smp")
    result = run(build, ["-n", "4", build.test_program("rma_test")])
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.count("rma_test: rank") == 4


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
    assert "launcher: Open MPI" in result.stderr
    assert "launch command: mpirun -x " in result.stderr and " -np 2 " in result.stderr
    assert result.stdout.count("hello from") == 2


def test_launcher_is_asked_what_it_is_once_per_launcher_file(tmp_path):
    # The flavour comes from the launcher's --version, remembered in the user's cache per
    # launcher file: asked again when the file changes, or when the cache holds garbage.
    build = pmi_build("opt", "smp")
    real = shutil.which("mpirun")
    asked = tmp_path / "asked"
    launcher = tmp_path / "bin" / "mpirun"
    launcher.parent.mkdir()

    def write_launcher(extra: str = "") -> None:
        launcher.write_text(f'#!/bin/sh\n[ "$1" = --version ] && echo asked >> {asked}\n'
                            f'exec {real} "$@"\n{extra}')
        launcher.chmod(0o755)

    def job() -> None:
        result = run(build, ["-v", "-n", "2", build.program("examples", "hello_ring")],
                     env={"XDG_CACHE_HOME": str(tmp_path / "cache"),
                          "PMIRUN_CMD": f"{launcher} -np %N %C"})
        assert result.returncode == 0, result.stderr[-3000:]
        assert "launcher: Open MPI" in result.stderr, result.stderr[-3000:]

    def times_asked() -> int:
        return len(asked.read_text().splitlines()) if asked.exists() else 0

    write_launcher()
    job()
    job()
    assert times_asked() == 1
    cache = tmp_path / "cache" / "gasnetrun" / "launchers.tsv"
    assert "openmpi" in cache.read_text()
    write_launcher("# upgraded\n")
    job()
    assert times_asked() == 2
    cache.write_text("garbage\n\0\t\n")
    job()
    assert times_asked() == 3
    job()
    assert times_asked() == 3
