"""Fixtures that run real jobs through gasnetrun, in the optimized and the sanitizer build,
and check after every test that no rank process and no /dev/shm object was left behind."""
from __future__ import annotations

import glob
import os
import re
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BUILDS = {"opt": ROOT / "build", "debug": ROOT / "build-debug"}
# The recorded node fakeverbs simulates for the ibv job suite: 2 sockets, 2 HCAs x 2 ports.
FAKE_NODE = ROOT / "tests" / "fixtures" / "nodes" / "dual-hca-2socket"
_fabric: Path | None = None


def fake_fabric(build_path: Path) -> Path:
    """The fake fabric of this test session (made on first use, removed at its end): what a
    subnet manager would be on a real InfiniBand network."""
    global _fabric
    if _fabric is None:
        path = Path(f"/tmp/gasnet-tests-fabric-{os.getpid()}")
        subprocess.run([str(build_path / "fakeverbs" / "fakeverbs-sm"), "up", str(path)],
                       check=True)
        _fabric = path
    return _fabric


def fakeverbs_env(build_path: Path, node: Path = FAKE_NODE) -> dict[str, str]:
    """What makes a program linked with libibverbs run on fakeverbs instead of an HCA; gasnetrun
    plans the node from the same recorded node (GASNET_PROBE_ROOT)."""
    lib = str(build_path / "fakeverbs")
    old = os.environ.get("LD_LIBRARY_PATH")
    return {"LD_LIBRARY_PATH": f"{lib}:{old}" if old else lib,
            "FAKEVERBS_SYSFS": str(node / "sys"),
            "FAKEVERBS_FABRIC": str(fake_fabric(build_path)),
            "GASNET_PROBE_ROOT": str(node)}


@pytest.fixture(scope="session", autouse=True)
def remove_fake_fabric():
    yield
    if _fabric is not None:
        _fabric.unlink(missing_ok=True)


@dataclass
class Result:
    returncode: int
    stdout: str
    stderr: str
    seconds: float

    def describe(self) -> str:
        return (f"exit {self.returncode} after {self.seconds:.2f}s\n--- stdout ---\n"
                f"{self.stdout[-3000:]}\n--- stderr ---\n{self.stderr[-3000:]}")


@dataclass(frozen=True)
class Target:
    """A conduit as the tests run it on this machine: its name, the flavour of what it runs
    on (an MPI), and whether it reaches other hosts."""
    conduit: str
    flavour: str = ""
    network: bool = True

    @property
    def id(self) -> str:
        return f"{self.conduit}-{self.flavour}" if self.flavour else self.conduit


# Every conduit the job suite runs on, in the order of the test ids; each conduit's first
# flavour is its main one (the sanitizer build runs that one only: flavours share the
# conduit's code).
TARGETS = [Target("smp", network=False), Target("udp"), Target("ibv"),
           Target("mpi", "openmpi"), Target("mpi", "mpich")]
CONDUITS = list(dict.fromkeys(t.conduit for t in TARGETS))
MATRIX = [("opt", t) for t in TARGETS] + \
    [("debug", t) for t in TARGETS if t == next(u for u in TARGETS if u.conduit == t.conduit)]
# Open MPI's mpirun as root, and more ranks than this machine's cores, need its consent.
OPENMPI = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
           "OMPI_MCA_rmaps_base_oversubscribe": "1"}
# What an mpi flavour means: the MPI launcher gasnetrun's mpi spawner runs (MPIRUN_CMD), and
# so the MPI the ranks load (mpirun is Open MPI's here; MPICH's Hydra is mpiexec.mpich).
# MPICH (ch4:ucx) keeps to UCX's shared-memory and TCP transports, as the mpi spawner has it
# for other conduits: with UCX's default ones here, ranks polling a receive when a peer dies
# of a signal crash with SIGSEGV (a plain MPI program does too), and Hydra reports that.
MPI_LAUNCH = {"openmpi": {**OPENMPI},
              "mpich": {"MPIRUN_CMD": "mpiexec.mpich -n %N %C", "UCX_TLS": "self,sm,tcp"}}
