"""Reference text generated from the launcher's own sources of truth, so that it cannot drift:
the knob reference docs/knobs.md (from `gasnetrun --knobs --json`), the `gasnetrun --help` text
embedded in docs/gasnetrun.md, and the man pages gasnetrun(1) and gasnet-tune(1) (from the same
argparse parsers, through Debian's python3-argparse-manpage). The build (SConstruct: the man
pages into build/man, `scons docs` to rewrite docs/) and the tests (tests/test_docs.py: the
committed pages equal what this module generates now) share it.

  python3 site_scons/gasnet_docs.py man gasnetrun|gasnet-tune PYTHONPATH VERSION OUT.1
  python3 site_scons/gasnet_docs.py docs GASNETRUN     rewrite docs/knobs.md and the help block
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
KNOBS_DOC = ROOT / "docs" / "knobs.md"
GASNETRUN_DOC = ROOT / "docs" / "gasnetrun.md"
# The width `--help` is rendered at in the docs (argparse reads COLUMNS), whatever the terminal.
HELP_COLUMNS = "100"
BEGIN = "<!-- generated: {name} (site_scons/gasnet_docs.py, `scons docs`); do not edit -->"
END = "<!-- end of generated: {name} -->"

# ---- the knob reference -----------------------------------------------------------------------
KNOBS_INTRO = """\
# Knobs

Every `GASNET_*` variable the runtime and gasnetrun read, generated from the knob table
(`gasnetrun --knobs --json`; `scons docs` rewrites this page, and a test fails when it differs
from the table). `gasnetrun --knobs NAME` prints everything about one knob, with its range,
choices and sweep values; `gasnetrun --knobs` prints this table.

