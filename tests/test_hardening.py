"""Defects an adversarial run found, each kept fixed: a hostile neighbour on the control socket,
a client breaking API rules, and inputs that used to end in a traceback or leave files behind."""
from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import struct
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from conftest import ROOT, built, job_env
from watch import watch


# ---- a hostile neighbour on the control socket ----------------------------------------------
def control_sockets() -> set[str]:
    """Abstract Unix sockets of running agents ('@gasnetrun-<job>-<agent>-<random>')."""
    names = set()
    for line in Path("/proc/net/unix").read_text().splitlines()[1:]:
        fields = line.split()
        if len(fields) >= 8 and fields[7].startswith("@gasnetrun-"):
            names.add(fields[7])
    return names


def job_id(gasnetrun_pid: int) -> str:
    """The job id gasnetrun (this pid) gave its job: r<pid>x<random> (job.new_jobid)."""
    return f"r{gasnetrun_pid}x"


def connect(name: str) -> socket.socket:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect("\0" + name[1:])
    return sock


def attack(name: str) -> None:
    """Everything an unauthenticated local process might send; none of it may disturb the job.
    Last, a well-formed HELLO for rank 0 with a wrong cookie: only the cookie tells it from
    the rank (which is connected already: taken for a rank, it would end the job)."""
    hello, exchange = 1, 2
    payloads = [os.urandom(4096),
                b"GET / HTTP/1.1\r\nHost: localhost\r\n\r\n",
                struct.pack("=II", hello, 100 << 20),  # a header claiming 100 MiB
                struct.pack("=II", exchange, 60 << 20) + bytes(60 << 20),  # and sending 60
                struct.pack("=II", hello, 40) + struct.pack("=32sII", b"0" * 32, 0, os.getpid())]
    for data in payloads:
        with connect(name) as sock:
            try:
                sock.sendall(data)
            except OSError:
                pass  # dropped while sending: what should happen
    idle = []
    try:
        for _ in range(1000):
            idle.append(connect(name))
    except OSError:
        pass  # the listener's backlog is full: also fine, the job must not notice
    time.sleep(0.5)
    for sock in idle:
        sock.close()


