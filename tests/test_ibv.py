"""The ibv conduit on fakeverbs (tests/fakeverbs: a libibverbs.so.1 whose HCAs are simulated
between the processes of this machine), beyond the job suite every conduit runs (conftest's
`build` fixture): the provider against the verbs specification, port selection, receive queue
modes, striping, static and dynamic connections, connect files, PHYSMEM, and the failures a
user must get a clear message for. A last test runs on real hardware where an HCA exists."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from watch import watch
from conftest import BUILDS, FAKE_NODE, ROOT, Build, built, fakeverbs_env, job_env

pytestmark = pytest.mark.conduit("ibv")

NODES = ROOT / "tests" / "fixtures" / "nodes"
NO_PSHM = {"GASNET_SUPERNODE_MAXSIZE": "1"}
VERBOSE = {"GASNET_IBV_VERBOSE": "1"}


@pytest.fixture(params=list(BUILDS), scope="module")
def ibv(request) -> Build:
    return built(request.param, "ibv")


@pytest.fixture(scope="module")
def opt_ibv() -> Build:
    return built("opt", "ibv")


def ok(result, name: str, nranks: int) -> None:
    assert result.returncode == 0, result.describe()
    assert result.stdout.count(f"{name}: rank") == nranks, result.describe()
    assert "FAILED" not in result.stdout, result.describe()


# ---- the provider ---------------------------------------------------------------------------
def test_fakeverbs_follows_the_verbs_specification(opt_ibv):
    """Two processes: send/receive, RDMA, ordering, RNR, access and length errors, flushing,
    UD with its GRH space, SRQ, a peer that died (retry exceeded)."""
    env = job_env(fakeverbs_env(opt_ibv.path))
    proc = subprocess.run([str(opt_ibv.path / "fakeverbs" / "fv_selftest")], env=env,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert re.search(r"selftest: \d+ checks passed", proc.stdout), proc.stdout


@pytest.mark.skipif(shutil.which("ibv_devinfo") is None, reason="ibv_devinfo (ibverbs-utils) absent")
def test_rdma_cores_own_ibv_devinfo_sees_the_recorded_node(opt_ibv):
    env = job_env(fakeverbs_env(opt_ibv.path))
    proc = subprocess.run(["ibv_devinfo", "-v"], env=env, capture_output=True, text=True,
                          timeout=30)
    assert proc.returncode == 0, proc.stderr
    assert "hca_id:\tmlx5_0" in proc.stdout and "hca_id:\tmlx5_1" in proc.stdout
    assert len(re.findall(r"state:\s+PORT_ACTIVE \(4\)", proc.stdout)) == 4, proc.stdout
    assert re.search(r"max_qp_wr:\s+32768", proc.stdout)


# ---- ports ------------------------------------------------------------------------------------
def ports_used(stderr: str) -> set[str]:
    return set(re.findall(r"ibv: rank \d+ on \S+ uses (.*) \(from", stderr))


def test_default_is_the_first_active_port_of_each_hca(opt_ibv):
    """The conduit's own default, when neither the user nor gasnetrun's plan chose ports (a
    setting for a socket that does not exist here keeps the plan's hands off)."""
    result = opt_ibv.job(2, "am_test", env={**NO_PSHM, **VERBOSE, "GASNET_IBV_PORTS_9": "mlx5_1"})
    ok(result, "am_test", 2)
    used = ports_used(result.stderr)
    assert len(used) == 1 and re.fullmatch(r"mlx5_0:1\(lid \d+\)\+mlx5_1:1\(lid \d+\)",
                                           used.pop()), result.stderr


def test_gasnet_ibv_ports_chooses_hcas_and_ports(opt_ibv):
    result = opt_ibv.job(2, "rma_test", env={**NO_PSHM, **VERBOSE,
                                             "GASNET_IBV_PORTS": "mlx5_1:2+mlx5_0:2"})
    ok(result, "rma_test", 2)
    used = ports_used(result.stderr)
    assert len(used) == 1 and re.fullmatch(r"mlx5_1:2\(lid \d+\)\+mlx5_0:2\(lid \d+\)",
                                           used.pop()), result.stderr


def socket_of_every_cpu() -> set[int]:
    ids = set()
    for path in Path("/sys/devices/system/cpu").glob("cpu[0-9]*/topology/physical_package_id"):
        ids.add(int(path.read_text()))
    return ids


def test_the_ranks_socket_variable_wins_over_the_general_one(opt_ibv):
    sockets = socket_of_every_cpu()
    if len(sockets) != 1:
        pytest.skip("this machine's CPUs span several sockets (ranks are not bound here)")
    mine = sockets.pop()
    result = opt_ibv.job(2, "am_test", env={**NO_PSHM, **VERBOSE, "GASNET_IBV_PORTS": "mlx5_0",
                                            f"GASNET_IBV_PORTS_{mine}": "mlx5_1:2",
                                            f"GASNET_IBV_PORTS_{mine + 1}": "mlx5_0:2"})
    ok(result, "am_test", 2)
    assert f"uses mlx5_1:2(lid" in result.stderr, result.stderr
    assert f"(from GASNET_IBV_PORTS_{mine})" in result.stderr, result.stderr


def test_numa_node_variables_when_the_type_says_numa(opt_ibv):
    nodes = {p.name for p in Path("/sys/devices/system/cpu").glob("cpu[0-9]*/node[0-9]*")}
    if len(nodes) != 1:
        pytest.skip("this machine's CPUs span several NUMA nodes (ranks are not bound here)")
    mine = int(nodes.pop()[4:])
    result = opt_ibv.job(2, "am_test", env={**NO_PSHM, **VERBOSE, "GASNET_IBV_PORTS_TYPE": "numa",
                                            f"GASNET_IBV_PORTS_{mine}": "mlx5_1:1"})
    ok(result, "am_test", 2)
    assert f"uses mlx5_1:1(lid" in result.stderr and f"(from GASNET_IBV_PORTS_{mine})" in \
        result.stderr, result.stderr


def test_an_hca_this_host_lacks_is_named_and_the_rest_used(opt_ibv):
    result = opt_ibv.job(2, "am_test", env={**NO_PSHM, **VERBOSE,
                                            "GASNET_IBV_PORTS": "mlx5_7+mlx5_1"})
    ok(result, "am_test", 2)
    assert "GASNET_IBV_PORTS names HCA 'mlx5_7', which host" in result.stderr, result.stderr


@pytest.mark.parametrize("node,env,expect", [
    ("dual-hca-2socket", {"GASNET_IBV_PORTS": "mlx5_9"}, "mlx5_0:1 ACTIVE"),
    ("single-hca-port-down", {"GASNET_IBV_PORTS": "mlx4_0:2"}, "mlx4_0:2 DOWN"),
])
def test_no_usable_port_ends_the_job_listing_every_port(opt_ibv, node, env, expect):
    full = {**NO_PSHM, **fakeverbs_env(opt_ibv.path, NODES / node), **env}
    result = opt_ibv.job(2, "am_test", env=full, timeout=60)
    assert result.returncode != 0, result.describe()
    assert "no active InfiniBand port to use" in result.stderr, result.stderr
    assert expect in result.stderr, result.stderr
    assert result.seconds < 20, result.describe()


def test_a_fabric_without_subnet_manager_leaves_ports_in_init(opt_ibv, tmp_path):
    env = {**NO_PSHM, **fakeverbs_env(opt_ibv.path), "FAKEVERBS_FABRIC": str(tmp_path / "none")}
    result = opt_ibv.job(2, "am_test", env=env, timeout=60)
    assert result.returncode != 0, result.describe()
    assert "INIT (no subnet manager?)" in result.stderr, result.stderr


def test_a_host_without_rdma_device_says_so(opt_ibv, tmp_path):
    env = {**NO_PSHM, **fakeverbs_env(opt_ibv.path), "FAKEVERBS_SYSFS": str(tmp_path)}
    result = opt_ibv.job(2, "am_test", env=env, timeout=60)
    assert result.returncode != 0, result.describe()
    assert "no RDMA device on host" in result.stderr and "udp conduit" in result.stderr


# ---- receive queues, inline, bounce and packing paths ---------------------------------------------
@pytest.mark.parametrize("srq", ["0", "1"], ids=["per-peer", "shared"])
def test_flood_through_per_peer_and_shared_receive_queues(ibv, srq):
    result = ibv.job(8, "flood_test", env={**NO_PSHM, **VERBOSE, "GASNET_USE_SRQ": srq},
                     timeout=240)
    assert result.returncode == 0, result.describe()
    assert "flood_test: rank 0 received all 100000 requests" in result.stdout, result.describe()
    kind = "shared" if srq == "1" else "per-peer"
    assert result.stderr.count(f"({kind} receive queues") == 8, result.stderr


def test_the_default_takes_a_shared_queue_once_per_peer_buffers_exceed_rbuf_count(opt_ibv):
    result = opt_ibv.job(4, "am_test", env={**NO_PSHM, **VERBOSE, "GASNET_RBUF_COUNT": "40"})
    ok(result, "am_test", 4)
    assert result.stderr.count("(shared receive queues, 40 receive buffers)") == 4, result.stderr


@pytest.mark.parametrize("knobs", [
    {"GASNET_INLINESEND_LIMIT": "0"},
    {"GASNET_PACKEDLONG_LIMIT": "0", "GASNET_NONBULKPUT_BOUNCE_LIMIT": "0"},
    {"GASNET_NONBULKPUT_BOUNCE_LIMIT": "1M", "GASNET_INLINESEND_LIMIT": "256"},
    {"GASNET_NETWORKDEPTH_PP": "2", "GASNET_NETWORKDEPTH_TOTAL": "3", "GASNET_BBUF_COUNT": "16"},
    {"GASNET_AM_CREDITS_PP": "1", "GASNET_MAX_MTU": "1024"},
], ids=["no-inline", "no-packing-no-bounce", "big-bounce-big-inline", "tiny-depth", "one-credit"])
@pytest.mark.parametrize("program", ["am_test", "rma_test", "barrier_test"])
def test_every_transfer_path_moves_the_right_bytes(opt_ibv, knobs, program):
    result = opt_ibv.job(3, program, env={**NO_PSHM, **knobs}, timeout=240)
    ok(result, program, 3)


def test_rdma_is_striped_over_both_rails(opt_ibv):
    """Two HCAs, one port each in use: a peer has two rails and large puts use both."""
    result = opt_ibv.job(2, "rma_test", env={**NO_PSHM, **VERBOSE,
                                             "GASNET_IBV_PORTS": "mlx5_0:1+mlx5_1:1"})
    ok(result, "rma_test", 2)
    for line in re.findall(r"ibv: rank \d+ finished.*", result.stderr):
        per_port = re.findall(r"(mlx5_\d):1 \d+ requests (\d+) bytes", line)
        assert len(per_port) == 2, line
        assert all(int(b) > 1 << 20 for _, b in per_port), line


def test_a_put_outside_the_segment_is_refused_by_the_target(opt_ibv):
    """Only the optimised build reaches the network (the debug build's check stops it first)."""
    result = opt_ibv.job(2, "misuse_test", "outside-segment", env=NO_PSHM, timeout=60)
    assert result.returncode != 0, result.describe()
    assert "an RDMA put to rank 1 (host" in result.stderr, result.stderr
    assert "remote access error" in result.stderr, result.stderr


# ---- connections ------------------------------------------------------------------------------------
def started(stderr: str) -> list[int]:
    return [int(n) for n in re.findall(r"made (\d+) connections at start-up", stderr)]


def test_dynamic_connections_alone_run_the_suite(ibv):
    result = ibv.job(4, "rma_test", env={**NO_PSHM, **VERBOSE, "GASNET_CONNECT_STATIC": "0"})
    ok(result, "rma_test", 4)
    assert started(result.stderr) == [0] * 4, result.stderr


def test_no_connection_allowed_at_all_is_refused_naming_the_knobs(opt_ibv):
    result = opt_ibv.job(2, "am_test", env={**NO_PSHM, "GASNET_CONNECT_STATIC": "0",
                                            "GASNET_CONNECT_DYNAMIC": "0"}, timeout=60)
    assert result.returncode != 0, result.describe()
    assert "GASNET_CONNECT_DYNAMIC=0 forbids" in result.stderr, result.stderr


def edges(files: list[Path]) -> set[tuple[int, int]]:
    found = set()
    for f in files:
        for line in f.read_text().splitlines():
            m = re.fullmatch(r"([0-9a-z]+): (.*)", line)
            if not m or m.group(1) in ("size", "base"):
                continue
            for peer in m.group(2).split():
                a, b = int(m.group(1), 36), int(peer, 36)
                found.add((min(a, b), max(a, b)))
    return found


def test_connect_files_record_a_ring_and_replay_makes_only_its_connections(ibv, tmp_path):
    n = 6
    out = tmp_path / "rank-%.conn"
    result = ibv.job(n, "ring_test", "200", env={**NO_PSHM, "GASNET_CONNECTFILE_OUT": str(out)})
    ok(result, "ring_test", n)
    files = sorted(tmp_path.glob("rank-*.conn"))
    assert len(files) == n
    ring = {(min(r, (r + 1) % n), max(r, (r + 1) % n)) for r in range(n)}
    assert edges(files) == ring
    replay = {**NO_PSHM, **VERBOSE, "GASNET_CONNECTFILE_IN": str(out),
              "GASNET_CONNECT_DYNAMIC": "0"}
    result = ibv.job(n, "ring_test", "200", env=replay)
    ok(result, "ring_test", n)
    assert started(result.stderr) == [2] * n, result.stderr
    # A program that needs more than the file gives is stopped, naming the pair.
    result = ibv.job(n, "am_test", env=replay, timeout=60)
    assert result.returncode != 0 and "not made at start-up" in result.stderr, result.describe()


@pytest.mark.parametrize("files", [("0: 1\n", ""), ("", "1: 0\n")], ids=["only-0", "only-1"])
def test_per_rank_connect_files_that_disagree_still_connect_the_pair(opt_ibv, tmp_path, files):
    """A pair is made at start-up when either end's file names it (otherwise one end would
    wait for ever for the other, already blocked in the bootstrap)."""
    for rank, text in enumerate(files):
        (tmp_path / f"{rank}.conn").write_text(text)
    env = {**NO_PSHM, **VERBOSE, "GASNET_CONNECTFILE_IN": str(tmp_path / "%.conn"),
           "GASNET_CONNECT_DYNAMIC": "0"}
    result = opt_ibv.job(2, "am_test", env=env, timeout=60)
    ok(result, "am_test", 2)
    assert started(result.stderr) == [1, 1], result.stderr


def test_one_sided_rdma_is_recorded_at_both_ends(opt_ibv, tmp_path):
    """In putonly mode a rank's right neighbour receives only RDMA: it must still record the
    pair, so that replaying either end's file makes it."""
    n = 4
    out = tmp_path / "%.conn"
    result = opt_ibv.job(n, "ring_test", "20", "putonly",
                         env={**NO_PSHM, "GASNET_CONNECT_STATIC": "0",
                              "GASNET_CONNECTFILE_OUT": str(out)})
    ok(result, "ring_test", n)
    for r in range(n):
        left, right = (r + n - 1) % n, (r + 1) % n
        assert edges([tmp_path / f"{r}.conn"]) == {(min(r, left), max(r, left)),
                                                  (min(r, right), max(r, right))}, r


def test_connectfile_out_needs_a_rank_placeholder(opt_ibv, tmp_path):
    result = opt_ibv.job(2, "am_test", env={**NO_PSHM,
                                            "GASNET_CONNECTFILE_OUT": str(tmp_path / "all.conn")},
                         timeout=60)
    assert result.returncode != 0 and "has no '%'" in result.stderr, result.describe()


@pytest.mark.parametrize("forged, reason", [
    ("qp", r"claims rank 0 but came from queue pair \d+, not that rank's"),
    ("lid", r"claims rank 0 but came from LID \d+, not that rank's")])
def test_forged_datagrams_from_a_local_process_are_ignored(opt_ibv, tmp_path, forged, reason):
    """A process outside the job sends rank 1 an exit notice (code 0) and a "rank 0 finished"
    notice, with the job's tag read from the rank's environment, from rank 0's own port (only
    the queue pair gives it away) or from another port: the rank ignores both, naming why."""
    env = job_env({**opt_ibv.conduit_env(), **NO_PSHM})
    release = tmp_path / "release"
    job = subprocess.Popen([opt_ibv.gasnetrun, "-n", "2", opt_ibv.test_program("misuse_test"),
                            "hold", str(release)], env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
    out, err = watch(job)
    try:
        pids = {}
        while len(pids) < 2:
            m = out.wait_for(r"rank (\d+) pid (\d+) attached")
            pids[int(m.group(1))] = m.group(2)
        forged_run = subprocess.run([str(opt_ibv.path / "fakeverbs" / "fv_hostile"), pids[1],
                                     pids[0], forged], env=env, capture_output=True, text=True,
                                    timeout=30)
        assert forged_run.returncode == 0, forged_run.stderr
        err.wait_for(reason)  # both datagrams came and were refused for that reason
        release.touch()
        job.wait(timeout=60)
    finally:
        if job.poll() is None:
            job.kill()
    assert job.returncode == 0, err.rest()
    assert out.rest().count("lingered") == 2, "".join(out.seen + err.seen)


def test_a_malformed_connect_file_is_named_with_line_and_column(opt_ibv, tmp_path):
    bad = tmp_path / "bad.conn"
    bad.write_text("size: 2\n0: 1\n1: x!\n")
    result = opt_ibv.job(2, "am_test", env={**NO_PSHM, "GASNET_CONNECTFILE_IN": str(bad)},
                         timeout=60)
    assert result.returncode != 0, result.describe()
    assert f"{bad}:3:" in result.stderr, result.stderr


# ---- pinned memory ----------------------------------------------------------------------------------
def max_local_segment(result) -> int:
    m = re.search(r"info_test: max local segment (\d+)", result.stdout)
    assert m, result.describe()
    return int(m.group(1))


def test_physmem_max_covers_segment_and_buffers_with_gasnetruns_arithmetic(opt_ibv, native,
                                                                         ibv_launch):
    """The largest segment is this rank's GASNET_PHYSMEM_MAX share less the buffers it
    registers, computed by the same C code gasnetrun's plan uses."""
    result = opt_ibv.job(2, "info_test", env={**NO_PSHM, "GASNET_PHYSMEM_MAX": "512M",
                                              "GASNET_MAX_SEGSIZE": "1G"})
    assert result.returncode == 0, result.describe()
    plan = ibv_launch.native.ibv_plan(2, 1)
    phys = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    expect = native.segment_budget("1G", "512M", phys, shutil.disk_usage("/dev/shm").free, 2,
                                   native.pshm_host_bytes(2), plan.pool_bytes)
    assert abs(max_local_segment(result) - expect) <= 1 << 20, (max_local_segment(result), expect)
    assert expect < (256 << 20) - plan.pool_bytes + 4096


def test_physmem_probe_finds_what_the_hca_can_pin(opt_ibv):
    env = {**NO_PSHM, **VERBOSE, "GASNET_PHYSMEM_PROBE": "1", "FAKEVERBS_PIN_LIMIT": "96M",
           "GASNET_PHYSMEM_MAX": "2G"}
    result = opt_ibv.job(2, "info_test", env=env, timeout=120)
    assert result.returncode == 0, result.describe()
    assert re.search(r"could pin \d+ of its \d+-byte GASNET_PHYSMEM_MAX share", result.stderr)
    seg = max_local_segment(result)
    assert (60 << 20) < seg <= (96 << 20), seg


def test_registration_beyond_the_pin_limit_fails_with_advice(opt_ibv):
    env = {**NO_PSHM, "FAKEVERBS_PIN_LIMIT": "8M"}
    result = opt_ibv.job(2, "rma_test", env=env, timeout=60)
    assert result.returncode != 0, result.describe()
    assert "cannot register the" in result.stderr and "ulimit -l" in result.stderr, \
        result.stderr


# ---- real hardware -----------------------------------------------------------------------------------
def real_devices() -> list[str]:
    """HCAs the real libibverbs lists (none on a machine without InfiniBand)."""
    if shutil.which("ibv_devinfo") is None:
        return []
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FAKEVERBS", "LD_LIBRARY"))}
    proc = subprocess.run(["ibv_devinfo", "-l"], env=env, capture_output=True, text=True,
                          timeout=30)
    return [line.strip() for line in proc.stdout.splitlines()[1:] if line.strip()]


@pytest.mark.skipif(not real_devices(), reason="no RDMA device on this machine (libibverbs lists "
                    "none: no HCA, or a kernel without InfiniBand); the suite ran on fakeverbs")
@pytest.mark.parametrize("program", ["am_test", "rma_test", "barrier_test", "flood_test"])
def test_on_a_real_hca(program):
    build = built("opt", "ibv")
    env = {k: v for k, v in job_env(NO_PSHM).items()
           if not k.startswith(("FAKEVERBS", "LD_LIBRARY"))}
    proc = subprocess.run([build.gasnetrun, "-n", "2", build.test_program(program)], env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr


# ---- gasnetrun's node plan and connect-file loop -------------------------------------------------
def test_gasnetrun_plans_the_node_and_its_ranks_use_their_sockets_hca(opt_ibv):
    """The plan gives socket 0's ranks mlx5_0's two ports, socket 1's mlx5_1's; ranks here all
    run on socket 0 (this machine has one), so both use mlx5_0's ports as two rails."""
    sockets = socket_of_every_cpu()
    if sockets != {0}:
        pytest.skip("this machine's CPUs are not all on socket 0")
    env = {**NO_PSHM, **VERBOSE, "GASNET_PROBE_ROOT": str(FAKE_NODE)}
    result = opt_ibv.run(["-v", "-n", "2", opt_ibv.test_program("rma_test")], env)
    ok(result, "rma_test", 2)
    assert "socket 0: mlx5_0:1,2; socket 1: mlx5_1:1,2" in result.stderr, result.stderr
    used = ports_used(result.stderr)
    assert len(used) == 1 and re.fullmatch(r"mlx5_0:1\(lid \d+\)\+mlx5_0:2\(lid \d+\)",
                                           used.pop()), result.stderr
    assert "(from GASNET_IBV_PORTS_0)" in result.stderr


def test_a_node_plan_problem_stops_the_job_before_any_rank_starts(opt_ibv, tmp_path):
    node = tmp_path / "node"
    shutil.copytree(FAKE_NODE, node)
    (node / "memlock").write_text("64\n")
    result = opt_ibv.job(2, "am_test", env={**NO_PSHM, "GASNET_PROBE_ROOT": str(node)})
    assert result.returncode == 2, result.describe()
    assert "memlock limit (64.0 KiB)" in result.stderr or "memlock limit" in result.stderr
    assert "the node plan found a problem" in result.stderr and "am_test: rank" not in result.stdout


def test_connect_record_and_replay_through_gasnetrun(opt_ibv, tmp_path):
    d = tmp_path / "conn"
    ring = opt_ibv.test_program("ring_test")
    result = opt_ibv.run(["--connect", "record", str(d), "-n", "6", ring, "100"], NO_PSHM)
    ok(result, "ring_test", 6)
    assert "recorded 6 connections of 6 ranks" in result.stderr, result.stderr
    assert sorted(p.name for p in d.iterdir()) == ["connect.json", "job.conn", "node-0.conn"]
    assert edges([d / "node-0.conn"]) == {(min(r, (r + 1) % 6), max(r, (r + 1) % 6))
                                          for r in range(6)}
    replay = {**NO_PSHM, **VERBOSE, "GASNET_CONNECT_DYNAMIC": "0"}
    result = opt_ibv.run(["--connect", "replay", str(d), "-n", "6", ring, "100"], replay)
    ok(result, "ring_test", 6)
    assert started(result.stderr) == [2] * 6, result.stderr


@pytest.mark.parametrize("case", ["shape", "conduit", "clash", "empty", "mode"])
def test_connect_misuse_is_refused_before_launch(opt_ibv, tmp_path, case):
    d = tmp_path / "conn"
    ring = opt_ibv.test_program("ring_test")
    rec = opt_ibv.run(["--connect", "record", str(d), "-n", "4", ring, "10"], NO_PSHM)
    assert rec.returncode == 0, rec.describe()
    args, env, needle = {
        "shape": (["--connect", "replay", str(d), "-n", "6", ring], {},
                  "recorded for 4 ranks as [4] per host, but this job has 6 as [6]"),
        "conduit": (["--connect", "replay", str(d), "-n", "4",
                     str(opt_ibv.path / "udp" / "tests" / "ring_test-seq")], {},
                    "is built for the udp conduit"),
        "clash": (["--connect", "record", str(d), "-n", "4", ring],
                  {"GASNET_CONNECTFILE_OUT": "x"}, "GASNET_CONNECTFILE_OUT is set too"),
        "empty": (["--connect", "replay", str(tmp_path), "-n", "4", ring], {},
                  "no connect.json there"),
        "mode": (["--connect", "rewind", str(d), "-n", "4", ring], {},
                 "expected record or replay"),
    }[case]
    result = opt_ibv.run(args, {**NO_PSHM, **env})
    assert result.returncode == 2, result.describe()
    assert needle in result.stderr, result.stderr
