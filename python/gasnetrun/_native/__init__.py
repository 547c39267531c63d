"""Thin binding to the runtime's knob table, value parsers, the shared-memory layout and the
exit policy (csrc/common), compiled by SCons in CFFI API mode, together with what conduits'
launcher halves call of their own C (their native headers; they wrap it themselves through
ffi and native_lib()). Python never re-implements what these C functions own; this module only
converts types.

The compiled module exists in a build tree or an install; importing this package from the
bare source tree works (for type checks and tools), and any call then names what to build."""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

try:
    from ._gasnet_native import ffi, lib
except ImportError:  # the source tree without a build
    ffi = lib = None


class NotBuilt(RuntimeError):
    pass


def native_lib() -> Any:
    """The compiled module's functions (conduits' launcher halves call their own through it)."""
    return _lib()


def native_str(ptr: Any) -> str:
    return _str(ptr)


def _lib() -> Any:
    if lib is None:
        raise NotBuilt("gasnetrun's native module is not built: run scons, then use "
                       "build/bin/gasnetrun")
    return lib

ERRLEN = 1024


def _str(ptr: Any) -> str:
    return os.fsdecode(ffi.string(ptr)) if ptr != ffi.NULL else ""


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
    tunable: bool
    sweep: list[str]
    constraint: str | None

    @property
    def default_text(self) -> str:
        """How to show the default: an empty one is computed (numbers) or means unset."""
        if self.default:
            return self.default
        return "(computed)" if self.type in ("int", "size", "number") else "(unset)"

    @property
    def is_family(self) -> bool:
        return self.name.endswith("_<n>")

    def applies_to(self, conduit: str) -> bool:
        """Whether a job of this conduit reads the knob ("network": every conduit of this build
        that reaches other hosts)."""
        return ("all" in self.conduits or conduit in self.conduits
                or ("network" in self.conduits
                    and conduit in build_info()["multi_host_conduits"]))


def _knob(ptr: Any) -> Knob:
    lib = _lib()
    return Knob(name=_str(ptr.name), type=_str(lib.gasneti_knob_type_name(ptr)),
                default=_str(ptr.dflt), min=ptr.min, max=ptr.max,
                choices=_str(ptr.choices).split("|") if ptr.choices != ffi.NULL else [],
                unit=_str(ptr.unit),
                scope="job" if ptr.scope == lib.GASNETI_SCOPE_JOB else "rank",
                conduits=_str(ptr.conduits).split(","), doc=_str(ptr.doc),
                accepted=_str(lib.gasneti_knob_accepted_form(ptr)), tunable=bool(ptr.tunable),
                sweep=_str(ptr.sweep).split(",") if ptr.sweep != ffi.NULL else [],
                constraint=_str(ptr.constraint) or None)


def knobs() -> list[Knob]:
    lib = _lib()
    return [_knob(lib.gasneti_knob_at(i)) for i in range(lib.gasneti_knob_count())]


def find(name: str) -> Knob | None:
    ptr = _lib().gasneti_knob_find(os.fsencode(name))
    return None if ptr == ffi.NULL else _knob(ptr)


class ParseError(ValueError):
    """The C parser's message: names the input, the value and the accepted form."""


def check(name: str, text: str) -> str:
    """The canonical form of text as knob name's value (as the runtime would parse it)."""
    lib = _lib()
    ptr = lib.gasneti_knob_find(os.fsencode(name))
    if ptr == ffi.NULL:
        raise KeyError(name)
    canon, err = ffi.new("char[]", ERRLEN), ffi.new("char[]", ERRLEN)
    if not lib.gasneti_knob_check(ptr, os.fsencode(name), os.fsencode(text), canon, ERRLEN,
                                  err, ERRLEN):
        raise ParseError(_str(err))
    return _str(canon)


def blank(value: str | None) -> bool:
    """Whether a value means "unset" (empty or white space), by the runtime's own rule."""
    return value is None or bool(_lib().gasneti_knob_blank(os.fsencode(value)))


def segment_budget(max_segsize: str | None, physmem_max: str | None, host_memory: int,
                   shm_free: int, ranks_on_host: int, queue_bytes: int,
                   pinned_bytes: int = 0) -> int:
    """Bytes of segment per rank (less pinned_bytes of other buffers each rank registers with
    the network); ParseError with the numbers when a value is bad or the budget rounds to
    nothing."""
    lib = _lib()
    err = ffi.new("char[]", ERRLEN)
    enc = lambda v: os.fsencode(v) if v else ffi.NULL  # noqa: E731
    value = lib.gasneti_segment_budget(enc(max_segsize), enc(physmem_max), host_memory,
                                       shm_free, ranks_on_host, queue_bytes, pinned_bytes,
                                       err, ERRLEN)
    if value == 0:
        raise ParseError(_str(err))
    return int(value)


def launch_handed_on(name: str) -> bool:
    """Whether a site launcher is told to hand this variable on by name (not the caller's
    session's, not a launcher's own)."""
    return bool(_lib().gasneti_launch_handed_on(os.fsencode(name)))


def pshm_host_bytes(host_ranks: int) -> int:
    """Shared memory the AM queues of a host with this many ranks take (the runtime's layout)."""
    return int(_lib().gasneti_pshm_host_bytes(host_ranks))


