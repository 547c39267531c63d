"""Printing commands (gasnetrun --probe --json | head -1, gasnet-tune show | head) end quietly
when the reader of their standard output goes away, as a C program killed by SIGPIPE does:
no traceback, and the shell's code for SIGPIPE."""
from __future__ import annotations

import os
import signal
import sys
from typing import Callable

CLOSED_PIPE_CODE = 128 + int(signal.SIGPIPE)


def quiet_on_closed_pipe(main: Callable[[], int]) -> int:
    try:
        code = main()
        if sys.stdout is not None:  # (None: started with its stdout closed)
            sys.stdout.flush()  # here, not at exit, where the error would only be reported
        return code
    except BrokenPipeError:
        # Python flushes stdout again at exit and would report the same error: point the
        # descriptor at /dev/null so that flush succeeds.
        if sys.stdout is not None:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            os.close(devnull)
        return CLOSED_PIPE_CODE
