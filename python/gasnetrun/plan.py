"""A job's plan: which ranks run on which host, what they run, the environment they see (with
the -E names kept apart, since some spawners pass only those), and the launcher's options."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field


@dataclass
class HostShare:
    name: str
    ranks: list[int]


@dataclass
class Plan:
    nranks: int
    program: str
    args: list[str]
    env: dict[str, str]           # what every rank sees (the propagated environment)
    exported: list[str]           # names given with -E
    hosts: list[HostShare]
    jobid: str = ""
    verbose: bool = False
    keep: bool = False
    tag_output: bool = False
    env_only: bool = False        # remote ranks get only the -E names (and GASNET_* knobs)
    placed: bool = False          # the user placed ranks (-H, --hostfile, -N, --ppn, --map-by)
    cyclic: bool = False          # --map-by cyclic
    notes: list[str] = field(default_factory=list)  # what -v says about how the plan was made
    node_planner: str = ""        # the conduit whose launcher half plans each host (its agent)
    host_env: dict[str, dict[str, str]] = field(default_factory=dict)  # per host, on top of env

    @property
    def argv(self) -> list[str]:
        return [self.program, *self.args]

    def host_of(self, rank: int) -> str:
        for share in self.hosts:
            if rank in share.ranks:
                return share.name
        raise KeyError(rank)

    def to_json(self) -> str:
        import json
        return json.dumps(asdict(self), indent=1, sort_keys=True)


def block_mapping(nranks: int, hosts: list[str], ppn: list[int]) -> list[HostShare]:
    """Consecutive ranks fill a host up to its ppn before the next one starts."""
    shares, rank = [], 0
    for name, count in zip(hosts, ppn):
        take = min(count, nranks - rank)
        if take > 0:
            shares.append(HostShare(name, list(range(rank, rank + take))))
        rank += max(take, 0)
    return shares
