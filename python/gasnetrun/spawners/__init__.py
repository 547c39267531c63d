"""The spawners' Python halves. Each lives beside its C half in spawners/<name>/launch.py; the
build installs it here as <name>.py. Run from the source tree, they are found in place."""
from __future__ import annotations

import importlib
import os
from types import ModuleType
from typing import Iterator, Mapping


def _candidates() -> list[tuple[str, str]]:
    here = os.path.dirname(os.path.realpath(__file__))
    installed = [(n[:-3], os.path.join(here, n)) for n in sorted(os.listdir(here))
                 if n.endswith(".py") and n != "__init__.py"]
    if installed:
        return installed
    source = os.path.join(here, "..", "..", "..", "spawners")
    if not os.path.isdir(source):
        return []
    return [(d, os.path.join(source, d, "launch.py")) for d in sorted(os.listdir(source))
            if os.path.isfile(os.path.join(source, d, "launch.py"))]


class _Spawners(Mapping[str, ModuleType]):
    """Spawner name -> its module (with `name`, `create()`), each imported when first asked
    for: a job needs one, and the others' imports (the ssh agent tree) cost start-up time."""

    def __init__(self) -> None:
        self._paths = dict(_candidates())
        self._modules: dict[str, ModuleType] = {}

    def __getitem__(self, name: str) -> ModuleType:
        if name not in self._modules:
            path = self._paths[name]
            if os.path.dirname(path) == os.path.dirname(os.path.realpath(__file__)):
                module = importlib.import_module(f"{__name__}.{name}")  # installed here
            else:  # the source tree: spawners/<name>/launch.py
                from importlib.util import module_from_spec, spec_from_file_location
                spec = spec_from_file_location(f"{__name__}.{name}", path)
                if spec is None or spec.loader is None:
                    raise KeyError(name)
                module = module_from_spec(spec)
                spec.loader.exec_module(module)
            if module.name != name:
                raise ImportError(f"{self._paths[name]} declares spawner '{module.name}'")
            self._modules[name] = module
        return self._modules[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._paths)

    def __len__(self) -> int:
        return len(self._paths)


def available() -> Mapping[str, ModuleType]:
    """Every spawner of this build, by name; modules load on first use."""
    return _Spawners()
