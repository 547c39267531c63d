"""The documentation cannot drift from the code: the knob reference and the `--help` text in
docs/ are what site_scons/gasnet_docs.py generates from the built gasnetrun now, the man pages
render without a warning and list every option of their parsers, every relative link resolves,
and README.md stays a front door (short, with the two commands CI runs)."""
from __future__ import annotations

import argparse
import difflib
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT

sys.path.insert(0, str(ROOT / "site_scons"))
import gasnet_docs  # noqa: E402

MAN_PAGES = ("gasnetrun", "gasnet-tune")
README_MAX_LINES = 250


def stale(path: Path, want: str) -> str:
    """What differs between a committed page and its generation, for the failure message."""
    diff = difflib.unified_diff(path.read_text().splitlines(), want.splitlines(),
                                "committed", "generated", lineterm="", n=1)
    return (f"{path.relative_to(ROOT)} differs from what the build generates now: run "
            "`scons docs` and commit the result\n" + "\n".join(list(diff)[:40]))


@pytest.fixture(scope="module")
def generated(opt_build) -> dict[Path, str]:
    return gasnet_docs.generated_docs(opt_build.gasnetrun)


def test_knob_reference_is_the_knob_table(generated, opt_build):
    page = gasnet_docs.KNOBS_DOC
    assert page.read_text() == generated[page], stale(page, generated[page])
    # Every knob of the table has its row (the generator reads the same JSON, so this checks
    # that the page is not cut short).
    names = re.findall(r'"name": "([A-Z0-9_<>n]+)"',
                       gasnet_docs.run_gasnetrun(opt_build.gasnetrun, "--knobs", "--json"))
    assert names and all(f"| `{name}` |" in page.read_text() for name in names)


def test_help_text_in_the_gasnetrun_page_is_the_parsers(generated, opt_build):
    page = gasnet_docs.GASNETRUN_DOC
    assert page.read_text() == generated[page], stale(page, generated[page])
    help_text = gasnet_docs.run_gasnetrun(opt_build.gasnetrun, "--help")
    assert help_text.strip() in page.read_text()


def test_a_changed_knob_table_makes_the_committed_reference_stale():
    """The check above can fail: a knob's description changed in the table gives another page."""
    knob = {"name": "GASNET_X", "type": "int", "default": "1", "default_text": "1",
            "scope": "job", "conduits": ["all"], "doc": "One thing.", "accepted": "an integer",
            "tunable": False}
    before = gasnet_docs.knobs_markdown([knob])
    after = gasnet_docs.knobs_markdown([{**knob, "doc": "Another thing."}])
    assert before != after and "| `GASNET_X` | int | `1` | job | Another thing." in after


def test_the_generated_block_is_replaced_between_its_markers_only():
    doc = ("before\n" + gasnet_docs.BEGIN.format(name="x") + "\nold\n"
           + gasnet_docs.END.format(name="x") + "\nafter\n")
    new = gasnet_docs.embed(doc, "x", "new")
    assert new.startswith("before\n") and new.endswith("after\n") and "old" not in new
    with pytest.raises(ValueError, match="no block"):
        gasnet_docs.embed("no markers", "x", "new")


def test_am_limits_in_the_docs_are_the_builds(opt_build):
    """The AM Medium limit differs per conduit: README's table and docs/conduits.md say what
    `gasnetrun --info` says for every conduit this build has."""
    import json
    limits = json.loads(gasnet_docs.run_gasnetrun(opt_build.gasnetrun, "--info", "--json"))["limits"]
    readme = (ROOT / "README.md").read_text()
    conduits_page = (ROOT / "docs" / "conduits.md").read_text()
    for conduit, value in limits.items():
        medium = value["am_max_medium"]
        assert re.search(rf"^\| \[{conduit}\]\(.*\| {medium} \|", readme, re.M), (conduit, medium)
        assert re.search(rf"^\| {conduit} \| {medium} \| 4 MiB \|", conduits_page, re.M), \
            (conduit, medium)
        assert value["am_max_long"] == 4 * 1024 * 1024, (conduit, value)


# ---- man pages ---------------------------------------------------------------------------------
def render(page: Path) -> subprocess.CompletedProcess[str]:
    """man -l with groff's warnings on (man --warnings: -ww), at a fixed width."""
    env = {k: v for k, v in os.environ.items() if k != "MAN_KEEP_FORMATTING"}  # plain text
    env.update(MANWIDTH="80", LC_ALL="C.UTF-8")
    return subprocess.run(["man", "--warnings", "-l", str(page)], env=env, capture_output=True,
                          text=True, timeout=60)


