"""C++ clients: every public header compiles as C++11, 14 and 17 with g++ and clang++ under
-Wall -Wextra -pedantic -Werror, and a C++ client using every AM form with run-time
arguments (numbered and variadic), the extended API, VIS, collectives and the tools compiles
with each and runs as a real job."""
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import ROOT, built, job_env
from test_gasnet1_headers import am_client

COMPILERS = ["g++", "clang++"]
STANDARDS = ["c++11", "c++14", "c++17"]
STRICT = ["-Wall", "-Wextra", "-pedantic", "-Werror"]
# Public headers a client includes (gasnet.h first where GASNet-1 requires it).
HEADERS = ["gasnet.h", "gasnet_coll.h", "gasnet_vis.h", "gasnet_tools.h", "gasnet_handler.h",
           "portable_inttypes.h"]


def need(compiler: str) -> None:
    if not shutil.which(compiler):
        pytest.skip(f"{compiler} is not installed (setup.sh installs it)")


def flags(build, mode: str = "SEQ") -> list[str]:
    inc = build.path / "include"
    return [f"-DGASNET_{mode}", f"-I{inc}", f"-I{inc}/{build.conduit}-conduit"]


@pytest.mark.parametrize("compiler", COMPILERS)
@pytest.mark.parametrize("std", STANDARDS)
@pytest.mark.parametrize("mode", ["SEQ", "PAR"])
def test_every_public_header_compiles_as_cxx(tmp_path, compiler, std, mode):
    need(compiler)
    build = built("opt", "smp")
    for header in HEADERS:
        src = tmp_path / "one_header.cc"
        first = "" if header in ("gasnet.h", "portable_inttypes.h") else "#include <gasnet.h>\n"
        src.write_text(f"{first}#include <{header}>\nint main() {{ return 0; }}\n")
        proc = subprocess.run([compiler, f"-std={std}", *STRICT, *flags(build, mode),
                               "-fsyntax-only", str(src)], capture_output=True, text=True)
        assert proc.returncode == 0, f"{header} as {std} with {compiler}:\n{proc.stderr[-3000:]}"


def compile_cxx_client(build, compiler: str, std: str, out: Path) -> str:
    src = out.with_suffix(".cc")
    src.write_text(am_client(numbered=False, runtime_args=True, api=True)
                   + am_numbered_part())
    cmd = [compiler, f"-std={std}", *STRICT, "-O1", *flags(build), str(src),
           str(ROOT / "tests" / "cxx" / "api_client.cc"), "-o", str(out),
           f"-L{build.path / 'lib'}", f"-lgasnet-{build.conduit}-seq", "-pthread", "-lrt", "-lm"]
    if build.conduit == "ibv":
        cmd.append("-libverbs")
    proc = subprocess.run(cmd, capture_output=True, text=True)
    assert proc.returncode == 0, f"{compiler} {std}:\n{proc.stderr[-4000:]}"
    return str(out)


def am_numbered_part() -> str:
    """The numbered forms with run-time arguments, compiled into the same program (as an
    unused function: compiling them is what g++ refused)."""
    numbered = am_client(numbered=True, runtime_args=True)
    body = numbered[numbered.index("int main("):]
    body = body.replace("int main(int argc, char **argv)", "int numbered_forms(int argc, char **argv)")
    return ("namespace numbered {\n"
            + numbered[numbered.index("static volatile int replies"):numbered.index("int main(")]
            .replace("#include <gasnet.h>", "")
            + "int numbered_forms(int argc, char **argv);\n" + body + "}\n")


@pytest.mark.parametrize("compiler,std", [(c, s) for c in COMPILERS for s in STANDARDS])
def test_cxx_client_of_every_api_compiles(tmp_path, compiler, std):
    need(compiler)
    compile_cxx_client(built("opt", "smp"), compiler, std, tmp_path / "cxx_client")


@pytest.mark.parametrize("compiler,std,conduit", [("g++", "c++11", "smp"),
                                                  ("clang++", "c++17", "smp"),
                                                  ("g++", "c++14", "udp")])
def test_cxx_client_of_every_api_runs(tmp_path, compiler, std, conduit):
    need(compiler)
    build = built("opt", conduit)
    prog = compile_cxx_client(build, compiler, std, tmp_path / "cxx_client")
    env = {"GASNET_SUPERNODE_MAXSIZE": "1"} if conduit != "smp" else {}
    proc = subprocess.run([build.gasnetrun, "-n", "2", prog],
                          env=job_env({**build.conduit_env(), **env}),
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.count("68 replies, 0 bad arguments") == 2, proc.stdout + proc.stderr


# What a GASNet-1-era C++ client (Realm 17.02's activemsg.h and lowlevel.cc) writes: its own
# gasnet_barrier in a namespace, the addresses of the barrier functions and of two static
# functions of GASNet 1.x's headers it names to silence unused-function warnings.
NAMES_CLIENT = """\
#include <gasnet.h>
#include <gasnet_tools.h>
static const void *ignore1 __attribute__((unused)) = (void *)_gasneti_threadkey_init;
static const void *ignore2 __attribute__((unused)) = (void *)_gasnett_trace_printf_noop;
GASNETT_THREADKEY_DEFINE(mykey);
namespace client {
  void gasnet_barrier(void) {
    gasnet_barrier_notify(0, GASNET_BARRIERFLAG_ANONYMOUS);
    gasnet_barrier_wait(0, GASNET_BARRIERFLAG_ANONYMOUS);
  }
}
extern "C" int gasnet_barrier(int id, int flags); /* as GASNet 1.x declares it */
int main(int argc, char **argv) {
  void (*notify)(int, int) = &gasnet_barrier_notify;
  int (*wait)(int, int) = gasnet_barrier_wait, (*both)(int, int) = gasnet_barrier;
  int (*attempt)(int, int) = gasnet_barrier_try;
  if (gasnet_init(&argc, &argv) != GASNET_OK || gasnet_attach(NULL, 0, 4096, 0) != GASNET_OK)
    return 1;
  gasnett_threadkey_init(mykey);
  gasnett_threadkey_set(mykey, &argc);
  client::gasnet_barrier();
  notify(1, 0);
  while (attempt(1, 0) == GASNET_ERR_NOT_READY) continue;
  notify(2, 0);
  int rc = wait(2, 0) | both(3, 0) | ::gasnet_barrier(4, 0);
  printf("rank %d barriers %d key %d\\n", (int)gasnet_mynode(), rc,
         gasnett_threadkey_get(mykey) == &argc);
  gasnet_exit(0);
  return 0;
}
"""


def test_a_client_declares_its_own_gasnet_barrier_and_takes_1x_names_addresses(tmp_path):
    """The barrier calls are functions, as in GASNet 1.x, not function-like macros a client's
    own declaration would clash with."""
    build = built("opt", "smp")
    src, out = tmp_path / "names.cc", tmp_path / "names"
    src.write_text(NAMES_CLIENT)
    proc = subprocess.run(["g++", "-std=c++11", "-Wall", "-Wextra", "-Werror", *flags(build),
                           str(src), "-o", str(out), f"-L{build.path / 'lib'}",
                           "-lgasnet-smp-seq", "-pthread", "-lrt", "-lm"],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-4000:]
    run = subprocess.run([build.gasnetrun, "-n", "2", str(out)], env=job_env(), capture_output=True,
                         text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    assert sorted(run.stdout.splitlines()) == ["rank 0 barriers 0 key 1", "rank 1 barriers 0 key 1"]
