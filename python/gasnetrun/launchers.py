"""Running a job through a site's own launcher (srun, Open MPI's mpirun, MPICH's mpiexec):
the command template with GASNet's placeholders, which launcher it is (asked of the launcher
itself), the options that give it our placement, environment and exit semantics, and the
launcher's process as a RunningJob. The pmi and mpi spawners share this.

Placeholders, as GASNet's: %N ranks, %P the program, %A its arguments, %C = %P %A, %M the
number of hosts, %H the hosts as host:ranks,..."""
from __future__ import annotations

import functools
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
from dataclasses import dataclass
from typing import Callable, Mapping

from gasnetrun import _native, launchercache
from gasnetrun.agent.ranks import SpawnError, same_addresses, wants_same_addresses
from gasnetrun.job import Job, RunningJob
from gasnetrun.plan import Plan


class TemplateError(ValueError):
    pass


def expand(template: str, plan: Plan, variable: str) -> list[str]:
    """The template's words with the placeholders filled in (%A and %C give one word per
    argument, so arguments with spaces survive)."""
    try:
        words = shlex.split(template)
    except ValueError as err:
        raise TemplateError(f"{variable}='{template}' is not a valid command line ({err})")
    if not any("%N" in w for w in words) or not any(w in ("%C", "%P") or "%P" in w
                                                      for w in words):
        raise TemplateError(f"{variable}='{template}' must contain %N (the number of ranks) "
                            "and %C (or %P and %A: the program and its arguments)")
    values = {"%N": str(plan.nranks), "%P": plan.program, "%M": str(len(plan.hosts)),
              "%H": host_counts(plan)}
    out: list[str] = []
    for word in words:
        if word == "%C":
            out += plan.argv
        elif word == "%A":
            out += plan.args
        else:  # one pass: a placeholder's value (a program path with '%M' in it) stays as it is
            out.append(PLACEHOLDER.sub(lambda m: values[m.group(0)], word))
    return out


PLACEHOLDER = re.compile(r"%[NPMH]")


def host_counts(plan: Plan) -> str:
    return ",".join(f"{h.name}:{len(h.ranks)}" for h in plan.hosts)


def handed_on(plan: Plan, variable: str = "") -> list[str]:
    """The names every rank must get from the launcher: with --env-only the -E names and the
    knobs, else everything but the caller's session and launchers' own variables; never the
    template's own variable, which the launcher's environment lacks (Open MPI warns of a -x
    it cannot find)."""
    if plan.env_only:
        names = {k for k in plan.env if k in plan.exported or k.startswith("GASNET_")}
    else:  # not the caller's session, nor a launcher's own (csrc/gasnetrun/launch_env.c)
        names = {k for k in plan.env if k in plan.exported or _native.launch_handed_on(k)}
    return sorted(names - {variable})


@dataclass(frozen=True)
class Flavour:
    """One launcher family and the options that make it run a job our way."""
    name: str          # openmpi, hydra, slurm
    description: str   # what -v prints

    def environment(self, plan: Plan, names: list[str]) -> list[str]:
        if self.name == "openmpi":  # remote ranks get only what -x names
            return [arg for n in names for arg in ("-x", n)]
        if self.name == "hydra":
            return ["-genvlist", ",".join(names)] if names else ["-genvnone"]
        # srun hands on its whole environment by default; --env-only narrows it to the names.
        return [f"--export={','.join(names) or 'NONE'}" if plan.env_only else "--export=ALL"]

    def placement(self, plan: Plan, cyclic: bool) -> list[str]:
        """Hosts and ranks per host, as the plan has them (when the user gave any)."""
        names = ",".join(h.name for h in plan.hosts)
        counts = {len(h.ranks) for h in plan.hosts}
        if self.name == "openmpi":
            return ["--host", host_counts(plan)] + (["--map-by", "node"] if cyclic else [])
        if self.name == "hydra":  # -ppn 1 over the hosts deals ranks out one at a time
            return ["-hosts", names, "-ppn", "1"] if cyclic else ["-hosts", host_counts(plan)]
        args = ["-N", str(len(plan.hosts)), "-w", names]
        if len(counts) == 1:
            args.append(f"--ntasks-per-node={counts.pop()}")
        return args + (["--distribution=cyclic"] if cyclic else [])

    def semantics(self) -> list[str]:
        # srun leaves the other ranks running when one fails unless told to end them: ours end.
        return ["--kill-on-bad-exit=1"] if self.name == "slurm" else []


FLAVOURS = {"openmpi": Flavour("openmpi", "Open MPI"), "hydra": Flavour("hydra", "MPICH Hydra"),
            "slurm": Flavour("slurm", "Slurm srun")}
# What each launcher's --version says first about itself.
SIGNATURES = [(re.compile(r"\(Open MPI\)|Open RTE|OpenRTE", re.I), "openmpi"),
              (re.compile(r"HYDRA", re.I), "hydra"),
              (re.compile(r"^slurm\b", re.I | re.M), "slurm")]


@functools.lru_cache(maxsize=8)
def detect(program: str) -> Flavour | None:
    """Which launcher this is, from its own --version (never from its name: mpirun is Open
    MPI's on one system and MPICH's on another), remembered per launcher file."""
    path = shutil.which(program)
    if not path:
        return None
    known = launchercache.recall(path)
    if known is not None:
        return FLAVOURS.get(known)
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=20,
                             stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return None
    text = out.stdout + out.stderr
    found = next((name for pattern, name in SIGNATURES if pattern.search(text)), "")
    launchercache.remember(path, found)
    return FLAVOURS.get(found)