Sizes take K/M/G/T suffixes (powers of 1024); fraction-or-size values below 1 or written `a/b`
are fractions of physical memory; segment sizes may end in `/H` (shared by the host's ranks)
or `/P` (per process, the default). Scope `job` means every rank must see the same value;
`rank` that ranks may differ. Conduits `network` means every conduit that reaches other hosts
(all but smp); `all`, every conduit. A blank value means unset. gasnetrun checks every
`GASNET_*` variable a job would see against this table before anything starts (see
[gasnetrun](gasnetrun.md#checks-before-anything-starts)); `GASNET_VERBOSEENV=1` makes rank 0
print each knob it read, its value, and whether it was the default. Knobs a tuner may sweep
are marked *tunable* (see [gasnet-tune](gasnet-tune.md)).

Connect files (`GASNET_CONNECTFILE_IN/OUT`) use the ibv-conduit format: lines `node: peers`
with ranges `a-b`, optional `size: N` and `base: B` (2..36) lines; parse errors carry file, line
and column.
"""


def _cell(text: object) -> str:
    """A Markdown table cell: pipes escaped, never a line break."""
    return str(text).replace("|", "\\|").replace("\n", " ")


def _default(knob: dict[str, Any]) -> str:
    """As gasnetrun --knobs shows it: the value, or (computed) or (unset)."""
    return f"`{knob['default']}`" if knob.get("default") else knob["default_text"]


def _group(knob: dict[str, Any]) -> str:
    conduits = knob["conduits"]
    return "all" if conduits == ["all"] else "network" if conduits == ["network"] \
        else ",".join(conduits)


def knobs_markdown(knobs: list[dict[str, Any]]) -> str:
    """docs/knobs.md from the table as `gasnetrun --knobs --json` prints it (every conduit's
    rows, also those of conduits this host does not build: the page is the same everywhere)."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for knob in knobs:
        groups.setdefault(_group(knob), []).append(knob)
    titles = {"all": "Every conduit, and gasnetrun", "network": "Network conduits"}
    out = [KNOBS_INTRO, f"{len(knobs)} knobs.", ""]
    for group, members in groups.items():
        out += [f"## {titles.get(group, group)}", "",
                "| knob | type | default | scope | meaning | accepted |", "|---|---|---|---|---|---|"]
        for k in members:
            meaning = k["doc"] + (" *Tunable.*" if k.get("tunable") else "")
            out.append(f"| `{k['name']}` | {k['type']} | {_cell(_default(k))} | {k['scope']} | "
                       f"{_cell(meaning)} | {_cell(k.get('accepted') or '')} |")
        out.append("")
    return "\n".join(out)


# ---- gasnetrun --help, embedded in docs/gasnetrun.md ----------------------------------------
def run_gasnetrun(gasnetrun: str, *args: str) -> str:
    """What a built or installed gasnetrun prints, at the docs' width, in a plain environment
    (no GASNET_* of the caller's)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GASNET_", "GASNETRUN_"))}
    env["COLUMNS"] = HELP_COLUMNS
    proc = subprocess.run([gasnetrun, *args], env=env, capture_output=True, text=True,
                          timeout=60)
    if proc.returncode != 0:
        raise RuntimeError(f"{gasnetrun} {' '.join(args)} failed ({proc.returncode}): "
                           f"{proc.stderr.strip()}")
    return proc.stdout


def help_block(gasnetrun: str) -> str:
    return "```\n$ gasnetrun --help\n" + run_gasnetrun(gasnetrun, "--help").rstrip("\n") + "\n```"


def embed(doc: str, name: str, content: str) -> str:
    """doc with the generated block `name` replaced by content (the markers stay)."""
    begin, end = BEGIN.format(name=name), END.format(name=name)
    start, stop = doc.find(begin), doc.find(end)
    if start < 0 or stop < start:
        raise ValueError(f"the page has no block between '{begin}' and '{end}'")
    return doc[:start + len(begin)] + "\n" + content + "\n" + doc[stop:]


def generated_docs(gasnetrun: str) -> dict[Path, str]:
    """Every generated page as it should be now, from the given gasnetrun."""
    knobs = json.loads(run_gasnetrun(gasnetrun, "--knobs", "--json"))
    return {KNOBS_DOC: knobs_markdown(knobs),
            GASNETRUN_DOC: embed(GASNETRUN_DOC.read_text(), "gasnetrun --help",
                                 help_block(gasnetrun))}


# ---- man pages --------------------------------------------------------------------------------
MAN = {
    "gasnetrun": {
        "module": "gasnetrun.cli", "function": "build_parser",
        "short": "start GASNet-1 jobs on this host, over ssh, or under a site launcher",
        "sections": [
            ("Spawners", "local: every rank on this host. ssh: a tree of per-host agents over "
             "ssh (hosts from -H, --hostfile, GASNET_SSH_SERVERS or the batch system's node "
             "file). pmi: ranks started by the site's launcher (srun, mpirun, mpiexec) and "
             "bootstrapped over PMIx, PMI-2 or PMI-1 (PMIRUN_CMD). mpi: ranks bootstrapped over "
             "MPI (MPIRUN_CMD). Without -spawner or GASNET_SPAWNER: pmi inside a Slurm "
             "allocation, ssh when a host is not this one, else local; -v says which and why."),
            ("Environment", "Every GASNET_* variable the ranks would see is checked against "
             "the knob table before anything starts (gasnetrun --knobs lists them; "
             "gasnetrun --knobs NAME describes one). Ranks on other hosts get the caller's "
             "environment except variables of the caller's own session (SSH_*, DISPLAY, HOME, "
             "...); -E passes one anyway, --env-only sends only the -E names and the knobs. "
             "GASNET_SSH_CMD and GASNET_SSH_OPTIONS: the remote shell. PMIRUN_CMD and "
             "MPIRUN_CMD: the site launcher's command template (%N ranks, %P program, %A "
             "arguments, %C program and arguments, %M hosts, %H hosts with their ranks)."),
            ("Exit status", "The job's code: the code of the rank that ended it, or 128+N for "
             "a rank killed by signal N (under MPICH's Hydra, N). 2: a usage error or a job "
             "refused before it started (bad option, unknown knob, malformed value, a job that "
             "does not fit the hosts). 1: a host's agent was lost, or a rank was ended by the "
             "launcher after GASNET_EXITTIMEOUT. 128+N when gasnetrun itself gets SIGINT, "
             "SIGTERM or SIGHUP (all ranks end); SIGUSR1 and SIGUSR2 are passed on to every "
             "rank. 141 when its output reader goes away."),
            ("See also", "gasnet-tune(1); docs/gasnetrun.md, docs/knobs.md and "
             "docs/site-launchers.md in the source tree."),
        ],
    },
    "gasnet-tune": {
        "module": "tuner.__main__", "function": "parser",
        "short": "sweep GASNet knobs with the bundled benchmarks and recommend an environment",
        "sections": [
            ("Exit status", "0: done (a sweep's recommendation, possibly none, is in "
             "DIR/tuned.env). 1: the sweep could not be carried out (a benchmark that never "
             "runs, an unreadable state). 2: bad input, named in the message. 130: interrupted "
             "(every finished run is saved; the same command resumes)."),
            ("See also", "gasnetrun(1); docs/gasnet-tune.md in the source tree."),
        ],
    },
}


def _wide(parser: argparse.ArgumentParser) -> None:
    """Help text unwrapped (groff fills paragraphs itself; argparse's own wrapping would leave
    a line break in mid-sentence), in the parser and every sub-command's."""
    parser.formatter_class = lambda prog: argparse.HelpFormatter(prog, width=10_000,
                                                                 max_help_position=10_000)
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                _wide(sub)


def _roff(text: str) -> str:
    return text.replace("\\", "\\\\").replace("-", "\\-")


def _synopsis(parser: argparse.ArgumentParser) -> str:
    """One line per form of the command (argparse-manpage runs them together)."""
    usage = parser.format_usage().removeprefix("usage: ")
    forms = [line.strip() for line in usage.strip().split("\n") if line.strip()]
    # argparse wraps a long form over several lines: a form starts with the program's name.
    joined: list[str] = []
    for form in forms:
        if form.startswith(parser.prog + " ") or not joined:
            joined.append(form)
        else:
            joined[-1] += " " + form
    out = []
    for form in joined:
        args = form.removeprefix(parser.prog).strip()
        out += [f".B {_roff(parser.prog)}", _roff(args), ".br"]
    return "\n".join(out[:-1])


def man_page(name: str, version: str) -> str:
    """The man page of `name` from its parser (its package must be importable)."""
    from build_manpages.manpage import Manpage  # Debian: python3-argparse-manpage
    import importlib
    spec = MAN[name]
    parser = getattr(importlib.import_module(str(spec["module"])), str(spec["function"]))()
    parser.prog = name
    _wide(parser)
    # argparse-manpage reads these two attributes of the parser.
    parser.man_short_description = spec["short"]
    parser._manpage = [{"heading": h, "content": c} for h, c in spec["sections"]]
    text = str(Manpage(parser))
    # No hyphenation and no justification: an option split over two lines cannot be copied.
    text = re.sub(r"^\.TH .*$", f'.TH {name.upper()} 1 "" "gasnet-tools {version}" '
                                f'"User Commands"\n.nh\n.ad l', text, count=1, flags=re.M)
    text = re.sub(r"(?ms)^\.SH SYNOPSIS\n.*?(?=^\.SH )", lambda _: ".SH SYNOPSIS\n"
                  + _synopsis(parser) + "\n", text, count=1)
    # Blank lines are paragraph breaks to groff (and a warning under -ww between .TP items).
    return re.sub(r"\n\s*\n", "\n", text)


def main(argv: list[str]) -> int:
    if len(argv) == 5 and argv[0] == "man" and argv[1] in MAN:
        sys.path.insert(0, argv[2])
        Path(argv[4]).parent.mkdir(parents=True, exist_ok=True)
        Path(argv[4]).write_text(man_page(argv[1], argv[3]))
        return 0
    if len(argv) == 2 and argv[0] == "docs":
        for path, text in generated_docs(argv[1]).items():
            if not path.exists() or path.read_text() != text:
                path.write_text(text)
                print(f"updated {path.relative_to(ROOT)}")
        return 0
    print(__doc__.split("\n\n")[-1], file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
