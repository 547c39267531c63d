"""Fixtures that run real jobs through gasnetrun, in the optimized and the sanitizer build,
and check after every test that no rank process and no /dev/shm object was left behind."""
from __future__ import annotations

import contextlib
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
    on (an ofi provider, an MPI), and whether it reaches other hosts."""
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
           Target("ofi", "tcp"), Target("ofi", "udp")]
# The mpi conduit on Open MPI and MPICH: the job suite runs on both (optimized build, one case
# of each test function: the cases' paths through the core are smp's and udp's), besides its
# own tests (test_mpi.py: interoperability, launchers, exits, crashes, Ctrl-C, namespace hosts).
MPI_TARGETS = [Target("mpi", "openmpi"), Target("mpi", "mpich")]
# What an ofi flavour means: the libfabric provider an ofi job runs on.
OFI_PROVIDERS = {"tcp": "tcp;ofi_rxm", "udp": "udp;ofi_rxd", "shm": "shm"}
CONDUITS = list(dict.fromkeys(t.conduit for t in TARGETS + MPI_TARGETS))
# The matrix: every target in the optimized build; one flavour per conduit under sanitizers.
MATRIX = [("opt", t) for t in TARGETS + MPI_TARGETS] + \
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
        """What the conduit needs here: ibv runs on fakeverbs (this machine has no HCA), ofi on
        the provider its flavour names; mpi jobs run through the mpi spawner (gasnetrun chooses
        it: the library has no other) under their flavour's MPI launcher."""
        if self.conduit == "ibv":
            return fakeverbs_env(self.path)
        if self.conduit == "ofi":
            return {"GASNET_OFI_PROVIDER": OFI_PROVIDERS[self.flavour or "tcp"]}
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


# The pytest-xdist worker this process is (gw0, gw1...), or None in a plain pytest run. Jobs
# inherit the variable: gasnetrun hands its whole environment to every rank, on every host.
WORKER = os.environ.get("PYTEST_XDIST_WORKER")


def started_by(pid: str, worker: str) -> bool:
    """Whether process pid carries worker's mark in its environment."""
    try:
        environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    except OSError:
        return False
    return f"PYTEST_XDIST_WORKER={worker}".encode() in environ


def rank_processes(worker: str | None = WORKER) -> list[str]:
    """Processes running any program from a build tree (none may outlive its job). Under
    pytest-xdist, only the worker's own: the other workers' jobs run beside it. (A rank that
    lost the mark, as one a bare mpirun starts on another host, is found by the controller's
    check after every worker is done: rank_processes(None).)"""
    found = []
    markers = [str(p) for p in BUILDS.values()]
    for cmdline in glob.glob("/proc/[0-9]*/cmdline"):
        try:
            text = Path(cmdline).read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        pid = cmdline.split('/')[2]
        if any(re.search(re.escape(m) + r"/\w+/(tests|examples|bench)/", text)
               for m in markers) and "pytest" not in text \
                and (worker is None or started_by(pid, worker)):
            found.append(f"{pid}: {text.strip()}")
    return found


def shm_objects() -> list[str]:
    """Our objects, and the regions of libfabric's shm provider (the ofi conduit names them
    <pid>:gasnet-<tag>; libfabric's own default is <pid>:<n>:<n>), which the ofi conduit
    unlinks at start-up."""
    regions = [path for path in glob.glob("/dev/shm/[0-9]*:*")
               if re.fullmatch(r"\d+:(\d+:\d+|gasnet-[0-9a-f]{16})", Path(path).name)]
    return glob.glob("/dev/shm/gasnet-*") + regions


def mapped_shm() -> set[str]:
    """/dev/shm paths some live process maps: a running job's (this test's, or another
    worktree's or pytest worker's job on the same machine), not a leftover."""
    mapped: set[str] = set()
    for maps in glob.glob("/proc/[0-9]*/maps"):
        try:
            text = Path(maps).read_text(errors="replace")
        except OSError:
            continue
        for line in text.splitlines():
            at = line.find("/dev/shm/")
            if at >= 0:
                mapped.add(line[at:].removesuffix(" (deleted)"))
    return mapped