@pytest.fixture(scope="module")
def man_dir(opt_build) -> Path:
    if not shutil.which("man"):
        pytest.fail("man is not installed (Debian: man-db, which setup.sh installs)")
    path = opt_build.path / "man" / "man1"
    if not all((path / f"{name}.1").is_file() for name in MAN_PAGES):
        pytest.fail(f"{path} lacks the man pages: python3-argparse-manpage is needed "
                    "(setup.sh installs it), then scons")
    return path


def test_man_pages_render_without_warnings(man_dir):
    """Both pages in one test (the quick tier takes a test's first case only)."""
    for name in MAN_PAGES:
        proc = render(man_dir / f"{name}.1")
        assert proc.returncode == 0 and proc.stderr == "", f"{name}(1): {proc.stderr}"
        assert proc.stdout.startswith(name.upper() + "(1)"), proc.stdout[:200]
        for section in ("NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "EXIT STATUS", "SEE ALSO"):
            assert f"\n{section}\n" in proc.stdout, f"{name}(1) has no {section} section"


def test_a_broken_page_does_show_warnings(tmp_path):
    """The check above can fail: groff's warnings reach man's stderr."""
    page = tmp_path / "broken.1"
    page.write_text('.TH BROKEN 1\n.SH NAME\nbroken \\- a page\n.SH DESCRIPTION\n'
                    '\\fB\\*[nosuchstring]\n.nosuchmacro\n')
    assert render(page).stderr != ""


def parser_of(name: str) -> argparse.ArgumentParser:
    spec = gasnet_docs.MAN[name]
    sys.path.insert(0, str(ROOT / "build" / "python"))
    import importlib
    return getattr(importlib.import_module(str(spec["module"])), str(spec["function"]))()


def option_strings(parser: argparse.ArgumentParser) -> set[str]:
    found = set()
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                found |= option_strings(sub)
        found |= {s for s in action.option_strings if s not in ("-h", "--help")}
    return found


def test_man_pages_list_every_option_of_their_parsers(man_dir):
    for name in MAN_PAGES:
        text = render(man_dir / f"{name}.1").stdout
        missing = sorted(o for o in option_strings(parser_of(name))
                         if not re.search(rf"(?<![\w-]){re.escape(o)}(?![\w-])", text))
        assert not missing, f"{name}(1) does not list {missing}"


# ---- links and the front door ------------------------------------------------------------------
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def anchors(path: Path) -> set[str]:
    """GitHub's heading anchors: lower case, punctuation dropped, spaces as hyphens."""
    found = set()
    in_code = False
    for line in path.read_text().splitlines():
        if line.startswith("```"):
            in_code = not in_code
        elif not in_code and line.startswith("#"):
            text = line.lstrip("#").strip().lower()
            found.add(re.sub(r"[^\w\- ]", "", text).replace(" ", "-"))
    return found


def markdown_pages() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")),
            *sorted((ROOT / "csrc" / "conduits").glob("*/README.md"))]


def test_every_relative_link_resolves():
    broken = []
    for page in markdown_pages():
        for target in LINK.findall(page.read_text()):
            if re.match(r"^[a-z]+:", target):
                continue  # http(s), mailto: not this test's business
            file_part, _, anchor = target.partition("#")
            dest = (page.parent / file_part).resolve() if file_part else page
            if not dest.exists():
                broken.append(f"{page.relative_to(ROOT)}: {target} (no such file)")
            elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
                broken.append(f"{page.relative_to(ROOT)}: {target} (no such heading)")
    assert not broken, "\n".join(broken)


def test_readme_is_a_front_door_with_the_commands_ci_runs():
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= README_MAX_LINES
    first = re.search(r"```sh\n(.*?)```", readme, re.S)
    assert first, "README has no sh block"
    commands = [line.split("#")[0].strip() for line in first.group(1).splitlines()]
    ci = (ROOT / ".ci" / "run").read_text()
    assert commands == ["bash setup.sh", "bash test.sh"] and all(c in ci for c in commands)
    for page in (ROOT / "docs").glob("*.md"):
        assert f"(docs/{page.name})" in readme, f"README does not link docs/{page.name}"
