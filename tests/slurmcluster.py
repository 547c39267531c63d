"""A real Slurm for launch tests, as ../shared/testbed/slurm-cluster shows: slurmctld and
slurmd on this host, or one slurmd per network-namespace host of a netcluster.Cluster (the
controller on h1). Its own ports and directory, so it never meets a testbed Slurm; munged is
started if it is not running, and stopped again if it was started here."""
from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from pathlib import Path

from netcluster import Cluster

PORTS = (26817, 26818)  # slurmctld, slurmd (the testbed script uses 16817/16818)
MUNGE_SOCKET = Path("/run/munge/munge.socket.2")


def why_not_available() -> str | None:
    if os.geteuid() != 0:
        return "a test Slurm needs root"
    for tool in ("slurmctld", "slurmd", "srun", "salloc", "sinfo"):
        if not shutil.which(tool):
            return f"Slurm's {tool} is not installed (apt-get install slurmctld slurmd slurm-client)"
    if not Path("/usr/sbin/munged").exists():
        return "munge is not installed (apt-get install munge)"
    return None


class Slurm:
    def __init__(self, root: Path, hosts: Cluster | None = None, count: int = 1) -> None:
        self.root = root
        self.hosts = hosts
        self.count = count if hosts else 1
        self.conf = root / "slurm.conf"
        self.started_munge = False
        self.names = [f"h{i}" for i in range(1, count + 1)] if hosts else \
            [socket.gethostname().split(".")[0]]

    @property
    def env(self) -> dict[str, str]:
        return {"SLURM_CONF": str(self.conf)}

    def _run_on(self, index: int, argv: list[str]) -> list[str]:
        return self.hosts.inside(index, argv) if self.hosts else argv

    def up(self) -> None:
        for sub in ("state", "log", *(f"spool_{n}" for n in self.names),
                    *(f"tmp_{n}" for n in self.names)):
            (self.root / sub).mkdir(parents=True, exist_ok=True)
        self._munge()
        cpus = os.cpu_count() or 1
        if self.hosts:
            controller = f"SlurmctldHost=h1({self.hosts.address(1)})"
            nodes = [f"NodeName=h{i} NodeAddr={self.hosts.address(i)} CPUs={cpus} State=UNKNOWN"
                     for i in range(1, self.count + 1)]
        else:
            controller = f"SlurmctldHost={self.names[0]}"
            nodes = [f"NodeName={self.names[0]} CPUs={cpus} State=UNKNOWN"]
        r = self.root
        self.conf.write_text("\n".join([
            "ClusterName=gasnettest", controller, "SlurmUser=root", "AuthType=auth/munge",
            f"StateSaveLocation={r}/state", f"SlurmdSpoolDir={r}/spool_%n", f"TmpFS={r}/tmp_%n",
            f"SlurmctldPidFile={r}/slurmctld.pid", f"SlurmdPidFile={r}/slurmd.%n.pid",
            f"SlurmctldLogFile={r}/log/slurmctld.log", f"SlurmdLogFile={r}/log/slurmd.%n.log",
            f"SlurmctldPort={PORTS[0]}", f"SlurmdPort={PORTS[1]}",
            "ProctrackType=proctrack/linuxproc", "TaskPlugin=task/none",
            "SelectType=select/cons_tres", "SelectTypeParameters=CR_Core", "ReturnToService=2",
            "MpiDefault=none", "JobAcctGatherType=jobacct_gather/none",
            "AccountingStorageType=accounting_storage/none", "KillWait=5",
            "PartitionName=all Nodes=ALL Default=YES MaxTime=INFINITE State=UP "
            "OverSubscribe=FORCE:16", *nodes, ""]))
        env = {**os.environ, **self.env}
        subprocess.run(self._run_on(1, ["slurmctld"]), env=env, check=True)
        for i, name in enumerate(self.names, 1):
            subprocess.run(self._run_on(i, ["slurmd", "-N", name]), env=env, check=True)
        self._wait_idle(env)

    def _munge(self) -> None:
        if MUNGE_SOCKET.exists() and subprocess.run(
                ["munge", "-n"], capture_output=True).returncode == 0:
            return
        Path("/run/munge").mkdir(exist_ok=True)
        shutil.chown("/run/munge", "munge", "munge")
        key = Path("/etc/munge/munge.key")
        if not key.exists():
            key.write_bytes(os.urandom(1024))
            shutil.chown(key, "munge", "munge")
            key.chmod(0o400)
        subprocess.run(["runuser", "-u", "munge", "--", "/usr/sbin/munged"], check=True)
        self.started_munge = True

    def _wait_idle(self, env: dict[str, str]) -> None:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            out = subprocess.run(self._run_on(1, ["sinfo", "-h", "-o", "%D", "-t", "idle"]),
                                 env=env, capture_output=True, text=True).stdout.split()
            if out and out[0] == str(self.count):
                return
            time.sleep(0.2)
        log = (self.root / "log" / "slurmctld.log")
        tail = log.read_text()[-2000:] if log.exists() else ""
        raise RuntimeError(f"the test Slurm's nodes did not become idle: {tail}")

    def down(self) -> None:
        pids = list(self.root.glob("slurmd.*.pid")) + [self.root / "slurmctld.pid"]
        for pid_file in pids:
            try:
                os.kill(int(pid_file.read_text().strip()), 15)
            except (OSError, ValueError):
                pass
        deadline = time.monotonic() + 10
        for pid_file in pids:
            try:
                pid = int(pid_file.read_text().strip())
            except (OSError, ValueError):
                continue
            while time.monotonic() < deadline and Path(f"/proc/{pid}").exists():
                time.sleep(0.05)
        if self.started_munge:
            pid = Path("/run/munge/munged.pid")
            try:
                os.kill(int(pid.read_text().strip()), 15)
            except (OSError, ValueError):
                pass

    def salloc(self, ntasks: int, argv: list[str], nodes: int | None = None) -> list[str]:
        """argv run inside a fresh allocation (on h1 of a namespace cluster); -O lets more
        tasks than CPUs in; --immediate keeps a test from waiting for resources forever."""
        cmd = ["salloc", "-Q", "--immediate=20", "-O", "-n", str(ntasks)]
        if nodes:
            cmd += ["-N", str(nodes)]
        return self._run_on(1, cmd + argv)
