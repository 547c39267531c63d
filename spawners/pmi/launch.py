"""The pmi spawner's launch side: the site's process manager starts the ranks (Slurm's srun
inside an allocation, else Open MPI's mpirun) from a command template, PMIRUN_CMD, and the
ranks bootstrap over PMIx (bootstrap_pmi.c). gasnetrun runs that command, forwards signals to
it and returns its exit code; output passes straight through.

Placeholders, as GASNet's: %N ranks, %P the program, %A its arguments, %C = %P %A, %M the
number of hosts, %H the hosts as host:ranks,... (only when hosts were given)."""
from __future__ import annotations

import os
import shlex
import signal
import subprocess
from typing import Mapping

from gasnetrun.agent.ranks import SpawnError
from gasnetrun.job import Job, RunningJob
from gasnetrun.plan import Plan

name = "pmi"
PLACEHOLDERS = {"%N", "%P", "%A", "%C", "%M", "%H"}


class TemplateError(ValueError):
    pass


def default_template(env: Mapping[str, str], hosts_given: bool) -> str:
    if env.get("SLURM_JOB_ID"):
        return "srun --mpi=pmix -n %N %C"
    return "mpirun -np %N --host %H %C" if hosts_given else "mpirun -np %N %C"


def expand(template: str, plan: Plan) -> list[str]:
    """The template's words with the placeholders filled in (%A and %C give one word per
    argument, so arguments with spaces survive)."""
    try:
        words = shlex.split(template)
    except ValueError as err:
        raise TemplateError(f"PMIRUN_CMD='{template}' is not a valid command line ({err})")
    if not any("%N" in w for w in words) or not any(w in ("%C", "%P") or "%P" in w
                                                      for w in words):
        raise TemplateError(f"PMIRUN_CMD='{template}' must contain %N (the number of ranks) and "
                            "%C (or %P and %A: the program and its arguments)")
    hosts = ",".join(f"{h.name}:{len(h.ranks)}" for h in plan.hosts)
    out: list[str] = []
    for word in words:
        if word == "%C":
            out += plan.argv
        elif word == "%A":
            out += plan.args
        else:
            out.append(word.replace("%N", str(plan.nranks)).replace("%P", plan.program)
                       .replace("%M", str(len(plan.hosts))).replace("%H", hosts))
    return out


def openmpi_exports(plan: Plan) -> list[str]:
    """Open MPI's mpirun hands remote ranks only the variables named with -x: the knobs and
    the -E names (local ranks inherit everything)."""
    names = sorted({k for k in plan.env if k.startswith("GASNET_")} | set(plan.exported))
    return [arg for n in names if n in plan.env for arg in ("-x", n)]


class PmiSpawner:
    name = name

    def applies(self, env: Mapping[str, str], hosts: list[str]) -> str | None:
        job = env.get("SLURM_JOB_ID", "").strip()
        if job:
            return f"inside Slurm allocation {job} (SLURM_JOB_ID)"
        return None

    def command(self, plan: Plan) -> list[str]:
        template = plan.env.get("PMIRUN_CMD", "").strip()
        hosts_given = len(plan.hosts) > 1
        argv = expand(template or default_template(plan.env, hosts_given), plan)
        if not template and argv[0] == "mpirun":
            argv[1:1] = openmpi_exports(plan)
        return argv

    def plan_notes(self, plan: Plan) -> list[str]:
        return [f"launch command: {shlex.join(self.command(plan))}"]

    def start(self, plan: Plan, job: Job) -> RunningJob:
        return PmiRun(plan, job, self.command(plan))


class PmiRun:
    """The launcher's process, as a RunningJob: its end is the job's end."""

    def __init__(self, plan: Plan, job: Job, argv: list[str]) -> None:
        self.job = job
        env = {k: v for k, v in plan.env.items() if k != "PMIRUN_CMD"}
        try:
            # Its own session: a terminal's Ctrl-C reaches it once, through gasnetrun.
            self.proc = subprocess.Popen(argv, env=env, start_new_session=True,
                                         preexec_fn=_terminate_with_parent)
        except OSError as err:
            raise SpawnError(f"cannot run {argv[0]}: {err.strerror}") from err
        self.pidfd = os.pidfd_open(self.proc.pid)
        job.loop.add_reader(self.pidfd, self._ended)
        job.started = True
        self.terminated = False
        self.interrupted = 0  # the first SIGINT/SIGTERM/SIGHUP forwarded to the launcher

    def _ended(self) -> None:
        self.job.loop.remove_reader(self.pidfd)
        os.close(self.pidfd)
        code = self.proc.wait()
        code = 128 - code if code < 0 else code
        # Interrupted: the job's code says by what (as under the other spawners), whatever
        # code the launcher chose for itself.
        self.job.end_code = 128 + self.interrupted if self.interrupted and code else code

    def signal(self, signum: int) -> None:
        if signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP) and not self.interrupted:
            self.interrupted = signum
        # The launcher ends its ranks when terminated; only a second request kills it outright.
        if signum == signal.SIGKILL and not self.terminated:
            self.terminated = True
            signum = signal.SIGTERM
        try:
            os.kill(self.proc.pid, signum)
        except ProcessLookupError:
            pass

    def close(self) -> list[str]:
        if self.proc.poll() is None:
            self.signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        return []


def _terminate_with_parent() -> None:
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    PR_SET_PDEATHSIG = 1
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


def create() -> PmiSpawner:
    return PmiSpawner()