@dataclass
class LaunchCommand:
    argv: list[str]
    flavour: Flavour | None
    variable: str = ""  # the template variable it was expanded from

    def shown(self) -> str:
        return shlex.join(self.argv)


def launch_command(plan: Plan, template: str, variable: str, placed: bool,
                   cyclic: bool, extra_names: list[str] = []) -> LaunchCommand:
    """The template expanded, with the detected launcher's options for the environment, the
    exit semantics and (when the user placed ranks: -H, -N, --ppn...) the placement added
    right after the launcher's name; options the template already gives are left to it."""
    argv = expand(template, plan, variable)
    flavour = detect(argv[0])
    if flavour is None:
        return LaunchCommand(argv, None, variable)
    given = set(argv[1:])
    options: list[str] = []
    if not given & {"-x", "-genvlist", "-genvall", "-genvnone", "-envlist"} and \
            not any(w.startswith("--export") for w in given):
        options += flavour.environment(plan, sorted(set(handed_on(plan, variable))
                                                    | set(extra_names)))
    if not any(w.startswith(("--kill-on-bad-exit", "-K")) for w in given):
        options += flavour.semantics()
    if placed and "%H" not in template and not given & {"--host", "-H", "-hosts", "-w",
                                                         "--nodelist", "-N", "--nodes"}:
        options += flavour.placement(plan, cyclic)
    return LaunchCommand(argv[:1] + options + argv[1:], flavour, variable)


def oversubscribe_hint(plan: Plan, command: LaunchCommand) -> str | None:
    """Open MPI's mpirun refuses more ranks than a host has slots (its cores) unless told to
    oversubscribe, and says so in its own terms; for a job on this host alone that will meet
    it, what to change, said before the launch."""
    if command.flavour is None or command.flavour.name != "openmpi":
        return None
    from .thishost import is_this_host
    cores = os.cpu_count() or 1
    if plan.nranks <= cores or not all(is_this_host(h.name) for h in plan.hosts):
        return None
    words = " ".join(command.argv[1:]).lower()
    if "oversubscribe" in words or plan.env.get("OMPI_MCA_rmaps_base_oversubscribe", "").strip() \
            in ("1", "true", "yes"):
        return None
    return (f"{plan.nranks} ranks on {cores} cores: Open MPI's mpirun refuses more ranks than "
            f"slots unless told to oversubscribe; if it does, put --oversubscribe in "
            f"{command.variable or 'the launch command'} (e.g. "
            f"{command.variable or 'MPIRUN_CMD'}='mpirun --oversubscribe -np %N %C')")


_PRCTL: Callable[..., int]


class LauncherRun:
    """The launcher's process, as a RunningJob: its end is the job's end. Output passes
    straight through; signals are forwarded."""

    def __init__(self, job: Job, argv: list[str], env: Mapping[str, str],
                 variable: str = "") -> None:
        self.job = job
        self.name = argv[0]
        self.variable = variable  # the template it came from
        # The launcher ends with gasnetrun (even a kill -9 of it): util-linux's setpriv sets
        # the parent-death signal and execs it. A preexec_fn doing the same would make
        # subprocess fork where it otherwise uses vfork: 12 ms more per job on this VM.
        setpriv = shutil.which("setpriv")
        preexec: Callable[[], None] | None = None
        if not shutil.which(argv[0]):  # said by us, not by setpriv
            raise SpawnError(f"cannot run {argv[0]}: no such executable "
                             f"({'not on PATH' if '/' not in argv[0] else 'not there'})")
        # A caller that ignores SIGCHLD (nohup, some shells' background jobs) would make the
        # launcher's end invisible here, and ignored in the launcher, whose own children it is.
        if signal.getsignal(signal.SIGCHLD) == signal.SIG_IGN:
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        if setpriv:
            argv = [setpriv, "--pdeathsig", "TERM", "--", *argv]
        else:
            global _PRCTL
            _PRCTL = _prctl()  # resolved here: the forked child must not import anything
            preexec = _terminate_with_parent
        try:
            # Its own session: a terminal's Ctrl-C reaches it once, through gasnetrun. Without
            # address-space randomisation when GASNET_SAME_ADDRESSES asks: the ranks it forks
            # on this host inherit that (those it starts elsewhere do not, and say so).
            with same_addresses(wants_same_addresses(env)):
                self.proc = subprocess.Popen(argv, env=dict(env), start_new_session=True,
                                             preexec_fn=preexec)
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
        if code and not self.interrupted:
            # A launcher that fails on its own (a wrong partition, a module not loaded; often
            # silently) is otherwise indistinguishable from a rank's exit code: name it.
            source = f" (from {self.variable})" if self.variable else ""
            print(f"gasnetrun: {self.name}{source} ended the job with exit code {code}",
                  file=sys.stderr, flush=True)
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


@functools.lru_cache(maxsize=1)
def _prctl() -> Callable[..., int]:
    import ctypes
    return ctypes.CDLL(None, use_errno=True).prctl


def _terminate_with_parent() -> None:
    """Runs in the child between fork and exec: only the call, everything resolved before."""
    PR_SET_PDEATHSIG = 1
    _PRCTL(PR_SET_PDEATHSIG, signal.SIGTERM)


def started(job: Job, command: LaunchCommand, plan: Plan, drop: tuple[str, ...],
            add: Mapping[str, str] = {}) -> RunningJob:
    env = {k: v for k, v in plan.env.items() if k not in drop}
    env.update(add)
    return LauncherRun(job, command.argv, env, command.variable)
