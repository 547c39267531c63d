"""Small non-bulk puts and gets are one store (one load): a client that ping-pongs over an
8-byte flag it polls and resets never loses a step, whatever its compiler flags
(flag_pingpong is compiled with -O0), on the direct PSHM path and on the AM path."""
import subprocess
from pathlib import Path

import pytest

from conftest import ROOT, job_env

ROUND_TRIPS = "1000000"
# With the preloaded memcpy that writes small copies twice, a put still made by memcpy loses a
# step within a few hundred round trips. Where the transport is a library (libfabric's
# providers, fakeverbs) it calls memcpy on small headers many times per message, each paying the
# preload's 20 us pause: fewer round trips there, still ten times a few hundred, keep each case
# to seconds even on a loaded machine.
PRELOAD_ROUND_TRIPS = {"ofi": "3000", "ibv": "3000"}


@pytest.fixture(scope="module")
def twice_memcpy(tmp_path_factory) -> Path:
    lib = tmp_path_factory.mktemp("preload") / "twice_memcpy.so"
    subprocess.run(["gcc", "-shared", "-fPIC", "-O2", "-o", str(lib),
                    str(ROOT / "tests" / "c" / "preload" / "twice_memcpy.c")], check=True)
    return lib


def run(build, args, env=None, prefix=(), mode="seq"):
    cmd = [*prefix, build.gasnetrun, "-n", "2", build.test_program("flag_pingpong", mode), *args]
    proc = subprocess.run(cmd, env=job_env({**build.conduit_env(), **(env or {})}),
                          capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.count("flag_pingpong: rank") == 2, proc.stdout + proc.stderr


@pytest.mark.parametrize("cores", ["0-1", "0"], ids=["a-core-each", "oversubscribed"])
def test_a_million_round_trips_over_8_byte_puts_lose_no_step(variant_build, cores):
    run(variant_build, [ROUND_TRIPS, "put"], prefix=("taskset", "-c", cores))


# The PSHM path is the same on every conduit (smp runs it); only udp has a receive thread;
# under the sanitizers AddressSanitizer replaces memcpy itself, so the preload cannot act.
@pytest.mark.applies(lambda variant, conduit, path, **_: variant == "opt"
                     and (path != "pshm" or conduit == "smp")
                     and (path != "am-rcvthread" or conduit == "udp"))
@pytest.mark.parametrize("form", ["put", "put_nb", "put_nbi", "put_val", "get"])
@pytest.mark.parametrize("path", ["pshm", "am", "am-rcvthread"])
def test_every_small_form_is_one_access_even_when_memcpy_writes_twice(build, twice_memcpy, form,
                                                                       path):
    """On the AM path the store happens in the handler: it can only race with the reader when
    the handler runs on another thread than the one polling the flag (udp's receive thread)."""
    env = {"LD_PRELOAD": str(twice_memcpy)}
    mode = "seq"
    if path.startswith("am"):
        env["GASNET_SUPERNODE_MAXSIZE"] = "1"  # every peer reached through AMs
    if path == "am-rcvthread":
        env["GASNET_RCV_THREAD"] = "1"
        mode = "par"
    run(build, [PRELOAD_ROUND_TRIPS.get(build.conduit, "20000"), form], env, mode=mode)
