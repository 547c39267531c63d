"""gasnetrun's per-node planning for ibv jobs: the probe's parsers on recorded nodes
(tests/fixtures/nodes: sysfs, ibv_devinfo -v, hwloc synthetic topologies), the plan each node
gets (ports per socket, limits, PHYSMEM), and `gasnetrun --probe`."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, job_env

NODES = ROOT / "tests" / "fixtures" / "nodes"
HWLOC = shutil.which("lstopo-no-graphics") is not None
needs_hwloc = pytest.mark.skipif(not HWLOC, reason="hwloc's lstopo-no-graphics is not installed")


@pytest.fixture(scope="module")
def gr(opt_build, ibv_launch):
    """The generic probe and the ibv conduit's node plan, from the optimized build."""
    sys.path.insert(0, str(opt_build.path / "python"))
    from gasnetrun import probe
    return probe, ibv_launch.nodeplan


def node_copy(tmp_path: Path, name: str, topology: str | None = None) -> Path:
    """A recorded node to modify (another topology, another memlock...)."""
    dest = tmp_path / name
    shutil.copytree(NODES / name, dest)
    if topology is not None:
        (dest / "topology.synthetic").write_text(topology + "\n")
    return dest


# ---- parsers ------------------------------------------------------------------------------------
def test_hwloc_bitmaps_with_empty_words(gr):
    probe, _ = gr
    assert probe.parse_cpuset("0x0000000f") == [0, 1, 2, 3]
    assert probe.parse_cpuset("0xffffffff,,0x0") == list(range(64, 96))
    assert probe.parse_cpulist("0-3,8,10-11") == [0, 1, 2, 3, 8, 10, 11]


def test_ibv_devinfo_records_give_each_hcas_limits(ibv_launch):
    found = ibv_launch.hca.parse_devinfo((NODES / "single-hca-port-down" / "ibv_devinfo-v.txt").read_text())
    assert found["mlx4_0"]["max_qp_wr"] == 16351
    assert found["mlx4_0"]["max_mr_size"] == 2**64 - 1
    assert found["mlx4_0"]["fw_ver"] == "2.42.5000"


@needs_hwloc
@pytest.mark.parametrize("desc,sockets,numa,cores,numa_socket", [
    ("pack:2 numa:1 core:16 pu:2", 2, 2, 32, {0: 0, 1: 1}),
    ("pack:2 numa:2 core:8 pu:2", 2, 4, 32, {0: 0, 1: 0, 2: 1, 3: 1}),
    ("pack:4 numa:1 core:4 pu:1", 4, 4, 16, {0: 0, 1: 1, 2: 2, 3: 3}),
    ("numa:1 pack:2 core:4 pu:1", 2, 1, 8, {0: -1}),
])
def test_synthetic_topologies(gr, tmp_path, desc, sockets, numa, cores, numa_socket):
    probe, _ = gr
    node = node_copy(tmp_path, "dual-hca-2socket", desc)
    found = probe.probe_host(str(node))
    topo = found.topology
    assert (topo.sockets, len(topo.numa), topo.cores) == (sockets, numa, cores), topo
    assert {n.index: n.socket for n in topo.numa} == numa_socket
    assert "synthetic" in topo.source


@needs_hwloc
def test_a_recorded_lstopo_xml_topology(gr):
    probe, _ = gr
    topo = probe.probe_host(str(NODES / "quad-hca-gpu")).topology
    assert topo.source == "hwloc (recorded XML)"
    assert (topo.sockets, len(topo.numa), topo.cores, topo.pus) == (2, 2, 64, 128)
    assert [n.cpus[0] for n in topo.numa] == [0, 64] and [n.socket for n in topo.numa] == [0, 1]


def test_recorded_nodes_probe_their_hcas_ports_and_memory(gr, ibv_launch):
    probe, _ = gr
    found = probe.probe_host(str(NODES / "quad-hca-gpu"))
    hcas = ibv_launch.hcas_of(found)
    assert [h.name for h in hcas] == ["mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3", "mlx5_4"]
    assert [h.numa for h in hcas] == [0, 0, 1, 1, 1]
    assert hcas[4].ports[0].link_layer == "Ethernet" and not hcas[4].usable_ports()
    assert found.memory == 1056763904 * 1024 and found.memlock is None
    down = probe.probe_host(str(NODES / "single-hca-port-down"))
    assert [p.state for p in ibv_launch.hcas_of(down)[0].ports] == ["ACTIVE", "DOWN"]
    assert down.memlock == 65536 * 1024


def test_a_directory_that_is_no_recorded_node_is_refused(gr, tmp_path):
    probe, _ = gr
    with pytest.raises(FileNotFoundError, match="not a recorded node"):
        probe.probe_host(str(tmp_path))


