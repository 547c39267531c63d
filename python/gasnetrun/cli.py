"""gasnetrun's command line: GASNet's single-dash spellings (-np, -spawner=local) and the usual
double-dash ones, checked before anything starts. Usage errors exit with code 2."""
from __future__ import annotations

import argparse
import os
import re
import shlex
import shutil
import sys

from . import knobdocs
from . import spawners as spawner_pkg
from .envcheck import EnvFileError, job_environment, validate
from .job import Channel, Job, JobSpec, say

USAGE_ERROR = 2
# Long options GASNet users type with one dash; value-taking ones also consume the next token.
SINGLE_DASH_LONG = {"np": "-n", "spawner": "--spawner", "help": "--help", "version": "--version",
                    "knobs": "--knobs", "info": "--info", "json": "--json",
                    "env-file": "--env-file"}
TAKES_VALUE = {"-n", "-E", "--spawner", "--np", "--env-file"}
NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class UsageError(Exception):
    pass


def normalize(argv: list[str]) -> list[str]:
    """Rewrites launcher options (never the program's own arguments) to argparse's spelling."""
    out, i = [], 0
    while i < len(argv):
        token = argv[i]
        if token == "--" or not token.startswith("-") or token == "-":
            return out + argv[i:]
        m = re.match(r"^-([A-Za-z][\w-]+)(=.*)?$", token)
        if m and m.group(1) in SINGLE_DASH_LONG:
            token = SINGLE_DASH_LONG[m.group(1)] + (m.group(2) or "")
        out.append(token)
        if token in TAKES_VALUE and i + 1 < len(argv):
            out.append(argv[i + 1])
            i += 1
        i += 1
    return out


def available_spawners() -> dict[str, object]:
    import importlib
    import pkgutil
    found = {}
    for info in pkgutil.iter_modules(spawner_pkg.__path__):
        module = importlib.import_module(f"{spawner_pkg.__name__}.{info.name}")
        found[module.name] = module
    return found


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="gasnetrun",
        usage="gasnetrun -n N [-E VAR1,VAR2] [--env-file FILE] [-v] [-t] [-k] [-spawner=NAME] "
              "[--] prog [args]\n       gasnetrun --knobs [NAME] [--json]\n"
              "       gasnetrun --info [--json]",
        description="Start a GASNet job of N ranks. Every GASNET_* variable the job would see is "
                    "checked against the runtime's knob table before anything starts.")
    p.add_argument("-n", "--np", dest="nranks", type=int, metavar="N",
                   help="number of ranks (also -np)")
    p.add_argument("-E", dest="export", action="append", default=[], metavar="VAR1,VAR2",
                   help="environment variables to propagate to every rank")
    p.add_argument("-v", "--verbose", action="store_true", help="say what the launcher does")
    p.add_argument("-t", "--dry-run", action="store_true",
                   help="print what would run, and run nothing")
    p.add_argument("-k", "--keep", action="store_true",
                   help="keep the job's temporary files (control directory) for inspection")
    p.add_argument("--spawner", default=os.environ.get("GASNET_SPAWNER") or "local",
                   help="how ranks start: local (default; also -spawner=local)")
    p.add_argument("--env-file", action="append", default=[], metavar="FILE",
                   help="NAME=VALUE lines to add to the job's environment (checked like the rest)")
    p.add_argument("--knobs", nargs="?", const="", metavar="NAME",
                   help="print the knob table, or everything about one knob")
    p.add_argument("--info", action="store_true",
                   help="print what this build has: conduits, threading modes, AM limits")
    p.add_argument("--json", action="store_true", help="--knobs and --info as JSON")
    p.add_argument("--version", action="version", version="gasnetrun 0.1.0")
    p.add_argument("program", nargs="?", help="the GASNet program")
    p.add_argument("args", nargs=argparse.REMAINDER, help="its arguments")
    return p


def resolve_program(program: str) -> str:
    path = program if "/" in program else shutil.which(program)
    if path is None:
        raise UsageError(f"program '{program}' was not found in PATH")
    if not os.path.exists(path):
        raise UsageError(f"program '{program}' does not exist")
    if os.path.isdir(path) or not os.access(path, os.X_OK):
        raise UsageError(f"program '{program}' is not an executable file")
    return os.path.abspath(path)


def exported_names(values: list[str]) -> list[str]:
    names = []
    for value in values:
        for name in filter(None, value.split(",")):
            if not NAME.match(name):
                raise UsageError(f"-E '{value}': '{name}' is not a variable name "
                                 "(expected NAME[,NAME...])")
            names.append(name)
    return names


def dry_run(spec: JobSpec, spawner) -> None:
    channel = Channel("<gasnetrun control socket>", "<cookie>", "<jobid>", os.getpid())
    say(f"would start {spec.nranks} ranks with spawner '{spawner.name}' (-t: nothing runs)")
    for launch in spawner.plan(spec, channel):
        env = " ".join(f"{k}={shlex.quote(v)}" for k, v in launch.env_additions.items())
        print(f"rank {launch.rank}: env {env} {shlex.join(launch.argv)}", flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(normalize(sys.argv[1:] if argv is None else argv))
    if args.knobs is not None:
        return (knobdocs.print_knob(args.knobs, args.json) if args.knobs
                else knobdocs.print_knobs(args.json))
    if args.info:
        return knobdocs.print_info(sorted(available_spawners()), args.json)
    try:
        if args.nranks is None:
            raise UsageError("the number of ranks is required: -n N")
        if args.program is None:
            raise UsageError("the program to run is required")
        if args.nranks < 1 or args.nranks > 65535:
            raise UsageError(f"-n {args.nranks}: the number of ranks must be 1..65535")
        spawners = available_spawners()
        if args.spawner not in spawners:
            raise UsageError(f"spawner '{args.spawner}' is not available; this build has: "
                             f"{', '.join(sorted(spawners))}")
        program = resolve_program(args.program)
        exported = exported_names(args.export)
        settings = job_environment(dict(os.environ), exported, args.env_file)
    except (UsageError, EnvFileError) as err:
        parser.print_usage(sys.stderr)
        print(f"gasnetrun: error: {err}", file=sys.stderr)
        return USAGE_ERROR
    for name in exported:
        if name not in settings:
            say(f"warning: -E names {name}, which is not set here")
    problems = validate(settings)
    if problems:
        for problem in problems:
            print(f"gasnetrun: error: {problem}", file=sys.stderr)
        print(f"gasnetrun: the job was not started ({len(problems)} problem"
              f"{'s' if len(problems) > 1 else ''} in its environment)", file=sys.stderr)
        return USAGE_ERROR
    spec = JobSpec(nranks=args.nranks, program=program, args=args.args,
                   env={k: s.value for k, s in settings.items()}, verbose=args.verbose,
                   keep=args.keep)
    if args.verbose or args.dry_run:
        say("effective knobs:")
        for line in knobdocs.describe_settings(settings, args.nranks):
            print(f"gasnetrun: {line}", file=sys.stderr)
    spawner = spawners[args.spawner].create()
    if args.dry_run:
        dry_run(spec, spawner)
        return 0
    return Job(spec, spawner).run()
