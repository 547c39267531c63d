"""The ssh spawner across hosts: network-namespace hosts with their own sshd and host name
(tests/netcluster.py), jobs launched from inside h1 over the udp conduit. The hosts share this
machine's two cores, so ranks are told to give the core away while they wait
(GASNET_WAIT_MODE=block): spinning ranks of different "hosts" would starve each other."""
from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import time
from collections import Counter
from pathlib import Path

import pytest

from conftest import BUILDS, Build, Result, built, job_env, wait_for_nothing_left
from netcluster import Cluster, pids_in_namespaces, why_not_available


CLUSTER_PREFIX = ["gt"]  # the namespace names' prefix (netcluster.run_tag tells runs apart)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    why = why_not_available()
    if why:
        pytest.skip(why)
    hidden = [path / "udp" / "examples" for path in BUILDS.values()]
    c = Cluster(tmp_path_factory.mktemp("cluster"), 16, hidden)
    CLUSTER_PREFIX[:] = [c.prefix]
    try:
        c.up()
    except (subprocess.CalledProcessError, RuntimeError) as err:
        c.down()
        detail = getattr(err, "stderr", b"") or b""
        pytest.fail(f"cannot build the test hosts: {err} {detail.decode(errors='replace')}")
    yield c
    c.down()


@pytest.fixture(scope="module")
def udp_opt() -> Build:
    return built("opt", "udp")


def cluster_env(cluster: Cluster, extra: dict[str, str] | None = None) -> dict[str, str]:
    return job_env({"GASNET_SSH_OPTIONS": f"-F {cluster.ssh_config}",
                    "GASNET_WAIT_MODE": "block", **(extra or {})})


def launch(cluster: Cluster, build: Build, args: list[str], env: dict[str, str] | None = None,
           timeout: float = 240) -> Result:
    start = time.monotonic()
    proc = subprocess.run(cluster.inside(1, [build.gasnetrun, *args]),
                          env=cluster_env(cluster, env), capture_output=True, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL, cwd=Path(build.path).parent)
    return Result(proc.returncode, proc.stdout, proc.stderr, time.monotonic() - start)


def hosts_arg(cluster: Cluster, count: int) -> str:
    return ",".join(cluster.hosts(count))


ENV_LINE = re.compile(r"^env_test: rank (\d+) host (\S+) cwd (\S+) (\w+)=(.*)$", re.M)


def env_lines(result: Result) -> list[tuple[int, str, str, str, str]]:
    return [(int(m[1]), m[2], m[3], m[4], m[5]) for m in ENV_LINE.finditer(result.stdout)]


def agents_left() -> list[str]:
    """gasnetrun agents still running on this module's hosts (all fake hosts share one process
    table with other test runs': their agents are not this test's)."""
    found = []
    for pid in pids_in_namespaces(CLUSTER_PREFIX[0]):
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"--agent" in argv and any(a.endswith(b"/gasnetrun_entry.py") for a in argv):
            found.append(str(pid))
    return found


def wait_for_no_agents(seconds: float = 15.0) -> list[str]:
    deadline = time.monotonic() + seconds
    while (left := agents_left()) and time.monotonic() < deadline:
        time.sleep(0.1)
    return left


def agent_on(host_index: int) -> int:
    """The pid of the agent running in host h<host_index>'s network namespace."""
    target = os.stat(f"/run/netns/{CLUSTER_PREFIX[0]}_h{host_index}").st_ino
    for pid in agents_left():
        try:
            if os.stat(f"/proc/{pid}/ns/net").st_ino == target:
                return int(pid)
        except OSError:
            continue
    raise AssertionError(f"no agent runs on h{host_index}")


# ---- jobs that work ----------------------------------------------------------------------------
def test_64_ranks_on_4_hosts(cluster, udp_opt):
    """4 hosts x 16 ranks: block mapping, every rank on its host, and the AM, RMA and barrier
    programs pass across hosts (PSHM inside a host, UDP between hosts)."""
    hosts = hosts_arg(cluster, 4)
    result = launch(cluster, udp_opt, ["-n", "64", "-H", hosts,
                                       udp_opt.test_program("env_test"), "GASNET_WAIT_MODE"])
    assert result.returncode == 0, result.describe()
    lines = env_lines(result)
    assert len(lines) == 64, result.describe()
    for rank, host, _, _, value in lines:
        assert host == f"h{rank // 16 + 1}", f"rank {rank} ran on {host}"
        assert value == "block"
    assert Counter(host for _, host, *_ in lines) == {f"h{i}": 16 for i in range(1, 5)}
    # rma_test's largest transfer and am_test's largest Long 256 KiB: with 64 ranks on 2 cores,
    # checking every byte of their 4 MiB transfers took most of a 40 s run, and proves nothing
    # more across hosts.
    for program, args in (("am_test", ["largest", "262144"]), ("rma_test", ["largest", "262144"]),
                          ("barrier_test", ["100"])):
        result = launch(cluster, udp_opt, ["-n", "64", "-H", hosts,
                                           udp_opt.test_program(program), *args])
        assert result.returncode == 0, f"{program}: {result.describe()}"
        assert result.stdout.count(f"{program}: rank") == 64, f"{program}: {result.describe()}"


