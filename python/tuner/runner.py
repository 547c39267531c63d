"""One run: each benchmark program the objective needs, started by gasnetrun with a point's
environment on top of the caller's, its JSON records read back."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from dataclasses import dataclass, field
from typing import Any

from .errors import UsageError
from .objectives import Objective


@dataclass
class RunResult:
    records: list[dict[str, Any]] = field(default_factory=list)
    seconds: float = 0.0
    error: str | None = None  # why the run failed (the point is then infeasible)
    timed_out: bool = False


def bench_path(bin_dir: str, conduit: str, program: str) -> str:
    """A bundled benchmark: build/<conduit>/bench in a build tree, lib/gasnet/bench/<conduit>
    under an install prefix."""
    top = os.path.dirname(os.path.abspath(bin_dir))
    for candidate in (os.path.join(top, conduit, "bench", f"{program}-seq"),
                      os.path.join(top, "lib", "gasnet", "bench", conduit, f"{program}-seq")):
        if os.access(candidate, os.X_OK):
            return candidate
    raise UsageError(f"--conduit {conduit}: this build has no {program} for that conduit "
                     f"(looked in {top}/{conduit}/bench and {top}/lib/gasnet/bench/{conduit})")


@dataclass
class Runner:
    gasnetrun: str
    programs: dict[str, str]        # objective program name ("" for --program) -> path
    objective: Objective
    launch: list[str]               # gasnetrun options: -n N, --hosts, --spawner
    base_env: dict[str, str]
    timeout: float = 300.0

    def run(self, point_env: dict[str, str], timeout: float | None = None) -> RunResult:
        """One run; timeout (default: the runner's) bounds the whole run, every program of
        it together."""
        result = RunResult()
        env = {**self.base_env, **point_env}
        limit = self.timeout if timeout is None else timeout
        start = time.monotonic()
        for program in self.objective.programs:
            cmd = [self.gasnetrun, *self.launch, self.programs[program], "--quick", "--json",
                   "--only", self.objective.only(program)]
            code, out, err = _run(cmd, env, max(0.1, limit - (time.monotonic() - start)))
            name = os.path.basename(self.programs[program])
            if code is None:
                result.error = f"{name} did not finish within {limit:.0f} s"
                result.timed_out = True
                break
            if code != 0:
                tail = " | ".join(err.strip().splitlines()[-3:]) or "(no message)"
                how = f"exited with {code}" if code > 0 else f"was killed by signal {-code}"
                result.error = f"gasnetrun {name} {how}: {tail}"
                break
            for line in out.splitlines():
                if line.startswith("{"):
                    try:
                        result.records.append(json.loads(line))
                    except json.JSONDecodeError:
                        continue
        result.seconds = time.monotonic() - start
        return result


def _run(cmd: list[str], env: dict[str, str], timeout: float) -> tuple[int | None, str, str]:
    """Runs a job; returns (exit code, stdout, stderr), the code None on timeout. On timeout or an
    interrupt (Ctrl-C to gasnet-tune alone), asks gasnetrun to end its job (SIGINT: it stops
    the ranks and cleans up) before giving up on it."""
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            stdin=subprocess.DEVNULL, text=True)
    try:
        out, err = proc.communicate(timeout=timeout)
        return proc.returncode, out, err
    except subprocess.TimeoutExpired:
        _stop(proc)
        return None, "", ""
    except BaseException:
        _stop(proc)
        raise


def _stop(proc: subprocess.Popen[str]) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
        try:
            proc.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
