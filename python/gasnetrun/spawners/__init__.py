"""The spawners' Python halves. Each lives beside its C half in spawners/<name>/launch.py; the
build installs it here as <name>.py. Run from the source tree, they are found in place."""
from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType


def _candidates() -> list[tuple[str, Path]]:
    here = Path(__file__).resolve().parent
    installed = [(p.stem, p) for p in sorted(here.glob("*.py")) if p.stem != "__init__"]
    if installed:
        return installed
    source = here.parent.parent.parent / "spawners"
    return [(d.name, d / "launch.py") for d in sorted(source.iterdir())
            if (d / "launch.py").is_file()] if source.is_dir() else []


def available() -> dict[str, ModuleType]:
    """Spawner name -> its module (with `name`, `create()`)."""
    found: dict[str, ModuleType] = {}
    for name, path in _candidates():
        spec = importlib.util.spec_from_file_location(f"{__name__}.{name}", path)
        if spec is None or spec.loader is None:
            continue
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        found[module.name] = module
    return found
