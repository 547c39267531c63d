"""Fake hosts for multi-host tests: network namespaces on a private bridge, each with its own
host name (UTS namespace) and a key-only sshd, as ../shared/testbed/netns-cluster shows.

Hosts h1..hN answer at 10.78.0.1..N. Two more are broken on purpose: `keyless` runs an sshd
that accepts no key, and `noprog` runs its sshd in a mount namespace where the directory of
the example programs is an empty tmpfs (a program missing on one host). The root namespace
cannot reach them: jobs are launched from inside h1 (`Cluster.launch`)."""
from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

PREFIX = "gt"            # namespace names gt_h1.., gt_sw (the testbed script uses nc_)
NET = "10.78.0"
KEYLESS = 90             # address suffixes of the broken hosts
NOPROG = 91
UNREACHABLE = 99         # on the bridge's subnet, answered by nobody


def run_tag() -> str:
    """Appended to namespace names so that test runs side by side (two worktrees, or pytest-xdist
    workers) build separate clusters: GASNET_TEST_TAG, else the xdist worker's number. Short,
    since a veth name (<prefix><tag>v<N>) holds at most 15 characters."""
    tag = os.environ.get("GASNET_TEST_TAG") or os.environ.get("PYTEST_XDIST_WORKER", "")
    tag = tag.removeprefix("gw")
    if not tag.isalnum() or len(tag) > 4:
        return ""
    return tag


def pids_in_namespaces(prefix: str) -> set[int]:
    """Processes living in the network namespaces whose names start with prefix_: one
    cluster's hosts. All fake hosts share the machine's process table (and other test runs'
    clusters share it too), so this is how a test tells its cluster's processes apart."""
    inodes = set()
    for ns in Path("/run/netns").glob(f"{prefix}_*"):
        try:
            inodes.add(ns.stat().st_ino)
        except OSError:
            pass
    found = set()
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            if entry.joinpath("ns", "net").stat().st_ino in inodes:
                found.add(int(entry.name))
        except (OSError, ValueError):
            continue
    return found


def _run(*cmd: str) -> None:
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def clear_stale_login_lock() -> None:
    """Root's .bashrc here runs `pyenv init`, whose rehash holds a lock file while it runs; a
    login killed meanwhile leaves the file, and every later login (each agent's ssh) then
    waits 60 s for it and gives up. These tests kill logins on purpose (lost hosts, killed
    agents), so before each job they remove such a lock when no rehash is running."""
    lock = Path.home() / ".pyenv" / "shims" / ".pyenv-shim"
    if not lock.exists():
        return
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                if b"pyenv-rehash" in (proc / "cmdline").read_bytes():
                    return  # a rehash holds it now
            except OSError:
                continue
    lock.unlink(missing_ok=True)


def why_not_available() -> str | None:
    if os.geteuid() != 0:
        return "network-namespace hosts need root"
    for tool in ("ip", "unshare", "nsenter", "ssh", "ssh-keygen"):
        if not shutil.which(tool):
            return f"{tool} is not installed"
    if not Path("/usr/sbin/sshd").exists():
        return "openssh-server (/usr/sbin/sshd) is not installed"
    return None


