"""The Python gasnetrun. bin/gasnetrun (compiled, csrc/gasnetrun) runs the jobs a site launcher
starts itself and hands everything else here; `gasnetrun_entry.py --agent` is the per-host agent
gasnetrun starts on other hosts (instructions on stdin). Its directory is the package tree
(build/python, or lib/gasnet/python under the install prefix), so the imports below find it."""
import os
import sys


def undo_locale_coercion() -> None:
    """Python sets LC_CTYPE=C.UTF-8 in its own environment where the caller's locale is C
    (PEP 538); the job must see the caller's environment, as under the compiled front. The
    environment this process was started with is still in /proc/self/environ."""
    if "LC_CTYPE" not in os.environ:
        return
    try:
        with open("/proc/self/environ", "rb") as f:
            initial = f.read().split(b"\0")
    except OSError:
        return
    if not any(entry.startswith(b"LC_CTYPE=") for entry in initial):
        del os.environ["LC_CTYPE"]


def add_site_directories() -> None:
    """bin/gasnetrun starts this with -S: the site directories (Debian's python3-* packages:
    CFFI's backend, rich, ClusterShell) without running the .pth hooks installed there, which
    import much of importlib on every start."""
    if not sys.flags.no_site:
        return
    import site
    for directory in site.getsitepackages():
        if directory not in sys.path and os.path.isdir(directory):
            sys.path.append(directory)


undo_locale_coercion()
add_site_directories()

from gasnetrun.__main__ import main  # noqa: E402

sys.exit(main())
