"""A 4-host Slurm on network-namespace hosts (controller on h1, one slurmd per host): jobs
started by `gasnetrun` inside `salloc -N 4`, through srun with PMIx and with PMI-2, run the
udp conduit across the hosts with no ssh between them. Skipped where Slurm or namespaces are
not available."""
from __future__ import annotations

import re
import subprocess

import pytest

from conftest import Build, built, job_env
from netcluster import Cluster, why_not_available as netns_missing
from slurmcluster import Slurm, why_not_available as slurm_missing

HOSTS = 4


@pytest.fixture(scope="module")
def slurm_hosts(tmp_path_factory):
    why = netns_missing() or slurm_missing()
    if why:
        pytest.skip(why)
    root = tmp_path_factory.mktemp("slurmhosts")
    cluster = Cluster(root / "hosts", HOSTS, [], prefix="gs", net="10.80.0")
    slurm = Slurm(root / "slurm", cluster, HOSTS)
    try:
        cluster.up()
        slurm.up()
    except (subprocess.CalledProcessError, RuntimeError) as err:
        slurm.down()
        cluster.down()
        pytest.fail(f"cannot start the test Slurm on namespace hosts: {err}")
    yield slurm
    slurm.down()
    cluster.down()


@pytest.fixture(scope="module")
def udp_opt() -> Build:
    return built("opt", "udp")


@pytest.mark.parametrize("template", ["", "srun --mpi=pmi2 -n %N %C"], ids=["pmix", "pmi2"])
def test_sixteen_ranks_on_four_slurm_hosts(slurm_hosts, udp_opt, template):
    extra = {"PMIRUN_CMD": template} if template else {}
    env = job_env({**slurm_hosts.env, "GASNET_WAIT_MODE": "block", **extra})
    # am_test's largest Long 256 KiB: its 17 round trips of 4 MiB a rank, 16 ranks on 2 cores
    # through UDP, were 19 of the test's 22 s (40 of 45 in the loaded suite), and prove nothing
    # more about a job that Slurm placed.
    for program, args in (("env_test", ["HOME"]), ("am_test", ["largest", "262144"]),
                          ("barrier_test", ["20"])):
        cmd = slurm_hosts.salloc(16, [udp_opt.gasnetrun, "-N", str(HOSTS), "-n", "16",
                                      udp_opt.test_program(program), *args], nodes=HOSTS)
        result = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=180,
                                stdin=subprocess.DEVNULL)
        assert result.returncode == 0, result.stderr[-3000:]
        if program == "env_test":
            hosts = dict(re.findall(r"env_test: rank (\d+) host (\S+)", result.stdout))
            assert len(hosts) == 16, result.stdout
            # -N 4 of 16 ranks: block mapping, 4 per host, as srun was told.
            assert {hosts[str(r)] for r in range(16)} == {f"h{i}" for i in range(1, 5)}
            for r in range(16):
                assert hosts[str(r)] == f"h{r // 4 + 1}", hosts
        else:
            assert result.stdout.count(f"{program}: rank") >= 16, result.stdout[-2000:]
