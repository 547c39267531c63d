"""gasnetrun's command line: GASNet's single-dash spellings (-np, -spawner=local) and the usual
double-dash ones, everything checked before anything starts. Usage errors exit with code 2."""
from __future__ import annotations

import argparse
import os
import re
import shlex
import sys
from typing import Mapping, TypedDict

from . import _native, conduits, knobdocs, workdir
from . import spawners as spawner_registry
from .agent.ranks import SpawnError
from .envcheck import EnvFileError, job_environment, validate
from .hosts import Host, HostError, describe, find_hosts, map_ranks
from .ident import ProgramIdent, read_ident
from .job import Job, Spawner, SpawnerModule, new_jobid, say
from .plan import HostShare, Plan
from .thishost import is_this_host
from .resources import HostMemory, descriptors_needed, ensure_descriptors, shared_memory_need

USAGE_ERROR = 2
VERSION = "0.2.0"
MAX_RANKS = 65535
# Long options GASNet users type with one dash; value-taking ones also consume the next token.
SINGLE_DASH_LONG = {"np": "-n", "spawner": "--spawner", "help": "--help", "version": "--version",
                    "knobs": "--knobs", "info": "--info", "json": "--json",
                    "env-file": "--env-file", "hostfile": "--hostfile", "ppn": "--ppn"}
TAKES_VALUE = {"-n", "-E", "--spawner", "--np", "--env-file", "-H", "--hosts", "--hostfile",
               "-N", "--ppn", "--map-by"}
TAKES_TWO = {"--connect"}
NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
COUNT = re.compile(r"^[0-9]+$", re.ASCII)


class UsageError(Exception):
    pass


def normalize(argv: list[str]) -> list[str]:
    """Rewrites launcher options (never the program's own arguments) to argparse's spelling."""
    return split_options(argv)[0]


def split_options(argv: list[str]) -> tuple[list[str], int]:
    """normalize()'s work, and where the first word that is not gasnetrun's starts in its
    result (the program, or a '--' before it)."""
    out: list[str] = []
    i = 0
    while i < len(argv):
        token = argv[i]
        if token == "--" or not token.startswith("-") or token == "-":
            return out + argv[i:], len(out)
        m = re.match(r"^-([A-Za-z][\w-]+)(=.*)?$", token)
        if m and m.group(1) in SINGLE_DASH_LONG:
            token = SINGLE_DASH_LONG[m.group(1)] + (m.group(2) or "")
        out.append(token)
        if token in TAKES_VALUE and i + 1 < len(argv):
            out.append(argv[i + 1])
            i += 1
        elif token in TAKES_TWO and i + 2 < len(argv):
            out += argv[i + 1:i + 3]
            i += 2
        i += 1
    return out, len(out)


def program_arguments(words: list[str], start: int, program: str) -> list[str] | None:
    """The program's arguments exactly as given (argparse drops a '--' right after the
    program, which is the program's to see), or None when the program is not at start."""
    tail = words[start:]
    if tail[:1] == ["--"]:
        tail = tail[1:]
    return tail[1:] if tail[:1] == [program] else None


def rank_count(text: str) -> int:
    """-n N: ASCII digits only (int() would take '٣' or '３')."""
    if not COUNT.match(text):
        raise argparse.ArgumentTypeError(f"invalid rank count: '{text}' (expected a number "
                                         f"1..{MAX_RANKS} in ASCII digits)")
    return int(text)


