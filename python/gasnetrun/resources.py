"""What a job needs of a host before anything starts: shared memory for its AM queues and
segments (the runtime's own arithmetic, through the binding), and file descriptors for the
launcher. Shortfalls are refused with the numbers."""
from __future__ import annotations

import os
import resource
from dataclasses import dataclass

from . import _native

PAGE = 4096


@dataclass
class HostMemory:
    physical: int
    shm_free: int

    @classmethod
    def here(cls) -> "HostMemory":
        phys = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        try:
            st = os.statvfs("/dev/shm")
            shm_free = st.f_bavail * st.f_frsize
        except OSError:
            shm_free = 0
        return cls(phys, shm_free)


@dataclass
class SharedMemoryNeed:
    host: str
    ranks: int
    queue_bytes: int          # the host's AM queues (all its ranks' regions)
    segment_per_rank: int     # the largest segment a rank may attach (0 if none fits)
    memory: HostMemory
    problem: str | None = None

    def describe(self) -> str:
        mib = lambda b: f"{b / 2**20:.1f} MiB"  # noqa: E731
        text = (f"host {self.host}: {self.ranks} ranks need {mib(self.queue_bytes)} of AM "
                f"queues in shared memory; segments up to {mib(self.segment_per_rank)} per rank "
                f"({mib(self.segment_per_rank * self.ranks)} in all); free /dev/shm "
                f"{mib(self.memory.shm_free)}, physical memory {mib(self.memory.physical)}")
        return text + (f" -- {self.problem}" if self.problem else "")


def shared_memory_need(host: str, ranks: int, env: dict[str, str],
                       memory: HostMemory) -> SharedMemoryNeed:
    queues = _native.pshm_host_bytes(ranks)
    need = SharedMemoryNeed(host, ranks, queues, 0, memory)
    if memory.shm_free and queues > memory.shm_free:
        need.problem = (f"the AM queues of {ranks} ranks need {queues} bytes of /dev/shm but "
                        f"only {memory.shm_free} are free")
        return need
    try:
        need.segment_per_rank = _native.segment_budget(
            env.get("GASNET_MAX_SEGSIZE"), env.get("GASNET_PHYSMEM_MAX"), memory.physical,
            memory.shm_free, ranks, queues)
    except _native.ParseError as err:
        need.problem = str(err)
    return need


def descriptors_needed(local_ranks: int, piped: bool) -> int:
    """The launcher's own: per rank a pidfd and a control connection (two pipes when output is
    forwarded), plus a margin for sockets, files and Python itself."""
    return local_ranks * (4 if piped else 2) + 64


def ensure_descriptors(needed: int) -> str | None:
    """Raises the soft RLIMIT_NOFILE as far as the hard one; a message when that is too few."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if needed <= soft:
        return None
    target = needed if hard == resource.RLIM_INFINITY else min(max(needed, soft), hard)
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
    except (ValueError, OSError):
        target = soft
    if needed > target:
        return (f"this job needs about {needed} file descriptors in gasnetrun but the limit is "
                f"{target} (RLIMIT_NOFILE soft {soft}, hard {hard}); raise the hard limit "
                "(ulimit -Hn) or start fewer ranks on this host")
    return None
