"""gasnet-tune across hosts (issue 37, item 2): a sweep over two network-namespace hosts
(tests/netcluster.py) with the ssh spawner, launched from inside h1 as a user there would, on
the udp conduit and on the ofi conduit (tcp;ofi_rxm). Every run's benchmark records come from
a job spanning both hosts, and the report and tuned.env name the hosts, the spawner and the
conduit. Budgets are a few runs: what is checked is that the sweep works there, not its
figures."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from conftest import Build, built, job_env
from netcluster import Cluster, why_not_available


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    why = why_not_available()
    if why:
        pytest.skip(why)
    c = Cluster(tmp_path_factory.mktemp("cluster"), 2, [])
    try:
        c.up()
    except (subprocess.CalledProcessError, RuntimeError) as err:
        c.down()
        detail = getattr(err, "stderr", b"") or b""
        pytest.fail(f"cannot build the test hosts: {err} {detail.decode(errors='replace')}")
    yield c
    c.down()


def sweep_on_hosts(cluster: Cluster, build: Build, out: Path, conduit: str, knob: str,
                   env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    hosts = ",".join(cluster.hosts(2))
    argv = [str(build.path / "bin" / "gasnet-tune"), "sweep", "-n", "2", "-H", hosts,
            "--spawner", "ssh", "--conduit", conduit, "--objective", "am-latency", "--knobs",
            knob, "--budget", "6runs", "--out", str(out)]
    # Ranks of different "hosts" share this machine's cores: they give them away while
    # they wait (as in test_ssh_spawner.py).
    full = job_env({"GASNET_SSH_OPTIONS": f"-F {cluster.ssh_config}",
                    "GASNET_WAIT_MODE": "block", **env})
    return subprocess.run(cluster.inside(1, argv), env=full, capture_output=True, text=True,
                          timeout=600, stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("conduit,knob,env", [
    ("udp", "GASNET_UDP_COALESCE", {}),
    ("ofi", "GASNET_OFI_NUM_BBUFS", {"GASNET_OFI_PROVIDER": "tcp;ofi_rxm"}),
], ids=["udp", "ofi-tcp"])
def test_a_sweep_across_two_hosts_with_the_ssh_spawner(cluster, tmp_path, conduit, knob, env):
    build = built("opt", conduit)
    out = tmp_path / "hosts"
    proc = sweep_on_hosts(cluster, build, out, conduit, knob, env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    doc = json.loads((out / "report.json").read_text())
    hosts = ",".join(cluster.hosts(2))
    assert (doc["conduit"], doc["hosts"], doc["spawner"], doc["runs"]) == \
        (conduit, hosts, "ssh", 6)
    assert f"# conduit: {conduit}, ranks: 2, hosts: {hosts}, spawner: ssh" in \
        (out / "tuned.env").read_text()
    assert f"- ranks: 2, hosts: {hosts}, spawner: ssh" in (out / "report.md").read_text()
    assert "measured:" in proc.stdout and "spawner ssh" in proc.stdout
    # Every run was one job over both hosts: the benchmark's own record says so.
    runs = [json.loads(line) for path in (out / "records").glob("*.jsonl")
            for line in path.read_text().splitlines()]
    assert len(runs) == 6 and all(r["error"] is None for r in runs), runs
    records = [rec for r in runs for rec in r["records"] if rec["bench"] == "am_short_rtt"]
    assert len(records) == 6, records
    assert all((rec["hosts"], rec["ranks"], rec["conduit"]) == (2, 2, conduit)
               for rec in records), records