def test_gasnet_ex_programs_across_hosts(cluster, udp_opt):
    """GASNet-EX clients on 4 hosts x 2 ranks: AMs of every category with fixed and negotiated
    payloads (a neighbourhood peer's shared memory inside a host, the datagram itself between
    hosts), RMA with events and NBI, and a program mixing GASNet-1 and EX calls; every rank's
    gex_System_QueryHostInfo names the ranks the launcher put on its host."""
    hosts = hosts_arg(cluster, 4)
    # ex_am_test's largest Long 256 KiB, as am_test's in test_64_ranks_on_4_hosts: its 17 MaxLong
    # round trips a rank, between hosts on 2 cores, took most of a 70 s test.
    for program, args in (("ex_am_test", ["largest", "262144"]), ("ex_rma_test", []),
                          ("ex_mixed_test", ["ex"])):
        result = launch(cluster, udp_opt, ["-n", "8", "-H", hosts,
                                           udp_opt.test_program(program), *args])
        assert result.returncode == 0, f"{program}: {result.describe()}"
        for rank in range(8):
            assert f"{program}: rank {rank} OK" in result.stdout, \
                f"{program}: {result.describe()}"
        if program == "ex_am_test":  # block mapping: ranks 2h-2 and 2h-1 on host h
            hosts_of = dict(re.findall(r"ex_am_test: rank (\d+) host ranks ([\d ]+)$",
                                       result.stdout, re.M))
            assert hosts_of == {str(r): f"{r - r % 2} {r - r % 2 + 1}" for r in range(8)}, \
                result.describe()


def test_ibv_across_hosts_each_agent_plans_its_own_host(cluster):
    """The ibv conduit across 4 hosts on fakeverbs (its fabric spans the fake hosts: they share
    the file system and the process table). Every agent probes its host (the recorded node),
    plans it, and -v folds the hosts' identical plans into one line; the ranks use the ports
    the plan gave their socket."""
    ibv_opt = built("opt", "ibv")
    env = {**ibv_opt.conduit_env(), "GASNET_SUPERNODE_MAXSIZE": "1", "GASNET_IBV_VERBOSE": "1"}
    hosts = hosts_arg(cluster, 4)
    for program in ("am_test", "rma_test"):
        result = launch(cluster, ibv_opt, ["-v", "-n", "8", "-H", hosts,
                                           ibv_opt.test_program(program)], env=env)
        assert result.returncode == 0, f"{program}: {result.describe()}"
        assert result.stdout.count(f"{program}: rank") == 8, result.describe()
    found = re.search(r"hosts (\S+): 2 sockets, 2 NUMA, 32 cores; .*socket 0: mlx5_0:1,2; "
                      r"socket 1: mlx5_1:1,2; 2 ranks each register", result.stderr)
    assert found, result.stderr
    from ClusterShell.NodeSet import NodeSet
    assert len(NodeSet(found.group(1))) == 4, found.group(1)  # one line for the 4 alike hosts
    uses = set(re.findall(r"ibv: rank \d+ on (h\d) uses .*\(from (GASNET_IBV_PORTS_\d)\)",
                          result.stderr))
    assert {h for h, _ in uses} == {"h1", "h2", "h3", "h4"}, result.stderr
    # gasnetrun --probe reaches every host over ssh, in parallel, and folds them into one type.
    probe = launch(cluster, ibv_opt, ["--probe", "-H", hosts, "-n", "8", "--json"], env=env)
    assert probe.returncode == 0, probe.describe()
    import json
    (row,) = json.loads(probe.stdout)["types"]
    assert row["count"] == 4 and row["hosts"] == "10.78.0.[1-4]", row
    assert row["plans"]["ibv"]["ports_by_socket"] == {"0": "mlx5_0:1,2", "1": "mlx5_1:1,2"}


