"""The ibv conduit's launcher half (gasnetrun.conduits.ibv): every node of an ibv job is probed
and planned before anything starts (HCA ports per socket, credits and depths against the HCAs'
limits, PHYSMEM less the buffers each rank registers), and connect files are recorded and
replayed. Under the ssh spawner each host's agent plans its own host (plan_node), in parallel
down the tree; under the local spawner gasnetrun plans this host; under pmi and mpi, whose
launchers run nothing of ours before the ranks, this host's plan is given to every host (the
nodes of an allocation are alike; -v says so)."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from gasnetrun.conduits import Prepared, ProbePlan
from gasnetrun.plan import Plan
from gasnetrun.probe import HostProbe, probe_host

from . import connect as connect_files
from .hca import as_json, hcas_of, probe_hcas
from .nodeplan import plan_host, summary
from .probetable import probe_plan


def probe_devices(root: str | None, sysfs: Path) -> tuple[list[dict[str, Any]], list[str]]:
    hcas, notes = probe_hcas(root, sysfs)
    return as_json(hcas), notes


def device_key(data: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Hosts of one type differ only in their ports' LIDs."""
    return [{**h, "ports": [{k: v for k, v in p.items() if k != "lid"} for p in h["ports"]]}
            for h in data]


def plan_node(host: str, ranks_on_host: int, nranks: int, env: Mapping[str, str]) -> Prepared:
    """This host (an agent's own): probed, planned, and said what was found."""
    try:
        probe = probe_host(env.get("GASNET_PROBE_ROOT", "").strip() or None, only=["ibv"])
    except (OSError, ValueError) as err:
        return Prepared(problems=[f"host {host}: cannot probe it: {err}"])
    probe.host = host
    plan = plan_host(probe, ranks_on_host, nranks, env)
    return Prepared(env=plan.env, problems=plan.problems,
                    notes=plan.notes + [f"host {host}: {summary(probe, plan, ranks_on_host)}"])


def prepare(plan: Plan, spawner: str) -> Prepared:
    if spawner == "ssh":
        plan.node_planner = "ibv"  # each agent plans its own host
        return Prepared()
    share = plan.hosts[0]
    found = plan_node(share.name, max(len(h.ranks) for h in plan.hosts), plan.nranks, plan.env)
    if spawner != "local" and len(plan.hosts) > 1:
        found.notes.append(f"the {spawner} spawner's launcher starts the ranks itself: this "
                           "host's plan is given to every host (an allocation's nodes are alike)")
    return found


def probe_plans(probe: HostProbe, ranks_on_host: int, nranks: int,
                env: Mapping[str, str]) -> ProbePlan:
    return probe_plan(probe, plan_host(probe, ranks_on_host, nranks, env), ranks_on_host)


def connect(mode: str, directory: str, plan: Plan, spawner: str) -> list[str]:
    """--connect record|replay DIR; ValueError names what is wrong."""
    try:
        return connect_files.prepare(mode, directory, plan, spawner)
    except connect_files.ConnectError as err:
        raise ValueError(str(err)) from err


def finish_connect(directory: str, plan: Plan) -> list[str]:
    return connect_files.finish_record(directory, plan)


__all__ = ["probe_devices", "device_key", "plan_node", "prepare", "probe_plans", "connect",
           "finish_connect", "hcas_of"]
