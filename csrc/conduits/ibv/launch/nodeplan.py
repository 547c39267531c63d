"""The per-node plan of an ibv job, from a host's probe: which HCA ports each socket's ranks
use (GASNET_IBV_PORTS_<socket>: the HCAs on that socket's NUMA nodes, every active InfiniBand
port of them), whether the job's credits and network depths fit the HCAs' limits, and how much
memory each rank registers: its buffers (the conduit's own arithmetic, through the binding) and
the largest segment GASNET_PHYSMEM_MAX and the memlock limit leave it. Knobs the user set are
never overridden; what the plan adds is said by -v and --probe."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

from gasnetrun import _native
from gasnetrun.probe import HostProbe

from .hca import Hca, hcas_of
from .native import IbvPlan, ibv_plan

KNOB_DEFAULTS = {"GASNET_AM_CREDITS_PP": 12, "GASNET_RBUF_COUNT": 1024, "GASNET_BBUF_COUNT": 1024,
                 "GASNET_USE_SRQ": -1, "GASNET_NETWORKDEPTH_PP": 24,
                 "GASNET_NETWORKDEPTH_TOTAL": 255, "GASNET_SUPERNODE_MAXSIZE": 0}


@dataclass
class HostPlan:
    host: str
    env: dict[str, str] = field(default_factory=dict)      # knobs this host's ranks get
    notes: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    ports_by_socket: dict[int, str] = field(default_factory=dict)
    pool_bytes: int = 0
    segment_per_rank: int = 0
    use_srq: bool = False


def knob_int(env: Mapping[str, str], name: str) -> int:
    text = env.get(name, "").strip()
    if not text:
        return KNOB_DEFAULTS[name]
    return int(_native.check(name, text).split(":", 1)[1])


def mib(n: int) -> str:
    return f"{n / 2**30:.1f} GiB" if n >= 2**30 else f"{n / 2**20:.1f} MiB"


def port_spec(hcas: list[Hca]) -> str:
    return "+".join(f"{h.name}:{','.join(str(p) for p in h.usable_ports())}" for h in hcas)


def describe_hca(hca: Hca) -> str:
    ports = ", ".join(f"{p.number} {p.state}" + (f" {p.link_layer}" if p.link_layer != "InfiniBand"
                                                  else "") for p in hca.ports)
    where = f"NUMA {hca.numa}" if hca.numa >= 0 else "NUMA ?"
    return f"{hca.name} ({where}; ports {ports})"


def plan_ports(probe: HostProbe, env: Mapping[str, str], plan: HostPlan) -> list[Hca]:
    hcas = hcas_of(probe)
    usable = [h for h in hcas if h.usable_ports()]
    if not hcas:
        plan.problems.append(f"host {probe.host}: no RDMA device (sysfs lists no HCA): run a "
                             "program built for the udp conduit there instead")
        return usable
    if not usable:
        listed = "; ".join(describe_hca(h) for h in hcas) or "none"
        plan.problems.append(f"host {probe.host}: no active InfiniBand port for the ibv conduit "
                             f"(HCAs: {listed})")
        return usable
    user = sorted(k for k, v in env.items() if v.strip() and
                  (k == "GASNET_IBV_PORTS" or (k.startswith("GASNET_IBV_PORTS_") and
                                               k != "GASNET_IBV_PORTS_TYPE")))
    if user:
        plan.notes.append(f"host {probe.host}: ports as set by the user ({', '.join(user)})")
        return usable
    topo = probe.topology
    if topo is None:
        plan.notes.append(f"host {probe.host}: no topology, so no per-socket ports (every rank "
                          "uses the first active port of each HCA)")
        return usable
    for s in range(topo.sockets):
        near = [h for h in usable if h.numa >= 0 and topo.socket_of_numa(h.numa) in (s, -1)]
        spec = port_spec(near or usable)
        plan.ports_by_socket[s] = spec
        plan.env[f"GASNET_IBV_PORTS_{s}"] = spec
        if not near:
            plan.notes.append(f"host {probe.host}: socket {s} has no HCA of its own; its ranks "
                              "use every HCA")
    plan.env["GASNET_IBV_PORTS_TYPE"] = "socket"
    return usable


def check_limits(probe: HostProbe, usable: list[Hca], env: Mapping[str, str],
                 plan: HostPlan, buffers: IbvPlan) -> None:
    depth_pp = knob_int(env, "GASNET_NETWORKDEPTH_PP")
    for hca in usable:
        lim = hca.limits
        where = f"host {probe.host}: {hca.name}"
        if "max_qp_wr" in lim and depth_pp + 2 > lim["max_qp_wr"]:
            plan.problems.append(f"{where} takes at most {lim['max_qp_wr']} work requests per "
                                 f"queue pair, but GASNET_NETWORKDEPTH_PP={depth_pp} needs "
                                 f"{depth_pp + 2}: lower it")
        if "max_qp_wr" in lim and buffers.rq_depth > lim["max_qp_wr"]:
            plan.problems.append(f"{where} takes at most {lim['max_qp_wr']} receives per queue "
                                 f"pair, but GASNET_AM_CREDITS_PP={knob_int(env, 'GASNET_AM_CREDITS_PP')} "
                                 f"needs {buffers.rq_depth}: lower it")
        per_hca = -(-buffers.rbufs // max(len(usable), 1))
        if buffers.use_srq and "max_srq_wr" in lim and per_hca > lim["max_srq_wr"]:
            plan.problems.append(f"{where} holds at most {lim['max_srq_wr']} receives in a shared "
                                 f"queue, but GASNET_RBUF_COUNT gives it {per_hca}: lower it")
        cq = buffers.depth_total + 64 + 16
        if "max_cqe" in lim and max(cq, buffers.rbufs + 256 + 16) > lim["max_cqe"]:
            plan.problems.append(f"{where} holds at most {lim['max_cqe']} completions per queue, "
                                 "too few for GASNET_NETWORKDEPTH_TOTAL and GASNET_RBUF_COUNT: "
                                 "lower them")


def plan_memory(probe: HostProbe, ranks_on_host: int, env: Mapping[str, str], plan: HostPlan,
                buffers: IbvPlan, usable: list[Hca]) -> None:
    queues = _native.pshm_host_bytes(ranks_on_host)
    physmem = env.get("GASNET_PHYSMEM_MAX") or None
    if probe.memlock is not None and not (physmem and physmem.strip()):
        if probe.memlock < buffers.pool_bytes:
            plan.problems.append(
                f"host {probe.host}: the memlock limit ({mib(probe.memlock)}) is below the "
                f"{mib(buffers.pool_bytes)} of buffers each rank registers: raise it (ulimit -l "
                "unlimited, or memlock in /etc/security/limits.conf)")
            return
        share = _native.segment_budget(str(probe.memory), None, probe.memory,
                                       probe.shm_free or probe.memory, ranks_on_host, queues,
                                       buffers.pool_bytes)
        if share + buffers.pool_bytes > probe.memlock:
            # Each rank may pin only its memlock limit: make GASNET_PHYSMEM_MAX say so.
            physmem = str(probe.memlock * ranks_on_host)
            plan.env["GASNET_PHYSMEM_MAX"] = physmem
            plan.notes.append(f"host {probe.host}: memlock limit {mib(probe.memlock)} per "
                              f"process, so GASNET_PHYSMEM_MAX={physmem} (raise the limit for "
                              "larger segments)")
    try:
        plan.segment_per_rank = _native.segment_budget(
            env.get("GASNET_MAX_SEGSIZE"), physmem, probe.memory,
            probe.shm_free or probe.memory, ranks_on_host, queues, buffers.pool_bytes)
    except _native.ParseError as err:
        plan.problems.append(f"host {probe.host}: {err}")
        return
    for hca in usable:
        max_mr = hca.limits.get("max_mr_size")
        if max_mr and plan.segment_per_rank > max_mr:
            plan.notes.append(f"host {probe.host}: {hca.name} registers at most {mib(max_mr)} "
                              "at once; segments are capped there")
            plan.segment_per_rank = max_mr
            plan.env.setdefault("GASNET_MAX_SEGSIZE", f"{max_mr}/P")


def plan_host(probe: HostProbe, ranks_on_host: int, nranks: int,
              env: Mapping[str, str]) -> HostPlan:
    plan = HostPlan(host=probe.host)
    plan.notes.extend(f"host {probe.host}: {n}" for n in probe.notes)
    usable = plan_ports(probe, env, plan)
    maxsize = knob_int(env, "GASNET_SUPERNODE_MAXSIZE")
    snode = ranks_on_host if maxsize == 0 else min(maxsize, ranks_on_host)
    buffers = ibv_plan(nranks, nranks - snode, knob_int(env, "GASNET_AM_CREDITS_PP"),
                               knob_int(env, "GASNET_RBUF_COUNT"),
                               knob_int(env, "GASNET_BBUF_COUNT"), knob_int(env, "GASNET_USE_SRQ"),
                               knob_int(env, "GASNET_NETWORKDEPTH_PP"),
                               knob_int(env, "GASNET_NETWORKDEPTH_TOTAL"))
    plan.pool_bytes = buffers.pool_bytes
    plan.use_srq = buffers.use_srq
    if usable:
        check_limits(probe, usable, env, plan, buffers)
        plan_memory(probe, ranks_on_host, env, plan, buffers, usable)
    return plan


def summary(probe: HostProbe, plan: HostPlan, ranks_on_host: int) -> str:
    """One line for -v: what the host is and what its ranks get."""
    topo = probe.topology
    shape = (f"{topo.sockets} socket{'s' if topo.sockets != 1 else ''}, {len(topo.numa)} NUMA, "
             f"{topo.cores} cores" if topo else "topology unknown")
    ports = "; ".join(f"socket {s}: {spec}" for s, spec in plan.ports_by_socket.items()) \
        or "ports as set by the user or the conduit's default"
    return (f"{shape}; {', '.join(describe_hca(h) for h in hcas_of(probe)) or 'no HCA'}; {ports}; "
            f"{ranks_on_host} ranks each register {mib(plan.pool_bytes)} of buffers "
            f"({'shared' if plan.use_srq else 'per-peer'} receive queues) and a segment of up "
            f"to {mib(plan.segment_per_rank)}")