def positive(text: str) -> int:
    if not COUNT.match(text) or int(text) < 1:
        raise argparse.ArgumentTypeError(f"invalid count: '{text}' (expected a positive number "
                                         "in ASCII digits)")
    return int(text)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="gasnetrun",
        usage="gasnetrun -n N [-H HOSTS | --hostfile FILE] [-N NODES] [--ppn N] "
              "[--map-by block|cyclic] [-E VAR1,VAR2] [--env-only] [--env-file FILE] [-v] "
              "[-t [--json]] [-k] [--tag-output] [-spawner=NAME] [--connect record|replay DIR] "
              "[--] prog [args]\n"
              "       gasnetrun --probe [-H HOSTS | --hostfile FILE] [-n N] [--conduit NAME] "
              "[--json]\n"
              "       gasnetrun --knobs [NAME] [--json]\n       gasnetrun --info [--json]",
        description="Start a GASNet job of N ranks. Every GASNET_* variable the job would see is "
                    "checked against the runtime's knob table before anything starts.")
    p.add_argument("-n", "--np", dest="nranks", type=rank_count, metavar="N",
                   help="number of ranks (also -np)")
    p.add_argument("-H", "--hosts", action="append", default=[], metavar="HOSTS",
                   help="hosts to run on, comma-separated, with ranges: h[1-4],gpu[01-08]")
    p.add_argument("--hostfile", metavar="FILE",
                   help="hosts to run on: 'host', 'host slots=N' or 'host:N' lines")
    p.add_argument("-N", dest="nodes", type=positive, metavar="NODES",
                   help="use the first NODES hosts")
    p.add_argument("--ppn", type=positive, metavar="N", help="ranks per host")
    p.add_argument("--map-by", choices=["block", "cyclic"], default="block",
                   help="block: fill a host before the next (default); cyclic: round-robin")
    p.add_argument("-E", dest="export", action="append", default=[], metavar="VAR1,VAR2",
                   help="environment variables to propagate to every rank (they always are; "
                        "with --env-only, only these are, besides GASNET_* knobs)")
    p.add_argument("--env-only", action="store_true",
                   help="ranks on other hosts get only the -E variables and GASNET_* knobs")
    p.add_argument("-v", "--verbose", action="store_true", help="say what the launcher does")
    p.add_argument("-t", "--dry-run", action="store_true",
                   help="print what would run, and run nothing")
    p.add_argument("-k", "--keep", action="store_true",
                   help="keep the job's temporary files for inspection")
    p.add_argument("--tag-output", action="store_true",
                   help="prefix every line a rank writes with [rank]")
    p.add_argument("--spawner", default=None,
                   help="how ranks start (also -spawner=NAME, GASNET_SPAWNER)")
    p.add_argument("--allow-unknown-knobs", action="store_true",
                   help="pass on GASNET_* names that look like typos of knobs (warn only)")
    p.add_argument("--env-file", action="append", default=[], metavar="FILE",
                   help="NAME=VALUE lines to add to the job's environment (checked like the rest)")
    p.add_argument("--knobs", nargs="?", const="", metavar="NAME",
                   help="print the knob table, or everything about one knob")
    p.add_argument("--info", action="store_true",
                   help="print what this build has: conduits, threading modes, spawners, limits")
    p.add_argument("--probe", action="store_true",
                   help="probe the job's hosts (topology, memory, each conduit's devices) and "
                        "print what a job's ranks would get there")
    p.add_argument("--conduit", metavar="NAME",
                   help="with --probe: only this conduit's plan, and exit 1 if a host cannot "
                        "run it")
    p.add_argument("--connect", nargs=2, metavar=("record|replay", "DIR"),
                   help="record the connections a job uses into DIR (one connect file per "
                        "node), or replay them at the start of the next job (conduits that "
                        "connect on demand)")
    p.add_argument("--stats", action="store_true",
                   help="collect GASNet statistics and, after the job, print per-rank totals "
                        "and the top peer pairs on stderr (with --json: as JSON)")
    p.add_argument("--stats-dir", metavar="DIR",
                   help="with --stats: where the ranks write their statistics (default: a "
                        "temporary directory, removed unless -k; name one every host shares "
                        "for a job on several hosts)")
    p.add_argument("--json", action="store_true",
                   help="--knobs, --info, --probe, -t and --stats as JSON")
    p.add_argument("--version", action="version", version=f"gasnetrun {VERSION}")
    p.add_argument("program", nargs="?", help="the GASNet program")
    p.add_argument("args", nargs=argparse.REMAINDER, help="its arguments")
    return p


