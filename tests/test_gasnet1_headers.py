"""What GASNet-1 clients take from gasnet.h without asking: the argument-count-free AM macros
(every form, 0..16 arguments), the core and extended name macros, the standard headers
gasnet.h includes, and the portability helpers. Each client is generated here, compiled
against the build's headers with implicit declarations as errors, and run as a real job."""
import json
import subprocess
from pathlib import Path

import pytest

from conftest import CONDUITS, built, job_env

MAX_ARGS = 16


def arg_list(m: int, base: str) -> str:
    return "".join(f", {base} + {i}" for i in range(m))


def params(m: int) -> str:
    return "".join(f", gasnet_handlerarg_t a{i}" for i in range(m))


def check_args(m: int) -> str:
    return "".join(f"  if (a{i} != base + {i}) bad++;\n" for i in range(m))


def am_client() -> str:
    """Rank r sends, for every M in 0..16, a Short, a Medium, a Long and a LongAsync request
    with M arguments to rank r+1 through the count-free macros; each request handler checks its
    arguments and answers with the count-free reply of the same kind and count."""
    out = ["#include <gasnet.h>", "static volatile int replies; static int bad;",
           "static char payload[64]; static gasnet_seginfo_t seg[64];",
           "static void *reply_dst(gasnet_token_t t) {",
           "  gasnet_node_t src; gasnet_AMGetMsgSource(t, &src);",
           "  return (char *)seg[src].addr + 64 * gasnet_mynode() + 32;", "}"]
    table = []
    for m in range(MAX_ARGS + 1):
        base = f"(100 * {m} + 7)"
        out.append(f"enum {{ BASE{m} = 100 * {m} + 7 }};")
        for kind in ("Short", "Medium", "Long"):
            lead = {"Short": "", "Medium": ", void *buf, size_t n",
                    "Long": ", void *buf, size_t n"}[kind]
            reply_lead = {"Short": "", "Medium": ", payload, 8",
                          "Long": ", payload, 8, reply_dst(t)"}[kind]
            use = "" if kind == "Short" else "  (void)buf; if (n != 8) bad++;\n"
            out.append(
                f"static void rep_{kind}{m}(gasnet_token_t t{lead}{params(m)}) {{\n"
                f"  (void)t; int base = BASE{m}; (void)base;\n{use}{check_args(m)}"
                f"  replies++;\n}}")
            out.append(
                f"static void req_{kind}{m}(gasnet_token_t t{lead}{params(m)}) {{\n"
                f"  int base = BASE{m}; (void)base;\n{use}{check_args(m)}"
                f"  gasnet_AMReply{kind}(t, H_REP_{kind}{m}{reply_lead}"
                f"{arg_list(m, 'BASE' + str(m))});\n}}")
            table.append(f"req_{kind}{m}")
            table.append(f"rep_{kind}{m}")
    # handler indices: assigned in table order from 128
    defines = [f"#define H_{'REQ' if name.startswith('req') else 'REP'}_{name[4:]} {128 + i}"
               for i, name in enumerate(table)]
    out = out[:3] + defines + out[3:]  # before any handler uses them
    out.append("int main(int argc, char **argv) {")
    out.append("  gasnet_handlerentry_t table[] = {" + ", ".join(
        f"{{{128 + i}, (void (*)()){name}}}" for i, name in enumerate(table)) + "};")
    out.append("  if (gasnet_init(&argc, &argv) != GASNET_OK) return 1;")
    out.append(f"  if (gasnet_attach(table, {len(table)}, GASNET_PAGESIZE, 0) != GASNET_OK)"
               " return 1;")
    out.append("  gasnet_getSegmentInfo(seg, gasnet_nodes());")
    out.append("  gasnet_node_t peer = (gasnet_node_t)((gasnet_mynode() + 1) % gasnet_nodes());")
    out.append("  char *dst = (char *)seg[peer].addr + 64 * gasnet_mynode();")
    for m in range(MAX_ARGS + 1):
        b = f"BASE{m}"
        out.append(f"  gasnet_AMRequestShort(peer, H_REQ_Short{m}{arg_list(m, b)});")
        out.append(f"  gasnet_AMRequestMedium(peer, H_REQ_Medium{m}, payload, 8{arg_list(m, b)});")
        out.append(f"  gasnet_AMRequestLong(peer, H_REQ_Long{m}, payload, 8, dst{arg_list(m, b)});")
        out.append(f"  gasnet_AMRequestLongAsync(peer, H_REQ_Long{m}, payload, 8, dst"
                   f"{arg_list(m, b)});")
    out.append(f"  GASNET_BLOCKUNTIL(replies == {4 * (MAX_ARGS + 1)});")
    out.append("  gasnet_barrier_notify(0, GASNET_BARRIERFLAG_ANONYMOUS);")
    out.append("  gasnet_barrier_wait(0, GASNET_BARRIERFLAG_ANONYMOUS);")
    out.append('  printf("rank %d: %d replies, %d bad arguments\\n", (int)gasnet_mynode(), '
               "replies, bad);")
    out.append("  gasnet_exit(bad ? 1 : 0);")
    out.append("}")
    return "\n".join(out) + "\n"


