"""The mpi conduit on Open MPI and on MPICH: a hybrid client (MPI and AMs on every rank) that
starts MPI before gasnet_init, after it or never and ends it either way; the thread level's
rules; how its jobs start (gasnetrun picks the mpi spawner and refuses others; straight under
mpirun, mpiexec.hydra and srun; alone as one rank); a program whose MPI is not its launcher's;
a crashed rank and Ctrl-C; the raw MPI baselines of its benchmarks. (The job suite runs on it
too: conftest's MPI_TARGETS.)"""
from __future__ import annotations

import json
import os
import re
import signal
import subprocess

import pytest

from conftest import OPENMPI, Build, built, job_env, wait_for_nothing_left
from slurmcluster import Slurm, why_not_available as slurm_missing

FLAVOURS = ["openmpi", "mpich"]
NAMES = {"openmpi": "Open MPI", "mpich": "MPICH"}
# Every rank its own supernode: AMs between ranks travel over MPI, not PSHM.
NO_PSHM = {"GASNET_SUPERNODE_MAXSIZE": "1"}


@pytest.fixture(params=FLAVOURS)
def mpi(request) -> Build:
    return built("opt", "mpi", request.param)


def interop(build: Build, *args: str, nranks: int = 3, mode: str = "seq",
            env: dict[str, str] | None = None):
    return build.job(nranks, f"mpi_interop_test-{build.flavour}", *args, mode=mode,
                     env={**NO_PSHM, **(env or {})}, timeout=120)


# ---- a hybrid client -------------------------------------------------------------------------
ORDERS = [(start, end) for start in ("before", "after")
          for end in ("finalize-exit", "exit", "finalize-return", "return")] + \
    [("never", "exit"), ("never", "return")]


@pytest.mark.parametrize("start,end", ORDERS, ids=lambda v: v)
def test_mpi_and_ams_interleave_whoever_starts_and_ends_mpi(mpi, start, end):
    """The client's MPI messages (any source, any tag, on MPI_COMM_WORLD) and GASNet's AMs flow
    together on every rank; MPI_Init before or after gasnet_init (or never), MPI_Finalize
    before gasnet_exit or not at all: every rank succeeds and the launcher reports success."""
    result = interop(mpi, start, end)
    assert result.returncode == 0, result.describe()
    assert result.stdout.count("mpi_interop_test: rank") == 3, result.describe()


@pytest.mark.parametrize("start,end", [("before", "finalize-return"), ("after", "exit")])
def test_par_library_interleaves_too(mpi, start, end):
    result = interop(mpi, start, end, mode="par")
    assert result.returncode == 0, result.describe()
    assert result.stdout.count("provided SERIALIZED") == 3, result.describe()


@pytest.mark.parametrize("flavour", FLAVOURS)
def test_the_sanitizer_build_runs_the_hybrid_client(flavour):
    debug = built("debug", "mpi", flavour)
    result = interop(debug, "after", "finalize-exit", mode="par")
    assert result.returncode == 0, result.describe()
    assert result.stdout.count("mpi_interop_test: rank") == 3, result.describe()


def test_ranks_of_one_supernode_use_mpi_beside_pshm(mpi):
    result = mpi.job(4, f"mpi_interop_test-{mpi.flavour}", "after", "finalize-exit", timeout=120)
    assert result.returncode == 0, result.describe()
    assert result.stdout.count("mpi_interop_test: rank") == 4, result.describe()


# ---- thread levels ---------------------------------------------------------------------------
def test_a_level_below_the_one_asked_is_refused_naming_both(mpi):
    """The PAR library runs MPI at SERIALIZED; a client that started MPI at SINGLE first is
    refused before anything else happens."""
    result = interop(mpi, "before", "exit", "SINGLE", nranks=2, mode="par")
    assert result.returncode != 0, result.describe()
    assert (f"GASNET_MPI_THREAD is SERIALIZED (the PAR library's default), but the client "
            f"initialized {NAMES[mpi.flavour]} with MPI_THREAD_SINGLE before gasnet_init: call "
            "MPI_Init_thread asking MPI_THREAD_SERIALIZED or more") in result.stderr, \
        result.describe()