@pytest.mark.parametrize("provider", ["tcp;ofi_rxm", "udp;ofi_rxd"])
def test_ofi_across_hosts(cluster, provider):
    """The ofi conduit on 4 hosts, every rank its own supernode (all traffic through libfabric
    between hosts and inside them): each agent checks its host's providers (-v), the ranks
    agree on the provider, and the AM, RMA, barrier and exit programs pass."""
    ofi_opt = built("opt", "ofi")
    env = {"GASNET_OFI_PROVIDER": provider, "GASNET_SUPERNODE_MAXSIZE": "1",
           "GASNET_OFI_VERBOSE": "1"}
    hosts = hosts_arg(cluster, 4)
    # vis_test: 50 random shapes (of its default 200) in every form: its 200 took 187 of the
    # job's 240 s beside stress-ng (8 ranks on 2 cores, every piece an fi_write or fi_read).
    programs = [("am_test", []), ("rma_test", []), ("barrier_test", ["50"]), ("vis_test", ["50"])]
    # rxd moves bulk data slowly (at most 32 operations in flight): on it rma_test's largest
    # transfer and am_test's largest Long are 256 KiB (rma_test's 4 MiB ones took 50 of the
    # test's 90 s; one host's job suite runs them), and VIS, whose transfers are rma_test's puts and gets, runs on tcp;ofi_rxm only.
    if "rxd" in provider:
        programs = [("am_test", ["largest", "262144"]), ("rma_test", ["largest", "262144"]),
                    ("barrier_test", ["50"])]
    for program, args in programs:
        result = launch(cluster, ofi_opt, ["-v", "-n", "8", "-H", hosts,
                                           ofi_opt.test_program(program), *args], env=env)
        assert result.returncode == 0, f"{program}: {result.describe()}"
        assert result.stdout.count(f"{program}: rank") == 8, f"{program}: {result.describe()}"
    assert re.search(r"hosts? \S+: ofi providers: .*" + re.escape(provider), result.stderr), \
        result.stderr
    used = set(re.findall(r"ofi: rank \d+ on host (h\d) uses provider (\S+), domain (\S+) ",
                          result.stderr))
    assert {h for h, _, _ in used} == {"h1", "h2", "h3", "h4"}, result.stderr
    assert all(p == provider and d != "lo" for _, p, d in used), used


def test_an_ofi_provider_a_host_lacks_is_refused_before_anything_starts(cluster):
    ofi_opt = built("opt", "ofi")
    result = launch(cluster, ofi_opt, ["-n", "4", "-H", hosts_arg(cluster, 2),
                                       ofi_opt.test_program("am_test")],
                    env={"GASNET_OFI_PROVIDER": "verbs;ofi_rxm"})
    assert result.returncode == 2, result.describe()
    for index, host in enumerate(cluster.hosts(2), start=1):
        # (the launching host may be named by its host name, h1)
        assert re.search(rf"host (h{index}|{re.escape(host)}): libfabric has no provider "
                         r"'verbs;ofi_rxm' \(GASNET_OFI_PROVIDER\)", result.stderr), result.stderr
    assert "am_test: rank" not in result.stdout
    assert not wait_for_no_agents(), "agents outlived the refused job"


def test_16_hosts_with_out_degree_2(cluster, udp_build):
    """A tree of depth 4: agents start agents, and every rank still reports through it."""
    program = udp_build.test_program("env_test")
    result = launch(cluster, udp_build, ["-v", "-n", "16", "-H", hosts_arg(cluster, 16),
                                         program, "GASNET_SSH_OUT_DEGREE"],
                    env={"GASNET_SSH_OUT_DEGREE": "2"})
    assert result.returncode == 0, result.describe()
    assert "out-degree 2, depth 4" in result.stderr, result.stderr
    lines = env_lines(result)
    assert sorted((rank, host) for rank, host, *_ in lines) == \
        [(r, f"h{r + 1}") for r in range(16)], result.describe()


@pytest.mark.parametrize("conduit", ["udp", "ibv"])
def test_address_lookups_travel_a_tree_of_depth_3_and_every_pair_meets(cluster, conduit,
                                                                         tmp_path):
    """16 ranks on 8 hosts under agents of out-degree 2: every rank sends to every other at
    the same moment right after attach, looking each peer on another host up through the agent
    tree (up to the first agent whose subtree holds it, and down), exactly once per peer. ibv
    (on fakeverbs) connects on first use here: connecting to all at start-up needs every card."""
    build = built("opt", conduit)
    extra = {**build.conduit_env(), "GASNET_CONNECT_STATIC": "0"} if conduit == "ibv" else {}
    stats = tmp_path / "stats"
    stats.mkdir()
    result = launch(cluster, build, ["-n", "16", "-H", hosts_arg(cluster, 8),
                                     build.test_program("first_contact_test"), "all"],
                    env={"GASNET_SSH_OUT_DEGREE": "2", "GASNET_STATSFILE": f"{stats}/s.%",
                         **extra})
    assert result.returncode == 0, result.describe()
    assert result.stdout.count("met 15 peers") == 16, result.describe()
    for rank in range(16):
        text = (stats / f"s.{rank}").read_text()
        found = re.search(r"STARTUP \d+ bytes from the spawner \(\d+ exchanges, (\d+) lookups", text)
        # its 14 peers on other hosts (its host's other rank shares memory with it)
        assert found and int(found.group(1)) == 14, f"rank {rank}: {text[-1500:]}"