# Uses printf, malloc, getpid, strlen and PRIu64 without including their headers: gasnet.h
# brings them in, as GASNet's does. Prints the name macros and uses the helpers.
NAMES_CLIENT = r"""
#include <gasnet.h>
GASNETT_IDENT(client_ident, "$ClientIdent: names $");
GASNETT_INLINE(twice) int twice(int x) { return 2 * x; }
int main(int argc, char **argv) {
  if (gasnet_init(&argc, &argv) != GASNET_OK) return 1;
  if (gasnet_attach(NULL, 0, 0, 0) != GASNET_OK) return 1;
  char *buf = malloc(64);
  uint64_t pid = (uint64_t)getpid();
  if (GASNETT_PREDICT_TRUE(buf != NULL) && strlen(GASNET_CORE_NAME_STR) > 0) {
    printf("core %s %s extended %s %s conduit %s pid %" PRIu64 " twice %d %s\n",
           GASNET_CORE_NAME_STR, GASNET_CORE_VERSION_STR, GASNET_EXTENDED_NAME_STR,
           GASNET_EXTENDED_VERSION_STR, _STRINGIFY(GASNET_CONDUIT_NAME), pid, twice(21),
           GASNETT_CURRENT_FUNCTION);
  }
#if !PLATFORM_OS_LINUX || !(PLATFORM_ARCH_64 || PLATFORM_ARCH_32)
  puts("platform macros missing");
#endif
  free(buf);
  gasnet_exit(0);
}
"""


def compile_client(build, source: str, path: Path) -> str:
    src = path.with_suffix(".c")
    src.write_text(source)
    inc = build.path / "include"
    cmd = ["gcc", "-std=gnu11", "-Wall", "-Werror=implicit-function-declaration",
           "-Werror=int-conversion", "-DGASNET_SEQ", f"-I{inc}",
           f"-I{inc}/{build.conduit}-conduit", str(src), "-o", str(path),
           f"-L{build.path / 'lib'}", f"-lgasnet-{build.conduit}-seq", "-pthread", "-lrt", "-lm"]
    cmd += [f"-l{lib}" for lib in conduit_libs(build)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return str(path)


@pytest.fixture(params=CONDUITS)
def opt_conduit_build(request):
    return built("opt", request.param)


def conduit_libs(build) -> list[str]:
    """What the conduit's programs link besides the runtime, as the build says (--info)."""
    info = subprocess.run([build.gasnetrun, "--info", "--json"], capture_output=True, text=True,
                          timeout=60)
    return json.loads(info.stdout)["libs"].get(build.conduit, [])


def run(build, prog: str, nranks: int) -> subprocess.CompletedProcess:
    env = {"GASNET_SUPERNODE_MAXSIZE": "1"} if build.conduit != "smp" else {}
    return subprocess.run([build.gasnetrun, "-n", str(nranks), prog],
                          env=job_env({**build.conduit_env(), **env}),
                          capture_output=True, text=True, timeout=120)


def test_count_free_am_macros_with_0_to_16_arguments(opt_conduit_build, tmp_path):
    prog = compile_client(opt_conduit_build, am_client(), tmp_path / "am_count_free")
    proc = run(opt_conduit_build, prog, 2)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.count(f"{4 * (MAX_ARGS + 1)} replies, 0 bad arguments") == 2, proc.stdout


def test_too_many_am_arguments_is_a_compile_error(tmp_path):
    build = built("opt", "smp")
    source = am_client().replace("int main(", "static void extra(void) {\n"
                                 "  gasnet_AMRequestShort(0, 128" + ", 1" * 17 + ");\n}\nint main(")
    src = tmp_path / "too_many.c"
    src.write_text(source)
    inc = build.path / "include"
    proc = subprocess.run(["gcc", "-std=gnu11", "-Werror=implicit-function-declaration",
                           "-DGASNET_SEQ", f"-I{inc}", f"-I{inc}/smp-conduit", "-c", str(src),
                           "-o", str(tmp_path / "too_many.o")], capture_output=True, text=True)
    assert proc.returncode != 0
    assert "gasnet_AMRequestShort_too_many_or_too_few_arguments" in proc.stderr


def test_name_macros_header_includes_and_helpers(opt_conduit_build, tmp_path):
    prog = compile_client(opt_conduit_build, NAMES_CLIENT, tmp_path / "names")
    proc = run(opt_conduit_build, prog, 1)
    assert proc.returncode == 0, proc.stderr
    name = opt_conduit_build.conduit.upper()
    assert f"core {name} 1.0 extended REFERENCE 1.0 conduit {opt_conduit_build.conduit}" \
        in proc.stdout, proc.stdout
    assert "twice 42 main" in proc.stdout
    assert "platform macros missing" not in proc.stdout
