"""The two ways gasnet-tune fails: bad input (exit 2) and a sweep that cannot go on (exit 1)."""
from __future__ import annotations


class UsageError(Exception):
    """A bad argument, space file or output directory: names the input, the value and the
    accepted form; exit code 2."""


class TuneError(Exception):
    """A benchmark that fails at the baseline, prints no record, or a broken state file."""
