"""Starting child agents: over ssh on another host, or as a plain child process when the host
is the parent's own. The agent's instructions (its share of the job, its subtree, the per-job
cookie) travel on the process's stdin, never on a command line or in an environment that
other users' `ps` could show; the agent ends when that stdin closes (its ssh or parent died)."""
from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

# OpenSSH options for unattended use: never prompt, fail fast on a dead host, notice a dead
# connection, and keep host keys of short-lived test hosts from blocking a job.
BATCH_OPTIONS = ["-o", "BatchMode=yes", "-o", "ConnectTimeout=10", "-o", "ServerAliveInterval=5",
                 "-o", "ServerAliveCountMax=3", "-o", "LogLevel=ERROR", "-T"]


@dataclass
class SshSettings:
    command: list[str] = field(default_factory=lambda: ["ssh"])
    options: list[str] = field(default_factory=list)
    remote_path: str | None = None  # working directory on the remote hosts
    start_timeout: float = 60.0  # GASNET_SSH_START_TIMEOUT: per level of a subtree

    def to_json(self) -> dict[str, object]:
        return {"command": self.command, "options": self.options, "remote_path": self.remote_path,
                "start_timeout": self.start_timeout}

    @classmethod
    def from_json(cls, data: dict[str, object]) -> "SshSettings":
        return cls(list(data["command"]), list(data["options"]),  # type: ignore[call-overload]
                   data.get("remote_path"),  # type: ignore[arg-type]
                   float(data.get("start_timeout", 60.0)))  # type: ignore[arg-type]


def agent_command() -> list[str]:
    """How to run an agent: this interpreter and the Python gasnetrun's entry beside this
    package, by the same paths (the install is expected at the same place on every host, like
    the program)."""
    entry = Path(__file__).resolve().parents[2] / "gasnetrun_entry.py"
    return [sys.executable, str(entry), "--agent"]


def encode_instructions(instructions: dict[str, object]) -> bytes:
    body = json.dumps(instructions).encode()
    return f"{len(body)}\n".encode() + body


# What the remote shell prints first, once its start-up files have run: the parent tells the
# login's time from the agent's own start by it (a slow ~/.bashrc, conda or environment modules
# show as a slow login, not as a slow agent).
LOGIN_MARK = b"L"


def start_agent(host: str, local: bool, ssh: SshSettings, instructions: dict[str, object],
                workdir: str | None) -> subprocess.Popen:
    """Its stdout (a remote agent's): LOGIN_MARK when the login is done, then whatever the
    agent writes there (to be read and dropped)."""
    command = agent_command()
    if not local:
        remote = f"exec {shlex.join(command)}"
        if workdir:
            remote = f"cd {shlex.quote(workdir)} && {remote}"
        remote = f"printf {LOGIN_MARK.decode()} && {remote}"
        command = [*ssh.command, *BATCH_OPTIONS, *ssh.options, host, remote]
    proc = subprocess.Popen(command, stdin=subprocess.PIPE,
                            stdout=subprocess.DEVNULL if local else subprocess.PIPE,
                            start_new_session=True, close_fds=True,
                            preexec_fn=_die_with_parent if local else None)
    assert proc.stdin is not None
    proc.stdin.write(encode_instructions(instructions))
    proc.stdin.flush()
    return proc


def _die_with_parent() -> None:
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    PR_SET_PDEATHSIG = 1
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


def read_instructions(stream: BinaryIO) -> dict[str, Any]:
    """The instructions encode_instructions wrote: JSON, so its values are untyped."""
    header = stream.readline()
    if not header:
        raise EOFError("no instructions on stdin")
    body = stream.read(int(header))
    return json.loads(body)


def stop_agent(proc: subprocess.Popen, grace: float = 2.0) -> bool:
    """Closing its stdin is the order to go; a process that does not is killed (then False:
    for a remote agent, only its ssh here was)."""
    try:
        if proc.stdin:
            proc.stdin.close()
    except OSError:
        pass
    try:
        proc.wait(timeout=grace)
        return True
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()
        return False


REAP_CONNECT_SECONDS = 5


def reap_agent(host: str, pid: int, ssh: SshSettings) -> subprocess.Popen | None:
    """Starts `kill -KILL pid` on host over a new ssh connection, for an agent that froze (a
    stopped process takes no other signal, and its ssh session ending does not end it); its
    ranks die with it (their parent-death signal). Only a gasnetrun agent is killed: the pid
    must still be one (a reused pid is left alone)."""
    check = (f'grep -qa -- --agent /proc/{pid}/cmdline 2>/dev/null && '
             f'kill -KILL {pid} 2>/dev/null; true')
    command = [*ssh.command, "-o", f"ConnectTimeout={REAP_CONNECT_SECONDS}", *BATCH_OPTIONS,
               *ssh.options, host, check]  # ssh takes an option's first value
    try:
        return subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, start_new_session=True)
    except OSError:
        return None
