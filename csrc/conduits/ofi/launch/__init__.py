"""The ofi conduit's launcher half (gasnetrun.conduits.ofi): what libfabric offers on each host
(gasnet-ofi-probe: libfabric's own fi_getinfo with the conduit's hints, not fi_info's text),
shown by `gasnetrun --probe`, and checked before a job starts: every host must have a provider
at all, and the one GASNET_OFI_PROVIDER (or libfabric's FI_PROVIDER) names; on a host whose
NICs sit near different sockets, each socket's ranks get the NIC nearest them
(GASNET_OFI_DEVICE_<socket>). Which provider the job uses the ranks agree on at start-up: the
first of rank 0's that every rank has (a launcher under pmi or mpi runs nothing of ours on the
other hosts before the ranks, so only the ranks can see them all)."""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any, Mapping

from gasnetrun.conduits import Prepared, ProbePlan
from gasnetrun.plan import Plan
from gasnetrun.probe import HostProbe, probe_host, read

PROBE_NAME = "gasnet-ofi-probe"
RECORDED = "ofi_info.json"  # a recorded node's gasnet-ofi-probe output (GASNET_PROBE_ROOT)


def probe_program() -> Path | None:
    """gasnet-ofi-probe beside this gasnetrun: the build's bin/, or an install's bin/."""
    import gasnetrun
    python_root = Path(gasnetrun.__file__).resolve().parent.parent
    for candidate in (python_root.parent / "bin" / PROBE_NAME,              # build/python
                      python_root.parents[2] / "bin" / PROBE_NAME):        # lib/gasnet/python
        if candidate.is_file():
            return candidate
    return None


def run_probe(fi_provider: str | None) -> tuple[str, list[str]]:
    """gasnet-ofi-probe's JSON, with libfabric's FI_PROVIDER set to fi_provider (None: unset,
    whatever this process has: every provider)."""
    program = probe_program()
    if program is None:
        return "", [f"{PROBE_NAME} is not installed beside gasnetrun"]
    env = {k: v for k, v in os.environ.items() if k != "FI_PROVIDER"}
    if fi_provider is not None:
        env["FI_PROVIDER"] = fi_provider
    try:
        proc = subprocess.run([str(program), "--json"], capture_output=True, text=True,
                              timeout=60, env=env)
    except (OSError, subprocess.TimeoutExpired) as err:
        return "", [f"{PROBE_NAME} failed: {err}"]
    if proc.returncode != 0:
        return "", [f"{PROBE_NAME} failed: {proc.stderr.strip() or proc.returncode}"]
    return proc.stdout, []


def probe_devices(root: str | None, sysfs: Path) -> tuple[list[dict[str, Any]], list[str]]:
    """The provider/domain pairs a rank here could open, each with the NUMA node of its NIC
    where sysfs says (an interface's device): all of them, whatever FI_PROVIDER says (check()
    asks libfabric what FI_PROVIDER leaves)."""
    if root:
        text = read(Path(root) / RECORDED)
        if not text:
            return [], [f"the recorded node has no {RECORDED} (gasnet-ofi-probe's output)"]
    else:
        text, problems = run_probe(None)
        if problems:
            return [], problems
    try:
        found = json.loads(text)
    except ValueError as err:
        return [], [f"{PROBE_NAME}'s output is not JSON: {err}"]
    for entry in found:
        numa = read(sysfs / "class" / "net" / str(entry.get("domain")) / "device" / "numa_node")
        entry["numa"] = int(numa) if numa.lstrip("-").isdigit() else -1
    return found, []


def wanted(env: Mapping[str, str]) -> tuple[str | None, str]:
    """The provider the user asked for, and where from."""
    for name in ("GASNET_OFI_PROVIDER", "FI_PROVIDER"):
        value = env.get(name, "").strip()
        if value:
            return value, name
    return None, ""


def providers(found: list[dict[str, Any]]) -> dict[str, list[str]]:
    """Provider -> its domains, in libfabric's order."""
    out: dict[str, list[str]] = {}
    for entry in found:
        domains = out.setdefault(str(entry["provider"]), [])
        if entry["domain"] not in domains:
            domains.append(str(entry["domain"]))
    return out


def describe(found: list[dict[str, Any]]) -> str:
    return "; ".join(f"{p} ({', '.join(d)})" for p, d in providers(found).items()) or "none"


def filtered_like_libfabric(found: list[dict[str, Any]], fi_provider: str) -> list[dict[str, Any]]:
    """What FI_PROVIDER leaves of a recorded node's offers, read as libfabric reads it (its
    fi_getinfo cannot be asked for a recorded node): names separated by commas, any case, all
    excluded when the list starts with '^'; a layered provider ('tcp;ofi_rxm') goes with its
    core provider's name as well as its own."""
    exclude = fi_provider.startswith("^")
    names = {n.strip().lower() for n in fi_provider.lstrip("^").split(",") if n.strip()}

    def named(provider: str) -> bool:
        return bool(names & {part.lower() for part in provider.split(";")})
    return [e for e in found if named(str(e["provider"])) != exclude]


