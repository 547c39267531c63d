"""A new conduit is a folder: following csrc/conduits/smp/README.md's "Adding a conduit" in a
scratch copy of the tree (copy smp, rename it, add a knob row), the build finds it, builds it
alone (scons conduits=<name>), collects its knob into the one table, and gasnetrun runs hello
on it. Nothing outside the new folder is touched."""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import ROOT, job_env

NAME = "toy"
KNOB_ROWS = '''/* toy_knobs.c: the toy conduit's rows of the knob table. */
#include "knob_api.h"

static const gasneti_knob_t rows[] = {
    {"GASNET_TOY_GREETING", GASNETI_KNOB_STRING, "hello", 0, 0, NULL, "", GASNETI_SCOPE_JOB,
     "toy", "toy: what the template conduit says.", GASNETI_NOT_TUNED},
};

const gasneti_knob_group_t gasnetc_toy_knobs = {"toy", rows, sizeof rows / sizeof rows[0]};
'''


def scratch_tree(dest: Path) -> None:
    """The repository's files as a commit of them holds (tracked, and new ones not ignored),
    without any build."""
    files = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                           cwd=ROOT, capture_output=True,
                           check=True).stdout.decode().split("\0")
    for rel in filter(None, files):
        src = ROOT / rel
        if src.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)


def add_conduit_from_template(tree: Path) -> None:
    """The README's steps: copy smp, rename smp to the new name in names and contents, and
    (since smp has none) declare one knob row."""
    src, dst = tree / "csrc/conduits/smp", tree / f"csrc/conduits/{NAME}"
    shutil.copytree(src, dst)
    for path in sorted(dst.rglob("*")):
        if path.is_file():
            text = path.read_text().replace("smp", NAME).replace("SMP", NAME.upper())
            path.write_text(text)
            if "smp" in path.name:
                path.rename(path.with_name(path.name.replace("smp", NAME)))
    (dst / f"{NAME}_knobs.c").write_text(KNOB_ROWS)
    script = dst / "SConscript"
    text = script.read_text()
    assert 'header=File("gasnet_conduit.h"),' in text, text
    script.write_text(text.replace('header=File("gasnet_conduit.h"),',
                                   'header=File("gasnet_conduit.h"),\n'
                                   f'    knobs=File("{NAME}_knobs.c"),'))


@pytest.mark.skipif(shutil.which("git") is None or shutil.which("scons") is None,
                    reason="needs git and scons")
def test_a_conduit_copied_from_the_template_builds_alone_and_runs_hello(tmp_path):
    tree = tmp_path / "tree"
    scratch_tree(tree)
    add_conduit_from_template(tree)
    build = tree / "build"
    targets = [f"build/{NAME}/examples/hello_ring-seq", "build/bin/gasnetrun", "build/python"]
    made = subprocess.run(["scons", "-Q", f"-j{os.cpu_count() or 2}", f"conduits={NAME}",
                           *targets], cwd=tree, capture_output=True, text=True, timeout=900)
    assert made.returncode == 0, made.stdout[-3000:] + made.stderr[-3000:]
    assert not (build / "lib" / "libgasnet-udp-seq.a").exists()  # it built the one asked for
    gasnetrun = str(build / "bin" / "gasnetrun")
    hello = subprocess.run([gasnetrun, "-n", "2", str(build / NAME / "examples" / "hello_ring-seq")],
                           env=job_env(), capture_output=True, text=True, timeout=120)
    assert hello.returncode == 0, hello.stdout + hello.stderr
    assert hello.stdout.count("token went") == 2, hello.stdout
    knob = subprocess.run([gasnetrun, "--knobs", "GASNET_TOY_GREETING", "--json"], env=job_env(),
                          capture_output=True, text=True, timeout=60)
    assert knob.returncode == 0 and '"toy"' in knob.stdout, knob.stdout + knob.stderr
    info = subprocess.run([gasnetrun, "--info", "--json"], env=job_env(), capture_output=True,
                          text=True, timeout=60)
    assert f'"{NAME}"' in info.stdout, info.stdout


def test_scons_refuses_a_conduit_that_does_not_exist():
    made = subprocess.run(["scons", "-Q", "-n", "conduits=nosuch"], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert made.returncode == 2, made.stdout + made.stderr
    assert "no conduit named nosuch" in made.stdout + made.stderr
