"""gasnetrun's per-node planning, as a job uses it and as `gasnetrun --probe` shows it.

A job of an ibv program is planned node by node before anything starts: under the ssh spawner
every host's agent probes its own host (agent/node.py), in parallel down the tree; under the
local spawner gasnetrun probes this host; under pmi and mpi, whose launchers run nothing of
ours before the ranks, this host's plan is given to every host (the nodes of an allocation
are alike; -v says so). `--probe` probes the job's hosts (over ssh, in parallel) and prints
what each type of host has and what a job's ranks there would get."""
from __future__ import annotations

import json
import shlex
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Mapping

from .nodeplan import HostPlan, group_notes, mib, plan_host, summary
from .plan import Plan
from .probe import HostProbe, probe_host

PROBE_TIMEOUT = 60.0


def probe_root(env: Mapping[str, str]) -> str | None:
    return env.get("GASNET_PROBE_ROOT", "").strip() or None


def prepare_ibv_job(plan: Plan, spawner: str) -> tuple[list[str], list[str]]:
    """Problems (the job must not start) and notes (for -v); adds the plan's knobs."""
    if spawner == "ssh":
        plan.plan_nodes = True  # each agent plans its own host
        return [], []
    try:
        probe = probe_host(probe_root(plan.env))
    except (OSError, ValueError) as err:
        return [f"cannot probe this host: {err}"], []
    share = plan.hosts[0]
    probe.host = share.name
    host_plan = plan_host(probe, max(len(h.ranks) for h in plan.hosts), plan.nranks, plan.env)
    notes = list(host_plan.notes) + [f"host {share.name}: "
                                     f"{summary(probe, host_plan, len(share.ranks))}"]
    if spawner != "local" and len(plan.hosts) > 1:
        notes.append(f"the {spawner} spawner's launcher starts the ranks itself: this host's "
                     "plan is given to every host (an allocation's nodes are alike)")
    for name, value in host_plan.env.items():
        plan.env.setdefault(name, value)
    return host_plan.problems, notes


# ---- --probe ------------------------------------------------------------------------------------
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


def report(results: list[tuple[str, HostProbe | None, str | None]], ranks: dict[str, int],
           nranks: int, env: Mapping[str, str], as_json: bool) -> int:
    """One row per type of host (hosts with identical findings fold into one)."""
    from ClusterShell.NodeSet import NodeSet
    # Hosts of one type (identical findings, same ranks) are planned once: at a thousand hosts
    # the table has as many rows as the cluster has kinds of node.
    groups: dict[str, tuple[HostProbe, HostPlan, list[str], int]] = {}
    failed = []
    for host, probe, error in results:
        if probe is None:
            failed.append((host, error))
            continue
        rph = ranks.get(host) or (probe.topology.cores if probe.topology else 1)
        key = f"{probe.type_key()}/{rph}"
        if key in groups:
            groups[key][2].append(host)
            continue
        total = nranks or rph * len(results)
        groups[key] = (probe, plan_host(probe, rph, total, env), [host], rph)
    rows: list[dict[str, Any]] = []
    for probe, plan, names, rph in groups.values():
        folded = str(NodeSet.fromlist(names))
        # The plan was made for the first host; its notes speak for the whole group.
        plan.notes = [n.replace(f"host {names[0]}:", f"host{'s' if len(names) > 1 else ''} "
                                                     f"{folded}:", 1) for n in plan.notes]
        plan.problems = [n.replace(f"host {names[0]}:", f"host{'s' if len(names) > 1 else ''} "
                                                        f"{folded}:", 1) for n in plan.problems]
        rows.append({"hosts": folded, "count": len(names),
                     "ranks_per_host": rph, "probe": probe.to_json(),
                     "plan": {"env": plan.env, "ports_by_socket": plan.ports_by_socket,
                              "buffers_per_rank": plan.pool_bytes,
                              "segment_per_rank": plan.segment_per_rank,
                              "shared_receive_queues": plan.use_srq,
                              "notes": group_notes(plan.notes), "problems": plan.problems}})
    if as_json:
        print(json.dumps({"types": rows, "unreachable": [{"host": h, "error": e}
                                                         for h, e in failed]}, indent=1))
    else:
        print_table(rows, failed)
    return 1 if failed or any(r["plan"]["problems"] for r in rows) else 0


def mr_text(size: int | None) -> str:
    if size is None:
        return "?"
    return "no limit" if size >= 1 << 63 else mib(size)


def print_table(rows: list[dict[str, Any]], failed: list[tuple[str, str | None]]) -> None:
    from rich.console import Console
    from rich.table import Table
    table = Table(title="gasnetrun --probe: hosts by type", show_lines=True)
    for column in ("hosts", "topology", "memory", "HCAs (NUMA: ports)", "limits",
                   "ports per socket", "per rank"):
        table.add_column(column, overflow="fold")
    for r in rows:
        p = HostProbe.from_json(r["probe"])
        topo = p.topology
        shape = (f"{topo.sockets} socket{'s' if topo.sockets != 1 else ''}\n{len(topo.numa)} "
                 f"NUMA\n{topo.cores} cores" if topo else "unknown")
        hcas = "\n".join(
            f"{h.name} ({h.numa}): " + ", ".join(f"{q.number} {q.state}"
                                                 + (" Eth" if q.link_layer == "Ethernet" else "")
                                                 + (f" {q.rate.split(' (')[0]}" if q.rate else "")
                                                 for q in h.ports) for h in p.hcas) or "none"
        lines = [f"max_qp_wr {h.limits.get('max_qp_wr', '?')}\n"
                 f"max_mr {mr_text(h.limits.get('max_mr_size'))}" for h in p.hcas]
        if len(set(lines)) == 1 and len(lines) > 1:
            limits = f"each HCA:\n{lines[0]}"  # the usual case: identical HCAs
        else:
            limits = "\n".join(f"{h.name}: {line}" for h, line in zip(p.hcas, lines)) or "-"
        plan = r["plan"]
        ports = "\n".join(f"{s}: {spec}" for s, spec in plan["ports_by_socket"].items()) or "-"
        memlock = "unlimited" if p.memlock is None else mib(p.memlock)
        per_rank = (f"{r['ranks_per_host']} ranks\nbuffers {mib(plan['buffers_per_rank'])}\n"
                    f"segment <= {mib(plan['segment_per_rank'])}")
        table.add_row(f"{r['hosts']}\n({r['count']})", shape,
                      f"{mib(p.memory)}\nmemlock {memlock}", hcas, limits, ports, per_rank)
    console = Console(file=sys.stdout, width=160)
    console.print(table)
    for r in rows:
        for line in r["plan"]["notes"]:
            console.print(line, highlight=False)
        for line in r["plan"]["problems"]:
            console.print(f"problem: {line}", highlight=False)
    for host, error in failed:
        console.print(f"{host}: could not be probed: {error}", highlight=False)
