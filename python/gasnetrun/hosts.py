"""Where a job's ranks may run: hosts from -H (with ranges, e.g. h[1-4],gpu[01-08]),
--hostfile, or the first of the variables a site or batch system sets, with the slots each
offers; and how ranks map onto them (-N, --ppn, block or cyclic)."""
from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass
from typing import Mapping

from .plan import HostShare

# Checked in this order; the first one set wins (gasnetrun -v says which).
HOST_VARIABLES = ["GASNET_SSH_SERVERS", "GASNET_SSH_NODEFILE", "GASNET_NODEFILE", "PBS_NODEFILE",
                  "PE_HOSTFILE", "LSB_MCPU_HOSTS", "LSB_HOSTS", "SLURM_JOB_NODELIST"]


class HostError(Exception):
    """Bad host input; the message names the source, the value and the accepted form."""


@dataclass
class Host:
    name: str
    slots: int | None = None  # None: not said


# One item of a host list: a name with optional [ranges]; commas inside brackets are the
# range's own. Commas, spaces and newlines outside brackets separate items (GASNet takes all
# three in GASNET_SSH_SERVERS).
ITEM = re.compile(r"(?:[^\s,\[]|\[[^\]]*\])+")


def expand(text: str, source: str) -> list[str]:
    """Names separated by commas, spaces or newlines, with ClusterShell ranges:
    h[1-4],gpu[01-08]. The order is the user's: a NodeSet sorts, so each item is expanded on
    its own (a range keeps its numeric order)."""
    from ClusterShell.NodeSet import NodeSet, NodeSetParseError
    accepted = ("expected names with optional ranges, separated by commas, spaces or "
                "newlines, e.g. node[1-4],gpu[01-08]")
    stray = ITEM.sub("", text).strip(", \t\r\n\f\v")
    if stray:  # an unbalanced bracket is all that is left outside items
        raise HostError(f"{source} '{text}': unbalanced '{stray[0]}' ({accepted})")
    names: list[str] = []
    for item in ITEM.findall(text):
        try:
            names += list(NodeSet(item))
        except NodeSetParseError as err:
            raise HostError(f"{source} '{text}': {err} ({accepted})") from err
    return names


def merge(hosts: list[Host]) -> list[Host]:
    """A name given twice is one host with both counts (mpirun's -H h1,h1 means 2 slots)."""
    merged: dict[str, Host] = {}
    for h in hosts:
        if h.name in merged:
            prev = merged[h.name]
            prev.slots = (prev.slots or 1) + (h.slots or 1)
        else:
            merged[h.name] = Host(h.name, h.slots)
    return list(merged.values())


