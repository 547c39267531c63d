"""scons install: an existing GASNet client's Makefile that includes the installed .mak file
builds unchanged, pkg-config finds the library, and the installed gasnetrun runs the result."""
import importlib.util
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import BUILDS, INSTALL_BYTECODE, ROOT, Build, job_env

CLIENT_MAKEFILE = """\
include $(GASNET_MAK)
hello: hello.c
\t$(GASNET_CC) $(GASNET_CPPFLAGS) $(GASNET_CFLAGS) -c hello.c -o hello.o
\t$(GASNET_LD) $(GASNET_LDFLAGS) -o hello hello.o $(GASNET_LIBS)
"""


@pytest.fixture(scope="module")
def prefix(install_home: Path) -> Path:
    return install_home / "gasnet"


def conduit_env(conduit: str) -> dict[str, str]:
    """Network conduits with every rank its own supernode (the ring travels over the network);
    each conduit with what it needs here (Build.conduit_env: ibv on fakeverbs, ofi's provider)."""
    if conduit == "smp":
        return {}
    env = {"GASNET_SUPERNODE_MAXSIZE": "1"}
    if not (ROOT / "build" / conduit).is_dir():
        pytest.skip(f"this build has no {conduit} conduit")
    env.update(Build("opt", BUILDS["opt"], conduit).conduit_env())
    return env


@pytest.mark.parametrize("conduit,mode", [("smp", "seq"), ("smp", "par"), ("smp", "parsync"),
                                          ("udp", "seq"), ("udp", "parsync"), ("ibv", "seq"),
                                          ("ibv", "par"), ("ofi", "seq")])