def test_v_stamps_each_step_of_start_up(cluster, udp_opt):
    """-v's start-up times (issue 36): every step of start-up, in order, with the seconds since
    gasnetrun started; each bootstrap collective with the bytes every rank received."""
    hosts = cluster.hosts(4)
    result = launch(cluster, udp_opt, ["-v", "-n", "8", "-H", ",".join(hosts),
                                       udp_opt.program("examples", "hello_ring")])
    assert result.returncode == 0, result.describe()
    stamps = [(float(t), what) for t, what in
              re.findall(r"^gasnetrun: \+(\d+\.\d{3}) s: (.*)$", result.stderr, re.M)]
    steps = [what for _, what in stamps]
    assert steps[:2] == ["starting 3 agent(s)", "3 agent(s) started, joining"], steps
    for host in hosts[1:]:
        assert steps.index(f"agent of host {host} joined") < \
            steps.index(f"host {host} checked") < \
            steps.index("every host checked (4 agent(s), depth 1)"), steps
    assert steps.index("every host checked (4 agent(s), depth 1)") < \
        steps.index("this host's 2 rank(s) started"), steps
    collectives = [what for what in steps if what.startswith("bootstrap collective")]
    assert collectives and collectives[0].startswith("bootstrap collective 0 done: "), steps
    # (blobs are per rank, of one size for every rank within a collective)
    assert all(int(re.search(r"(\d+) bytes", c)[1]) % 8 == 0 for c in collectives), collectives
    # Ranks group into hosts by a hash of the host's name, and each name then comes cut among
    # its host's ranks (issue 36): in all a rank receives less than every rank's name would take
    # alone (64 bytes a rank), where each rank's name used to come to every rank.
    assert sum(int(re.search(r"(\d+) bytes", c)[1]) for c in collectives) < 64 * 8, collectives
    times = [t for t, _ in stamps]
    assert times == sorted(times) and times[0] > 0, stamps
    quiet = launch(cluster, udp_opt, ["-n", "8", "-H", ",".join(hosts),
                                      udp_opt.program("examples", "hello_ring")])
    assert quiet.returncode == 0 and "gasnetrun: +" not in quiet.stderr, quiet.describe()


def test_environment_travels_except_the_deny_list(cluster, udp_opt):
    """A variable set only in the caller reaches every rank on every host; a deny-listed one
    (DISPLAY) stays off the other hosts; the ranks run in the caller's directory."""
    result = launch(cluster, udp_opt,
                    ["-n", "6", "-H", hosts_arg(cluster, 3), udp_opt.test_program("env_test"),
                     "CALLER_ONLY_VAR", "DISPLAY"],
                    env={"CALLER_ONLY_VAR": "a value with spaces 'and' quotes", "DISPLAY": ":7"})
    assert result.returncode == 0, result.describe()
    lines = env_lines(result)
    assert len(lines) == 12, result.describe()
    for rank, host, cwd, name, value in lines:
        assert cwd == str(Path(udp_opt.path).parent), (rank, cwd)
        if name == "CALLER_ONLY_VAR":
            assert value == "a value with spaces 'and' quotes", (rank, host, value)
        elif host != "h1":
            assert value == "<unset>", f"DISPLAY reached rank {rank} on {host}"


def test_env_only_restricts_what_travels(cluster, udp_opt):
    result = launch(cluster, udp_opt,
                    ["--env-only", "-E", "KEEP_ME", "-n", "2", "-H", hosts_arg(cluster, 2),
                     udp_opt.test_program("env_test"), "KEEP_ME", "DROP_ME"],
                    env={"KEEP_ME": "1", "DROP_ME": "1"})
    assert result.returncode == 0, result.describe()
    remote = {(name, value) for _, host, _, name, value in env_lines(result) if host == "h2"}
    assert remote == {("KEEP_ME", "1"), ("DROP_ME", "<unset>")}, result.describe()


@pytest.mark.parametrize("args,code", [
    (["collective", "0"], 0),
    (["one", "5", "7"], 7),
    (["return"], 0),
    (["signal", "3", str(int(signal.SIGKILL))], 128 + int(signal.SIGKILL)),
])
def test_exit_codes_across_hosts(cluster, udp_opt, args, code):
    result = launch(cluster, udp_opt, ["-n", "8", "-H", hosts_arg(cluster, 4),
                                       udp_opt.test_program("exit_test"), *args])
    assert result.returncode == code, result.describe()
    assert not wait_for_no_agents(), "agents outlived their job"


# ---- jobs that must be refused before launch -------------------------------------------------
@pytest.mark.parametrize("which,problem", [
    ("unreachable", "could not start"),
    ("keyless", "could not start"),
    ("noprog", "hello_ring-seq"),
])
def test_bad_host_is_named_and_nothing_starts(cluster, udp_opt, which, problem):
    bad = {"unreachable": cluster.unreachable, "keyless": cluster.keyless,
           "noprog": cluster.noprog}[which]
    hosts = f"{cluster.address(1)},{cluster.address(2)},{bad}"
    result = launch(cluster, udp_opt, ["-n", "3", "-H", hosts,
                                       udp_opt.program("examples", "hello_ring")], timeout=60)
    assert result.returncode == 2, result.describe()
    named = [line for line in result.stderr.splitlines() if bad in line]
    assert named and any(problem in line for line in named), result.stderr
    assert "hello from" not in result.stdout
    assert not wait_for_no_agents(), "agents outlived the refused job"