MPI_LAUNCHERS = {"openmpi": "mpirun", "mpich": "mpiexec.mpich"}


class Build:
    def __init__(self, name: str, path: Path, conduit: str = "smp", flavour: str = "") -> None:
        self.name = name
        self.path = path
        self.conduit = conduit
        self.flavour = flavour
        self.gasnetrun = str(path / "bin" / "gasnetrun")

    def conduit_env(self) -> dict[str, str]:
        """ibv jobs run on fakeverbs (this machine has no HCA); mpi jobs run through the mpi
        spawner (gasnetrun chooses it: the library has no other) under their flavour's MPI
        launcher."""
        if self.conduit == "ibv":
            return fakeverbs_env(self.path)
        if self.conduit == "mpi":
            return dict(MPI_LAUNCH[self.flavour or "openmpi"])
        return {}

    def died_of(self, sig: int) -> int:
        """The job's code when a rank is killed by signal sig: 128 + sig, as gasnetrun gives it,
        except where a launcher imposes its own (MPICH's Hydra reports the signal's number)."""
        return sig if self.flavour == "mpich" else 128 + sig

    def program(self, kind: str, name: str, mode: str = "seq") -> str:
        """A built program: kind is tests, bench or examples."""
        return str(self.path / self.conduit / kind / f"{name}-{mode}")

    def test_program(self, name: str, mode: str = "seq") -> str:
        return self.program("tests", name, mode)

    def run(self, args: list[str], env: dict[str, str] | None = None, timeout: float = 300,
            stdin: int | None = subprocess.DEVNULL) -> Result:
        full_env = job_env({**self.conduit_env(), **(env or {})})
        start = time.monotonic()
        proc = subprocess.run([self.gasnetrun, *args], env=full_env, capture_output=True,
                              text=True, timeout=timeout, stdin=stdin)
        return Result(proc.returncode, proc.stdout, proc.stderr, time.monotonic() - start)

    def job(self, nranks: int, program: str, *args: str, mode: str = "seq",
            env: dict[str, str] | None = None, timeout: float = 300) -> Result:
        return self.run(["-n", str(nranks), self.test_program(program, mode), *args], env,
                        timeout)


def job_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GASNET_", "GASNETRUN_"))}
    # Sanitizer builds: leaks are not what these jobs check, and ranks end with _exit anyway.
    env["ASAN_OPTIONS"] = "detect_leaks=0:abort_on_error=0"
    env["UBSAN_OPTIONS"] = "print_stacktrace=1:halt_on_error=1"
    env.update(extra or {})
    return env


def built(variant: str, conduit: str = "smp", flavour: str = "") -> Build:
    path = BUILDS[variant]
    if not (path / "bin" / "gasnetrun").exists():
        pytest.skip(f"{path} is not built (run: scons{' debug=1' if variant == 'debug' else ''})")
    if not (path / conduit).is_dir():
        pytest.skip(f"this build has no {conduit} conduit")
    if conduit == "mpi":
        launcher = MPI_LAUNCHERS[flavour or "openmpi"]
        if not shutil.which(launcher):
            pytest.skip(f"{launcher} is not installed (the {flavour} flavour's launcher)")
        if not (path / "lib" / f"libgasnet-mpi-{flavour or 'openmpi'}.so").exists():
            pytest.skip(f"this build has no {flavour} plugin")
    return Build(variant, path, conduit, flavour)


@pytest.fixture(params=MATRIX, scope="session", ids=lambda p: f"{p[0]}-{p[1].id}")
def build(request) -> Build:
    """Every conduit in the optimized build, and each conduit under the sanitizers: the
    runtime's behaviour must not depend on either."""
    variant, target = request.param
    return built(variant, target.conduit, target.flavour)


@pytest.fixture(params=list(BUILDS), scope="session")
def variant_build(request) -> Build:
    """Every variant, smp only: for what no conduit changes (knobs, the launcher)."""
    return built(request.param)


