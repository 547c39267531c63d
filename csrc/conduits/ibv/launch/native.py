"""The ibv conduit's own C as its launcher half calls it (ibv_plan.h through gasnetrun's CFFI
module): the buffers each rank registers, GASNET_IBV_PORTS specs, connect files."""
from __future__ import annotations

import os
from dataclasses import dataclass

from gasnetrun._native import ERRLEN, ParseError, ffi, native_lib, native_str


@dataclass
class IbvPlan:
    """What an ibv rank registers besides its segment (the conduit's own arithmetic)."""
    use_srq: bool
    rq_depth: int
    rbufs: int
    bbufs: int
    depth_total: int
    pool_bytes: int


def ibv_plan(nranks: int, remote_peers: int, credits_pp: int = 12, rbuf_count: int = 1024,
             bbuf_count: int = 1024, use_srq: int = -1, depth_pp: int = 24,
             depth_total: int = 255) -> IbvPlan:
    out = ffi.new("gasneti_ibv_plan_t *")
    native_lib().gasneti_ibv_plan(nranks, remote_peers, credits_pp, rbuf_count, bbuf_count,
                                  use_srq, depth_pp, depth_total, out)
    return IbvPlan(bool(out.use_srq), int(out.rq_depth), int(out.rbufs), int(out.bbufs),
                   int(out.depth_total), int(out.pool_bytes))


def parse_ports(spec: str) -> list[tuple[str, list[int]]]:
    entries = ffi.new("gasneti_port_entry_t[64]")
    err = ffi.new("char[]", ERRLEN)
    n = native_lib().gasneti_parse_ports(os.fsencode(spec), entries, 64, err, ERRLEN)
    if n < 0:
        raise ParseError(f"GASNET_IBV_PORTS='{spec}': {native_str(err)}")
    return [(native_str(entries[i].hca), list(entries[i].ports[0:entries[i].nports]))
            for i in range(n)]


@dataclass
class ConnectGraph:
    size: int | None
    edges: set[tuple[int, int]]  # (a, b) with a < b


def parse_connectfile(text: str, filename: str = "<connect file>",
                      job_size: int = 0) -> ConnectGraph:
    lib = native_lib()
    graph = ffi.new("gasneti_conngraph_t *")
    err = ffi.new("char[]", ERRLEN)
    if not lib.gasneti_connectfile_parse(os.fsencode(text), os.fsencode(filename), job_size,
                                         graph, err, ERRLEN):
        raise ParseError(native_str(err))
    try:
        edges = {(graph.edges[2 * i], graph.edges[2 * i + 1]) for i in range(graph.nedges)}
        return ConnectGraph(None if graph.size < 0 else graph.size, edges)
    finally:
        lib.gasneti_conngraph_free(graph)


def write_connectfile(edges: set[tuple[int, int]], nodes: int, base: int = 36) -> str:
    lib = native_lib()
    graph = ffi.new("gasneti_conngraph_t *")
    try:
        for a, b in edges:
            if not lib.gasneti_conngraph_add(graph, a, b):
                raise MemoryError("connect graph")
        text = lib.gasneti_connectfile_write(graph, nodes, base)
        if text == ffi.NULL:
            raise ParseError(f"cannot write a connect file in base {base} (accepted: 2..36)")
        try:
            return native_str(text)
        finally:
            lib.gasneti_free(text)
    finally:
        lib.gasneti_conngraph_free(graph)