def test_client_makefile_including_the_mak_file_builds_and_runs(prefix, tmp_path, conduit, mode):
    shutil.copy(ROOT / "examples" / "hello_ring.c", tmp_path / "hello.c")
    (tmp_path / "Makefile").write_text(CLIENT_MAKEFILE)
    mak = prefix / "include" / f"{conduit}-conduit" / f"{conduit}-{mode}.mak"
    proc = subprocess.run(["make", f"GASNET_MAK={mak}"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    env = job_env(conduit_env(conduit))
    run = subprocess.run([str(prefix / "bin" / "gasnetrun"), "-n", "3", str(tmp_path / "hello")],
                         env=env, capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    assert run.stdout.count("token went") == 3


def test_pkg_config_describes_the_library(prefix, tmp_path):
    if not shutil.which("pkg-config"):
        pytest.skip("pkg-config is not installed")
    env = job_env({"PKG_CONFIG_PATH": str(prefix / "lib" / "pkgconfig")})
    flags = subprocess.run(["pkg-config", "--cflags", "--libs", "gasnet-smp-seq"], env=env,
                           capture_output=True, text=True, check=True).stdout.split()
    assert "-DGASNET_SEQ" in flags and "-lgasnet-smp-seq" in flags
    # Exactly what pkg-config gives, as a client's build uses it: the library is static, so
    # what it needs (libm, librt) must be in --libs itself.
    proc = subprocess.run(["gcc", str(ROOT / "examples" / "hello_ring.c"), "-o",
                           str(tmp_path / "hello"), *flags], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    if (ROOT / "build" / "ibv").is_dir():
        ibv = subprocess.run(["pkg-config", "--libs", "gasnet-ibv-par"], env=env,
                             capture_output=True, text=True, check=True).stdout.split()
        assert "-lgasnet-ibv-par" in ibv and "-libverbs" in ibv, ibv


YIELDING_CLIENT = """\
#include <gasnet.h>
#include <pthread.h>
#include <stdio.h>
int main(int argc, char **argv) {
  if (gasnet_init(&argc, &argv) != GASNET_OK) return 1;
  if (gasnet_attach(NULL, 0, 0, 0) != GASNET_OK) return 1;
  pthread_yield(); /* declared only with _GNU_SOURCE, which GASNET_CPPFLAGS carries */
  printf("yielded on rank %d\\n", (int)gasnet_mynode());
  gasnet_exit(0);
}
"""


@pytest.mark.parametrize("mode", ["seq", "par", "parsync"])
def test_mak_cppflags_give_clients_the_gnu_declarations(prefix, tmp_path, mode):
    (tmp_path / "yield.c").write_text(YIELDING_CLIENT)
    (tmp_path / "Makefile").write_text(CLIENT_MAKEFILE.replace("hello", "yield").replace(
        "$(GASNET_CFLAGS)", "$(GASNET_CFLAGS) -Werror=implicit-function-declaration"))
    mak = prefix / "include" / "smp-conduit" / f"smp-{mode}.mak"
    assert "-D_GNU_SOURCE=1 -D_REENTRANT" in mak.read_text()
    proc = subprocess.run(["make", f"GASNET_MAK={mak}"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    run = subprocess.run([str(prefix / "bin" / "gasnetrun"), "-n", "2", str(tmp_path / "yield")],
                         env=job_env(), capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    assert run.stdout.count("yielded on rank") == 2


CXX_CLIENT = """\
#include <gasnet.h>
#include <gasnet_coll.h>
#include <gasnet_tools.h>
static volatile int got;
static void on_short(gasnet_token_t, gasnet_handlerarg_t a, gasnet_handlerarg_t b) {
  got += a + b;
}
int main(int argc, char **argv) {
  gasnet_handlerentry_t table[] = {{128, (void (*)())on_short}};
  if (gasnet_init(&argc, &argv) != GASNET_OK) return 1;
  if (gasnet_attach(table, 1, GASNET_PAGESIZE, 0) != GASNET_OK) return 1;
  int x = argc + (int)gasnet_mynode(); /* run-time arguments */
  gasnet_AMRequestShort2(gasnet_mynode(), 128, x, 1);
  gasnet_AMRequestShort(gasnet_mynode(), 128, 2, x, 2);
  GASNET_BLOCKUNTIL(got == 2 * x + 3);
  printf("C++ rank %d got %d\\n", (int)gasnet_mynode(), got);
  fflush(stdout);
  gasnet_barrier(0, GASNET_BARRIERFLAG_ANONYMOUS); /* both have printed before either exits */
  gasnet_exit(0);
}
"""
CXX_MAKEFILE = """\
include $(GASNET_MAK)
hello: hello.cc
\t$(GASNET_CXX) $(GASNET_CXXCPPFLAGS) $(GASNET_CXXFLAGS) -Wall -Wextra -pedantic -Werror \\
\t  -c hello.cc -o hello.o
\t$(GASNET_CXX) $(GASNET_LDFLAGS) -o hello hello.o $(GASNET_LIBS)
"""


@pytest.mark.parametrize("conduit,mode", [("smp", "seq"), ("udp", "par")])
def test_cxx_client_builds_with_the_mak_file_and_pkg_config(prefix, tmp_path, conduit, mode):
    """GASNET_CXX, GASNET_CXXCPPFLAGS and GASNET_CXXFLAGS in the .mak fragment (and as
    pkg-config variables) build a C++ client that sends AMs with run-time arguments."""
    (tmp_path / "hello.cc").write_text(CXX_CLIENT)
    (tmp_path / "Makefile").write_text(CXX_MAKEFILE)
    mak = prefix / "include" / f"{conduit}-conduit" / f"{conduit}-{mode}.mak"
    proc = subprocess.run(["make", f"GASNET_MAK={mak}"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "g++ " in proc.stdout, proc.stdout
    run = subprocess.run([str(prefix / "bin" / "gasnetrun"), "-n", "2", str(tmp_path / "hello")],
                         env=job_env(conduit_env(conduit)), capture_output=True, text=True,
                         timeout=60)
    assert run.returncode == 0, run.stderr
    assert "C++ rank 0 got 5" in run.stdout and "C++ rank 1 got 7" in run.stdout, run.stdout
    if shutil.which("pkg-config"):
        env = job_env({"PKG_CONFIG_PATH": str(prefix / "lib" / "pkgconfig")})
        for var, want in (("GASNET_CXX", "g++"), ("GASNET_CXXCPPFLAGS", f"-DGASNET_{mode.upper()}"),
                          ("GASNET_CXXFLAGS", "-pthread")):
            got = subprocess.run(["pkg-config", f"--variable={var}", f"gasnet-{conduit}-{mode}"],
                                 env=env, capture_output=True, text=True, check=True).stdout
            assert want in got, (var, got)


def test_install_has_the_gasnet1_layout_clients_check(prefix, tmp_path):
    """What a GASNet-1 client's configure looks for: the release macros in gasnet_config.h
    (a release >= 1.18), gasnet_core.h in each conduit directory, every .mak, and a
    gasnetrun_<conduit> per conduit that runs a job."""
    config = (prefix / "include" / "gasnet_config.h").read_text()
    version = {}
    for part in ("MAJOR", "MINOR", "PATCH"):
        # Exactly one line per part: a configure that greps must read one release.
        [line] = [l for l in config.splitlines()
                  if l.startswith(f"#define GASNET_RELEASE_VERSION_{part} ")]
        version[part] = int(line.split()[-1])
    assert (version["MAJOR"], version["MINOR"], version["PATCH"]) == (1, 30, 0)
    for conduit in ("smp", "udp"):
        cdir = prefix / "include" / f"{conduit}-conduit"
        assert (cdir / "gasnet_core.h").is_file()
        for mode in ("seq", "par", "parsync"):
            assert (cdir / f"{conduit}-{mode}.mak").is_file()
    (tmp_path / "hello.c").write_text(
        "#include <gasnet.h>\n"
        "#include <gasnet_core.h>\n"
        "#if GASNET_RELEASE_VERSION_MAJOR < 1\n#error release\n#endif\n"
        "int main(int c, char **v) {\n"
        "  gasnet_init(&c, &v); gasnet_attach(NULL, 0, 0, 0);\n"
        '  printf("release %d.%d on rank %d\\n", GASNET_RELEASE_VERSION_MAJOR,\n'
        "         GASNET_RELEASE_VERSION_MINOR, (int)gasnet_mynode());\n"
        "  gasnet_exit(0);\n}\n")
    (tmp_path / "Makefile").write_text(CLIENT_MAKEFILE)
    mak = prefix / "include" / "smp-conduit" / "smp-seq.mak"
    proc = subprocess.run(["make", f"GASNET_MAK={mak}"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    run = subprocess.run([str(prefix / "bin" / "gasnetrun_smp"), "-n", "2",
                          str(tmp_path / "hello")], env=job_env(), capture_output=True,
                         text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    assert run.stdout.count("release 1.30 on rank") == 2
    assert (prefix / "bin" / "gasnetrun_udp").is_file()


# A GASNet-EX client as Chapel's, Realm's and UPC++'s runtimes are written: gasnetex.h alone,
# the EX release and spec macros checked at compile time, handlers registered by index 0 (the
# runtime picks), a Medium and a put with an event to the right neighbour, a non-blocking
# barrier. It is C and C++ at once (no designated initialisers).
EX_CLIENT = """\
#include <gasnetex.h>
#include <gasnet_ex_am_macros.h>
#include <stdio.h>
#include <string.h>
#if GASNET_RELEASE_VERSION_MAJOR < 2020 || !defined(GEX_SPEC_VERSION_MAJOR)
#error "not a GASNet-EX release"
#endif
static volatile int got;
static void on_medium(gex_Token_t t, void *buf, size_t n, gex_AM_Arg_t a) {
  gex_Token_Info_t info;
  gex_Token_Info(t, &info, GEX_TI_SRCRANK);
  got = (int)n + a + (int)((char *)buf)[0] + (int)info.gex_srcrank * 1000;
}
int main(int argc, char **argv) {
  gex_Client_t client; gex_EP_t ep; gex_TM_t tm; gex_Segment_t seg;
  if (gex_Client_Init(&client, &ep, &tm, "EXHELLO", &argc, &argv, 0) != GASNET_OK) return 1;
  if (gex_Segment_Attach(&seg, tm, 4096) != GASNET_OK) return 1;
  gex_AM_Entry_t table[] = {{0, (gex_AM_Fn_t)on_medium, GEX_FLAG_AM_MEDIUM | GEX_FLAG_AM_REQUEST,
                             1, NULL, "on_medium"}};
  if (gex_EP_RegisterHandlers(ep, table, 1) != GASNET_OK) return 1;
  gex_Rank_t me = gex_TM_QueryRank(tm), n = gex_TM_QuerySize(tm), right = (me + 1) % n;
  gex_Event_Wait(gex_Coll_BarrierNB(tm, 0));
  char payload[10] = "x";
  gex_AM_RequestMedium1(tm, right, table[0].gex_index, payload, sizeof payload, GEX_EVENT_NOW,
                        0, (gex_AM_Arg_t)me);
  GASNET_BLOCKUNTIL(got != 0);
  void *remote; gex_Segment_QueryBound(tm, right, &remote, NULL, NULL);
  long value = 1000 + (long)me;
  gex_Event_Wait(gex_RMA_PutNB(tm, right, remote, &value, sizeof value, GEX_EVENT_DEFER, 0));
  gex_Event_Wait(gex_Coll_BarrierNB(tm, 0));
  long mine; memcpy(&mine, gex_Segment_QueryAddr(seg), sizeof mine);
  printf("EX %d.%d.%d spec %d.%d rank %u got %d and %ld\\n", GASNET_RELEASE_VERSION_MAJOR,
         GASNET_RELEASE_VERSION_MINOR, GASNET_RELEASE_VERSION_PATCH, GEX_SPEC_VERSION_MAJOR,
         GEX_SPEC_VERSION_MINOR, (unsigned)me, got, mine);
  fflush(stdout);
  gex_Event_Wait(gex_Coll_BarrierNB(tm, 0));
  gasnet_exit(0);
}
"""


@pytest.mark.parametrize("conduit,mode,lang", [("smp", "seq", "c"), ("udp", "par", "c++")])
def test_ex_client_builds_from_the_install_and_sees_the_ex_release(prefix, tmp_path, conduit,
                                                                   mode, lang):
    """A GASNet-EX client builds against the install with the .mak file's flags (C, and C++
    with -pedantic -Werror) and runs; with gasnetex.h first it sees the EX release (2025.8.0)
    and spec 0.13, while a GASNet-1 client (gasnet.h first) keeps seeing 1.30.0."""
    source = "hello.c" if lang == "c" else "hello.cc"
    (tmp_path / source).write_text(EX_CLIENT)
    makefile = CLIENT_MAKEFILE if lang == "c" else CXX_MAKEFILE
    (tmp_path / "Makefile").write_text(makefile)
    mak = prefix / "include" / f"{conduit}-conduit" / f"{conduit}-{mode}.mak"
    proc = subprocess.run(["make", f"GASNET_MAK={mak}"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    run = subprocess.run([str(prefix / "bin" / "gasnetrun"), "-n", "3", str(tmp_path / "hello")],
                         env=job_env(conduit_env(conduit)), capture_output=True, text=True,
                         timeout=60)
    assert run.returncode == 0, run.stderr
    for rank in range(3):
        left = (rank + 2) % 3
        assert (f"EX 2025.8.0 spec 0.13 rank {rank} got {10 + left + ord('x') + 1000 * left} "
                f"and {1000 + left}") in run.stdout, run.stdout
    # The same headers, gasnet.h first: a GASNet-1 client's release.
    (tmp_path / "g1.c").write_text("#include <gasnet.h>\n#include <gasnetex.h>\n"
                                   "#if GASNET_RELEASE_VERSION_MAJOR != 1\n#error release\n"
                                   "#endif\nint main(void) { return 0; }\n")
    (tmp_path / "Makefile").write_text(CLIENT_MAKEFILE.replace("hello", "g1"))
    proc = subprocess.run(["make", f"GASNET_MAK={mak}"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.parametrize("conduit,mode", [("smp", "seq"), ("smp", "parsync"), ("udp", "seq"),
                                          ("udp", "par"), ("ibv", "seq")])
def test_client_project_configures_builds_and_runs_against_the_install(prefix, tmp_path,
                                                                        conduit, mode):
    """tests/client_project: a GASNet-1 client with its own configure (release, conduit
    directory, headers) and Makefile (the installed .mak), using the tools, VIS and the
    collectives, run with gasnetrun_<conduit>."""
    project = tmp_path / "project"
    shutil.copytree(ROOT / "tests" / "client_project", project)
    proc = subprocess.run(["./configure", f"--with-gasnet={prefix}", f"--with-conduit={conduit}",
                           f"--with-mode={mode}"], cwd=project, capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "checking GASNet release... 1.30.0" in proc.stdout
    env = job_env(conduit_env(conduit))
    proc = subprocess.run(["make", "check"], cwd=project, capture_output=True, text=True,
                          timeout=300, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.count(f"OK ({conduit.upper()} conduit, release 1.30") == 3, proc.stdout


def test_installed_launcher_is_byte_compiled_for_its_interpreter(prefix):
    """A read-only install (or PYTHONDONTWRITEBYTECODE) must not make every job compile
    gasnetrun's modules again: the install carries their bytecode, current for its sources."""
    package = prefix / "lib" / "gasnet" / "python" / "gasnetrun"
    sources = sorted(package.rglob("*.py"))
    assert len(sources) > 20
    for source in sources:
        cached = Path(importlib.util.cache_from_source(str(source)))
        assert cached in INSTALL_BYTECODE, f"scons install wrote no bytecode for {source}"
        # The header records the source's mtime and size: Python uses the file only if they match.
        header = cached.read_bytes()[:16]
        stat = source.stat()
        assert int.from_bytes(header[8:12], "little") == int(stat.st_mtime) & 0xFFFFFFFF, source
        assert int.from_bytes(header[12:16], "little") == stat.st_size & 0xFFFFFFFF, source


def test_client_project_configure_refuses_what_is_not_an_install(tmp_path):
    project = tmp_path / "project"
    shutil.copytree(ROOT / "tests" / "client_project", project)
    proc = subprocess.run(["./configure", f"--with-gasnet={tmp_path}"], cwd=project,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1 and "not a GASNet install" in proc.stderr


def test_tools_library_is_installed_for_programs_without_a_conduit(prefix, tmp_path):
    for mode in ("seq", "par"):
        assert (prefix / "lib" / f"libgasnet_tools-{mode}.a").is_file()
        assert f"GASNETTOOLS_TOOLLIB_NAME = gasnet_tools-{mode}\n" in \
            (prefix / "include" / f"gasnet_tools-{mode}.mak").read_text()
    (tmp_path / "t.c").write_text("#include <gasnet_tools.h>\n#include <stdio.h>\n"
                                  "int main(void) { printf(\"%d\\n\", gasnett_cpu_count() > 0); }\n")
    (tmp_path / "Makefile").write_text(
        f"include {prefix}/include/gasnet_tools-par.mak\n"
        "t: t.c\n\t$(GASNETTOOLS_CC) $(GASNETTOOLS_CPPFLAGS) $(GASNETTOOLS_CFLAGS) t.c -o t "
        "$(GASNETTOOLS_LDFLAGS) $(GASNETTOOLS_LIBS)\n")
    proc = subprocess.run(["make"], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert subprocess.run([str(tmp_path / "t")], capture_output=True, text=True).stdout == "1\n"


def test_installed_gasnet_tune_sweeps_with_the_installed_benchmarks(prefix, tmp_path):
    """gasnet-tune under the prefix finds its package, gasnetrun and the benchmarks there."""
    for conduit in ("smp", "udp"):
        assert (prefix / "lib" / "gasnet" / "bench" / conduit / "am_bench-seq").is_file()
    out = tmp_path / "tune"
    proc = subprocess.run([str(prefix / "bin" / "gasnet-tune"), "sweep", "-n", "2", "--knobs",
                           "GASNET_BARRIER", "--budget", "6runs", "--out", str(out)],
                          env=job_env(), capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (out / "tuned.env").read_text().startswith("# gasnet-tune")


@pytest.mark.parametrize("name,option", [("gasnetrun", "--hostfile"), ("gasnet-tune", "--budget")])
def test_man_pages_are_installed_where_man_finds_them(prefix, name, option):
    """scons install puts gasnetrun(1) and gasnet-tune(1) under share/man/man1, where `man`
    finds them once the prefix's share/man is on MANPATH."""
    if not shutil.which("man"):
        pytest.fail("man is not installed (Debian: man-db, which setup.sh installs)")
    page = prefix / "share" / "man" / "man1" / f"{name}.1"
    assert page.is_file(), f"scons install wrote no {page}"
    env = job_env({"MANPATH": f"{prefix / 'share' / 'man'}:", "MANWIDTH": "80"})
    where = subprocess.run(["man", "-w", name], env=env, capture_output=True, text=True)
    assert where.stdout.strip() == str(page), where.stdout + where.stderr
    shown = subprocess.run(["man", name], env=env, capture_output=True, text=True)
    assert shown.returncode == 0 and option in shown.stdout, shown.stdout[:500] + shown.stderr


GASNET1_NAMES_MAKEFILE = """\
include $(GASNET_MAK)
include $(TOOLS_MAK)
all: hello tools toolscxx
\t@echo "LD_REQUIRES_CXX=[$(GASNET_LD_REQUIRES_CXX)]"
\t@echo "TOOLLIB=[$(GASNETTOOLS_TOOLLIB_NAME)]"
# GASNet 1.x's own test rules, in their words: the parts of the aliases, the MANUAL_* hooks.
hello: hello.c
\t$(GASNET_CC) $(GASNET_MISC_CPPFLAGS) $(GASNET_DEFINES) $(GASNET_INCLUDES) \\
\t  $(GASNET_OPT_CFLAGS) $(GASNET_MISC_CFLAGS) $(MANUAL_CFLAGS) -c hello.c -o hello.o
\t$(GASNET_LD) $(GASNET_LDFLAGS) -o hello hello.o $(GASNET_LIBDIRS) $(GASNET_LIBS) -lamudp
tools: tools.c
\t$(GASNETTOOLS_CC) $(GASNETTOOLS_CPPFLAGS) $(GASNETTOOLS_CFLAGS) -c -o tools.o tools.c
\t$(GASNETTOOLS_LD) $(GASNETTOOLS_LDFLAGS) -o tools tools.o $(GASNETTOOLS_LIBS)
toolscxx: tools.cc
\t$(GASNETTOOLS_CXX) $(GASNETTOOLS_CPPFLAGS) $(GASNETTOOLS_CXXFLAGS) -c -o toolscxx.o tools.cc
\t$(GASNETTOOLS_CXX) $(GASNETTOOLS_CXXFLAGS) $(GASNETTOOLS_LDFLAGS) -o toolscxx toolscxx.o \\
\t  $(GASNETTOOLS_LIBS)
"""

TOOLS_PROGRAM = """\
#include <gasnet_tools.h>
#include <stdio.h>
#if !defined(MANUAL_SEEN) || MANUAL_SEEN != 42
#error MANUAL_CFLAGS or MANUAL_CXXFLAGS did not reach the compile
#endif
int main(void) {
  gasnett_atomic_t a = gasnett_atomic_init(1);
  gasnett_atomic_increment(&a, 0);
  printf("tools %u %s\\n", (unsigned)gasnett_atomic_read(&a, 0), GASNETT_THREAD_MODEL_STR);
  return 0;
}
"""


def test_gasnet1_make_variables_manual_hooks_and_the_amudp_name(prefix, tmp_path):
    """What GASNet 1.x's fragments name besides the aliases, as clients' Makefiles and 1.x's
    testtools rules use them (GASNETTOOLS_LD, GASNETTOOLS_CXX...), the MANUAL_* hooks a user
    sets on make's command line, and -lamudp (Realm's udp link line) linking as before."""
    program = (ROOT / "examples" / "hello_ring.c").read_text()
    (tmp_path / "hello.c").write_text("#if MANUAL_SEEN != 42\n#error MANUAL_CFLAGS\n#endif\n"
                                      + program)
    (tmp_path / "tools.c").write_text(TOOLS_PROGRAM)
    (tmp_path / "tools.cc").write_text(TOOLS_PROGRAM)
    (tmp_path / "Makefile").write_text(GASNET1_NAMES_MAKEFILE)
    proc = subprocess.run(["make", f"GASNET_MAK={prefix}/include/udp-conduit/udp-par.mak",
                           f"TOOLS_MAK={prefix}/include/gasnet_tools-par.mak",
                           "MANUAL_CFLAGS=-DMANUAL_SEEN=42", "MANUAL_CXXFLAGS=-DMANUAL_SEEN=42"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "LD_REQUIRES_CXX=[]" in proc.stdout and "TOOLLIB=[gasnet_tools-par]" in proc.stdout
    assert "-lamudp" in proc.stdout and "g++ " in proc.stdout, proc.stdout
    for name in ("tools", "toolscxx"):
        run = subprocess.run([str(tmp_path / name)], capture_output=True, text=True, timeout=30)
        assert run.stdout == "tools 2 PAR\n", run.stdout + run.stderr
    run = subprocess.run([str(prefix / "bin" / "gasnetrun"), "-n", "2", str(tmp_path / "hello")],
                         env=job_env(conduit_env("udp")), capture_output=True, text=True,
                         timeout=60)
    assert run.returncode == 0, run.stderr
    assert run.stdout.count("token went") == 2, run.stdout