def test_unauthenticated_bytes_on_the_control_socket_leave_the_job_undisturbed(opt_build):
    import resource
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 4096), hard))
    release = Path(tempfile.mkdtemp()) / "release"
    proc = subprocess.Popen([opt_build.gasnetrun, "-v", "-n", "2",
                             opt_build.test_program("misuse_test"), "hold", str(release)],
                            env=job_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    out, err = watch(proc)
    try:
        for _ in range(2):  # both ranks are in (authenticated), and hold until released
            out.wait_for(r"rank \d+ pid \d+ attached")
        names = {n for n in control_sockets() if n.startswith(f"@gasnetrun-")}
        mine = [n for n in names if job_id(proc.pid) in n]
        assert mine, f"the job's control socket is not among {sorted(names)}"
        attack(mine[0])
        err.wait_for("dropped a connection: a connection presented a wrong cookie")
        assert proc.poll() is None, "the job ended during the attack"
        release.touch()
        proc.wait(timeout=120)
    finally:
        proc.kill()
        shutil.rmtree(release.parent, ignore_errors=True)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    assert proc.returncode == 0, err.rest()
    assert out.rest().count("lingered") == 2, "".join(out.seen)


def test_the_control_socket_name_is_not_the_job_id_alone(opt_build):
    """The job id is public (/proc/net/unix shows the sockets of agents already up): a name
    made of it and the agent's index alone could be taken first by any local user, and the
    job would not start (issue 38, item 6). The name carries 64 random bits."""
    release = Path(tempfile.mkdtemp()) / "release"
    proc = subprocess.Popen([opt_build.gasnetrun, "-v", "-n", "2",
                             opt_build.test_program("misuse_test"), "hold", str(release)],
                            env=job_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    out, err = watch(proc)
    try:
        out.wait_for(r"rank \d+ pid \d+ attached")
        mine = [n for n in control_sockets() if job_id(proc.pid) in n]
        release.touch()
        proc.wait(timeout=120)
    finally:
        proc.kill()
        shutil.rmtree(release.parent, ignore_errors=True)
    assert len(mine) == 1, mine
    assert re.fullmatch(r"@gasnetrun-r\d+x[0-9a-f]+-0-[0-9a-f]{16}", mine[0]), mine


def test_a_control_socket_name_already_taken_is_a_clean_error(native):
    """Should the name be taken anyway, the agent says which socket and why, as an error of
    the job's start (no traceback)."""
    from gasnetrun.agent.hub import ControlHub, Handlers
    from gasnetrun.agent.ranks import SpawnError
    from gasnetrun.loop import Loop
    name = f"gasnetrun-test-squatted-{os.getpid()}"
    squatter = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    squatter.bind("\0" + name)
    loop = Loop()
    try:
        with pytest.raises(SpawnError) as caught:
            ControlHub(loop, name, "0" * 32, {0}, Handlers())  # no connection reaches it
    finally:
        loop.close()
        squatter.close()
    assert str(caught.value) == (f"cannot open the job's control socket @{name}: Address already "
                                 "in use (another process holds that name)")


# ---- a hostile neighbour on the wake sockets ---------------------------------------------------
def wake_sockets() -> set[str]:
    """Abstract datagram sockets of sleeping ranks ('@gasnet-<job>-w<rank>-<tag>-<host>':
    anyone on the host can send to them)."""
    names = set()
    for line in Path("/proc/net/unix").read_text().splitlines()[1:]:
        fields = line.split()
        if len(fields) >= 8 and re.fullmatch(r"@gasnet-.*-w\d+-[0-9a-f]{16}-.*", fields[7]):
            names.add(fields[7])
    return names


def test_a_flood_on_the_wake_sockets_keeps_ranks_awake_but_the_job_correct(opt_build):
    # Ranks sleeping in their waits (GASNET_WAIT_MODE=block) are sent garbage without pause
    # for the whole job: it only wakes them; every wait still ends by what it waits for.
    proc = subprocess.Popen([opt_build.gasnetrun, "-n", "4", opt_build.test_program("sleep_test"),
                             "200"], env=job_env({"GASNET_WAIT_MODE": "block"}),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    sent = 0
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
        sock.setblocking(False)
        while proc.poll() is None:
            for name in wake_sockets():
                for payload in (os.urandom(64), b"", os.urandom(1)):
                    try:
                        sock.sendto(payload, "\0" + name[1:])
                        sent += 1
                    except OSError:
                        pass  # full, or the rank is gone: what a real flood meets too
    out, err = proc.communicate(timeout=120)
    assert sent > 0, "no wake socket was found while the job ran"
    assert proc.returncode == 0, err
    for rank in range(4):
        assert f"sleep_test: rank {rank} OK" in out, out + err


# ---- a hostile neighbour in /dev/shm -----------------------------------------------------------
# Run as each rank: before the program starts, a process of another user (nobody) creates
# every /dev/shm name the ranks could make from what any local user sees: the job id (listed
# in /proc/net/unix with gasnetrun's control socket), the host, the agent's pid and the ranks;
# and libfabric's shm provider's default region names for this process ("<pid>:<n>:<n>").
DECOYS = """
import os, socket, string, sys
jobid, agent, nranks = os.environ["GASNETRUN_JOBID"], os.environ["GASNETRUN_PID"], int(sys.argv[1])
host, me = socket.gethostname(), os.getpid()  # (exec keeps the pid: the rank's own)
names = [f"gasnet-{jobid}-{host}-{kind}{rank}{suffix}" for kind in string.ascii_lowercase
         for rank in range(nranks) for suffix in ("", "." + agent)]
names += [f"{me}:{ep}:{domain}" for ep in range(4) for domain in range(4)]
if os.fork() == 0:
    os.setgroups([]); os.setgid(65534); os.setuid(65534)
    for name in names:
        try:
            os.close(os.open("/dev/shm/" + name, os.O_CREAT | os.O_EXCL | os.O_RDWR, 0o600))
        except FileExistsError:
            pass
    os._exit(0)
os.wait()
os.execv(sys.argv[2], sys.argv[2:])
"""


@pytest.mark.parametrize("conduit,flavour", [("smp", ""), ("ofi", "shm")])
def test_shared_memory_names_a_local_user_can_compute_do_not_stop_a_job(tmp_path, conduit,
                                                                         flavour):
    build = built("opt", conduit, flavour)
    wrapper = tmp_path / "decoys.py"
    wrapper.write_text(DECOYS)
    result = build.run(["-n", "4", "/usr/bin/python3", str(wrapper), "4",
                        build.test_program("info_test")], timeout=120)
    decoys = [p for p in Path("/dev/shm").iterdir()
              if p.name.startswith("gasnet-r") or re.fullmatch(r"\d+:\d:\d", p.name)]
    decoys = [p for p in decoys if p.stat().st_uid == 65534]
    try:
        assert result.returncode == 0, result.describe()
        assert "File exists" not in result.stderr, result.stderr
        # The decoys are another user's: the launcher's clean-up leaves them alone.
        assert len(decoys) == 26 * 4 * 2 + 4 * 16, len(decoys)
    finally:
        for path in decoys:
            path.unlink(missing_ok=True)


# ---- a client breaking the API's rules -------------------------------------------------------
@pytest.mark.parametrize("mode,env,message", [
    ("internal-handler", {},
     "to handler 2: indices 0..127 belong to the runtime; a client sends only to the handlers "
     "it registered"),
    ("barrier-in-handler", {},
     "gasnet_barrier_notify called inside an AM handler: barriers may only be called outside"),
    # An explicit handle exists only on the AM path (direct PSHM puts complete at once).
    ("double-wait", {"GASNET_SUPERNODE_MAXSIZE": "1"},
     "gasnet_wait_syncnb: handle 0x"),
])
def test_api_misuse_is_a_fatal_error_naming_the_rule(build, mode, env, message):
    result = build.job(2, "misuse_test", mode, env=env, timeout=60)
    assert result.returncode != 0 and message in result.stderr, result.describe()
    assert "was not stopped" not in result.stderr


# ---- launcher inputs that used to end in a traceback -----------------------------------------
def test_env_file_that_is_not_utf8_is_named(opt_build, tmp_path):
    bad = tmp_path / "bad.env"
    bad.write_bytes(b"GOOD=1\nNAME=caf\xe9\n")
    result = opt_build.run(["-n", "1", "--env-file", str(bad), "/bin/true"])
    assert result.returncode == 2 and f"{bad}:2: byte 0xe9 is not" in result.stderr, \
        result.describe()
    assert "Traceback" not in result.stderr


def test_env_file_with_a_nul_byte_is_named(opt_build, tmp_path):
    bad = tmp_path / "nul.env"
    bad.write_bytes(b"NAME=a\0b\n")
    result = opt_build.run(["-n", "1", "--env-file", str(bad), "/bin/true"])
    assert result.returncode == 2 and f"{bad}:1: the line contains a NUL byte" in result.stderr, \
        result.describe()


def test_a_value_too_long_for_exec_is_refused_before_launch(opt_build, tmp_path):
    big = tmp_path / "big.env"
    big.write_text("HUGE=" + "x" * 200_000 + "\n")
    result = opt_build.run(["-n", "2", "--env-file", str(big),
                            opt_build.test_program("exit_test"), "return"])
    assert result.returncode == 2 and "HUGE" in result.stderr, result.describe()
    assert "Traceback" not in result.stderr and "131072" in result.stderr


def test_whitespace_only_knob_is_unset_on_both_sides(variant_build):
    result = variant_build.job(2, "info_test", env={"GASNET_MAX_SEGSIZE": "  "})
    assert result.returncode == 0, result.describe()


def test_a_segment_budget_of_nothing_is_refused_before_launch_with_the_numbers(opt_build):
    result = opt_build.job(2, "exit_test", "return", env={"GASNET_MAX_SEGSIZE": "1/H"})
    assert result.returncode == 2, result.describe()
    assert re.search(r"GASNET_MAX_SEGSIZE.*\d", result.stderr) and "Traceback" not in result.stderr


def test_a_long_tmpdir_works(opt_build, tmp_path):
    deep = tmp_path / ("d" * 120) / ("e" * 120)
    deep.mkdir(parents=True)
    result = opt_build.run(["-n", "2", opt_build.test_program("exit_test"), "return"],
                           env={"TMPDIR": str(deep)})
    assert result.returncode == 0, result.describe()
    assert not list(deep.iterdir()), "the job left files in TMPDIR"


def test_too_few_file_descriptors_are_refused_naming_both_numbers(opt_build):
    result = opt_build.run(["-n", "64", opt_build.test_program("exit_test"), "return"])
    assert result.returncode == 0, result.describe()  # 64 ranks fit the default limits
    proc = subprocess.run(["prlimit", "--nofile=100:100", opt_build.gasnetrun, "-n", "64",
                           opt_build.test_program("exit_test"), "return"],
                          env=job_env(), capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2, proc.stderr
    assert re.search(r"needs about \d+ file descriptors .* soft 100, hard 100", proc.stderr), \
        proc.stderr


def test_the_process_limit_at_spawn_is_named_and_nothing_is_left(opt_build):
    """RLIMIT_NPROC binds only other users than root: run as nobody."""
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        pytest.skip("needs root and setpriv to run as an unprivileged user")
    if any(not (os.stat(p).st_mode & 0o005) for p in [ROOT, *ROOT.parents]):
        pytest.skip(f"{ROOT} is not readable by other users")
    proc = subprocess.run(["prlimit", "--nproc=6:6", "setpriv", "--reuid=65534", "--regid=65534",
                           "--clear-groups", opt_build.gasnetrun, "-n", "12",
                           opt_build.test_program("exit_test"), "return"],
                          env=job_env(), capture_output=True, text=True, timeout=60, cwd="/tmp")
    assert proc.returncode != 0 and "Traceback" not in proc.stderr
    assert re.search(r"cannot start rank \d+: the process limit is reached \(EAGAIN; "
                     r"RLIMIT_NPROC soft 6, hard 6\)", proc.stderr), proc.stderr


# ---- what a killed launcher leaves, and signals meant for the application --------------------
def test_stale_directories_of_dead_launchers_are_removed(opt_build):
    stale = Path(tempfile.mkdtemp(prefix="gasnetrun-"))
    (stale / "owner").write_text("4194000 12345\n")  # a pid that is not running
    (stale / "agent.log").write_text("left by a launcher killed with SIGKILL\n")
    alive = Path(tempfile.mkdtemp(prefix="gasnetrun-"))
    (alive / "owner").write_text(
        f"{os.getpid()} {Path(f'/proc/{os.getpid()}/stat').read_text().rsplit(')', 1)[1].split()[19]}\n")
    try:
        result = opt_build.job(1, "exit_test", "return")
        assert result.returncode == 0, result.describe()
        assert not stale.exists(), "a dead launcher's directory was kept"
        assert alive.exists(), "a live launcher's directory was removed"
    finally:
        shutil.rmtree(stale, ignore_errors=True)
        shutil.rmtree(alive, ignore_errors=True)


@pytest.mark.parametrize("signum", [signal.SIGUSR1, signal.SIGUSR2])
def test_application_signals_reach_every_rank(opt_build, signum):
    proc = subprocess.Popen([opt_build.gasnetrun, "-n", "2", opt_build.test_program("exit_test"),
                             "hang"], env=job_env(), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        ready = [proc.stdout.readline() for _ in range(2)]
        assert all(line.startswith("ready rank") for line in ready), ready
        proc.send_signal(signum)
        out, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    # The ranks' default action for SIGUSR1/2 ends them; so the job ends with 128+signal.
    assert proc.returncode == 128 + signum, err


def test_verbose_says_which_ranks_the_launcher_ended(opt_build):
    result = opt_build.run(["-v", "-n", "3", opt_build.test_program("exit_test"), "one", "0",
                            "5"], env={"GASNET_EXITTIMEOUT": "3"})
    assert result.returncode == 5, result.describe()
    assert re.search(r"rank 0 .*gasnet_exit\(5\)|rank 0 .*code 5", result.stderr), result.stderr
    ended = re.findall(r"rank (\d) \(pid \d+, host \S+\) ended by the launcher", result.stderr)
    assert sorted(ended) == ["1", "2"], result.stderr
    assert not re.search(r"rank [12] .*failed", result.stderr), result.stderr


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("unshare"),
                    reason="a private /dev/shm needs root and unshare")
def test_a_job_that_does_not_fit_in_shared_memory_is_refused_before_launch(opt_build):
    """64 ranks in a mount namespace whose /dev/shm holds 256 KiB: gasnetrun names what the AM
    queues need and what is free, and starts nothing (the namespace's /dev/shm goes with it)."""
    script = (f"mount -t tmpfs -o size=256k tmpfs /dev/shm && exec {opt_build.gasnetrun} -n 64 "
              f"{opt_build.test_program('exit_test')} return")
    proc = subprocess.run(["unshare", "-m", "sh", "-c", script], env=job_env(),
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert re.search(r"the AM queues of 64 ranks need \d+ bytes of /dev/shm but only 262144 "
                     r"are free", proc.stderr), proc.stderr
    assert "the job was not started (it does not fit in shared memory)" in proc.stderr, proc.stderr