@pytest.fixture(params=list(BUILDS), scope="session")
def udp_build(request) -> Build:
    return built(request.param, "udp")


@pytest.fixture(scope="session")
def opt_build() -> Build:
    path = BUILDS["opt"]
    if not (path / "bin" / "gasnetrun").exists():
        pytest.skip(f"{path} is not built (run: scons)")
    return Build("opt", path)


def rank_processes() -> list[str]:
    """Processes running any program from a build tree (none may outlive its job)."""
    found = []
    markers = [str(p) for p in BUILDS.values()]
    for cmdline in glob.glob("/proc/[0-9]*/cmdline"):
        try:
            text = Path(cmdline).read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if any(re.search(re.escape(m) + r"/\w+/(tests|examples|bench)/", text)
               for m in markers) and "pytest" not in text:
            found.append(f"{cmdline.split('/')[2]}: {text.strip()}")
    return found


def shm_leftovers() -> list[str]:
    return glob.glob("/dev/shm/gasnet-*")


def wait_for_nothing_left(seconds: float = 3.0) -> tuple[list[str], list[str]]:
    deadline = time.monotonic() + seconds
    while True:
        procs, shm = rank_processes(), shm_leftovers()
        if (not procs and not shm) or time.monotonic() > deadline:
            return procs, shm
        time.sleep(0.05)


@pytest.fixture(autouse=True)
def nothing_left_behind():
    before = shm_leftovers()
    assert not before, f"/dev/shm has GASNet objects before the test: {before}"
    yield
    procs, shm = wait_for_nothing_left()
    for path in shm:  # leave the next test a clean slate, but fail this one
        os.unlink(path)
    assert not procs, f"rank processes outlived their job: {procs}"
    assert not shm, f"/dev/shm objects outlived their job: {shm}"


@pytest.fixture(scope="session")
def native(opt_build):
    """gasnetrun's CFFI binding, from the optimized build."""
    import sys
    sys.path.insert(0, str(opt_build.path / "python"))
    from gasnetrun import _native
    return _native


@pytest.fixture(scope="session")
def ibv_launch(native):
    """The ibv conduit's launcher half (csrc/conduits/ibv/launch), from the optimized build."""
    import importlib
    try:
        return importlib.import_module("gasnetrun.conduits.ibv")
    except ImportError:
        pytest.skip("this build has no ibv conduit (libibverbs-dev is not installed)")


# ---- the cases that apply -----------------------------------------------------------------
MARKERS = {
    "applies(predicate)": "collect a parametrized case only where predicate(variant=, conduit=, "
                          "flavour=, **params) is true",
}


def pytest_configure(config: pytest.Config) -> None:
    for name, doc in MARKERS.items():
        config.addinivalue_line("markers", f"{name}: {doc}")


def _case(item: pytest.Item) -> dict[str, object]:
    """A collected case's parameters, with the build's variant, conduit and flavour spelled
    out (variant-only fixtures are smp, udp_build is udp)."""
    callspec = getattr(item, "callspec", None)
    params: dict[str, object] = dict(callspec.params) if callspec else {}
    case: dict[str, object] = {k: v for k, v in params.items()
                               if k not in ("build", "variant_build", "udp_build")}
    if "build" in params:
        variant, target = params["build"]  # type: ignore[misc]
        case.update(variant=variant, conduit=target.conduit, flavour=target.flavour)
    elif "variant_build" in params:
        case.update(variant=params["variant_build"], conduit="smp", flavour="")
    elif "udp_build" in params:
        case.update(variant=params["udp_build"], conduit="udp", flavour="")
    return case


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Only the cases that apply are collected (the others are reported as deselected: they
    are not tests of anything)."""
    kept, dropped = [], []
    for item in items:
        marker = item.get_closest_marker("applies")
        if marker is not None:
            args = {"variant": "opt", "conduit": "smp", "flavour": "", **_case(item)}
            if not marker.args[0](**args):
                dropped.append(item)
                continue
        kept.append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
    items[:] = kept
