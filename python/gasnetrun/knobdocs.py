"""What gasnetrun prints about knobs and the build: --knobs, --knobs NAME, --info, and the
effective settings -v shows before a job starts. Tables use rich; --json is for tools."""
from __future__ import annotations

import json
import os
import sys

from rich.console import Console
from rich.table import Table

from . import _native
from .envcheck import Setting, suggestion


def _console() -> Console:
    # On a terminal rich fits the table to it; into a pipe or file, lines stay whole.
    tty = sys.stdout.isatty()
    return Console(file=sys.stdout, highlight=False, width=None if tty else 200)


def _knob_dict(k: _native.Knob) -> dict[str, object]:
    return {"name": k.name, "type": k.type, "default": k.default or None,
            "range": [k.min, k.max] if k.type in ("int", "size", "number") else None,
            "choices": k.choices or None, "unit": k.unit or None, "scope": k.scope,
            "conduits": k.conduits, "doc": k.doc, "accepted": k.accepted}


def print_knobs(as_json: bool) -> int:
    knobs = _native.knobs()
    if as_json:
        print(json.dumps([_knob_dict(k) for k in knobs], indent=1))
        return 0
    table = Table(title=f"GASNet knobs ({len(knobs)})", show_lines=False)
    for column in ("knob", "type", "default", "scope", "conduits", "meaning"):
        table.add_column(column, overflow="fold")
    for k in knobs:
        table.add_row(k.name, k.type, k.default_text, k.scope, ",".join(k.conduits),
                      k.doc)
    _console().print(table)
    return 0


def print_knob(name: str, as_json: bool) -> int:
    knob = _native.find(name)
    if knob is None:
        hint = suggestion(name)
        print(f"gasnetrun: error: {name} is not a GASNet knob"
              + (f"; did you mean {hint}?" if hint else ""), file=sys.stderr)
        return 2
    data = _knob_dict(knob)
    if as_json:
        print(json.dumps(data, indent=1))
        return 0
    table = Table(title=name if name == knob.name else f"{name} (member of {knob.name})",
                  show_header=False)
    table.add_column("field", style="bold")
    table.add_column("value", overflow="fold")
    for field in ("type", "default", "range", "choices", "unit", "scope", "conduits", "accepted",
                  "doc"):
        value = data[field]
        if value is None:
            continue
        if isinstance(value, list):
            value = ", ".join(f"{v:g}" if isinstance(v, float) else str(v) for v in value)
        table.add_row(field, str(value))
    current = os.environ.get(name)
    if current is not None:
        table.add_row("set here", current)
    _console().print(table)
    return 0


def print_info(spawners: list[str], as_json: bool) -> int:
    info = dict(_native.build_info(), spawners=spawners, version="0.1.0")
    if as_json:
        print(json.dumps(info, indent=1))
        return 0
    table = Table(title="gasnetrun --info", show_header=False)
    table.add_column("what", style="bold")
    table.add_column("this build")
    rows = [("version", info["version"]), ("conduits", ", ".join(info["conduits"])),
            ("threading modes", ", ".join(info["threading"])),
            ("spawners", ", ".join(spawners)), ("AM max args", str(info["am_max_args"])),
            ("AM max medium", f"{info['am_max_medium']} bytes"),
            ("AM max long", f"{info['am_max_long']} bytes"), ("knobs", str(info["knobs"]))]
    for row in rows:
        table.add_row(*row)
    _console().print(table)
    return 0


def host_memory() -> tuple[int, int]:
    """(physical memory, free /dev/shm) of this host, in bytes."""
    phys = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    try:
        st = os.statvfs("/dev/shm")
        shm_free = st.f_bavail * st.f_frsize
    except OSError:
        shm_free = 0
    return phys, shm_free


def describe_settings(settings: dict[str, Setting], ranks_on_host: int) -> list[str]:
    """-v: every knob's effective value and origin, then the segment budget per rank."""
    lines = []
    for k in _native.knobs():
        if k.is_family:
            members = sorted(n for n in settings if n.startswith(k.name[:-3]) and
                             n[len(k.name) - 3:].isdigit())
            for n in members:
                lines.append(f"  {n:28} = {settings[n].value}  ({settings[n].origin})")
            continue
        s = settings.get(k.name)
        if s is not None and s.value.strip():
            lines.append(f"  {k.name:28} = {s.value}  ({s.origin})")
        else:
            lines.append(f"  {k.name:28} = {k.default_text}  (default)")
    phys, shm_free = host_memory()
    value = lambda n: settings[n].value if n in settings and settings[n].value.strip() else None  # noqa: E731
    budget = _native.segment_budget(value("GASNET_MAX_SEGSIZE"), value("GASNET_PHYSMEM_MAX"), phys,
                                    shm_free, ranks_on_host)
    lines.append(f"segment budget per rank: {budget / 2**20:.1f} MiB ({budget} bytes) = min("
                 f"GASNET_MAX_SEGSIZE, GASNET_PHYSMEM_MAX / {ranks_on_host} ranks, free /dev/shm "
                 f"{shm_free / 2**30:.1f} GiB / {ranks_on_host}) on {phys / 2**30:.1f} GiB of memory")
    return lines
