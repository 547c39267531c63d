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


undo_locale_coercion()

from gasnetrun.__main__ import main  # noqa: E402

sys.exit(main())
