"""The search space: tunable knobs of the knob table (through gasnetrun's binding), the values
to try (the table's sweep list, or a space file's), their constraints, and the grid's points.

A point is a tuple of values, one per dimension, in the dimensions' order; the baseline is not
a point: it is the caller's environment as it is."""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field

from gasnetrun import _native

from .errors import UsageError

SPACE_FORM = "'GASNET_NAME' (the table's sweep values) or 'GASNET_NAME = v1,v2,...' lines"


@dataclass(frozen=True)
class Dimension:
    name: str
    values: tuple[str, ...]  # canonical forms, as the runtime parses them
    baseline: str            # what the baseline uses: the caller's value or the table default
    numeric: bool


@dataclass
class Space:
    dims: list[Dimension]
    # (knob, "<=", other knob): the knob's value never exceeds the other's
    constraints: list[tuple[str, str, str]] = field(default_factory=list)
    # baseline values of knobs outside the space that a constraint compares with
    outside: dict[str, str] = field(default_factory=dict)

    @property
    def names(self) -> list[str]:
        return [d.name for d in self.dims]

    def value_of(self, name: str, point: tuple[str, ...] | None) -> str:
        """A knob's value at point (None: the baseline), for constraints."""
        for i, d in enumerate(self.dims):
            if d.name == name:
                return d.baseline if point is None else point[i]
        return self.outside.get(name, "")

    def allowed(self, point: tuple[str, ...]) -> bool:
        for knob, _, other in self.constraints:
            a, b = self.value_of(knob, point), self.value_of(other, point)
            if a and b and float(a) > float(b):
                return False
        return True

    def points(self) -> list[tuple[str, ...]]:
        """Every point of the grid that satisfies the constraints, in a fixed order (only for
        grids small enough to list: see size_bound)."""
        return [p for p in itertools.product(*(d.values for d in self.dims)) if self.allowed(p)]

    def size_bound(self) -> int:
        """Points of the grid before constraints."""
        return math.prod(len(d.values) for d in self.dims)

    def pid(self, point: tuple[str, ...]) -> str:
        """A point's name: its index in the grid's mixed-radix order (stable, and defined
        without listing the grid)."""
        index = 0
        for d, v in zip(self.dims, point):
            index = index * len(d.values) + d.values.index(v)
        return f"p{index}"

    def point_of(self, pid: str) -> tuple[str, ...]:
        index = int(pid[1:])
        values = []
        for d in reversed(self.dims):
            index, i = divmod(index, len(d.values))
            values.append(d.values[i])
        return tuple(reversed(values))

    def env(self, point: tuple[str, ...]) -> dict[str, str]:
        return dict(zip(self.names, point))

    def describe(self) -> list[dict[str, object]]:
        return [{"name": d.name, "values": list(d.values), "baseline": d.baseline}
                for d in self.dims]


def canonical(name: str, text: str) -> str:
    """The runtime's own reading of a value, as a value it accepts again ("4K" -> "4096"): the
    binding's canonical form without its type prefix."""
    return _native.check(name, text).split(":", 1)[1]


def _applies(knob: _native.Knob, conduit: str) -> bool:
    return knob.applies_to(conduit)


def _tunable_knob(name: str, conduit: str, where: str) -> _native.Knob:
    knob = _native.find(name)
    if knob is None or knob.is_family:
        raise UsageError(f"{where}: {name} is not a GASNet knob (see gasnetrun --knobs)")
    if not knob.tunable:
        tunable = ", ".join(k.name for k in _native.knobs() if k.tunable and _applies(k, conduit))
        raise UsageError(f"{where}: {name} is not tunable (the knob table marks only these "
                         f"for the {conduit} conduit: {tunable})")
    if not _applies(knob, conduit):
        raise UsageError(f"{where}: {name} does not apply to the {conduit} conduit (it applies "
                         f"to: {', '.join(knob.conduits)})")
    return knob


def _dimension(knob: _native.Knob, values: list[str], env: dict[str, str],
               where: str) -> Dimension:
    canon: list[str] = []
    for v in values:
        try:
            c = canonical(knob.name, v)
        except _native.ParseError as err:
            raise UsageError(f"{where}: {err}") from None
        if c not in canon:
            canon.append(c)
    caller = env.get(knob.name)
    if caller is not None and not _native.blank(caller):
        try:
            baseline = canonical(knob.name, caller)
        except _native.ParseError as err:
            raise UsageError(f"environment: {err}") from None
    else:
        baseline = canonical(knob.name, knob.default) if knob.default else ""
    return Dimension(knob.name, tuple(canon), baseline, knob.type in ("int", "size", "number"))


def _constraints(dims: list[Dimension]) -> list[tuple[str, str, str]]:
    out = []
    for d in dims:
        knob = _native.find(d.name)
        if knob is not None and knob.constraint and knob.constraint.startswith("<="):
            out.append((d.name, "<=", knob.constraint[2:]))
    return out


def _finish(dims: list[Dimension], env: dict[str, str]) -> Space:
    space = Space(dims)
    # A constraint on a knob outside the space compares with that knob's baseline value.
    for knob, op, other in _constraints(dims):
        if other not in space.names:
            k = _native.find(other)
            value = env.get(other) or (k.default if k else "")
            if k is not None and value:
                try:
                    space.outside[other] = canonical(other, value)
                except _native.ParseError as err:
                    raise UsageError(f"environment: {err}") from None
        space.constraints.append((knob, op, other))
    if not any(space.allowed(p) for p in itertools.product(*(d.values for d in space.dims))):
        raise UsageError("the space has no point that satisfies the knob table's constraints ("
                         + ", ".join(f"{a} {op} {b}" for a, op, b in space.constraints) + ")")
    return space


def table_space(conduit: str, names: list[str] | None, env: dict[str, str]) -> Space:
    """--knobs K1,K2 (or every tunable knob of the conduit) with the table's sweep values."""
    if names is None:
        knobs = [k for k in _native.knobs() if k.tunable and _applies(k, conduit)]
        if not knobs:
            raise UsageError(f"the knob table has no tunable knob for the {conduit} conduit")
    else:
        if len(set(names)) != len(names):
            raise UsageError(f"--knobs {','.join(names)}: a knob is named twice")
        knobs = [_tunable_knob(n, conduit, f"--knobs {','.join(names)}") for n in names]
    return _finish([_dimension(k, k.sweep, env, f"knob table ({k.name})") for k in knobs], env)


def file_space(path: str, conduit: str, env: dict[str, str]) -> Space:
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except (OSError, UnicodeDecodeError) as err:
        raise UsageError(f"--space {path}: {getattr(err, 'strerror', None) or err}") from None
    dims: list[Dimension] = []
    for number, raw in enumerate(lines, 1):
        where = f"--space {path}:{number}"
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        name, eq, rest = (part.strip() for part in line.partition("="))
        if not name.startswith("GASNET_") or not name.replace("_", "").isalnum():
            raise UsageError(f"{where}: {raw.strip()!r} is not {SPACE_FORM}")
        knob = _tunable_knob(name, conduit, where)
        if any(d.name == name for d in dims):
            raise UsageError(f"{where}: {name} is listed twice")
        values = [v.strip() for v in rest.split(",")] if eq else knob.sweep
        if eq and (not rest or any(not v for v in values)):
            raise UsageError(f"{where}: {name} = {rest!r}: expected comma-separated values "
                             f"({knob.accepted})")
        dims.append(_dimension(knob, values, env, where))
    if not dims:
        raise UsageError(f"--space {path}: no knob listed (expected {SPACE_FORM})")
    return _finish(dims, env)