def resolve_program(program: str) -> str:
    import shutil  # here: shutil's own imports cost a job that names its program by path
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


def choose_spawner(requested: str | None, env: dict[str, str], hosts: list[str],
                   found: Mapping[str, SpawnerModule],
                   ident: ProgramIdent | None = None, program: str = "") -> tuple[Spawner, str]:
    """-spawner= > GASNET_SPAWNER > the environment; returns the spawner and why. Unasked, a
    program whose library has none of the spawners the environment suggests gets one it has
    (the mpi conduit's library has only mpi: its ranks need MPI)."""
    if requested:
        why = "-spawner"
    elif env.get("GASNET_SPAWNER", "").strip():
        requested, why = env["GASNET_SPAWNER"].strip().lower(), "GASNET_SPAWNER"
    else:
        # The spawners that fit the situation best come first.
        for name in ("pmi", "ssh", "local"):
            if name in found and (ident is None or name in ident.spawners):
                spawner = found[name].create()
                reason = spawner.applies(env, hosts)
                if reason:
                    return spawner, reason
        own = [name for name in (ident.spawners if ident else []) if name in found]
        if own:
            return found[own[0]].create(), (f"{os.path.basename(program)}'s library has no "
                                             f"other ({', '.join(own)})")
        raise UsageError("no spawner applies to this environment")
    if requested not in found:
        raise UsageError(f"spawner '{requested}' (from {why}) is not available; this build has: "
                         f"{', '.join(sorted(found))}")
    return found[requested].create(), f"chosen with {why}"


def check_program(ident: ProgramIdent | None, plan: Plan, spawner: Spawner) -> None:
    """Refuses a job the program's library cannot run, before anything starts."""
    if ident is None:
        return
    info = _native.build_info()
    if len(plan.hosts) > 1 and ident.conduit not in info["multi_host_conduits"]:
        raise UsageError(f"{plan.program} was built for the {ident.conduit} conduit, which runs "
                         f"on one host, but this job spans {len(plan.hosts)} hosts; rebuild it "
                         "with a network conduit ("
                         f"{', '.join(info['multi_host_conduits']) or 'none in this build'})")
    if spawner.name not in ident.spawners:
        raise UsageError(f"{plan.program} has no '{spawner.name}' spawner (its library has "
                         f"{', '.join(ident.spawners) or 'none'}); choose one of those "
                         "(-spawner=NAME) or rebuild")


class DryRunRank(TypedDict):
    """One rank as -t shows it (and as --json prints it)."""
    rank: int
    host: str
    argv: list[str]
    env: dict[str, str]


def dry_run(plan: Plan, as_json: bool, spawner: Spawner, knob_lines: list[str],
            memory: list[dict[str, object]]) -> None:
    sock = f"@gasnetrun-{plan.jobid}-0-<random>"
    ranks: list[DryRunRank] = []
    for share in plan.hosts:
        for rank in share.ranks:
            env = {"GASNETRUN_SOCKET": sock, "GASNETRUN_COOKIE": "<cookie>",
                   "GASNETRUN_JOBID": plan.jobid, "GASNETRUN_RANK": str(rank),
                   "GASNETRUN_SIZE": str(plan.nranks)}
            ranks.append({"rank": rank, "host": share.name, "argv": plan.argv, "env": env})
    if as_json:
        import json
        print(json.dumps({"spawner": spawner.name, "nranks": plan.nranks,
                          "hosts": [{"name": h.name, "ranks": h.ranks} for h in plan.hosts],
                          "exported": plan.exported, "ranks": ranks, "shared_memory": memory,
                          "notes": plan.notes}, indent=1))
        return
    say(f"would start {plan.nranks} ranks with spawner '{spawner.name}' (-t: nothing runs)")
    for line in knob_lines:
        print(f"gasnetrun: {line}", file=sys.stderr)
    for r in ranks:
        env_text = " ".join(f"{k}={shlex.quote(v)}" for k, v in r["env"].items())
        print(f"rank {r['rank']} on {r['host']}: env {env_text} {shlex.join(plan.argv)}",
              flush=True)


