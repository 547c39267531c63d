"""Temporary directories of gasnetrun (connect files, agent logs): each records its owner, so
that a directory left by a launcher that was killed (SIGKILL, the OOM killer) is removed by the
next gasnetrun instead of staying in /tmp forever."""
from __future__ import annotations

import os
import stat

PREFIX = "gasnetrun-"
OWNER = "owner"


def _start_time(pid: int) -> str | None:
    """The process's start time in clock ticks since boot (with the pid, a unique identity)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8", errors="replace") as f:
            text = f.read()
    except OSError:
        return None
    return text.rsplit(")", 1)[1].split()[19]


def make(keep_note: bool = False) -> str:
    import tempfile
    path = tempfile.mkdtemp(prefix=PREFIX)
    with open(os.path.join(path, OWNER), "w", encoding="utf-8") as f:
        f.write(f"{os.getpid()} {_start_time(os.getpid())}\n")
    return path


def _owner_alive(path: str) -> bool:
    try:
        with open(os.path.join(path, OWNER), encoding="utf-8") as f:
            pid_text, start = f.read().split()
        return _start_time(int(pid_text)) == start
    except (OSError, ValueError):
        pass
    # An older layout with a control socket and no owner file: alive if someone listens.
    sock_path = os.path.join(path, "control.sock")
    if os.path.exists(sock_path):
        import socket  # (every job imports this module; few meet such a directory)
        probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            probe.connect(sock_path)
            return True
        except OSError:
            return False
        finally:
            probe.close()
    return True  # unknown contents: leave it alone


def _temp_base() -> str:
    """tempfile.gettempdir() without importing tempfile (and shutil with it) in every job: where
    none of TMPDIR, TEMP and TMP is set and /tmp exists, that is /tmp."""
    if not any(os.environ.get(v) for v in ("TMPDIR", "TEMP", "TMP")) and os.path.isdir("/tmp"):
        return "/tmp"
    import tempfile
    return tempfile.gettempdir()


def remove_stale() -> list[str]:
    """Removes this user's gasnetrun directories whose launcher is gone."""
    removed: list[str] = []
    base = _temp_base()
    try:
        entries = [os.path.join(base, n) for n in os.listdir(base) if n.startswith(PREFIX)]
    except OSError:
        return removed
    for path in entries:
        try:
            st = os.lstat(path)  # a symlink is not ours to follow
        except OSError:
            continue
        if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid():
            continue
        if not _owner_alive(path):
            import shutil
            shutil.rmtree(path, ignore_errors=True)
            removed.append(path)
    return removed