def check(host: str, found: list[dict[str, Any]], env: Mapping[str, str]) -> list[str]:
    """What keeps this host from running an ofi job, if anything."""
    have = providers(found)
    want, source = wanted(env)
    if want is not None and source == "FI_PROVIDER":
        # libfabric's own variable: libfabric reads it (lists, '^' exclusions, any case).
        root = env.get("GASNET_PROBE_ROOT", "").strip()
        if root:
            left = filtered_like_libfabric(found, want)
        else:
            text, problems = run_probe(want)
            if problems:
                return [f"host {host}: {p}" for p in problems]
            try:
                left = json.loads(text)
            except ValueError as err:
                return [f"host {host}: {PROBE_NAME}'s output is not JSON: {err}"]
        if not left:
            return [f"host {host}: with FI_PROVIDER={want}, libfabric offers the ofi conduit no "
                    f"provider; without it, it has: {describe(found)}"]
        return []
    if want is not None:
        if not any(want == p or p.split(";")[0] == want for p in have):
            return [f"host {host}: libfabric has no provider '{want}' ({source}) for the ofi "
                    f"conduit; it has: {describe(found)}"]
        return []
    if not have:
        return [f"host {host}: libfabric offers no provider the ofi conduit can use (reliable "
                "datagram endpoints with messages, no FI_MR_LOCAL): run a "
                "program built for another conduit there"]
    return []


def per_socket_devices(probe: HostProbe, found: list[dict[str, Any]],
                       env: Mapping[str, str]) -> dict[str, str]:
    """GASNET_OFI_DEVICE_<socket>: the NIC nearest each socket, where the host's NICs sit near
    different sockets (never over the user's choice)."""
    if any(k == "GASNET_OFI_DEVICE" or k.startswith("GASNET_OFI_DEVICE_") for k, v in env.items()
           if v.strip()):
        return {}
    topo = probe.topology
    if topo is None or topo.sockets < 2:
        return {}
    want, _ = wanted(env)
    first = next((e["provider"] for e in found
                  if want is None or e["provider"] == want), None)
    near: dict[int, str] = {}
    for entry in found:
        if entry["provider"] != first or entry.get("loopback") or entry.get("numa", -1) < 0:
            continue
        socket = topo.socket_of_numa(int(entry["numa"]))
        if socket >= 0:
            near.setdefault(socket, str(entry["domain"]))
    if len(set(near.values())) < 2:
        return {}  # one NIC (or none near a socket): nothing to choose per socket
    return {f"GASNET_OFI_DEVICE_{s}": d for s, d in sorted(near.items())}


def plan_node(host: str, ranks_on_host: int, nranks: int, env: Mapping[str, str]) -> Prepared:
    try:
        probe = probe_host(env.get("GASNET_PROBE_ROOT", "").strip() or None, only=["ofi"])
    except (OSError, ValueError) as err:
        return Prepared(problems=[f"host {host}: cannot probe it: {err}"])
    found = probe.devices.get("ofi", [])
    notes = [f"host {host}: {n}" for n in probe.notes]
    notes.append(f"host {host}: ofi providers: {describe(found)}")
    devices = per_socket_devices(probe, found, env)
    if devices:
        notes.append(f"host {host}: NIC per socket: "
                     + ", ".join(f"{k[len('GASNET_OFI_DEVICE_'):]}: {v}" for k, v in devices.items()))
    return Prepared(env=devices, notes=notes, problems=check(host, found, env))


def prepare(plan: Plan, spawner: str) -> Prepared:
    if spawner == "ssh":
        plan.node_planner = "ofi"  # each agent checks its own host
        return Prepared()
    share = plan.hosts[0]
    found = plan_node(share.name, max(len(h.ranks) for h in plan.hosts), plan.nranks, plan.env)
    if spawner != "local" and len(plan.hosts) > 1:
        found.notes.append(f"the {spawner} spawner's launcher starts the ranks itself: only this "
                           "host was checked (the ranks agree on a provider every host has)")
    return found


def device_key(data: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return data


def probe_plans(probe: HostProbe, ranks_on_host: int, nranks: int,
                env: Mapping[str, str]) -> ProbePlan:
    found = probe.devices.get("ofi", [])
    have = providers(found)
    lines = [f"{p}: {', '.join(d)}"
             + ("" if any(e["rma"] for e in found if e["provider"] == p) else " (no RMA)")
             for p, d in have.items()]
    devices = per_socket_devices(probe, found, env)
    return ProbePlan(
        cells={"ofi providers: domains": "\n".join(lines) or "none"},
        data={"providers": found, "devices_per_socket": devices},
        notes=[f"host {probe.host}: {n}" for n in probe.notes if "ofi" in n or "recorded" in n],
        problems=check(probe.host, found, env))