def plan_hosts(spawner: Spawner, args: argparse.Namespace,
               found: tuple[list, str] | None) -> list[HostShare]:
    if spawner.name == "local":
        if found and spawner.applies({}, [h.name for h in found[0]]) is None:
            raise UsageError(f"the local spawner runs ranks on this host only, but {found[1]} "
                             f"names other hosts ({describe(found[0])})")
        return this_host_only(args)
    if spawner.name == "ssh" and not found:
        raise UsageError("the ssh spawner needs hosts: -H, --hostfile, GASNET_SSH_SERVERS or a "
                         "node file (GASNET_SSH_NODEFILE, PBS_NODEFILE, SLURM_JOB_NODELIST...)")
    if not found:
        return this_host_only(args)
    return map_ranks(args.nranks, found[0], args.nodes, args.ppn, args.map_by)


def this_host_only(args: argparse.Namespace) -> list[HostShare]:
    """Every rank on this host; -N and --ppn still hold (-N 1, a --ppn the job fits in), and
    one that cannot is refused rather than ignored."""
    try:
        return map_ranks(args.nranks, [Host(os.uname().nodename)], args.nodes, args.ppn,
                         args.map_by)
    except HostError as err:
        raise UsageError(f"{err}: without -H, --hostfile or a host variable (GASNET_SSH_SERVERS, "
                         "SLURM_JOB_NODELIST...) the job runs on this host only") from err


