"""udp across hosts whose path MTU drops mid-job (issue 38, item 1): datagrams are sized at
start-up to the interfaces' MTU (1500 here, so 1472-byte payloads); the test lowers a link to
1280 between two phases of a job on two network-namespace hosts (tests/netcluster.py), and the
transfers after it must arrive whole instead of the job ending with the peer declared
unreachable. Two paths: the host's own interface and its switch port (its kernel refuses what
no longer fits, EMSGSIZE, while the other host's frames to it vanish at the switch), and the
switch port alone (both directions vanish without a word, as a real switch drops frames too
large for its port). The namespaces' veth links pass a GSO run of datagrams whatever its
segments' size (a real NIC sends each segment as a frame), so the switch-only case runs without
GSO, where every datagram is a frame, as the host case does besides its default."""
from __future__ import annotations

import contextlib
import os
import re
import select
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import Build, job_env
from netcluster import Cluster, why_not_available

HOSTS = 2
LOWERED = 1280


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    why = why_not_available()
    if why:
        pytest.skip(why)
    c = Cluster(tmp_path_factory.mktemp("hosts"), HOSTS, [], prefix="gu", net="10.83.0")
    try:
        c.up()
    except (subprocess.CalledProcessError, RuntimeError) as err:
        c.down()
        detail = getattr(err, "stderr", b"") or b""
        pytest.fail(f"cannot build the test hosts: {err} {detail.decode(errors='replace')}")
    yield c
    c.down()


def set_mtu(cluster: Cluster, host: int, mtu: int, interface: bool) -> None:
    """Host h<host>'s port on the bridge, and its own interface too when interface."""
    ns = f"{cluster.prefix}_h{host}"
    if interface:
        subprocess.run(["ip", "-n", ns, "link", "set", f"{cluster.prefix}v{host}", "mtu",
                        str(mtu)], check=True)
    subprocess.run(["ip", "-n", f"{cluster.prefix}_sw", "link", "set", f"{cluster.prefix}p{host}",
                    "mtu", str(mtu)], check=True)


def start(cluster: Cluster, build: Build, go: Path, env: dict[str, str]) -> subprocess.Popen[str]:
    """mtu_drop_test on h1 (rank 0) and h2 (rank 1), launched from h1."""
    env = job_env({"GASNET_SSH_OPTIONS": f"-F {cluster.ssh_config}", "GASNET_WAIT_MODE": "block",
                   **env})
    argv = [build.gasnetrun, "-n", "2", "-H", ",".join(cluster.hosts(HOSTS)),
            build.test_program("mtu_drop_test"), str(go)]
    return subprocess.Popen(cluster.inside(1, argv), env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL,
                            cwd=Path(build.path).parent)


def wait_for_ready(job: subprocess.Popen[str], count: int, seconds: float = 60) -> str:
    """Until `count` ranks said "ready" (they then poll until the go file exists)."""
    assert job.stdout is not None
    fd = job.stdout.fileno()
    deadline = time.monotonic() + seconds
    text = b""
    while text.count(b"ready rank") < count:
        left = deadline - time.monotonic()
        assert left > 0, f"only {text.count(b'ready rank')} of {count} ranks became ready"
        if select.select([fd], [], [], left)[0]:
            chunk = os.read(fd, 65536)
            assert chunk, f"the job ended before its ranks were ready: {text.decode()}"
            text += chunk
    return text.decode()


# The switch port alone with GSO is left out: the veth passes GSO runs whatever their
# segments' size, so there the job got through before the fix too (it tests nothing).
CASES = {"host": (True, "1"), "host-nogso": (True, "0"), "switch-nogso": (False, "0")}


@pytest.mark.parametrize("case", list(CASES))
def test_transfers_go_on_when_the_path_mtu_drops_mid_job(cluster: Cluster, udp_build: Build,
                                                         tmp_path: Path, case: str) -> None:
    """Before: the lowered host's kernel refused every full datagram (EMSGSIZE) and the
    other host's vanished at the switch; either way the job ended 10 s later naming its peer
    as unreachable, every time. Now each rank re-sizes what it sends to that peer, packets
    already built go in pieces, every byte arrives, and each rank says once that it did."""
    interface, gso = CASES[case]
    go = tmp_path / "go"
    job = start(cluster, udp_build, go, {"GASNET_REQUESTTIMEOUT_MAX": "10",
                                         "GASNET_UDP_GSO": gso})
    try:
        before = wait_for_ready(job, 2)
        set_mtu(cluster, 2, LOWERED, interface)
        go.touch()
        out, err = job.communicate(timeout=120)
    finally:
        set_mtu(cluster, 2, 1500, interface)
        if job.poll() is None:
            job.kill()
            job.communicate()
    out = before + out
    assert job.returncode == 0, err
    assert out.count("mtu_drop_test: rank") == 2 and "FAILED" not in out, out
    resized = [line for line in err.splitlines() if "no longer fit the path" in line]
    if interface:
        # h2 (rank 1) learns it from its kernel: its interface's new MTU, exactly
        assert any("on rank 1 " in line and "this host's interface MTU was lowered" in line and
                   f"at most {LOWERED - 28} bytes" in line for line in resized), err
    if gso == "0":
        # every datagram a frame: those too large vanish, and each rank finds the size that
        # passes (with GSO, runs of them reach the veth whole, and may carry everything)
        assert any("on rank 0 " in line and "vanish on the way" in line and
                   f"at most {LOWERED - 28} bytes" in line for line in resized), err
    if not interface and gso == "0":
        assert any("on rank 1 " in line and "vanish on the way" in line for line in resized), err


def test_a_stopped_peer_behind_a_lowered_mtu_is_still_declared_unreachable(
        cluster: Cluster, udp_build: Build, tmp_path: Path) -> None:
    """Re-sizing must not hide a peer that is really gone: with the path lowered, rank 1 (h2)
    is stopped (its liveness thread too, so nothing answers for it), and rank 0's put goes in
    full-size datagrams, then in pieces, to nobody. The job still ends naming rank 1 and its
    host after GASNET_REQUESTTIMEOUT_MAX."""
    go = tmp_path / "go"
    job = start(cluster, udp_build, go, {"GASNET_REQUESTTIMEOUT_MAX": "3"})
    pid = 0
    try:
        ready = wait_for_ready(job, 2)
        found = re.search(r"^ready rank 1 pid (\d+)$", ready, re.M)
        assert found, ready
        pid = int(found[1])
        set_mtu(cluster, 2, LOWERED, True)
        os.kill(pid, signal.SIGSTOP)
        go.touch()
        out, err = job.communicate(timeout=120)
    finally:
        set_mtu(cluster, 2, 1500, True)
        if job.poll() is None:
            job.kill()
            job.communicate()
        if pid:  # its agent ends it, unless the test failed first
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
    assert job.returncode == 1, err
    assert "rank 1 on host h2 acknowledged nothing for 3 s (GASNET_REQUESTTIMEOUT_MAX): it is " \
           "unreachable" in err, err