def test_hosts_of_one_type_share_a_key_whatever_their_lids(gr, tmp_path):
    probe, _ = gr
    a = probe.probe_host(str(NODES / "dual-hca-2socket"))
    other = node_copy(tmp_path, "dual-hca-2socket")
    (other / "sys/class/infiniband/mlx5_0/ports/1/lid").write_text("0x99\n")
    b = probe.probe_host(str(other))
    assert a.type_key() == b.type_key()
    c = probe.probe_host(str(NODES / "quad-hca-gpu"))
    assert a.type_key() != c.type_key()
    assert probe.HostProbe.from_json(json.loads(json.dumps(c.to_json()))) == c


# ---- plans ----------------------------------------------------------------------------------------
@needs_hwloc
@pytest.mark.parametrize("node,expect", [
    ("dual-hca-2socket", {0: "mlx5_0:1,2", 1: "mlx5_1:1,2"}),
    ("quad-hca-gpu", {0: "mlx5_0:1+mlx5_1:1", 1: "mlx5_2:1+mlx5_3:1"}),
    ("single-hca-port-down", {0: "mlx4_0:1"}),
])
def test_each_socket_gets_its_near_hcas_active_infiniband_ports(gr, node, expect):
    probe, nodeplan = gr
    plan = nodeplan.plan_host(probe.probe_host(str(NODES / node)), 8, 32, {})
    assert plan.ports_by_socket == expect
    assert {k: v for k, v in plan.env.items() if k.startswith("GASNET_IBV_PORTS_")} == \
        {**{f"GASNET_IBV_PORTS_{s}": v for s, v in expect.items()}, "GASNET_IBV_PORTS_TYPE": "socket"}
    assert not plan.problems


@needs_hwloc
def test_a_socket_without_an_hca_uses_every_hca_and_says_so(gr, tmp_path):
    probe, nodeplan = gr
    node = node_copy(tmp_path, "single-hca-port-down", "pack:2 numa:1 core:6 pu:1")
    plan = nodeplan.plan_host(probe.probe_host(str(node)), 4, 16, {})
    assert plan.ports_by_socket == {0: "mlx4_0:1", 1: "mlx4_0:1"}
    assert any("socket 1 has no HCA of its own" in n for n in plan.notes)


def test_ports_the_user_set_are_kept(gr):
    probe, nodeplan = gr
    plan = nodeplan.plan_host(probe.probe_host(str(NODES / "dual-hca-2socket")), 8, 32,
                              {"GASNET_IBV_PORTS_1": "mlx5_0"})
    assert not any(k.startswith("GASNET_IBV_PORTS") for k in plan.env)
    assert any("ports as set by the user (GASNET_IBV_PORTS_1)" in n for n in plan.notes)


@pytest.mark.parametrize("env,needle", [
    ({"GASNET_NETWORKDEPTH_PP": "2000"}, "GASNET_NETWORKDEPTH_PP=2000 needs 2002"),
    ({"GASNET_AM_CREDITS_PP": "1000", "GASNET_USE_SRQ": "0"},
     "GASNET_AM_CREDITS_PP=1000 needs 2002"),
])
def test_depths_and_credits_beyond_the_hcas_limits_are_problems(gr, tmp_path, env, needle):
    """An HCA that takes 1024 work requests per queue pair (iWARP and older HCAs take few)."""
    probe, nodeplan = gr
    node = node_copy(tmp_path, "single-hca-port-down")
    info = node / "ibv_devinfo-v.txt"
    info.write_text(info.read_text().replace("max_qp_wr:\t\t\t16351", "max_qp_wr:\t\t\t1024"))
    plan = nodeplan.plan_host(probe.probe_host(str(node)), 4, 16, env)
    assert any(needle in p and "mlx4_0 takes at most 1024" in p for p in plan.problems), \
        plan.problems
    assert not nodeplan.plan_host(probe.probe_host(str(node)), 4, 16, {}).problems


def test_a_low_memlock_limit_sets_physmem_and_a_tiny_one_stops_the_job(gr, tmp_path, ibv_launch):
    probe, nodeplan = gr
    found = probe.probe_host(str(NODES / "single-hca-port-down"))  # memlock 64 MiB
    plan = nodeplan.plan_host(found, 4, 16, {})
    assert plan.env["GASNET_PHYSMEM_MAX"] == str(4 * 64 << 20)
    buffers = ibv_launch.native.ibv_plan(16, 12)
    assert plan.segment_per_rank == (64 << 20) - buffers.pool_bytes - \
        ((64 << 20) - buffers.pool_bytes) % 4096 or plan.segment_per_rank < (64 << 20)
    assert plan.segment_per_rank + buffers.pool_bytes <= 64 << 20
    node = node_copy(tmp_path, "single-hca-port-down")
    (node / "memlock").write_text("1024\n")  # 1 MiB: not even the buffers fit
    plan = nodeplan.plan_host(probe.probe_host(str(node)), 4, 16, {})
    assert any("memlock limit (1.0 MiB) is below" in p and "ulimit -l" in p for p in plan.problems)


