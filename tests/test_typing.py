"""The launcher's Python type-checks clean with the settings in pyproject.toml: the gasnetrun
package, gasnet-tune's (python/tuner), and each spawner's launch side (spawners/*/launch.py,
which imports gasnetrun.*)."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CONFIG = ROOT / "pyproject.toml"
MYPY = shutil.which("mypy")

pytestmark = pytest.mark.skipif(MYPY is None,
                                reason="mypy is not on PATH (Debian: apt install mypy)")


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh cache: no result of an earlier run (or another checkout) is reused."""
    return tmp_path_factory.mktemp("mypy_cache")


def mypy(cache_dir: Path, *targets: str) -> subprocess.CompletedProcess[str]:
    assert MYPY is not None
    return subprocess.run([MYPY, "--config-file", str(CONFIG), "--cache-dir", str(cache_dir),
                           "--no-color-output", "--no-error-summary", *targets],
                          cwd=ROOT, capture_output=True, text=True, timeout=60)


def test_gasnetrun_package_type_checks(cache_dir: Path) -> None:
    result = mypy(cache_dir, "python/gasnetrun")
    assert result.returncode == 0, f"mypy python/gasnetrun:\n{result.stdout}{result.stderr}"


def test_spawner_launch_sides_type_check(cache_dir: Path) -> None:
    launch_files = sorted(p.relative_to(ROOT).as_posix()
                          for p in ROOT.glob("spawners/*/launch.py"))
    assert {"spawners/local/launch.py", "spawners/ssh/launch.py"} <= set(launch_files)
    failures = []
    for path in launch_files:  # one invocation each: every file is a module named `launch`
        result = mypy(cache_dir, path)
        if result.returncode != 0:
            failures.append(f"mypy {path} (exit {result.returncode}):\n"
                            f"{result.stdout}{result.stderr}")
    assert not failures, "\n".join(failures)


def test_conduit_launcher_halves_type_check(cache_dir: Path) -> None:
    """Each conduit's launcher half (csrc/conduits/<name>/launch/, a package that imports
    gasnetrun.*), as the build installs it into gasnetrun.conduits."""
    halves = sorted(p.relative_to(ROOT).as_posix() for p in ROOT.glob("csrc/conduits/*/launch")
                    if (p / "__init__.py").exists())
    assert "csrc/conduits/ibv/launch" in halves
    failures = []
    for path in halves:
        result = mypy(cache_dir, path)
        if result.returncode != 0:
            failures.append(f"mypy {path} (exit {result.returncode}):\n"
                            f"{result.stdout}{result.stderr}")
    assert not failures, "\n".join(failures)


def test_tuner_package_type_checks(cache_dir: Path) -> None:
    result = mypy(cache_dir, "python/tuner")
    assert result.returncode == 0, f"mypy python/tuner:\n{result.stdout}{result.stderr}"


def test_docs_generator_type_checks(cache_dir: Path) -> None:
    """site_scons/gasnet_docs.py: the build and the docs tests share it."""
    result = mypy(cache_dir, "site_scons/gasnet_docs.py")
    assert result.returncode == 0, f"mypy site_scons/gasnet_docs.py:\n{result.stdout}{result.stderr}"


def test_gasnet_trace_package_type_checks(cache_dir: Path) -> None:
    result = mypy(cache_dir, "python/gasnet_trace")
    assert result.returncode == 0, f"mypy python/gasnet_trace:\n{result.stdout}{result.stderr}"
