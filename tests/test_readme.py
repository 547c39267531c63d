"""README's "Your first job", run as a new user runs it: every line of the section's sh blocks,
verbatim and in order, with HOME a fresh directory (so `scons install prefix=$HOME/gasnet`
makes a private install, the session's shared one), from a scratch directory standing in for
the clone (a copy of examples/, so that `hello` is not written into the repository; `scons`
runs in the clone itself). The two-host command runs from inside fake host h1 of a
network-namespace cluster (tests/netcluster.py), with the README's host names replaced by the
fake hosts' addresses and ssh configured for them, as a user's ~/.ssh/config would be."""
from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import ROOT
from netcluster import Cluster, why_not_available

README = ROOT / "README.md"
SECTION = "## Your first job"
README_HOSTS = "node1,node2"
OUTPUT = re.compile(r'^rank (\d) of 4: token went (\d) hops; my segment says '
                    r'"hello from rank (\d)"$', re.M)


def first_job_lines() -> list[str]:
    """Every command of the section's ```sh blocks (the section ends at the next heading)."""
    text = README.read_text()
    assert SECTION in text, f"README.md has no '{SECTION}' section"
    section = text.split(SECTION, 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```sh\n(.*?)```", section, re.S)
    return [line for block in blocks for line in block.splitlines() if line.strip()]


def is_install(line: str) -> bool:
    return line.startswith("scons ")


def is_two_hosts(line: str) -> bool:
    return f"-H {README_HOSTS}" in line


def exports(lines: list[str]) -> list[str]:
    return [line for line in lines if line.startswith("export ")]


def bash(script: list[str], home: Path, cwd: Path, extra: dict[str, str] | None = None,
         inside: Cluster | None = None) -> subprocess.CompletedProcess[str]:
    """The lines as one bash script that stops at the first failing command, in a plain new
    user's environment (no GASNET_* of the caller's)."""
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home), "LANG": "C.UTF-8", **(extra or {})}
    argv = ["bash", "-euo", "pipefail", "-c", "\n".join(script)]
    if inside is not None:
        argv = inside.inside(1, argv)
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=600,
                          stdin=subprocess.DEVNULL)


def ring_output(stdout: str) -> list[tuple[int, int, int]]:
    return sorted((int(r), int(h), int(f)) for r, h, f in OUTPUT.findall(stdout))


RING = [(0, 4, 3), (1, 1, 0), (2, 2, 1), (3, 3, 2)]


def test_first_job_section_is_install_three_commands_and_two_hosts():
    lines = first_job_lines()
    assert [line for line in lines if is_install(line)] == ["scons install prefix=$HOME/gasnet"]
    commands = [line for line in lines if not is_install(line) and not line.startswith("export ")]
    assert len(commands) == 3, commands
    assert commands[0].startswith("cc ") and "pkg-config" in commands[0]
    assert commands[1].startswith("gasnetrun -n 4 ") and is_two_hosts(commands[2])


@pytest.fixture(scope="module")
def first_job(install_home, tmp_path_factory) -> tuple[Path, Path, subprocess.CompletedProcess[str]]:
    """The install line in the clone (the install fixture already did it: it finds nothing to
    do), then everything but the two-host line in a scratch directory; returns (home, scratch
    directory, what the second part did)."""
    lines = first_job_lines()
    install = bash([line for line in lines if is_install(line)], install_home, ROOT)
    assert install.returncode == 0, install.stdout[-2000:] + install.stderr
    work = tmp_path_factory.mktemp("clone")
    shutil.copytree(ROOT / "examples", work / "examples")
    rest = [line for line in lines if not is_install(line) and not is_two_hosts(line)]
    return install_home, work, bash(rest, install_home, work)


def test_first_job_builds_and_runs_on_this_host_from_the_install(first_job):
    home, work, proc = first_job
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert ring_output(proc.stdout) == RING, proc.stdout + proc.stderr
    # hello is the installed runtime's client, run by the installed gasnetrun.
    assert (work / "hello").is_file()
    where = bash([*exports(first_job_lines()), "man -w gasnetrun", "command -v gasnetrun"],
                 home, work)
    assert where.stdout.split() == [str(home / "gasnet" / "share" / "man" / "man1" / "gasnetrun.1"),
                                    str(home / "gasnet" / "bin" / "gasnetrun")], where


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    why = why_not_available()
    if why:
        pytest.skip(why)
    c = Cluster(tmp_path_factory.mktemp("hosts"), 2, [], prefix="gr", net="10.82.0")
    try:
        c.up()
    except (subprocess.CalledProcessError, RuntimeError) as err:
        c.down()
        pytest.fail(f"cannot build the test hosts: {err}")
    yield c
    c.down()


def test_first_job_runs_on_two_hosts(first_job, cluster):
    home, work, built = first_job
    assert built.returncode == 0, built.stderr
    line = next(line for line in first_job_lines() if is_two_hosts(line))
    line = line.replace(README_HOSTS, ",".join(cluster.hosts(2)))
    # The user's ssh set-up for these hosts (a key, no prompt), and ranks that give their core
    # away while they wait: the fake hosts share this machine's cores (README says so).
    env = {"GASNET_SSH_OPTIONS": f"-F {cluster.ssh_config}", "GASNET_WAIT_MODE": "block"}
    proc = bash([*exports(first_job_lines()), line], home, work, env, inside=cluster)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert ring_output(proc.stdout) == RING, proc.stdout + proc.stderr
    # The second host's ranks were started there, through its sshd.
    log = (cluster.root / "sshd_h2.log").read_text()
    assert "Accepted publickey" in log, log