# ---- start-up deadlines -------------------------------------------------------------------------
def slow_login_ssh(tmp_path: Path, hosts: str, seconds: float) -> str:
    """GASNET_SSH_CMD: ssh whose login to the hosts matching a shell pattern takes this long
    first, as a slow shell start-up file (pyenv, conda, modules) makes it."""
    script = tmp_path / "slow-ssh"
    script.write_text("#!/bin/sh\n"
                      "n=$(($# - 1)); eval host=\\${$n}\n"  # ssh ... HOST COMMAND
                      f"case \"$host\" in {hosts}) sleep {seconds} ;; esac\n"
                      "exec ssh \"$@\"\n")
    script.chmod(0o755)
    return str(script)


def test_the_start_deadline_grows_with_the_depth_of_the_agent_tree(cluster, udp_opt, tmp_path):
    """A chain of 4 hosts (out-degree 1: each agent starts the next) whose logins take 2 s
    each, with 5 s a level: the first child's subtree has 3 levels and about 8 s of logins and
    starts, more than one level's time but within its 3 levels'."""
    result = launch(cluster, udp_opt, ["-n", "4", "-H", hosts_arg(cluster, 4),
                                       udp_opt.program("examples", "hello_ring")],
                    env={"GASNET_SSH_OUT_DEGREE": "1", "GASNET_SSH_START_TIMEOUT": "5",
                         "GASNET_SSH_CMD": slow_login_ssh(tmp_path, "*", 2)}, timeout=120)
    assert result.returncode == 0, result.describe()
    assert result.stdout.count("hello from") == 4, result.describe()
    # Logins of 2 s are below the report's threshold (5 s, or a quarter of the deadline).
    assert "ssh login took" not in result.stderr, result.stderr


def test_a_slow_login_is_measured_apart_from_the_agent_and_reported(cluster, udp_opt, tmp_path):
    """Logins of 6 s to two of three hosts: the job starts (the deadline allows for a slow
    login) and the launcher says which hosts' logins were slow, apart from their agents."""
    slow = cluster.hosts(3)[1:]
    result = launch(cluster, udp_opt, ["-n", "3", "-H", hosts_arg(cluster, 3),
                                       udp_opt.program("examples", "hello_ring")],
                    env={"GASNET_SSH_START_TIMEOUT": "20",
                         "GASNET_SSH_CMD": slow_login_ssh(tmp_path, "|".join(slow), 6)},
                    timeout=120)
    assert result.returncode == 0, result.describe()
    assert result.stdout.count("hello from") == 3, result.describe()
    m = re.search(r"gasnetrun: hosts? (\S+): warning: ssh login took (\d+) s before the agent "
                  r"ran: its shell start-up files \(~/\.bashrc, conda, environment modules\)\?",
                  result.stderr)
    assert m and 6 <= int(m[2]) <= 20, result.stderr
    assert cluster.hosts(3)[0] not in result.stderr, result.stderr


def test_a_host_whose_login_outlasts_its_deadline_is_named_with_the_knob(cluster, udp_opt,
                                                                         tmp_path):
    slow = cluster.hosts(3)[2]
    result = launch(cluster, udp_opt, ["-n", "3", "-H", hosts_arg(cluster, 3),
                                       udp_opt.program("examples", "hello_ring")],
                    env={"GASNET_SSH_START_TIMEOUT": "2",
                         "GASNET_SSH_CMD": slow_login_ssh(tmp_path, slow, 30)}, timeout=120)
    assert result.returncode == 2, result.describe()
    assert re.search(rf"host {re.escape(slow)}: its ssh login had not finished after 2\.\d s "
                     r"\(slow shell start-up files: ~/\.bashrc, conda, environment modules\?\); "
                     r"GASNET_SSH_START_TIMEOUT=2 s for each level of the agent tree gives more",
                     result.stderr), result.stderr
    assert result.stderr.count("had not finished") == 1, result.stderr
    assert "hello from" not in result.stdout
    assert not wait_for_no_agents(40), "agents outlived the refused job"


# ---- interruptions and failures ---------------------------------------------------------------
def start_job(cluster: Cluster, build: Build, args: list[str],
              env: dict[str, str] | None = None) -> subprocess.Popen:
    return subprocess.Popen(cluster.inside(1, [build.gasnetrun, *args]),
                            env=cluster_env(cluster, env), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL)


def running_ranks(program: str) -> int:
    """Processes on this module's hosts whose argv[0] is `program` (the launcher's own command
    line names it too)."""
    found = 0
    for pid in pids_in_namespaces(CLUSTER_PREFIX[0]):
        try:
            found += Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0] == \
                program.encode()
        except OSError:
            continue
    return found