def shm_leftovers() -> list[str]:
    """Objects no live process maps: nobody will unlink them. Objects a live process maps belong
    to a job still running (if it is one of this test's ranks, rank_processes names it), so
    concurrent test runs on one machine do not see each other's live objects as leftovers."""
    found = shm_objects()
    if not found:
        return []
    mapped = mapped_shm()
    return [path for path in found if path not in mapped]


def wait_for_nothing_left(seconds: float = 3.0,
                          worker: str | None = WORKER) -> tuple[list[str], list[str]]:
    deadline = time.monotonic() + seconds
    while True:
        procs, shm = rank_processes(worker), shm_leftovers()
        if (not procs and not shm) or time.monotonic() > deadline:
            return procs, shm
        time.sleep(0.05)


@pytest.fixture(autouse=True)
def nothing_left_behind():
    # An object may be unmapped for an instant while its job creates or removes it: poll.
    before = wait_for_nothing_left()[1]
    assert not before, f"/dev/shm has GASNet objects before the test: {before}"
    yield
    procs, shm = wait_for_nothing_left()
    for path in shm:  # leave the next test a clean slate, but fail this one
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
    assert not procs, f"rank processes outlived their job: {procs}"
    assert not shm, f"/dev/shm objects outlived their job: {shm}"


# The bytecode files under the install prefix right after `scons install`, before any test ran
# the installed tools (which could write their own).
INSTALL_BYTECODE: set[Path] = set()


@pytest.fixture(scope="session")
def install_home(tmp_path_factory) -> Path:
    """A home directory whose gasnet/ is `scons install prefix=$HOME/gasnet` of this tree, as
    README's first job makes it: one install per session, shared by test_install.py and
    test_readme.py. It builds in build/, whose programs and libraries do not depend on the
    prefix: only the install's own copies of the few sources that name the prefix (SConstruct:
    PLACED_SOURCES) compile, into build/installed, so every other test's files stay as they
    are."""
    home = tmp_path_factory.mktemp("home")
    proc = subprocess.run(["scons", "-Q", f"-j{os.cpu_count() or 2}", f"prefix={home / 'gasnet'}",
                           "install"], cwd=ROOT, capture_output=True, text=True, timeout=1800)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr
    INSTALL_BYTECODE.update((home / "gasnet").rglob("*.pyc"))
    return home


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


# ---- tiers and the cases that apply ------------------------------------------------------------
MARKERS = {
    "quick": "the quick tier (bash test.sh quick): unit tests and one job per feature on the "
             "optimized smp build; set by this file, not by tests",
    "timing": "asserts how long something took, scaled from a calibration job of the same run; "
              "never in the quick tier (select with -m timing)",
    "slow": "a long scenario (many ranks, heavy loss, a tuner sweep, a scratch build)",
    "cluster": "needs network-namespace hosts or the test Slurm (root)",
    "applies(predicate)": "collect a parametrized case only where predicate(variant=, conduit=, "
                          "flavour=, **params) is true",
    "every_conduit": "a one-supernode (PSHM) case that still means something on network "
                     "conduits (their start-up, exit or idle paths)",
    "conduit(name)": "the conduit a test's jobs run on when no build parameter says (a module "
                     "of one conduit's tests): only smp's are in the quick tier",
}


# Fixtures that build network-namespace hosts, a lossy namespace or the test Slurm.
CLUSTER_FIXTURES = {"cluster", "lossy_net", "slurm", "slurm_hosts"}


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
        case.update(variant=variant, conduit=target.conduit, flavour=target.flavour,
                    network=target.network)
    elif "variant_build" in params:
        case.update(variant=params["variant_build"], conduit="smp", flavour="", network=False)
    elif "udp_build" in params:
        case.update(variant=params["udp_build"], conduit="udp", flavour="", network=True)
    return case


def _applies(item: pytest.Item, case: dict[str, object]) -> bool:
    # Ranks that all share one supernode never reach a network conduit: that path is PSHM's,
    # the same on every conduit, and smp runs it.
    if case.get("network") and "maxsize" in case and case["maxsize"] is None \
            and item.get_closest_marker("every_conduit") is None:
        return False
    marker = item.get_closest_marker("applies")
    if marker is not None:
        args = {"variant": "opt", "conduit": "smp", "flavour": "", **case}
        args.pop("network", None)
        return bool(marker.args[0](**args))
    return True


