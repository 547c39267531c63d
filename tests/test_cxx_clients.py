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