def wait_for_ready(job: subprocess.Popen, count: int, seconds: float = 60) -> None:
    """Until `count` ranks of exit_test said "ready" (attached: their shared-memory objects
    are unlinked, so a rank killed from now on leaves none behind). Reads the pipe's raw
    bytes: a buffered reader could hold lines where select cannot see them."""
    import select
    assert job.stdout is not None
    fd = job.stdout.fileno()
    deadline = time.monotonic() + seconds
    text = b""
    while text.count(b"ready rank") < count:
        left = deadline - time.monotonic()
        assert left > 0, f"only {text.count(b'ready rank')} of {count} ranks became ready"
        if select.select([fd], [], [], left)[0]:
            chunk = os.read(fd, 65536)
            assert chunk, f"the job ended before {count} ranks were ready: {text!r}"
            text += chunk


def descendants(pid: int) -> list[int]:
    found, todo = [], [pid]
    while todo:
        p = todo.pop()
        try:
            kids = [int(k) for k in Path(f"/proc/{p}/task/{p}/children").read_text().split()]
        except OSError:
            continue
        found += kids
        todo += kids
    return found


def wait_for_ssh_child(job: subprocess.Popen, seconds: float = 60) -> None:
    """Until the launcher runs ssh to some host (start-up under way): an event, sampled."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        for pid in descendants(job.pid):
            try:
                argv0 = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0]
            except OSError:
                continue
            if argv0.rsplit(b"/", 1)[-1] == b"ssh":
                return
        assert job.poll() is None, "the job ended before it started any ssh"
        time.sleep(0.01)
    raise AssertionError(f"the launcher started no ssh within {seconds:g} s")


def test_ctrl_c_during_startup(cluster, udp_opt):
    job = start_job(cluster, udp_opt, ["-n", "8", "-H", hosts_arg(cluster, 4),
                                       udp_opt.test_program("exit_test"), "hang"])
    wait_for_ssh_child(job)  # ssh connections are being made
    job.send_signal(signal.SIGINT)
    out, err = job.communicate(timeout=60)
    assert job.returncode == 128 + signal.SIGINT, err
    assert not wait_for_no_agents(), "agents outlived an interrupted start-up"


def test_ctrl_c_reaches_every_host(cluster, udp_opt):
    job = start_job(cluster, udp_opt, ["-n", "8", "-H", hosts_arg(cluster, 4),
                                       udp_opt.test_program("exit_test"), "hang"])
    wait_for_ready(job, 8)
    job.send_signal(signal.SIGINT)
    out, err = job.communicate(timeout=60)
    assert job.returncode == 128 + signal.SIGINT, err
    assert not wait_for_no_agents()


@pytest.mark.parametrize("conduit", ["udp", "ofi"])
def test_a_vanished_host_ends_the_job_naming_it(cluster, conduit):
    build = built("opt", conduit)
    job = start_job(cluster, build, ["-n", "6", "-H", hosts_arg(cluster, 3),
                                     build.test_program("exit_test"), "hang"],
                    env={"GASNET_EXITTIMEOUT": "3", "GASNET_SUPERNODE_MAXSIZE": "1",
                         **build.conduit_env()})
    wait_for_ready(job, 6)
    os.kill(agent_on(3), signal.SIGKILL)
    out, err = job.communicate(timeout=60)
    assert job.returncode != 0, err
    assert cluster.address(3) in err, err
    assert not wait_for_no_agents()


def test_ranks_of_a_lost_host_are_reported_without_a_made_up_pid(cluster, udp_opt):
    """Ranks whose agent vanished before reporting their ends were "pid 0" (issue 38, item
    18): their pid is unknown, and -v says so."""
    job = start_job(cluster, udp_opt, ["-v", "-n", "4", "-H", hosts_arg(cluster, 2),
                                       udp_opt.test_program("exit_test"), "hang"],
                    env={"GASNET_EXITTIMEOUT": "3"})
    wait_for_ready(job, 4)
    os.kill(agent_on(2), signal.SIGKILL)
    out, err = job.communicate(timeout=60)
    assert job.returncode != 0, err
    assert "(pid 0," not in err, err
    assert re.search(rf"rank [23] \(pid unknown, host {re.escape(cluster.address(2))}\) ended",
                     err), err
    assert not wait_for_no_agents()


def test_kill_9_of_the_launcher_leaves_nothing_on_any_host(cluster, udp_opt):
    job = start_job(cluster, udp_opt, ["-n", "8", "-H", hosts_arg(cluster, 4),
                                       udp_opt.test_program("exit_test"), "hang"])
    wait_for_ready(job, 8)
    job.kill()
    job.communicate(timeout=30)
    assert not wait_for_no_agents(20), "agents outlived kill -9 of gasnetrun"
    procs, shm = wait_for_nothing_left(20)
    assert not procs and not shm, (procs, shm)


def test_sigint_to_a_remote_agent_ends_the_job_without_a_traceback(cluster, udp_opt):
    """kill -INT of a remote agent (issue 38, item 16): its ranks get the signal, as from a
    Ctrl-C, and the user's terminal shows no KeyboardInterrupt traceback from the agent."""
    job = start_job(cluster, udp_opt, ["-n", "4", "-H", ",".join(cluster.hosts(3)[1:]),
                                       udp_opt.test_program("exit_test"), "hang"])
    wait_for_ready(job, 4)
    os.kill(agent_on(2), signal.SIGINT)
    out, err = job.communicate(timeout=60)
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
    assert job.returncode == 128 + signal.SIGINT, err
    assert not wait_for_no_agents()


