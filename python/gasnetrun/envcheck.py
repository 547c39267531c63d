"""The environment a job will see, where each variable came from, and its validation against
the runtime's knob table (through the CFFI binding: Python and C parse a value identically)."""
from __future__ import annotations

import os
import re
from dataclasses import dataclass

from . import _native
from .gasnet_documented import NOT_IMPLEMENTED

NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass
class Setting:
    value: str
    origin: str  # "environment", "-E", or "--env-file FILE:LINE"


class EnvFileError(Exception):
    pass


# The kernel refuses a single environment string longer than this (MAX_ARG_STRLEN, 32 pages).
MAX_ARG_STRLEN = 32 * 4096


def read_env_file(path: str) -> dict[str, Setting]:
    """NAME=VALUE lines; blank lines and lines starting with '#' are skipped."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as err:
        raise EnvFileError(f"--env-file {path}: {err.strerror}") from err
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        bad_line = data.count(b"\n", 0, err.start) + 1
        raise EnvFileError(f"--env-file {path}:{bad_line}: byte 0x{data[err.start]:02x} is not "
                           "UTF-8 text (the file must be UTF-8)") from err
    settings: dict[str, Setting] = {}
    for number, raw in enumerate(text.splitlines(), 1):
        if "\0" in raw:
            raise EnvFileError(f"{path}:{number}: the line contains a NUL byte, which no "
                               "environment variable can hold")
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("export "):
            line = line[len("export "):].lstrip()
        name, eq, value = line.partition("=")
        name = name.strip()
        if not eq or not NAME.match(name):
            raise EnvFileError(f"{path}:{number}: '{raw}' is not NAME=VALUE")
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        settings[name] = Setting(value, f"--env-file {path}:{number}")
    return settings


def job_environment(base: dict[str, str], exported: list[str],
                    env_files: list[str]) -> dict[str, Setting]:
    """The variables the ranks will see: the caller's environment, then env files in order."""
    settings = {k: Setting(v, "-E" if k in exported else "environment") for k, v in base.items()}
    for path in env_files:
        settings.update(read_env_file(path))
    return settings


def known_names() -> list[str]:
    return [k.name for k in _native.knobs() if not k.is_family]


def suggestion(name: str) -> str | None:
    import difflib  # only for a name that is not a knob: most jobs have none
    close = difflib.get_close_matches(name, known_names(), n=1, cutoff=0.75)
    return close[0] if close else None


def size_problems(settings: dict[str, Setting]) -> list[str]:
    """Variables the kernel would refuse at exec (E2BIG), named before anything starts."""
    problems = []
    for name in sorted(settings):
        size = len(os.fsencode(name)) + 1 + len(os.fsencode(settings[name].value)) + 1
        if size > MAX_ARG_STRLEN:
            problems.append(f"{name} (from {settings[name].origin}) is {size} bytes long; the "
                            f"kernel passes at most {MAX_ARG_STRLEN} bytes per variable "
                            "(MAX_ARG_STRLEN)")
    return problems


def unknown_name_problem(name: str, origin: str,
                         allow_typos: bool) -> tuple[str | None, str | None]:
    """(error, warning) for a GASNET_* name the knob table does not hold. Only a likely typo of a
    knob is an error (the silent-typo problem), unless allow_typos; a variable GASNet documents
    but this implementation does not read, or any other name, is a warning: clients may read
    their own variables with gasnet_getenv."""
    if name in NOT_IMPLEMENTED:
        return None, (f"{name} (from {origin}) is a GASNet variable this implementation does "
                      "not read; it has no effect")
    hint = suggestion(name)
    if hint and not allow_typos:
        return (f"{name} (from {origin}) is not a GASNet knob; did you mean {hint}? "
                "(--allow-unknown-knobs passes it on anyway)"), None
    return None, (f"{name} (from {origin}) is not a GASNet knob"
                  + (f" (did you mean {hint}?)" if hint else "")
                  + "; passed to the ranks unchanged")


def validate(settings: dict[str, Setting], allow_typos: bool = False,
             warnings: list[str] | None = None) -> list[str]:
    """One message per problem: likely typos of knob names, malformed values, oversized ones.
    Names that are merely unknown go to warnings."""
    problems = size_problems(settings)
    for name in sorted(settings):
        if not name.startswith("GASNET_"):
            continue
        setting = settings[name]
        if _native.find(name) is None:
            error, warning = unknown_name_problem(name, setting.origin, allow_typos)
            if error:
                problems.append(error)
            if warning and warnings is not None:
                warnings.append(warning)
            continue
        if _native.blank(setting.value):
            continue  # empty or white space means "unset", to the runtime as well
        try:
            _native.check(name, setting.value)
        except _native.ParseError as err:
            problems.append(f"{err} (from {setting.origin})")
    return problems
