"""The Python gasnetrun. bin/gasnetrun (compiled, csrc/gasnetrun) runs the jobs a site launcher
starts itself and hands everything else here; `gasnetrun_entry.py --agent` is the per-host agent
gasnetrun starts on other hosts (instructions on stdin). Its directory is the package tree
(build/python, or lib/gasnet/python under the install prefix), so the imports below find it."""
import sys

from gasnetrun.__main__ import main

sys.exit(main())