# ---- standard input and output across hosts (issue 38, items 4 and 17) ------------------------
def shell_rank(tmp_path: Path, body: str) -> str:
    script = tmp_path / "rank.sh"
    script.write_text(f"#!/bin/sh\n{body}\n")
    script.chmod(0o755)
    return str(script)


def test_a_remote_rank_0_reads_standard_input_from_a_file(cluster, udp_opt, tmp_path):
    program = shell_rank(tmp_path, 'echo "rank $GASNETRUN_RANK read: $(cat | wc -c) bytes"')
    data = tmp_path / "input"
    data.write_bytes(b"x" * 200000)  # more than one read's worth
    with open(data, "rb") as stdin:
        proc = subprocess.run(cluster.inside(1, [udp_opt.gasnetrun, "-n", "2", "-H",
                                                 ",".join(cluster.hosts(3)[1:]), program]),
                              env=cluster_env(cluster), capture_output=True, text=True,
                              timeout=120, stdin=stdin)
    assert proc.returncode == 0, proc.stderr
    assert "rank 0 read: 200000 bytes" in proc.stdout, (proc.stdout, proc.stderr)
    assert "rank 1 read: 0 bytes" in proc.stdout, (proc.stdout, proc.stderr)


def test_a_partial_last_line_is_left_as_it_is_on_every_host(cluster, udp_opt, tmp_path):
    """A rank's output that ends without a newline reaches the terminal as it is, from this
    host (written directly) and from the others (relayed by agents) alike."""
    program = shell_rank(tmp_path, "printf '[%s]' \"$GASNETRUN_RANK\"")
    result = launch(cluster, udp_opt, ["-n", "3", "-H", ",".join(cluster.hosts(2)), program])
    assert result.returncode == 0, result.describe()
    assert sorted(re.findall(r"\[\d\]", result.stdout)) == ["[0]", "[1]", "[2]"], result.stdout
    assert "\n" not in result.stdout, repr(result.stdout)


# ---- the start-up benchmark ---------------------------------------------------------------------
BENCH = Path(__file__).resolve().parent / "perf" / "launch_bench.py"


def test_launch_bench_reports_records(cluster, udp_opt):
    """The benchmark builds its own hosts (apart from this module's) and reports records."""
    import json
    proc = subprocess.run(["/usr/bin/python3", str(BENCH), "--json", "--repeats", "1",
                           "--only", "gasnetrun_4x4"], capture_output=True, text=True,
                          timeout=180)
    assert proc.returncode == 0, proc.stderr
    records = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [(r["bench"], r["ranks"], r["hosts"], r["n"]) for r in records] == \
        [("gasnetrun_4x4", 16, 4, 1)], proc.stdout
    assert records[0]["median"] > 0
    listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    assert "gb_" not in listed, "the benchmark left its hosts behind"


