"""Temporary directories of gasnetrun (connect files, agent logs): each records its owner, so
that a directory left by a launcher that was killed (SIGKILL, the OOM killer) is removed by the
next gasnetrun instead of staying in /tmp forever."""
from __future__ import annotations

import os
import shutil
import socket
import tempfile
from pathlib import Path

PREFIX = "gasnetrun-"
OWNER = "owner"


def _start_time(pid: int) -> str | None:
    """The process's start time in clock ticks since boot (with the pid, a unique identity)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat.rsplit(")", 1)[1].split()[19]


def make(keep_note: bool = False) -> str:
    path = tempfile.mkdtemp(prefix=PREFIX)
    Path(path, OWNER).write_text(f"{os.getpid()} {_start_time(os.getpid())}\n")
    return path


def _owner_alive(path: Path) -> bool:
    try:
        pid_text, start = (path / OWNER).read_text().split()
        return _start_time(int(pid_text)) == start
    except (OSError, ValueError):
        pass
    # An older layout with a control socket and no owner file: alive if someone listens.
    sock_path = path / "control.sock"
    if sock_path.exists():
        probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            probe.connect(str(sock_path))
            return True
        except OSError:
            return False
        finally:
            probe.close()
    return True  # unknown contents: leave it alone


def remove_stale() -> list[str]:
    """Removes this user's gasnetrun directories whose launcher is gone."""
    removed: list[str] = []
    base = Path(tempfile.gettempdir())
    try:
        entries = list(base.glob(PREFIX + "*"))
    except OSError:
        return removed
    for path in entries:
        try:
            if not path.is_dir() or path.is_symlink() or path.stat().st_uid != os.getuid():
                continue
        except OSError:
            continue
        if not _owner_alive(path):
            shutil.rmtree(path, ignore_errors=True)
            removed.append(str(path))
    return removed