def usage_error(parser: argparse.ArgumentParser, message: str) -> int:
    parser.print_usage(sys.stderr)
    print(f"gasnetrun: error: {message}", file=sys.stderr)
    return USAGE_ERROR


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    words, start = split_options(sys.argv[1:] if argv is None else argv)
    args = parser.parse_args(words)
    if args.program is not None:
        verbatim = program_arguments(words, start, args.program)
        if verbatim is not None:
            args.args = verbatim
    if args.knobs is not None:
        return (knobdocs.print_knob(args.knobs, args.json) if args.knobs
                else knobdocs.print_knobs(args.json))
    if args.info:
        return knobdocs.print_info(sorted(spawner_registry.available()), args.json)
    if args.probe:
        return probe_hosts(parser, args)
    try:
        if args.nranks is None:
            raise UsageError("the number of ranks is required: -n N")
        if args.program is None:
            raise UsageError("the program to run is required")
        if args.nranks < 1 or args.nranks > MAX_RANKS:
            raise UsageError(f"-n {args.nranks}: the number of ranks must be 1..{MAX_RANKS}")
        program = resolve_program(args.program)
        exported = exported_names(args.export)
        settings = job_environment(dict(os.environ), exported, args.env_file)
        plain_env = {k: s.value for k, s in settings.items()}
        found_hosts = find_hosts(args.hosts, args.hostfile, plain_env)
        host_names = [h.name for h in found_hosts[0]] if found_hosts else []
        ident = read_ident(program)
        spawner, why = choose_spawner(args.spawner, plain_env, host_names,
                                      spawner_registry.available(), ident, program)
        shares = plan_hosts(spawner, args, found_hosts)
    except (UsageError, EnvFileError, HostError) as err:
        return usage_error(parser, str(err))
    for name in exported:
        if name not in settings:
            say(f"warning: -E names {name}, which is not set here")
    warnings: list[str] = []
    problems = validate(settings, args.allow_unknown_knobs, warnings)
    for warning in warnings:
        say(f"warning: {warning}")
    if problems:
        for problem in problems:
            print(f"gasnetrun: error: {problem}", file=sys.stderr)
        print(f"gasnetrun: the job was not started ({len(problems)} problem"
              f"{'s' if len(problems) > 1 else ''} in its environment)", file=sys.stderr)
        return USAGE_ERROR
    env = {k: s.value for k, s in settings.items()}
    # Rules that need the job's size, the runtime's own (csrc/common/trace_syntax.c).
    for file_knob, nodes_knob in (("GASNET_TRACEFILE", "GASNET_TRACENODES"),
                                  ("GASNET_STATSFILE", "GASNET_STATSNODES")):
        file_pattern = env.get(file_knob)
        if file_pattern and (file_problem := _native.trace_file_problem(
                file_knob, file_pattern, nodes_knob, env.get(nodes_knob), args.nranks)):
            print(f"gasnetrun: error: {file_problem}", file=sys.stderr)
            print("gasnetrun: the job was not started (1 problem in its environment)",
                  file=sys.stderr)
            return USAGE_ERROR
    if args.stats_dir and not args.stats:
        return usage_error(parser, "--stats-dir is an option of --stats")
    if args.stats:
        if "GASNET_STATSFILE" in env:
            return usage_error(parser, "--stats collects the statistics itself: unset "
                                       f"GASNET_STATSFILE (set to {env['GASNET_STATSFILE']!r})")
    # GASNET_SPAWN_VERBOSE=1 narrates the launch as -v does (GASNet's spawners' knob).
    verbose = args.verbose or _native.check("GASNET_SPAWN_VERBOSE",
                                            env.get("GASNET_SPAWN_VERBOSE") or "0") == "bool:1"
    notes = [f"spawner {spawner.name}: {why}"]
    if found_hosts:
        notes.insert(0, f"hosts from {found_hosts[1]}: {describe(found_hosts[0])}")
    plan = Plan(nranks=args.nranks, program=program, args=args.args, env=env, exported=exported,
                hosts=shares, jobid=new_jobid(), verbose=verbose, keep=args.keep,
                tag_output=args.tag_output, env_only=args.env_only, notes=notes,
                placed=bool(args.hosts or args.hostfile or args.nodes or args.ppn
                            or args.map_by == "cyclic"),
                cyclic=args.map_by == "cyclic")
    try:
        plan.notes += spawner.plan_notes(plan)
    except ValueError as err:  # the spawner's own settings (e.g. a malformed PMIRUN_CMD)
        return usage_error(parser, str(err))
    try:
        check_program(ident, plan, spawner)
        if args.connect:
            plan.notes += prepare_connect(args.connect, ident, plan, spawner)
    except UsageError as err:
        return usage_error(parser, str(err))
    if ident:  # the program's conduit prepares the job (a conduit without a launcher half: nothing)
        prepared = conduits.prepare(ident.conduit, plan, spawner.name)
        if prepared.notes:
            from .notes import group_notes
            plan.notes += group_notes(prepared.notes)
        if prepared.problems:
            for problem in prepared.problems:
                print(f"gasnetrun: error: {problem}", file=sys.stderr)
            print("gasnetrun: the job was not started (the node plan found a problem)",
                  file=sys.stderr)
            return USAGE_ERROR
    memory = HostMemory.here()
    # This host's needs are checked here; every other host's by its agent before any rank starts.
    local_shares = [h for h in plan.hosts if is_this_host(h.name)]
    needs = [shared_memory_need(h.name, len(h.ranks), env, memory) for h in local_shares]
    if verbose or args.dry_run:
        if ident and not args.json:
            say(f"{os.path.basename(program)}: {ident.describe()}")
        for note in plan.notes:
            say(note) if not args.json else None
    knob_lines = knobdocs.describe_settings(settings) + [n.describe() for n in needs]
    if verbose and not args.dry_run:
        for line in knob_lines:
            print(f"gasnetrun: {line}", file=sys.stderr)
    # -t runs every check the real run does, so a dry run that passes is a job that starts.
    for need in needs:
        if need.problem:
            print(f"gasnetrun: error: {need.describe()}", file=sys.stderr)
            print("gasnetrun: the job was not started (it does not fit in shared memory)",
                  file=sys.stderr)
            return USAGE_ERROR
    local_ranks = sum(len(h.ranks) for h in local_shares)
    fd_problem = ensure_descriptors(descriptors_needed(local_ranks, args.tag_output) +
                                    4 * (len(plan.hosts) - len(local_shares)))
    if fd_problem:
        print(f"gasnetrun: error: {fd_problem}", file=sys.stderr)
        return USAGE_ERROR
    if args.dry_run:
        dry_run(plan, args.json, spawner, knob_lines,
                [{"host": n.host, "ranks": n.ranks, "queue_bytes": n.queue_bytes,
                  "segment_per_rank": n.segment_per_rank, "shm_free": n.memory.shm_free,
                  "physical": n.memory.physical, "problem": n.problem} for n in needs])
        return 0
    workdir.remove_stale()
    stats_run = None
    if args.stats:  # made here, so that no earlier way out leaves the directory behind
        from .statsreport import StatsRun
        stats_run = StatsRun(args.stats_dir)
        plan.env.update(stats_run.env())
    try:
        code = Job(plan, spawner).run()
    except SpawnError as err:
        say(f"error: {err}")
        code = 1
    if stats_run is not None:
        from .statsreport import report
        report(stats_run, plan.nranks, args.json, plan.host_of)
        stats_run.cleanup(args.keep)
    if args.connect and args.connect[0] == "record" and ident:
        mod = conduits.module(ident.conduit)
        if mod is not None:
            for line in mod.finish_connect(args.connect[1], plan):
                say(line)
    return code


