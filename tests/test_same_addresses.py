"""GASNET_SAME_ADDRESSES: a host's ranks start without address-space randomisation, so a PIE
client that sends a function pointer to another rank can call through it there (ranks forked
from one process, as GASNet's smp conduit starts them, have that for free; exec'd ranks of a
PIE do not)."""
from pathlib import Path

import pytest


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
