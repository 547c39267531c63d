"""What gasnetrun prints about knobs and the build: --knobs, --knobs NAME, --info, and the
effective settings -v shows before a job starts. Tables use rich; --json is for tools."""
from __future__ import annotations

import os
import sys
from typing import Any

from . import _native


def _json(data: Any, indent: int = 1) -> str:
    import json  # only --json asks for it: a job's start-up does not pay its import
    return json.dumps(data, indent=indent)
from .envcheck import Setting, suggestion


def _console() -> Any:
    # Imported here: rich costs a tenth of a second, which plain job starts do not pay.
    from rich.console import Console
    # On a terminal rich fits the table to it; into a pipe or file, lines stay whole.
    tty = sys.stdout.isatty()
    return Console(file=sys.stdout, highlight=False, width=None if tty else 200)


def _table(**kwargs: Any) -> Any:
    from rich.table import Table
    return Table(**kwargs)


def _knob_dict(k: _native.Knob) -> dict[str, object]:
    return {"name": k.name, "type": k.type, "default": k.default or None,
            "default_text": k.default_text,
            "range": [k.min, k.max] if k.type in ("int", "size", "number") else None,
            "choices": k.choices or None, "unit": k.unit or None, "scope": k.scope,
            "conduits": k.conduits, "doc": k.doc, "accepted": k.accepted,
            "tunable": k.tunable, "sweep": k.sweep or None, "constraint": k.constraint}


def print_knobs(as_json: bool) -> int:
    knobs = _native.knobs()
    if as_json:
        print(_json([_knob_dict(k) for k in knobs], indent=1))
        return 0
    table = _table(title=f"GASNet knobs ({len(knobs)})", show_lines=False)
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
        print(_json(data, indent=1))
        return 0
    table = _table(title=name if name == knob.name else f"{name} (member of {knob.name})",
                  show_header=False)
    table.add_column("field", style="bold")
    table.add_column("value", overflow="fold")
    for field in ("type", "default", "range", "choices", "unit", "scope", "conduits", "accepted",
                  "doc", "sweep", "constraint"):
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
    info = dict(_native.build_info(), spawners=spawners)
    if as_json:
        print(_json(info, indent=1))
        return 0
    table = _table(title="gasnetrun --info", show_header=False)
    table.add_column("what", style="bold")
    table.add_column("this build")
    rows = [("version", info["version"]), ("GASNet-1 release", info["gasnet_release"]),
            ("conduits", ", ".join(info["conduits"])),
            ("threading modes", ", ".join(info["threading"])),
            ("spawners", ", ".join(spawners)), ("AM max args", str(info["am_max_args"]))]
    for conduit, limits in info["limits"].items():
        rows.append((f"{conduit}: AM max medium / long",
                     f"{limits['am_max_medium']} / {limits['am_max_long']} bytes"))
    rows.append(("knobs", str(info["knobs"])))
    for row in rows:
        table.add_row(*row)
    _console().print(table)
    return 0


def describe_settings(settings: dict[str, Setting]) -> list[str]:
    """-v: every knob's effective value and where it came from."""
    lines = ["effective knobs:"]
    for k in _native.knobs():
        if k.is_family:
            members = sorted(n for n in settings if n.startswith(k.name[:-3]) and
                             n[len(k.name) - 3:].isdigit())
            for n in members:
                lines.append(f"  {n:28} = {settings[n].value}  ({settings[n].origin})")
            continue
        s = settings.get(k.name)
        if s is not None and not _native.blank(s.value):
            lines.append(f"  {k.name:28} = {s.value}  ({s.origin})")
        else:
            lines.append(f"  {k.name:28} = {k.default_text}  (default)")
    return lines