def test_par_library_refuses_a_level_below_serialized(mpi):
    result = mpi.job(2, "am_test", mode="par", env={**NO_PSHM, "GASNET_MPI_THREAD": "FUNNELED"},
                     timeout=120)
    assert result.returncode != 0, result.describe()
    assert ("mpi: GASNET_MPI_THREAD=FUNNELED, but this PAR library calls MPI from whichever "
            "thread is in GASNet: set SERIALIZED or MULTIPLE") in result.stderr, result.describe()


@pytest.mark.parametrize("setting,level", [(None, "SINGLE"), ("MULTIPLE", "MULTIPLE")])
def test_a_client_starting_mpi_after_gasnet_gets_the_level_mpi_runs_at(mpi, setting, level):
    env = {"GASNET_MPI_THREAD": setting} if setting else {}
    result = interop(mpi, "after", "exit", "SERIALIZED", env=env)
    assert result.returncode == 0, result.describe()
    assert result.stdout.count(f"provided {level})") == 3, result.describe()


def test_ranks_bound_to_a_core_each_still_spin_while_they_wait():
    """Open MPI's mpirun binds each of two ranks to a core of its own: each sees one CPU, but
    the host's two ranks have two, so GASNET_WAIT_MODE=auto spins (it yielded the CPU at every
    idle poll, which cost the AMShort round trip 2-4 us here)."""
    build = built("opt", "mpi", "openmpi")
    env = job_env({k: v for k, v in OPENMPI.items() if "oversubscribe" not in k})
    env["GASNET_VERBOSEENV"] = "1"
    proc = subprocess.run(["mpirun", "--bind-to", "core", "-np", "2",
                           build.program("examples", "hello_ring")], env=env,
                          capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    if "not enough slots" in proc.stderr:
        pytest.skip("this machine has fewer than two cores")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "GASNET_WAIT_MODE auto: spin (2 ranks on host" in proc.stderr, proc.stderr[-3000:]


# Two ranks on a host of two cores spin, each alone in its supernode: their blocking waits wait
# inside MPI_Wait (gasnetc_wait_block), where they do not look at the host's exit word. How the
# job ends must reach them as a message: before, a rank left waiting for a peer that returned
# from main never heard the conduit end it at GASNET_EXITTIMEOUT (the job hung).
@pytest.mark.parametrize("args,code,env", [
    (["return-one", "1"], 1, {"GASNET_EXITTIMEOUT": "2"}),
    (["one-waiting", "1", "6"], 6, {"GASNET_EXITTIMEOUT": "3600"})], ids=lambda v: (
        "-".join(v) if isinstance(v, list) else None))
def test_ranks_waiting_inside_mpi_hear_how_the_job_ends(mpi, args, code, env):
    result = mpi.job(2, "exit_test", *args, env={**NO_PSHM, **env}, timeout=120)
    assert result.returncode == code, result.describe()
    if args[0] == "return-one":
        assert re.search(r"rank 0 \(pid \d+, host \S+\) ended by the conduit after "
                         r"GASNET_EXITTIMEOUT", result.stderr), result.describe()


# ---- starting jobs ---------------------------------------------------------------------------
def test_gasnetrun_starts_an_mpi_program_through_the_mpi_spawner_unasked(mpi):
    result = mpi.run(["-v", "-n", "2", mpi.program("examples", "hello_ring")])
    assert result.returncode == 0, result.describe()
    assert "spawner mpi: hello_ring-seq's library has no other (mpi)" in result.stderr
    assert result.stdout.count("token went") == 2, result.describe()


@pytest.mark.parametrize("spawner", ["local", "ssh", "pmi"])
def test_another_spawner_is_refused_before_anything_starts(mpi, spawner):
    program = mpi.test_program("am_test")
    hosts = ["-H", "localhost"] if spawner == "ssh" else []  # (the ssh spawner needs some)
    result = mpi.run([f"-spawner={spawner}", *hosts, "-n", "2", program])
    assert result.returncode == 2, result.describe()
    assert (f"{program} has no '{spawner}' spawner (its library has mpi); choose one of those "
            "(-spawner=NAME) or rebuild") in result.stderr, result.describe()


LAUNCHERS = {"openmpi": ["mpirun", "-np", "4"], "mpich": ["mpiexec.hydra", "-n", "4"]}


def test_an_mpi_launcher_starts_it_without_gasnetrun(mpi):
    env = job_env({**NO_PSHM, **(OPENMPI if mpi.flavour == "openmpi" else {})})
    proc = subprocess.run([*LAUNCHERS[mpi.flavour], mpi.test_program("am_test")], env=env,
                          capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.count("am_test: rank") == 4, proc.stdout


def test_a_program_started_alone_is_a_one_rank_job_without_mpi(mpi):
    proc = subprocess.run([mpi.program("examples", "hello_ring")], env=job_env(),
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "rank 0 of 1" in proc.stdout, proc.stdout


def test_a_program_linking_the_other_mpi_than_its_launcher_is_refused(tmp_path):
    ompi, mpich = built("opt", "mpi", "openmpi"), built("opt", "mpi", "mpich")
    result = ompi.job(2, "mpi_interop_test-mpich", "before", "exit", env=NO_PSHM, timeout=120)
    assert result.returncode != 0, result.describe()
    assert ("this program links MPICH, but Open MPI's launcher started it: start it with "
            "MPICH's launcher (MPIRUN_CMD), or rebuild it with Open MPI's mpicc") \
        in result.stderr, result.describe()
    # Started by Hydra, Open MPI's MPI_Init makes a singleton: only the world's size shows it.
    # Its session folder goes in TMPDIR (a fresh one here): the refused singleton finalizes.
    result = mpich.job(2, "mpi_interop_test-openmpi", "before", "exit",
                       env={**NO_PSHM, "TMPDIR": str(tmp_path)}, timeout=120)
    assert result.returncode != 0, result.describe()
    assert ("the launcher started 2 ranks (PMI_SIZE), but Open MPI says this job has 1: the "
            "program links Open MPI, which is not the launcher's MPI") in result.stderr, \
        result.describe()
    left = [str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*")]
    assert not left, f"left behind in TMPDIR: {left}"


def test_open_mpi_sends_every_message_but_large_payloads_eagerly():
    """Open MPI's TCP eager limit (64 KiB with its header) would send a 64 KiB Medium or Long
    piece by a rendezvous, each step of which a rank polling in MPI_Test takes only at Open
    MPI's next look at its sockets (across hosts: 5-12 ms a piece). The bootstrap raises it to
    the conduit's largest message; the user's own setting wins. MPICH is left alone."""
    ompi = built("opt", "mpi", "openmpi")
    name = "OMPI_MCA_btl_tcp_eager_limit"
    values = {}
    for given in ("", "200000"):
        result = ompi.job(2, "env_test", name, env={**NO_PSHM, **({name: given} if given else {})},
                          timeout=120)
        assert result.returncode == 0, result.describe()
        values[given] = set(re.findall(rf"^env_test: rank \d .* {name}=(.*)$", result.stdout, re.M))
    (limit,) = values[""]
    assert int(limit) >= 65536 + 64 and int(limit) % 4096 == 0, limit
    assert values["200000"] == {"200000"}, values
    result = built("opt", "mpi", "mpich").job(2, "env_test", name, env=NO_PSHM, timeout=120)
    assert result.returncode == 0, result.describe()
    assert result.stdout.count(f"{name}=<unset>") == 2, result.stdout


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


@pytest.mark.parametrize("through", ["srun", "gasnetrun"])
def test_srun_starts_it_inside_an_allocation(slurm, through):
    """srun --mpi=pmix starts Open MPI ranks (the plugin the launcher's PMIx points to), alone
    or as gasnetrun's MPIRUN_CMD."""
    build = built("opt", "mpi", "openmpi")
    program = build.test_program("am_test")
    cmd = (["srun", "--mpi=pmix", "-n", "4", program] if through == "srun"
           else [build.gasnetrun, "-n", "4", program])
    env = job_env({**slurm.env, **NO_PSHM, **OPENMPI, "MPIRUN_CMD": "srun --mpi=pmix -n %N %C"})
    proc = subprocess.run(slurm.salloc(4, cmd), env=env, capture_output=True, text=True,
                          timeout=180, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.count("am_test: rank") == 4, proc.stdout


HOSTS = 4


@pytest.fixture(scope="module")
def slurm_hosts(tmp_path_factory):
    """A 4-host Slurm on network-namespace hosts (as test_slurm_hosts.py has, on addresses of
    its own): MPI between the hosts goes over TCP on their bridge."""
    from netcluster import Cluster, why_not_available as netns_missing
    why = netns_missing() or slurm_missing()
    if why:
        pytest.skip(why)
    root = tmp_path_factory.mktemp("mpihosts")
    cluster = Cluster(root / "hosts", HOSTS, [], prefix="gm", net="10.81.0")
    s = Slurm(root / "slurm", cluster, HOSTS)
    try:
        cluster.up()
        s.up()
    except (subprocess.CalledProcessError, RuntimeError) as err:
        s.down()
        cluster.down()
        pytest.fail(f"cannot start the test Slurm on namespace hosts: {err}")
    yield s
    s.down()
    cluster.down()


# srun offers PMIx to Open MPI ranks and PMI-2 (which MPICH's PMI client speaks) to MPICH's.
ACROSS = {"openmpi": "srun --mpi=pmix -n %N %C", "mpich": "srun --mpi=pmi2 -n %N %C"}
# Both MPIs. Open MPI 4.1.4 (Debian 12's) once crashed here about one job in twenty inside
# MPI_Init (a call through a NULL pointer from mca_btl_tcp.so's event handler), a rate not seen
# again in 180 jobs on 2026-12-02 (its TCP progress thread, btl_tcp_progress_thread=1, brings
# it back at once); its UCX PML finds no TCP device in a namespace entered without its own /sys.
# MPI_ACROSS_FLAVOURS=mpich (or openmpi) runs one.
ACROSS_FLAVOURS = os.environ.get("MPI_ACROSS_FLAVOURS", "openmpi,mpich").split(",")


@pytest.mark.parametrize("flavour", ACROSS_FLAVOURS)
def test_jobs_across_four_namespace_hosts(slurm_hosts, flavour):
    """8 ranks, 2 per host: AMs, puts and gets, barriers and the hybrid client between hosts
    (exit notices cross hosts too: every job ends with gasnet_exit or a return)."""
    build = built("opt", "mpi", flavour)
    env = job_env({**slurm_hosts.env, **OPENMPI, "GASNET_WAIT_MODE": "block",
                   "MPIRUN_CMD": ACROSS[flavour]})
    for program, args in (("am_test", []), ("rma_test", []), ("barrier_test", ["20"]),
                          (f"mpi_interop_test-{flavour}", ["after", "finalize-exit"]),
                          ("exit_test", ["return"])):
        cmd = slurm_hosts.salloc(8, [build.gasnetrun, "-N", str(HOSTS), "-n", "8",
                                     build.test_program(program), *args], nodes=HOSTS)
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300,
                              stdin=subprocess.DEVNULL)
        assert proc.returncode == 0, f"{program}: {proc.stderr[-3000:]}"
        if program != "exit_test":
            assert proc.stdout.count(f"{program.split('-')[0]}: rank") >= 8, proc.stdout[-2000:]


# ---- a crashed rank, Ctrl-C --------------------------------------------------------------------
def test_more_ranks_than_cores_under_open_mpi_say_how_to_oversubscribe():
    build = built("opt", "mpi", "openmpi")
    ranks = (os.cpu_count() or 1) + 1
    result = build.job(ranks, "info_test", env={"OMPI_MCA_rmaps_base_oversubscribe": "0"},
                       timeout=120)
    assert (f"gasnetrun: warning: {ranks} ranks on {ranks - 1} cores: Open MPI's mpirun refuses "
            "more ranks than slots unless told to oversubscribe; if it does, put --oversubscribe "
            "in MPIRUN_CMD") in result.stderr, result.describe()
    assert "Traceback" not in result.stderr
    # Told to (its MCA variable, as the other tests run it): no word.
    told = build.job(ranks, "info_test", timeout=120)
    assert told.returncode == 0 and "oversubscribe" not in told.stderr, told.describe()


def test_a_crashed_rank_ends_the_job_with_its_signal_and_nothing_is_left(mpi):
    result = mpi.job(4, "exit_test", "signal", "2", str(int(signal.SIGKILL)), env=NO_PSHM,
                     timeout=120)
    assert result.returncode == mpi.died_of(signal.SIGKILL), result.describe()
    procs, shm = wait_for_nothing_left(15)
    assert not procs and not shm, (procs, shm)


def test_ctrl_c_ends_every_rank_with_130(mpi):
    env = job_env({**mpi.conduit_env(), **NO_PSHM})
    job = subprocess.Popen([mpi.gasnetrun, "-n", "4", mpi.test_program("exit_test"), "hang"],
                           env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           stdin=subprocess.DEVNULL)
    assert job.stdout is not None
    ready = 0
    while ready < 4:  # every rank is inside GASNet, waiting
        line = job.stdout.readline()
        assert line, "the job ended early: " + (job.stderr.read() if job.stderr else "")
        ready += line.startswith("ready rank")
    job.send_signal(signal.SIGINT)
    _, err = job.communicate(timeout=60)
    assert job.returncode == 128 + signal.SIGINT, err[-3000:]
    procs, shm = wait_for_nothing_left(15)
    assert not procs and not shm, (procs, shm)


# ---- benchmarks ------------------------------------------------------------------------------
def bench_records(build: Build, program: str, only: str) -> dict[str, dict]:
    result = build.run(["-n", "2", build.program("bench", program), "--json", "--quick",
                        "--only", only], env=NO_PSHM, timeout=300)
    assert result.returncode == 0, result.describe()
    return {r["bench"]: r for r in map(json.loads, result.stdout.splitlines())}


def test_benchmarks_measure_the_raw_mpi_baselines_in_the_same_run(mpi):
    """am_bench: an 8-byte MPI_Send/MPI_Recv ping-pong next to the AMShort round trip, repeat
    by repeat, and with raw_mpi_poll_rtt the same ping-pong with receives posted ahead and
    tested (what MPI charges a receiver that polls, as the conduit's do); rma_bench: a 1 MiB MPI_Isend stream next to the 1 MiB nbi put stream. Speeds are
    reported, never asserted."""
    am = bench_records(mpi, "am_bench", "raw_mpi_rtt,am_short_rtt")
    assert {(b, r["path"]) for b, r in am.items()} == {
        ("raw_mpi_rtt", "raw"), ("am_short_rtt", "mpi"), ("am_short_vs_raw", "mpi")}
    assert am["raw_mpi_rtt"]["size"] == 8 and am["am_short_vs_raw"]["unit"] == "x"
    am = bench_records(mpi, "am_bench", "raw_mpi_rtt,raw_mpi_poll_rtt,am_short_rtt")
    assert {(b, r["path"]) for b, r in am.items()} == {
        ("raw_mpi_rtt", "raw"), ("raw_mpi_poll_rtt", "raw"), ("am_short_rtt", "mpi"),
        ("am_short_vs_raw", "mpi"), ("am_short_vs_poll", "mpi")}
    assert am["raw_mpi_poll_rtt"]["size"] == 8 and am["am_short_vs_poll"]["better"] == "lower"
    alone = bench_records(mpi, "am_bench", "raw_mpi_poll_rtt")
    assert {(b, r["path"]) for b, r in alone.items()} == {("raw_mpi_poll_rtt", "raw")}
    rma = bench_records(mpi, "rma_bench", "raw_mpi_stream")
    assert {(b, r["path"]) for b, r in rma.items()} == {
        ("raw_mpi_stream", "raw"), ("put_nbi_bw", "am"), ("put_nbi_bw_vs_raw", "am")}
    assert all(r["size"] == 1 << 20 for r in rma.values())
    assert rma["put_nbi_bw_vs_raw"]["better"] == "higher"