def _sampled(case: dict[str, object]) -> bool:
    """Targets that run one case of each test function, not every parameter: the sanitizer
    build of the conduits whose transport is a library's (ibv on fakeverbs, ofi), the
    optimized build of a conduit's other flavours (ofi on rxd; its code is ofi-tcp's), and the
    mpi conduit (each job starts an MPI launcher). The parameters' paths through the shared
    core are smp's and udp's, which run every case in both builds. GASNET_TEST_FULL_MATRIX=1
    runs every case everywhere."""
    conduit, flavour = case.get("conduit"), case.get("flavour")
    if conduit is None:
        return False
    if conduit == "mpi":
        return True
    if case.get("variant") == "debug":
        return conduit not in ("smp", "udp")
    main = next(t.flavour for t in TARGETS if t.conduit == conduit) \
        if any(t.conduit == conduit for t in TARGETS) else flavour
    return flavour != main


def xdist_group(item: pytest.Item, case: dict[str, object]) -> str | None:
    """The pytest-xdist group (bash test.sh runs --dist loadgroup: a group's tests run on one
    worker) of tests that share something one machine has once: the test Slurm (fixed ports,
    one munge daemon), the source tree's scons state, or a module's network-namespace
    cluster (built once per module, not once per worker)."""
    fixtures = set(getattr(item, "fixturenames", ()))
    if fixtures & {"slurm", "slurm_hosts"} or getattr(case.get("runner"), "slurm", False):
        return "slurm"
    if "install_home" in fixtures or item.nodeid.startswith("tests/test_conduit_template.py"):
        return "scons"
    if fixtures & CLUSTER_FIXTURES:
        return item.nodeid.split("::")[0]
    return None


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist reads the groups this sets
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Only the cases that apply are collected (and on sampled targets, one per test
    function); the quick tier gets the unit tests and the first case of every job test on the
    optimized smp build."""
    kept, dropped, first, sampled = [], [], set(), set()
    full = os.environ.get("GASNET_TEST_FULL_MATRIX") == "1"
    for item in items:
        case = _case(item)
        if not _applies(item, case):
            dropped.append(item)  # reported as deselected: not a test of anything
            continue
        if not full and _sampled(case):
            key = (item.nodeid.split("::")[0], getattr(item, "originalname", item.name),
                   case.get("variant"), case.get("conduit"), case.get("flavour"))
            if key in sampled:
                dropped.append(item)
                continue
            sampled.add(key)
        kept.append(item)
        if CLUSTER_FIXTURES & set(getattr(item, "fixturenames", ())) \
                or getattr(case.get("runner"), "slurm", False):
            item.add_marker(pytest.mark.cluster)
        group = xdist_group(item, case)
        if group:
            item.add_marker(pytest.mark.xdist_group(group))
        if any(item.get_closest_marker(m) for m in ("timing", "slow", "cluster")):
            continue
        marker = item.get_closest_marker("conduit")
        conduit = case.get("conduit") or (marker.args[0] if marker else "smp")
        if case.get("variant", "opt") != "opt" or conduit != "smp":
            continue
        function = (item.nodeid.split("::")[0], getattr(item, "originalname", item.name))
        if function in first:
            continue
        first.add(function)
        item.add_marker(pytest.mark.quick)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
    items[:] = kept


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Under pytest-xdist, each test checks only its own worker's processes; once every worker
    is done the controller checks the whole machine, so that a rank that lost its worker's
    mark (and with it the per-test check) still fails the run."""
    if WORKER is not None or not getattr(session.config.option, "numprocesses", None):
        return
    procs, shm = wait_for_nothing_left(worker=None)
    if procs or shm:
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter.write_line(f"left behind after every test: processes {procs}, "
                                f"/dev/shm objects {shm}", red=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


@pytest.fixture(scope="module")
def lossy_net():
    """A network namespace that drops a share of UDP packets (tests/lossynet.py)."""
    import shutil
    from lossynet import LossyNet
    if os.geteuid() != 0:
        pytest.skip("network namespaces and nftables need root")
    if not shutil.which("nft") or not shutil.which("ip"):
        pytest.skip("nftables (nft) and iproute2 (ip) are needed")
    net = LossyNet()
    yield net
    net.close()