def exit_timeout(env: dict[str, str], ranks: int) -> float:
    lib = _lib()
    err = ffi.new("char[]", ERRLEN)
    names = ["GASNET_EXITTIMEOUT", "GASNET_EXITTIMEOUT_MAX", "GASNET_EXITTIMEOUT_MIN",
             "GASNET_EXITTIMEOUT_FACTOR"]
    args = [os.fsencode(env[n]) if env.get(n) else ffi.NULL for n in names]
    value = lib.gasneti_exit_timeout_of(*args, ranks, err, ERRLEN)
    if value < 0:
        raise ParseError(_str(err))
    return float(value)


def leave_signal() -> int:
    """The signal that asks a rank to leave (the runtime runs the client's SIGQUIT handler)."""
    return int(_lib().gasneti_exit_leave_signal())


def exit_grace(timeout: float) -> float:
    """Seconds ranks get to leave by themselves once one has (the C supervisor's rule too)."""
    return float(_lib().gasneti_exit_grace(timeout))


def expand_filename(pattern: str, rank: int) -> str:
    out = ffi.new("char[]", 4096)
    if not _lib().gasneti_expand_filename(os.fsencode(pattern), rank, out, 4096):
        raise ParseError(f"file name '{pattern}' is too long for rank {rank}")
    return _str(out)


def trace_file_problem(file_knob: str, pattern: str, nodes_knob: str, nodes: str | None,
                       nranks: int) -> str | None:
    """Why a GASNET_TRACEFILE/GASNET_STATSFILE pattern cannot serve this job (one file for
    several ranks), or None."""
    why = ffi.new("char[]", ERRLEN)
    if _lib().gasneti_trace_file_problem(os.fsencode(file_knob), os.fsencode(pattern),
                                         os.fsencode(nodes_knob),
                                         os.fsencode(nodes) if nodes is not None else ffi.NULL,
                                         nranks, why, ERRLEN):
        return _str(why)
    return None


def build_info() -> dict[str, Any]:
    lib = _lib()
    get = lambda key: _str(getattr(lib, f"gasneti_build_{key}")())  # noqa: E731
    limits = {}
    for entry in filter(None, get("limits").split(";")):
        conduit, medium, long_ = entry.split(":")
        limits[conduit] = {"am_max_medium": int(medium), "am_max_long": int(long_)}
    link = {c: [lib_ for lib_ in libs.split(",") if lib_]
            for c, _, libs in (e.partition(":") for e in get("libs").split(";") if e)}
    return {"version": get("version"), "gasnet_release": get("release"),
            "conduits": get("conduits").split(","), "libs": link,
            "multi_host_conduits": [c for c in get("multi_host").split(",") if c],
            "spawners": get("spawners").split(","), "threading": get("threads").split(","),
            "am_max_args": 16, "limits": limits, "knobs": int(lib.gasneti_knob_count())}


class ExitPolicy:
    """The job's exit rules (csrc/core/exit/exit_policy.c): events in, signals to send out."""
    QUIT, KILL, STRAGGLERS = 1, 2, 4
    FINISHED, ENDED_JOB, BY_LAUNCHER = 0, 1, 2

    def __init__(self, nranks: int, timeout: float) -> None:
        self._lib = _lib()
        self._p = ffi.new("gasneti_exit_policy_t *")
        if not self._lib.gasneti_exit_policy_init(self._p, nranks, timeout):
            raise MemoryError("exit policy")

    def __del__(self) -> None:
        if getattr(self, "_p", None) is not None:
            self._lib.gasneti_exit_policy_fini(self._p)

    @property
    def code(self) -> int:
        return int(self._p.code)

    @property
    def timeout(self) -> float:
        return float(self._p.timeout)

    @property
    def ending(self) -> bool:
        return bool(self._p.ending)

    @property
    def remaining(self) -> int:
        return int(self._p.remaining)

    @property
    def first_done(self) -> int:
        return int(self._p.first_done)

    @property
    def stragglers(self) -> bool:
        """Ranks were ended for outliving a finished rank by GASNET_EXITTIMEOUT."""
        return bool(self._p.stragglers)

    def leaving(self, rank: int, code: int, ends_job: bool, now: float) -> None:
        self._lib.gasneti_exit_policy_leaving(self._p, rank, code, int(ends_job), now)

    def abort(self, rank: int, code: int, now: float) -> None:
        self._lib.gasneti_exit_policy_abort(self._p, rank, code, now)

    def ended(self, rank: int, code: int, signal: int, now: float) -> int:
        return int(self._lib.gasneti_exit_policy_ended(self._p, rank, code, signal, now))

    def fail(self, code: int, now: float) -> None:
        self._lib.gasneti_exit_policy_fail(self._p, code, now)

    def signalled(self, signal: int, now: float) -> None:
        self._lib.gasneti_exit_policy_signalled(self._p, signal, now)

    def due(self, now: float) -> int:
        return int(self._lib.gasneti_exit_policy_due(self._p, now))

    def deadline(self) -> float | None:
        t = float(self._lib.gasneti_exit_policy_deadline(self._p))
        return None if t < 0 else t

    def running(self, rank: int) -> bool:
        return bool(self._lib.gasneti_exit_policy_running(self._p, rank))

    def running_list(self) -> str:
        buf = ffi.new("char[]", 4096)
        return _str(self._lib.gasneti_exit_policy_running_list(self._p, buf, 4096))
