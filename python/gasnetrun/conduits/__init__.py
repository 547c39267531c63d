"""Conduits' launcher halves, reached only through these hooks, alike for every conduit.

A conduit that needs work in the launcher (probing a node's devices, planning per-node knobs,
connect files) keeps it beside its C code (csrc/conduits/<name>/launch.py, or a launch/
package); the build installs it here as gasnetrun.conduits.<name>. A conduit without one needs
nothing of the launcher. Its module may define:

    prepare(plan, spawner) -> Prepared         before anything starts (every job of the conduit)
    plan_node(host, ranks_on_host, nranks, env) -> Prepared
                                               on each host, by its agent (when prepare set
                                               plan.node_planner to the conduit's name)
    probe_devices(root, sysfs) -> (data, notes)  what `--probe` records of a host (JSON-able)
    device_key(data) -> object                 the part of data that makes hosts alike
    probe_plans(probe, ranks_on_host, nranks, env) -> ProbePlan   what --probe shows
    connect(mode, directory, plan, spawner) -> notes;  finish_connect(directory, plan) -> lines
"""
from __future__ import annotations

import importlib
import os
from dataclasses import dataclass, field
from types import ModuleType
from typing import TYPE_CHECKING, Any, Mapping

if TYPE_CHECKING:
    from ..plan import Plan


@dataclass
class Prepared:
    """What a conduit's launcher half adds to a job: knobs (never over the user's), notes for
    -v, and problems that keep the job from starting."""
    env: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


@dataclass
class ProbePlan:
    """One conduit's part of --probe for one type of host: its table cells (column -> text),
    its JSON, notes and problems."""
    cells: dict[str, str]
    data: dict[str, Any]
    notes: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def _here() -> str:
    return os.path.dirname(os.path.realpath(__file__))


def names() -> list[str]:
    """The conduits of this build that have a launcher half."""
    here = _here()
    found = []
    for entry in sorted(os.listdir(here)):
        path = os.path.join(here, entry)
        if entry.endswith(".py") and entry != "__init__.py":
            found.append(entry[:-3])
        elif os.path.isfile(os.path.join(path, "__init__.py")):
            found.append(entry)
    return found


def module(conduit: str) -> ModuleType | None:
    """The conduit's launcher half, or None when it has none."""
    if conduit not in names():
        return None
    return importlib.import_module(f"{__name__}.{conduit}")


def prepare(conduit: str, plan: "Plan", spawner: str) -> Prepared:
    """Runs the conduit's prepare hook on the plan; knobs it adds go into plan.env, never over
    what the user set."""
    mod = module(conduit)
    if mod is None or not hasattr(mod, "prepare"):
        return Prepared()
    prepared: Prepared = mod.prepare(plan, spawner)
    for name, value in prepared.env.items():
        plan.env.setdefault(name, value)
    return prepared


def plan_node(conduit: str, host: str, ranks_on_host: int, nranks: int,
              env: Mapping[str, str]) -> Prepared:
    mod = module(conduit)
    if mod is None or not hasattr(mod, "plan_node"):
        return Prepared()
    result: Prepared = mod.plan_node(host, ranks_on_host, nranks, env)
    return result


def with_hook(hook: str) -> list[tuple[str, ModuleType]]:
    """(name, module) of every conduit of this build whose launcher half has this hook."""
    out = []
    for name in names():
        mod = module(name)
        if mod is not None and hasattr(mod, hook):
            out.append((name, mod))
    return out