def test_no_usable_port_is_a_problem_naming_every_port(gr, tmp_path):
    probe, nodeplan = gr
    node = node_copy(tmp_path, "single-hca-port-down")
    (node / "sys/class/infiniband/mlx4_0/ports/1/state").write_text("1: DOWN\n")
    plan = nodeplan.plan_host(probe.probe_host(str(node)), 4, 16, {})
    assert plan.problems and "no active InfiniBand port" in plan.problems[0]
    assert "mlx4_0 (NUMA 0; ports 1 DOWN, 2 DOWN)" in plan.problems[0]


def test_notes_of_many_hosts_fold_into_one_line(opt_build):
    sys.path.insert(0, str(opt_build.path / "python"))
    from gasnetrun.notes import group_notes
    notes = [f"host n{i}: same" for i in range(1, 9)] + ["host gpu1: other"]
    assert group_notes(notes) == ["hosts n[1-8]: same", "host gpu1: other"]


# ---- gasnetrun --probe --------------------------------------------------------------------------------
def probe_cmd(build, *args, env=None):
    return subprocess.run([build.gasnetrun, "--probe", *args], env=job_env(env),
                          capture_output=True, text=True, timeout=120)


@needs_hwloc
def test_probe_prints_a_table_and_json(opt_build):
    env = {"GASNET_PROBE_ROOT": str(NODES / "quad-hca-gpu")}
    table = probe_cmd(opt_build, "-n", "16", env=env)
    assert table.returncode == 0, table.stderr
    for needle in ("mlx5_3 (1)", "Eth", "0: mlx5_0:1+mlx5_1:1", "16 ranks", "max_qp_wr 32768"):
        assert needle in table.stdout, table.stdout
    out = probe_cmd(opt_build, "--json", env=env)
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    (row,) = data["types"]
    assert row["plans"]["ibv"]["ports_by_socket"] == {"0": "mlx5_0:1+mlx5_1:1",
                                                      "1": "mlx5_2:1+mlx5_3:1"}
    assert row["ranks_per_host"] == 64  # one per core when -n is not given
    assert data["unreachable"] == []


def test_probe_exits_1_when_a_host_cannot_run_an_ibv_job(opt_build, tmp_path):
    node = node_copy(tmp_path, "single-hca-port-down")
    (node / "memlock").write_text("64\n")
    result = probe_cmd(opt_build, "--conduit", "ibv", env={"GASNET_PROBE_ROOT": str(node)})
    assert result.returncode == 1, result.stdout + result.stderr
    assert "problem:" in result.stdout and "memlock limit" in result.stdout


def test_probe_of_an_unknown_host_says_which_and_why(opt_build):
    result = probe_cmd(opt_build, "-H", "no-such-host.invalid", "--json",
                       env={"GASNET_SSH_OPTIONS": "-o ConnectTimeout=2"})
    assert result.returncode == 1
    data = json.loads(result.stdout)
    assert data["unreachable"][0]["host"] == "no-such-host.invalid"
    assert data["unreachable"][0]["error"]


@needs_hwloc
@pytest.mark.parametrize("desc,needle", [
    ("garbage:3", "hwloc refused it (Synthetic string with unknown object type at 'garbage:3')"),
    ("pack:0 pu:2", "hwloc refused it (Synthetic string with disallow 0 number of objects"),
    # 8 million processing units: lstopo alone would take minutes
    ("pack:1000 core:1000 pu:8", "describes 8000000 processing units; the probe takes at most"),
])
def test_a_synthetic_topology_hwloc_cannot_take_is_refused_with_its_reason(opt_build, desc,
                                                                           needle):
    """hwloc given a bad HWLOC_SYNTHETIC says so on stderr and then describes the real machine:
    the probe would report a topology the user did not ask for, without a word."""
    result = probe_cmd(opt_build, env={"HWLOC_SYNTHETIC": desc})
    assert result.returncode == 2, result.stdout + result.stderr
    assert f"HWLOC_SYNTHETIC={desc!r}" in result.stderr and needle in result.stderr, result.stderr
    assert "the accepted form: hwloc's synthetic description" in result.stderr
    assert "Traceback" not in result.stderr


@needs_hwloc
def test_a_synthetic_topology_describes_this_host(opt_build):
    result = probe_cmd(opt_build, "--json", env={"HWLOC_SYNTHETIC": "pack:2 core:2 pu:2"})
    assert result.returncode == 0, result.stderr
    topology = json.loads(result.stdout)["types"][0]["probe"]["topology"]
    assert (topology["sockets"], topology["cores"], topology["pus"]) == (2, 4, 8), topology
    assert topology["source"] == "hwloc (HWLOC_SYNTHETIC: pack:2 core:2 pu:2)"


@needs_hwloc
def test_a_recorded_synthetic_topology_hwloc_refuses_is_named(gr, tmp_path):
    node = node_copy(tmp_path, "single-hca-port-down")
    (node / "topology.xml").unlink(missing_ok=True)
    (node / "topology.synthetic").write_text("pack:2 bogus:4\n")
    probe, _ = gr
    with pytest.raises(ValueError, match=r"topology.synthetic='pack:2 bogus:4': hwloc refused"):
        probe.probe_host(str(node))