class Cluster:
    def __init__(self, root: Path, count: int, hidden: list[Path], prefix: str = PREFIX,
                 net: str = NET) -> None:
        """prefix and net keep clusters apart (the tests' and a benchmark's may coexist)."""
        self.prefix = prefix + run_tag()
        self.net = net
        self.root = root
        self.count = count
        self.ssh_config = root / "ssh_config"
        self.hidden = [h for h in hidden if h.is_dir()]  # empty on `noprog`
        self.suffixes = [*range(1, count + 1), KEYLESS, NOPROG]

    def address(self, index: int) -> str:
        return f"{self.net}.{index}"

    @property
    def unreachable(self) -> str:
        return self.address(UNREACHABLE)

    def hosts(self, count: int) -> list[str]:
        return [self.address(i) for i in range(1, count + 1)]

    @property
    def keyless(self) -> str:
        return self.address(KEYLESS)

    @property
    def noprog(self) -> str:
        return self.address(NOPROG)

    # ---- building and tearing down --------------------------------------------------------
    def up(self) -> None:
        self.root.mkdir(mode=0o700, parents=True, exist_ok=True)
        Path("/run/sshd").mkdir(exist_ok=True)
        for key in ("host_key", "id_ed25519"):
            if not (self.root / key).exists():
                _run("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(self.root / key))
        shutil.copy(self.root / "id_ed25519.pub", self.root / "authorized_keys")
        (self.root / "authorized_keys").chmod(0o600)
        (self.root / "no_keys").write_text("")
        self.ssh_config.write_text(
            "Host *\n  User root\n"
            f"  IdentityFile {self.root / 'id_ed25519'}\n  IdentitiesOnly yes\n"
            "  StrictHostKeyChecking no\n  UserKnownHostsFile /dev/null\n"
            "  LogLevel ERROR\n  BatchMode yes\n  ConnectTimeout 5\n")
        self.down()  # a previous run killed before its teardown
        _run("ip", "netns", "add", f"{self.prefix}_sw")
        _run("ip", "-n", f"{self.prefix}_sw", "link", "add", "br0", "type", "bridge")
        _run("ip", "-n", f"{self.prefix}_sw", "link", "set", "br0", "up")
        for i in self.suffixes:
            self._host(i)
        self._wait_for_sshd()

    def _host(self, i: int) -> None:
        ns = f"{self.prefix}_h{i}"
        _run("ip", "netns", "add", ns)
        _run("ip", "-n", ns, "link", "set", "lo", "up")
        _run("ip", "link", "add", f"{self.prefix}v{i}", "netns", ns, "type", "veth", "peer", "name",
             f"{self.prefix}p{i}", "netns", f"{self.prefix}_sw")
        _run("ip", "-n", f"{self.prefix}_sw", "link", "set", f"{self.prefix}p{i}", "master",
             "br0", "up")
        _run("ip", "-n", ns, "addr", "add", f"{self.net}.{i}/24", "dev", f"{self.prefix}v{i}")
        _run("ip", "-n", ns, "link", "set", f"{self.prefix}v{i}", "up")
        keys = self.root / ("no_keys" if i == KEYLESS else "authorized_keys")
        conf = self.root / f"sshd_h{i}.conf"
        conf.write_text(
            f"Port 22\nListenAddress {self.net}.{i}\nHostKey {self.root / 'host_key'}\n"
            f"AuthorizedKeysFile {keys}\nPermitRootLogin prohibit-password\n"
            "PasswordAuthentication no\nKbdInteractiveAuthentication no\nUsePAM no\n"
            f"StrictModes no\nPidFile {self.root / f'sshd_h{i}.pid'}\nMaxStartups 100\n"
            "UseDNS no\n")
        start = f"hostname h{i} && exec /usr/sbin/sshd -f {conf} -E {self.root / f'sshd_h{i}.log'}"
        if i == NOPROG:
            start = "".join(f"mount -t tmpfs none {h} && " for h in self.hidden) + start
            cmd = ["ip", "netns", "exec", ns, "unshare", "--uts", "--mount",
                   "--propagation", "private", "sh", "-c", start]
        else:
            cmd = ["ip", "netns", "exec", ns, "unshare", "--uts", "sh", "-c", start]
        _run(*cmd)

    def _wait_for_sshd(self) -> None:
        deadline = time.monotonic() + 10
        pids = [self.root / f"sshd_h{i}.pid" for i in self.suffixes]
        while not all(p.exists() for p in pids):
            if time.monotonic() > deadline:
                missing = [p.name for p in pids if not p.exists()]
                raise RuntimeError(f"sshd did not start: {missing}")
            time.sleep(0.05)

    def down(self) -> None:
        for pid in self.root.glob("sshd_h*.pid"):
            try:
                os.kill(int(pid.read_text().strip()), 15)
            except (OSError, ValueError):
                pass
            pid.unlink(missing_ok=True)
        ours = list(Path("/run/netns").glob(f"{self.prefix}_*"))
        # sshd's per-connection processes (and anything a failed test left) outlive the
        # daemon: nothing may keep running in a namespace about to lose its network.
        for pid in pids_in_namespaces(self.prefix):
            try:
                os.kill(pid, 9)
            except OSError:
                continue
        for ns in ours:
            subprocess.run(["ip", "netns", "del", ns.name], check=False)

    # ---- running jobs ---------------------------------------------------------------------
    def inside(self, host: int, argv: list[str]) -> list[str]:
        """argv run inside host h<host> (its network and its host name)."""
        clear_stale_login_lock()
        return ["nsenter", f"--net=/run/netns/{self.prefix}_h{host}", "unshare", "--uts",
                "sh", "-c",
                f'hostname h{host} && exec "$@"', "sh", *argv]
