"""The ibv conduit's part of `gasnetrun --probe`: per type of host, its HCAs and their limits,
the ports each socket's ranks would use and what each rank would register."""
from __future__ import annotations

from gasnetrun.conduits import ProbePlan
from gasnetrun.notes import group_notes
from gasnetrun.probe import HostProbe

from .hca import hcas_of
from .nodeplan import HostPlan, mib


def mr_text(size: int | None) -> str:
    if size is None:
        return "?"
    return "no limit" if size >= 1 << 63 else mib(size)


def probe_plan(probe: HostProbe, plan: HostPlan, ranks_on_host: int) -> ProbePlan:
    hcas = hcas_of(probe)
    hca_text = "\n".join(
        f"{h.name} ({h.numa}): " + ", ".join(f"{q.number} {q.state}"
                                             + (" Eth" if q.link_layer == "Ethernet" else "")
                                             + (f" {q.rate.split(' (')[0]}" if q.rate else "")
                                             for q in h.ports) for h in hcas) or "none"
    lines = [f"max_qp_wr {h.limits.get('max_qp_wr', '?')}\n"
             f"max_mr {mr_text(h.limits.get('max_mr_size'))}" for h in hcas]
    if len(set(lines)) == 1 and len(lines) > 1:
        limits = f"each HCA:\n{lines[0]}"  # the usual case: identical HCAs
    else:
        limits = "\n".join(f"{h.name}: {line}" for h, line in zip(hcas, lines)) or "-"
    ports = "\n".join(f"{s}: {spec}" for s, spec in plan.ports_by_socket.items()) or "-"
    per_rank = (f"{ranks_on_host} ranks\nbuffers {mib(plan.pool_bytes)}\n"
                f"segment <= {mib(plan.segment_per_rank)}")
    return ProbePlan(
        cells={"HCAs (NUMA: ports)": hca_text, "limits": limits, "ports per socket": ports,
               "per rank (ibv)": per_rank},
        data={"env": plan.env, "ports_by_socket": plan.ports_by_socket,
              "buffers_per_rank": plan.pool_bytes, "segment_per_rank": plan.segment_per_rank,
              "shared_receive_queues": plan.use_srq},
        notes=group_notes(plan.notes), problems=plan.problems)
