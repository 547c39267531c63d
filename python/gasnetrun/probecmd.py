"""`gasnetrun --probe`: the job's hosts (or this one) probed in parallel (over ssh for other
hosts: `gasnetrun --probe-host` there prints the probe as JSON), folded into types of host
(hosts with identical findings are one row), each shown with its topology and memory and what
every conduit's launcher half plans there (gasnetrun.conduits: probe_plans)."""
from __future__ import annotations

import json
import shlex
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Mapping

from . import conduits
from .conduits import ProbePlan
from .probe import HostProbe, probe_host

PROBE_TIMEOUT = 60.0


def probe_root(env: Mapping[str, str]) -> str | None:
    return env.get("GASNET_PROBE_ROOT", "").strip() or None


def probe_remote(host: str, ssh: list[str], command: list[str], root: str | None) -> HostProbe:
    remote = shlex.join([*command, "--probe-host", *([root] if root else [])])
    proc = subprocess.run([*ssh, host, remote], capture_output=True, text=True,
                          timeout=PROBE_TIMEOUT, stdin=subprocess.DEVNULL)
    if proc.returncode != 0:
        raise OSError(proc.stderr.strip().splitlines()[-1] if proc.stderr.strip()
                      else f"ssh ended with code {proc.returncode}")
    probe = HostProbe.from_json(json.loads(proc.stdout))
    probe.host = host
    return probe


def gather(hosts: list[str], env: Mapping[str, str], is_local: Any, ssh: list[str],
           command: list[str]) -> list[tuple[str, HostProbe | None, str | None]]:
    """Every host's probe (in parallel), or why it could not be had."""
    root = probe_root(env)

    def one(host: str) -> tuple[str, HostProbe | None, str | None]:
        try:
            if is_local(host):
                probe = probe_host(root)
                probe.host = host
                return host, probe, None
            return host, probe_remote(host, ssh, command, root), None
        except subprocess.TimeoutExpired:
            return host, None, f"no answer within {PROBE_TIMEOUT:g} s"
        except (OSError, ValueError, KeyError) as err:
            return host, None, str(err)

    with ThreadPoolExecutor(min(32, max(1, len(hosts)))) as pool:
        return list(pool.map(one, hosts))


def folded(text: str, first: str, names: list[str], label: str) -> str:
    """A note the plan made for the group's first host, said of the whole group."""
    return text.replace(f"host {first}:", f"host{'s' if len(names) > 1 else ''} {label}:", 1)


def report(results: list[tuple[str, HostProbe | None, str | None]], ranks: dict[str, int],
           nranks: int, env: Mapping[str, str], as_json: bool, only: str | None = None) -> int:
    """One row per type of host (hosts with identical findings fold into one). Exit code 1
    when a host could not be probed, or (with only: one conduit) when a host cannot run it;
    every conduit's problems are shown either way."""
    from ClusterShell.NodeSet import NodeSet
    # Hosts of one type (identical findings, same ranks) are planned once: at a thousand hosts
    # the table has as many rows as the cluster has kinds of node.
    groups: dict[str, tuple[HostProbe, list[str], int]] = {}
    failed = []
    for host, probe, error in results:
        if probe is None:
            failed.append((host, error))
            continue
        rph = ranks.get(host) or (probe.topology.cores if probe.topology else 1)
        key = f"{probe.type_key()}/{rph}"
        if key in groups:
            groups[key][1].append(host)
            continue
        groups[key] = (probe, [host], rph)
    planners = [(n, m) for n, m in conduits.with_hook("probe_plans") if only in (None, n)]
    rows: list[dict[str, Any]] = []
    shown: list[tuple[dict[str, Any], dict[str, ProbePlan]]] = []
    for probe, names, rph in groups.values():
        label = str(NodeSet.fromlist(names))
        total = nranks or rph * len(results)
        plans: dict[str, ProbePlan] = {}
        for name, mod in planners:
            plan: ProbePlan = mod.probe_plans(probe, rph, total, env)
            plan.notes = [folded(n, names[0], names, label) for n in plan.notes]
            plan.problems = [folded(n, names[0], names, label) for n in plan.problems]
            plans[name] = plan
        row = {"hosts": label, "count": len(names), "ranks_per_host": rph,
               "probe": probe.to_json(),
               "plans": {name: {**p.data, "notes": p.notes, "problems": p.problems}
                         for name, p in plans.items()}}
        rows.append(row)
        shown.append((row, plans))
    if as_json:
        print(json.dumps({"types": rows, "unreachable": [{"host": h, "error": e}
                                                         for h, e in failed]}, indent=1))
    else:
        print_table(shown, failed)
    problems = only is not None and any(p.problems for _, plans in shown for p in plans.values())
    return 1 if failed or problems else 0


def mib(n: int) -> str:
    return f"{n / 2**30:.1f} GiB" if n >= 2**30 else f"{n / 2**20:.1f} MiB"


def print_table(shown: list[tuple[dict[str, Any], dict[str, ProbePlan]]],
                failed: list[tuple[str, str | None]]) -> None:
    from rich.console import Console
    from rich.table import Table
    table = Table(title="gasnetrun --probe: hosts by type", show_lines=True)
    columns = ["hosts", "topology", "memory"]
    for _, plans in shown:
        for plan in plans.values():
            columns += [c for c in plan.cells if c not in columns]
    for column in columns:
        table.add_column(column, overflow="fold")
    for row, plans in shown:
        p = HostProbe.from_json(row["probe"])
        topo = p.topology
        shape = (f"{topo.sockets} socket{'s' if topo.sockets != 1 else ''}\n{len(topo.numa)} "
                 f"NUMA\n{topo.cores} cores" if topo else "unknown")
        memlock = "unlimited" if p.memlock is None else mib(p.memlock)
        cells = {"hosts": f"{row['hosts']}\n({row['count']})", "topology": shape,
                 "memory": f"{mib(p.memory)}\nmemlock {memlock}"}
        for plan in plans.values():
            cells.update(plan.cells)
        table.add_row(*(cells.get(c, "-") for c in columns))
    console = Console(file=sys.stdout, width=160)
    console.print(table)
    for _, plans in shown:
        for name, plan in plans.items():
            for line in plan.notes:
                console.print(f"{name}: {line}", highlight=False)
            for line in plan.problems:
                console.print(f"problem: {name}: {line}", highlight=False)
    for host, error in failed:
        console.print(f"{host}: could not be probed: {error}", highlight=False)