def parse_hostfile(path: str, source: str) -> list[Host]:
    """Lines of `host`, `host slots=N`, `host:N` or `host N` (SGE adds more columns); # comments."""
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except OSError as err:
        raise HostError(f"{source} {path}: {err.strerror}") from err
    except UnicodeDecodeError as err:
        raise HostError(f"{source} {path}: not UTF-8 text") from err
    hosts = []
    for number, raw in enumerate(lines, 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        m = (re.fullmatch(r"(\S+?)(?::(\d+))?", line) or
             re.fullmatch(r"(\S+)\s+slots\s*=\s*(\d+)(?:\s+.*)?", line) or
             re.fullmatch(r"(\S+)\s+(\d+)(?:\s+.*)?", line))
        if not m:
            raise HostError(f"{path}:{number}: '{raw}' is not a host line (expected 'host', "
                            "'host slots=N', 'host:N' or 'host N')")
        slots = int(m.group(2)) if m.group(2) else None
        if slots == 0:
            raise HostError(f"{path}:{number}: '{raw}': a host needs at least 1 slot")
        hosts.append(Host(m.group(1), slots))
    if not hosts:
        raise HostError(f"{source} {path}: no hosts in the file")
    return hosts


def slurm_tasks_per_node(text: str, count: int) -> list[int | None]:
    """SLURM_TASKS_PER_NODE, e.g. '2(x3),1' -> [2, 2, 2, 1]."""
    out: list[int | None] = []
    for part in filter(None, text.split(",")):
        m = re.fullmatch(r"(\d+)(?:\(x(\d+)\))?", part)
        if not m:
            return [None] * count
        out += [int(m.group(1))] * int(m.group(2) or 1)
    return out if len(out) == count else [None] * count


def from_variable(name: str, value: str, env: Mapping[str, str]) -> list[Host]:
    if name == "GASNET_SSH_SERVERS":
        return [Host(h) for h in expand(value, name)]
    if name in ("GASNET_SSH_NODEFILE", "GASNET_NODEFILE", "PBS_NODEFILE", "PE_HOSTFILE"):
        return parse_hostfile(value, name)
    if name == "LSB_MCPU_HOSTS":
        words = value.split()
        if len(words) % 2 or not all(w.isdigit() for w in words[1::2]):
            raise HostError(f"LSB_MCPU_HOSTS '{value}' is not 'host count host count ...'")
        return [Host(h, int(n)) for h, n in zip(words[::2], words[1::2])]
    if name == "LSB_HOSTS":
        return [Host(h, 1) for h in value.split()]
    names = expand(value, name)  # SLURM_JOB_NODELIST
    counts = slurm_tasks_per_node(env.get("SLURM_TASKS_PER_NODE", ""), len(names))
    return [Host(h, c) for h, c in zip(names, counts)]


def find_hosts(cli_hosts: list[str], hostfile: str | None,
               env: Mapping[str, str]) -> tuple[list[Host], str] | None:
    """The job's hosts and where they came from, or None when nothing names any."""
    if cli_hosts:
        return merge([Host(h) for text in cli_hosts for h in expand(text, "-H")]), "-H"
    if hostfile:
        return merge(parse_hostfile(hostfile, "--hostfile")), f"--hostfile {hostfile}"
    for name in HOST_VARIABLES:
        value = env.get(name, "").strip()
        if value:
            return merge(from_variable(name, value, env)), name
    return None


def map_ranks(nranks: int, hosts: list[Host], nodes: int | None, ppn: int | None,
              mapping: str) -> list[HostShare]:
    """Ranks onto hosts: the first -N hosts; --ppn per host, else the slots each offers (1
    where some hosts give a count and this one does not) when they hold the job, else as even
    as possible. block fills a host before the next; cyclic
    deals ranks round-robin."""
    if nodes is not None:
        if nodes > len(hosts):
            known = f"only {len(hosts)} hosts are" if len(hosts) != 1 else "only 1 host is"
            raise HostError(f"-N {nodes}: {known} known "
                            f"({', '.join(h.name for h in hosts)})")
        hosts = hosts[:nodes]
    if ppn is not None:
        counts = [ppn] * len(hosts)
        if ppn * len(hosts) < nranks:
            raise HostError(f"-n {nranks} does not fit --ppn {ppn} on {len(hosts)} hosts "
                            f"(at most {ppn * len(hosts)} ranks)")
    elif any(h.slots for h in hosts) and sum(h.slots or 1 for h in hosts) >= nranks:
        counts = [h.slots or 1 for h in hosts]  # a host that gives no count is one slot
    else:
        per = math.ceil(nranks / len(hosts))
        counts = [per] * len(hosts)
    ranks: list[list[int]] = [[] for _ in hosts]
    if mapping == "cyclic":
        i = 0
        for rank in range(nranks):
            while len(ranks[i % len(hosts)]) >= counts[i % len(hosts)]:
                i += 1
            ranks[i % len(hosts)].append(rank)
            i += 1
    else:
        rank = 0
        for i, count in enumerate(counts):
            take = min(count, nranks - rank)
            ranks[i] = list(range(rank, rank + take))
            rank += take
    return [HostShare(h.name, r) for h, r in zip(hosts, ranks) if r]


def resolvable(name: str) -> str | None:
    """None when the name resolves, else why not."""
    import socket
    try:
        socket.getaddrinfo(name, 22)
        return None
    except OSError as err:
        return str(err.strerror or err)


def describe(hosts: list[Host]) -> str:
    return ", ".join(f"{h.name}" + (f"({h.slots})" if h.slots else "") for h in hosts)


def remote_path_default() -> str:
    return os.getcwd()