@pytest.mark.parametrize("args", [["--only", "nonesuch"], ["--repeats", "0"]])
def test_launch_bench_usage_errors(args):
    proc = subprocess.run(["/usr/bin/python3", str(BENCH), *args], capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 2 and "launch_bench.py:" in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr


# ---- a stalled peer, and a parent that falls silent (issue 38, items 2, 3 and 3b) --------------
def start_fed_job(cluster: Cluster, build: Build, args: list[str],
                  env: dict[str, str] | None = None) -> subprocess.Popen:
    """A job whose stdin is a pipe the test writes (binary, unbuffered)."""
    return subprocess.Popen(cluster.inside(1, [build.gasnetrun, *args]),
                            env=cluster_env(cluster, env), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, stdin=subprocess.PIPE, bufsize=0)


def feed_until_held(job: subprocess.Popen, cap: int, idle: float = 3.0) -> int:
    """Writes to the job's stdin until it takes nothing more for `idle` seconds, or `cap` bytes
    went in; returns how many did."""
    import select
    assert job.stdin is not None
    fd = job.stdin.fileno()
    os.set_blocking(fd, False)
    chunk, total = b"y\n" * 32768, 0
    while total < cap:
        if not select.select([], [fd], [], idle)[1]:
            break  # held: nothing taken for `idle` seconds
        try:
            total += os.write(fd, chunk)
        except BlockingIOError:
            continue
        except BrokenPipeError:  # the job ended: its output says why
            break
    os.set_blocking(fd, True)
    return total


def test_stdin_a_remote_rank_0_does_not_read_holds_the_launcher_not_memory(cluster, udp_opt,
                                                                          tmp_path):
    """`yes | gasnetrun -n 2 -H h2,h3 prog` whose rank 0 does not read stdin grew h2's agent to
    3 GB in 9 s (issue 38, item 3). At most a window of input is on its way to rank 0: the
    launcher stops reading until rank 0 takes some, and what was taken arrives whole."""
    go = tmp_path / "go"
    program = shell_rank(tmp_path, f'''
echo "ready rank $GASNETRUN_RANK"
while [ ! -e {go} ]; do sleep 0.05; done
[ "$GASNETRUN_RANK" = 0 ] && echo "rank 0 read: $(wc -c) bytes"
exit 0''')
    job = start_fed_job(cluster, udp_opt, ["-n", "2", "-H", ",".join(cluster.hosts(3)[1:]),
                                           program])
    try:
        wait_for_ready(job, 2)
        cap = 128 << 20
        taken = feed_until_held(job, cap)
        assert taken < 32 << 20, f"the launcher took {taken} bytes its rank 0 did not read"
        go.touch()
        assert job.stdin is not None
        job.stdin.close()
        job.stdin = None  # (communicate would flush it)
        out, err = job.communicate(timeout=120)
    finally:
        if job.poll() is None:
            job.kill()
            job.communicate()
    assert job.returncode == 0, err.decode(errors="replace")
    assert f"rank 0 read: {taken} bytes".encode() in out, (out, err)


def test_agents_end_their_ranks_when_their_parent_falls_silent(cluster, udp_opt):
    """A launcher whose host froze or vanished with its network sends no FIN or RST: its
    agents kept their ranks running for good (issue 38, item 3b). A child agent gives up a
    parent silent for the exit timeout, as a parent gives up a silent child."""
    program = udp_opt.test_program("exit_test")
    job = start_job(cluster, udp_opt, ["-n", "4", "-H", ",".join(cluster.hosts(3)[1:]),
                                       program, "hang"], env={"GASNET_EXITTIMEOUT": "3"})
    try:
        wait_for_ready(job, 4)
        os.kill(job.pid, signal.SIGSTOP)  # its ssh sessions stay open, silent
        assert not wait_for_no_agents(60), "agents outlived a silent parent"
        deadline = time.monotonic() + 20
        while running_ranks(program) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not running_ranks(program), "ranks outlived their agents"
    finally:
        job.kill()
        os.kill(job.pid, signal.SIGCONT)
        job.communicate(timeout=60)


def wait_for_stderr(job: subprocess.Popen, needle: bytes, seconds: float = 30) -> None:
    import select
    assert job.stderr is not None
    fd, text = job.stderr.fileno(), b""
    deadline = time.monotonic() + seconds
    while needle not in text:
        left = deadline - time.monotonic()
        assert left > 0, f"no {needle!r} on stderr: {text!r}"
        if select.select([fd], [], [], left)[0]:
            chunk = os.read(fd, 65536)
            assert chunk, f"the job ended without {needle!r}: {text!r}"
            text += chunk


@pytest.mark.parametrize("ctrl_c", [False, True])
def test_a_frozen_host_holds_neither_the_launcher_nor_its_ranks(cluster, udp_opt, ctrl_c):
    """`yes | gasnetrun -n 2 -H h2,h3 prog`, then h2 freezes (its agent stopped): the launcher
    was held ~90 s by writes to h2, ignored Ctrl-C, blamed h3 too, and left h2's rank running
    (issue 38, item 2). Now nothing the launcher writes can block it: a second Ctrl-C ends the
    job with 130 within a few heartbeats, or the exit timeout names h2 alone; either way h2's frozen agent is killed
    over a new ssh connection, and its rank with it."""
    program = udp_opt.test_program("exit_test")
    job = start_fed_job(cluster, udp_opt, ["-n", "2", "-H", ",".join(cluster.hosts(3)[1:]),
                                           program, "hang"],
                        env={"GASNET_EXITTIMEOUT": "60" if ctrl_c else "5"})
    frozen = 0
    try:
        wait_for_ready(job, 2)
        frozen = agent_on(2)
        os.kill(frozen, signal.SIGSTOP)
        feed_until_held(job, 64 << 20)
        if ctrl_c:  # twice: the second one means "stop waiting for the ranks"
            job.send_signal(signal.SIGINT)
            wait_for_stderr(job, b"received SIGINT: ending the job")
            job.send_signal(signal.SIGINT)
        out, err = job.communicate(timeout=50)
        text = err.decode(errors="replace")
        if ctrl_c:
            assert job.returncode == 128 + signal.SIGINT, text
        else:
            assert job.returncode != 0, text
            assert f"the agent of host {cluster.address(2)} stopped answering" in text, text
            assert f"host {cluster.address(3)} stopped" not in text, text
        deadline = time.monotonic() + 20  # the reaper's ssh runs as the launcher ends
        while running_ranks(program) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not running_ranks(program), "the frozen host's rank outlived the job"
    finally:
        if frozen:
            with contextlib.suppress(ProcessLookupError):
                os.kill(frozen, signal.SIGCONT)
        if job.poll() is None:
            job.kill()
            job.communicate()
    assert not wait_for_no_agents()
