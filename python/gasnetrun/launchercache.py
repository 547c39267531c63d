"""What each site launcher said it is (its --version), remembered per launcher file in the
user's cache: asking costs a job 30-60 ms under Open MPI, whose mpirun loads its components
even for --version. An entry holds for one file (path, inode, size, modification time): an
upgraded or replaced launcher is asked again. Any trouble with the cache (no home, read-only,
garbage in the file) only means asking again; the file can be deleted at any time.

The file: $XDG_CACHE_HOME/gasnetrun/launchers.tsv, else ~/.cache/gasnetrun/launchers.tsv, one
"flavour<TAB>key" line per launcher file, oldest first. gasnetrun's compiled front reads it too
(csrc/gasnetrun/front_command.c): a launcher not in it is a job for the Python gasnetrun."""
from __future__ import annotations

import os

KEEP = 32  # entries: launchers a user switches between, with room for upgrades


def cache_file() -> str | None:
    base = os.environ.get("XDG_CACHE_HOME") or ""
    if not os.path.isabs(base):  # the XDG rule: a relative value is ignored
        home = os.environ.get("HOME") or ""
        if not os.path.isabs(home):
            return None
        base = os.path.join(home, ".cache")
    return os.path.join(base, "gasnetrun", "launchers.tsv")


def file_key(path: str) -> str | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    key = f"{os.path.realpath(path)}|{st.st_dev}|{st.st_ino}|{st.st_size}|{st.st_mtime_ns}"
    return None if any(c in key for c in "\t\n\r") else key  # one line per entry


def _read(name: str) -> dict[str, str]:
    try:
        with open(name, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except (OSError, ValueError):
        return {}
    entries: dict[str, str] = {}
    for line in lines:
        flavour, tab, key = line.partition("\t")
        if tab and key:
            entries.pop(key, None)
            entries[key] = flavour
    return entries


def recall(path: str) -> str | None:
    """The flavour name remembered for this launcher file ("" for one that is none of ours),
    or None when it must be asked."""
    name, key = cache_file(), file_key(path)
    if name is None or key is None:
        return None
    return _read(name).get(key)


def remember(path: str, flavour: str) -> None:
    name, key = cache_file(), file_key(path)
    if name is None or key is None:
        return
    entries = _read(name)
    entries.pop(key, None)
    entries[key] = flavour  # newest last: the oldest go first when the file is full
    kept = dict(list(entries.items())[-KEEP:])
    tmp = f"{name}.{os.getpid()}"
    try:
        os.makedirs(os.path.dirname(name), mode=0o700, exist_ok=True)
        with open(tmp, "w", encoding="utf-8") as f:
            f.write("".join(f"{flavour}\t{key}\n" for key, flavour in kept.items()))
        os.replace(tmp, name)  # readers see the old file or the new one, never half of one
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass
