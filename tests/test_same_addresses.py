"""GASNET_SAME_ADDRESSES: a host's ranks start without address-space randomisation, so a PIE
client that sends a function pointer to another rank can call through it there (ranks forked
from one process, as GASNet's smp conduit starts them, have that for free; exec'd ranks of a
PIE do not)."""
import re
import subprocess
from pathlib import Path

import pytest

from conftest import built, job_env


def is_pie(path: str) -> bool:
    header = Path(path).read_bytes()[:18]
    return header[:4] == b"\x7fELF" and int.from_bytes(header[16:18], "little") == 3  # ET_DYN


def aslr_on() -> bool:
    return Path("/proc/sys/kernel/randomize_va_space").read_text().strip() != "0"


def test_function_pointers_sent_between_ranks_work_with_same_addresses(build):
    prog = build.test_program("fnptr_test")
    assert is_pie(prog), f"{prog} is not a PIE: the test would prove nothing"
    env = {"GASNET_SUPERNODE_MAXSIZE": "1"} if build.conduit != "smp" else {}
    result = build.job(3, "fnptr_test", env={**env, "GASNET_SAME_ADDRESSES": "1"}, timeout=120)
    assert result.returncode == 0, result.describe()
    assert "fnptr_test: addresses same" in result.stdout, result.describe()
    assert result.stdout.count("OK") == 3, result.describe()


def test_without_the_knob_exec_d_ranks_of_a_pie_lie_at_different_addresses(opt_build):
    if not aslr_on():
        pytest.skip("address-space randomisation is off on this machine")
    result = opt_build.job(3, "fnptr_test", timeout=120)
    assert result.returncode == 0, result.describe()
    assert "fnptr_test: addresses differ" in result.stdout, result.describe()


def test_a_rank_a_site_launcher_started_beyond_gasnetrun_says_it_is_randomised():
    """Ranks that MPICH's Hydra starts without gasnetrun (which would start the launcher
    without randomisation, for the ranks it forks on this host) end at gasnet_init naming
    the rank, the host and the remedy, rather than crash later on a peer's function pointer."""
    if not aslr_on():
        pytest.skip("address-space randomisation is off on this machine")
    mpi = built("opt", "mpi", "mpich")
    env = job_env({**mpi.conduit_env(), "GASNET_SAME_ADDRESSES": "1"})
    proc = subprocess.run(["mpiexec.mpich", "-n", "2", mpi.test_program("fnptr_test")], env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0, proc.stdout + proc.stderr
    assert re.search(r"GASNET_SAME_ADDRESSES=1, but rank \d on host \S+ runs with address-space "
                     r"randomisation: the mpi spawner's launcher started it where gasnetrun could "
                     r"not turn randomisation off .*build the program -no-pie", proc.stderr), \
        proc.stdout + proc.stderr
    assert "fnptr_test: rank" not in proc.stdout