def prepare_connect(connect: list[str], ident: ProgramIdent | None, plan: Plan,
                    spawner: Spawner) -> list[str]:
    mode, directory = connect
    if mode not in ("record", "replay"):
        raise UsageError(f"--connect '{mode}': expected record or replay, then a directory")
    mod = conduits.module(ident.conduit) if ident else None
    if ident is None or mod is None or not hasattr(mod, "connect"):
        built = f"is built for the {ident.conduit} conduit" if ident else "is no GASNet program"
        having = [name for name, _ in conduits.with_hook("connect")]
        raise UsageError(f"--connect makes connect files for conduits that connect on demand "
                         f"({', '.join(having) or 'none in this build'}), but {plan.program} "
                         f"{built}")
    try:
        notes: list[str] = mod.connect(mode, directory, plan, spawner.name)
        return notes
    except ValueError as err:
        raise UsageError(str(err)) from err


def probe_hosts(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    """--probe: the job's hosts (or this one), each probed once, in parallel."""
    try:
        settings = job_environment(dict(os.environ), [], args.env_file)
        env = {k: s.value for k, s in settings.items()}
        found = find_hosts(args.hosts, args.hostfile, env)
        hosts = [h.name for h in found[0]] if found else [os.uname().nodename]
        ranks: dict[str, int] = {}
        if args.nranks is not None and found:
            ranks = {s.name: len(s.ranks) for s in map_ranks(args.nranks, found[0], args.nodes,
                                                               args.ppn, args.map_by)}
            hosts = list(ranks)
        elif args.nranks is not None:
            ranks = {hosts[0]: args.nranks}
    except (UsageError, EnvFileError, HostError) as err:
        return usage_error(parser, str(err))
    from .agent.starter import BATCH_OPTIONS, agent_command
    from .probecmd import gather, report
    ssh = shlex.split(env.get("GASNET_SSH_CMD", "").strip() or "ssh") + BATCH_OPTIONS + \
        shlex.split(env.get("GASNET_SSH_OPTIONS", "").strip())
    command = agent_command()[:-1]  # the interpreter and gasnetrun, without --agent
    if args.conduit is not None and args.conduit not in conduits.names():
        having = [n for n, _ in conduits.with_hook("probe_plans")]
        return usage_error(parser, f"--conduit '{args.conduit}': expected a conduit this build "
                                   f"probes hosts for ({', '.join(having) or 'none'})")
    from .probe import check_synthetic
    synthetic = os.environ.get("HWLOC_SYNTHETIC", "").strip()
    problem = check_synthetic(synthetic, "HWLOC_SYNTHETIC") if synthetic else None
    if problem:
        return usage_error(parser, problem)
    results = gather(hosts, env, is_this_host, ssh, command)
    return report(results, ranks, args.nranks or 0, env, args.json, args.conduit)
