"""Thin binding to the runtime's knob table, value parsers, port specs and connect files
(csrc/core/knobs, csrc/core/connectfile), compiled by SCons in CFFI API mode. Python never
re-implements what these C functions own; this module only converts types."""
from __future__ import annotations

from dataclasses import dataclass

from ._gasnet_native import ffi, lib  # type: ignore[import-not-found]

ERRLEN = 1024


def _str(ptr) -> str:
    return ffi.string(ptr).decode() if ptr != ffi.NULL else ""


@dataclass(frozen=True)
class Knob:
    name: str
    type: str
    default: str
    min: float
    max: float
    choices: list[str]
    unit: str
    scope: str
    conduits: list[str]
    doc: str
    accepted: str

    @property
    def default_text(self) -> str:
        """How to show the default: an empty one is computed (numbers) or means unset."""
        if self.default:
            return self.default
        return "(computed)" if self.type in ("int", "size", "number") else "(unset)"

    @property
    def is_family(self) -> bool:
        return self.name.endswith("_<n>")


def _knob(ptr) -> Knob:
    return Knob(name=_str(ptr.name), type=_str(lib.gasneti_knob_type_name(ptr.type)),
                default=_str(ptr.dflt), min=ptr.min, max=ptr.max,
                choices=_str(ptr.choices).split("|") if ptr.choices != ffi.NULL else [],
                unit=_str(ptr.unit),
                scope="job" if ptr.scope == lib.GASNETI_SCOPE_JOB else "rank",
                conduits=_str(ptr.conduits).split(","), doc=_str(ptr.doc),
                accepted=_str(lib.gasneti_knob_accepted_form(ptr)))


def knobs() -> list[Knob]:
    return [_knob(lib.gasneti_knob_at(i)) for i in range(lib.gasneti_knob_count())]


def find(name: str) -> Knob | None:
    ptr = lib.gasneti_knob_find(name.encode())
    return None if ptr == ffi.NULL else _knob(ptr)


class ParseError(ValueError):
    """The C parser's message: names the input, the value and the accepted form."""


def check(name: str, text: str) -> str:
    """The canonical form of text as knob name's value (as the runtime would parse it)."""
    ptr = lib.gasneti_knob_find(name.encode())
    if ptr == ffi.NULL:
        raise KeyError(name)
    canon, err = ffi.new("char[]", ERRLEN), ffi.new("char[]", ERRLEN)
    if not lib.gasneti_knob_check(ptr, name.encode(), text.encode(), canon, ERRLEN, err, ERRLEN):
        raise ParseError(_str(err))
    return _str(canon)


def segment_budget(max_segsize: str | None, physmem_max: str | None, host_memory: int,
                   shm_free: int, ranks_on_host: int) -> int:
    err = ffi.new("char[]", ERRLEN)
    enc = lambda v: v.encode() if v else ffi.NULL  # noqa: E731
    value = lib.gasneti_segment_budget(enc(max_segsize), enc(physmem_max), host_memory,
                                       shm_free, ranks_on_host, err, ERRLEN)
    if value == 0 and _str(err):
        raise ParseError(_str(err))
    return int(value)


def exit_timeout(env: dict[str, str], ranks: int) -> float:
    err = ffi.new("char[]", ERRLEN)
    names = ["GASNET_EXITTIMEOUT", "GASNET_EXITTIMEOUT_MAX", "GASNET_EXITTIMEOUT_MIN",
             "GASNET_EXITTIMEOUT_FACTOR"]
    args = [env[n].encode() if env.get(n) else ffi.NULL for n in names]
    value = lib.gasneti_exit_timeout_of(*args, ranks, err, ERRLEN)
    if value < 0:
        raise ParseError(_str(err))
    return float(value)


def exit_grace(timeout: float) -> float:
    """Seconds ranks get to leave by themselves once one has (the C supervisor's rule too)."""
    return float(lib.gasneti_exit_grace(timeout))


def expand_filename(pattern: str, rank: int) -> str:
    out = ffi.new("char[]", 4096)
    if not lib.gasneti_expand_filename(pattern.encode(), rank, out, 4096):
        raise ParseError(f"file name '{pattern}' is too long for rank {rank}")
    return _str(out)


def parse_ports(spec: str) -> list[tuple[str, list[int]]]:
    entries = ffi.new("gasneti_port_entry_t[64]")
    err = ffi.new("char[]", ERRLEN)
    n = lib.gasneti_parse_ports(spec.encode(), entries, 64, err, ERRLEN)
    if n < 0:
        raise ParseError(f"GASNET_IBV_PORTS='{spec}': {_str(err)}")
    return [(_str(entries[i].hca), list(entries[i].ports[0:entries[i].nports])) for i in range(n)]


@dataclass
class ConnectGraph:
    size: int | None
    edges: set[tuple[int, int]]  # (a, b) with a < b


def parse_connectfile(text: str, filename: str = "<connect file>", job_size: int = 0) -> ConnectGraph:
    graph = ffi.new("gasneti_conngraph_t *")
    err = ffi.new("char[]", ERRLEN)
    if not lib.gasneti_connectfile_parse(text.encode(), filename.encode(), job_size, graph, err,
                                         ERRLEN):
        raise ParseError(_str(err))
    try:
        edges = {(graph.edges[2 * i], graph.edges[2 * i + 1]) for i in range(graph.nedges)}
        return ConnectGraph(None if graph.size < 0 else graph.size, edges)
    finally:
        lib.gasneti_conngraph_free(graph)


def write_connectfile(edges: set[tuple[int, int]], nodes: int, base: int = 36) -> str:
    graph = ffi.new("gasneti_conngraph_t *")
    try:
        for a, b in edges:
            if not lib.gasneti_conngraph_add(graph, a, b):
                raise MemoryError("connect graph")
        text = lib.gasneti_connectfile_write(graph, nodes, base)
        if text == ffi.NULL:
            raise ParseError(f"cannot write a connect file in base {base} (accepted: 2..36)")
        try:
            return _str(text)
        finally:
            lib.gasneti_free(text)
    finally:
        lib.gasneti_conngraph_free(graph)


def build_info() -> dict[str, object]:
    return {"conduits": _str(lib.gasneti_build_conduits()).split(","),
            "threading": _str(lib.gasneti_build_threads()).split(","),
            "am_max_args": lib.gasneti_build_max_args(),
            "am_max_medium": lib.gasneti_build_max_medium(),
            "am_max_long": lib.gasneti_build_max_long(),
            "knobs": lib.gasneti_knob_count()}
