"""What GASNet-1 clients take from gasnet.h without asking: the variadic AM forms with an
explicit argument count (gasnet_AMRequestShort(dest, h, numargs, ...), every kind, 0..16
arguments, numargs a constant or a run-time value), the core and extended name macros, the
standard headers gasnet.h includes, and the portability helpers. Each client is generated
here, compiled against the build's headers with implicit declarations as errors, and run as a
real job."""
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


def count(m: int) -> str:
    """numargs as a client writes it: a constant, or (odd counts) a value known at run time."""
    return f"runtime_count[{m}]" if m % 2 else str(m)


def am_client(numbered: bool = False, runtime_args: bool = False, api: bool = False) -> str:
    """Rank r sends, for every M in 0..16, a Short, a Medium, a Long and a LongAsync request
    with M arguments to rank r+1 through the variadic forms (numargs = M, a constant for even
    M, a run-time value for odd M), or the numbered forms; each request handler checks its
    arguments and answers with the reply of the same form, kind and count. runtime_args: the
    handler arguments are run-time values too; api: the program then calls cxx_api_main
    (tests/cxx/api_client.cc) and counts its failures."""
    def send(family: str, m: int, lead: str, base: str) -> str:
        args = arg_list(m, f"rt[{m}]" if runtime_args else base)
        if numbered:
            return f"gasnet_{family}{m}({lead}{args})"
        return f"gasnet_{family}({lead}, {count(m)}{args})"
    out = ["#include <gasnet.h>", "static volatile int replies; static int bad;",
           "static volatile int runtime_count[17], rt[17];",
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
                f"  {send('AMReply' + kind, m, f't, H_REP_{kind}{m}{reply_lead}', f'BASE{m}')};"
                "\n}")
            table.append(f"req_{kind}{m}")
            table.append(f"rep_{kind}{m}")
    # handler indices: assigned in table order from 128
    defines = [f"#define H_{'REQ' if name.startswith('req') else 'REP'}_{name[4:]} {128 + i}"
               for i, name in enumerate(table)]
    out = out[:4] + defines + out[4:]  # before any handler uses them
    if api:
        out.insert(1, "int cxx_api_main(gasnet_node_t peer, char *mine, char *theirs);")
    out.append("int main(int argc, char **argv) {")
    out.append("  gasnet_handlerentry_t table[] = {" + ", ".join(
        f"{{{128 + i}, (void (*)()){name}}}" for i, name in enumerate(table)) + "};")
    out.append("  if (gasnet_init(&argc, &argv) != GASNET_OK) return 1;")
    out.append(f"  if (gasnet_attach(table, {len(table)}, 16 * GASNET_PAGESIZE, 0) != GASNET_OK)"
               " return 1;")
    out.append("  gasnet_getSegmentInfo(seg, gasnet_nodes());")
    out.append("  for (int m = 0; m <= 16; m++) runtime_count[m] = m, rt[m] = 100 * m + 7;")
    out.append("  gasnet_node_t peer = (gasnet_node_t)((gasnet_mynode() + 1) % gasnet_nodes());")
    out.append("  char *dst = (char *)seg[peer].addr + 64 * gasnet_mynode();")
    for m in range(MAX_ARGS + 1):
        b = f"BASE{m}"
        out.append(f"  {send('AMRequestShort', m, f'peer, H_REQ_Short{m}', b)};")
        out.append(f"  {send('AMRequestMedium', m, f'peer, H_REQ_Medium{m}, payload, 8', b)};")
        out.append(f"  {send('AMRequestLong', m, f'peer, H_REQ_Long{m}, payload, 8, dst', b)};")
        out.append(f"  {send('AMRequestLongAsync', m, f'peer, H_REQ_Long{m}, payload, 8, dst', b)};")
    out.append(f"  GASNET_BLOCKUNTIL(replies == {4 * (MAX_ARGS + 1)});")
    if api:
        out.append("  gasnet_barrier_notify(0, GASNET_BARRIERFLAG_ANONYMOUS);")
        out.append("  gasnet_barrier_wait(0, GASNET_BARRIERFLAG_ANONYMOUS);")
        out.append("  bad += cxx_api_main(peer, (char *)seg[gasnet_mynode()].addr + 2048,"
                   " (char *)seg[peer].addr + 2048);")
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
    """Compiles as the build's own clients are: a debug build's with GASNETI_DEBUG and the
    sanitizers its library needs."""
    src = path.with_suffix(".c")
    src.write_text(source)
    inc = build.path / "include"
    debug = ["-g", "-fsanitize=address,undefined", "-DGASNETI_DEBUG"] \
        if build.name == "debug" else []
    cmd = ["gcc", "-std=gnu11", "-Wall", "-Werror=implicit-function-declaration",
           "-Werror=int-conversion", "-DGASNET_SEQ", *debug, f"-I{inc}",
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


def test_explicit_count_am_forms_with_0_to_16_arguments(opt_conduit_build, tmp_path):
    prog = compile_client(opt_conduit_build, am_client(), tmp_path / "am_explicit_count")
    proc = run(opt_conduit_build, prog, 2)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.count(f"{4 * (MAX_ARGS + 1)} replies, 0 bad arguments") == 2, proc.stdout


def test_explicit_count_am_forms_in_the_debug_build(tmp_path):
    build = built("debug", "smp")
    prog = compile_client(build, am_client(), tmp_path / "am_explicit_count")
    proc = run(build, prog, 2)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.count(f"{4 * (MAX_ARGS + 1)} replies, 0 bad arguments") == 2, proc.stdout


MISMATCH_CLIENT = r"""
#include <gasnet.h>
static void h(gasnet_token_t t, gasnet_handlerarg_t a, gasnet_handlerarg_t b) {
  (void)t; (void)a; (void)b;
}
static void r(gasnet_token_t t) { (void)t; }
static void req(gasnet_token_t t) { gasnet_AMReplyShort(t, 130, 1); }
int main(int argc, char **argv) {
  gasnet_handlerentry_t table[] = {{128, (void (*)())h}, {129, (void (*)())req},
                                   {130, (void (*)())r}};
  if (gasnet_init(&argc, &argv) != GASNET_OK) return 1;
  if (gasnet_attach(table, 3, GASNET_PAGESIZE, 0) != GASNET_OK) return 1;
  volatile int n = atoi(argv[1]);
  if (argv[2][0] == 'q') gasnet_AMRequestShort(gasnet_mynode(), 129, 0);
  else gasnet_AMRequestShort(gasnet_mynode(), 128, n, 1, 2);
  puts("sent");
  gasnet_exit(0);
}
"""


@pytest.mark.parametrize("numargs,form,call,stated,given", [
    ("3", "request", "gasnet_AMRequestShort", 3, 2),
    ("0", "reply", "gasnet_AMReplyShort", 1, 0),
])
def test_wrong_numargs_is_a_fatal_error_in_the_debug_build(tmp_path, numargs, form, call,
                                                           stated, given):
    build = built("debug", "smp")
    prog = compile_client(build, MISMATCH_CLIENT, tmp_path / "mismatch")
    proc = subprocess.run([build.gasnetrun, "-n", "1", prog, numargs,
                           "q" if form == "reply" else "s"],
                          env=job_env(), capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0, proc.stdout + proc.stderr
    assert "sent" not in proc.stdout
    assert (f"{call}(..., numargs = {stated}, ...) was given {given} handler argument"
            f"{'' if given == 1 else 's'} after numargs: numargs must be their count (0..16)"
            in proc.stderr), proc.stderr


@pytest.mark.parametrize("call,family", [
    ("gasnet_AMRequestShort(0, 128, 17" + ", 1" * 17 + ")", "gasnet_AMRequestShort"),
    ("gasnet_AMReplyMedium(t, 128, buf, 8)", "gasnet_AMReplyMedium"),
])
def test_wrong_am_argument_count_is_a_compile_error(tmp_path, call, family):
    build = built("opt", "smp")
    source = ("#include <gasnet.h>\nvoid f(gasnet_token_t t, void *buf);\n"
              f"void f(gasnet_token_t t, void *buf) {{ (void)t; (void)buf; {call}; }}\n")
    src = tmp_path / "wrong_count.c"
    src.write_text(source)
    inc = build.path / "include"
    proc = subprocess.run(["gcc", "-std=c11", "-DGASNET_SEQ", f"-I{inc}", f"-I{inc}/smp-conduit",
                           "-c", str(src), "-o", str(tmp_path / "wrong_count.o")],
                          capture_output=True, text=True)
    assert proc.returncode != 0
    assert f"{family}_takes_" in proc.stderr and "numargs_then_0_to_16_arguments" in proc.stderr, \
        proc.stderr


def test_name_macros_header_includes_and_helpers(opt_conduit_build, tmp_path):
    prog = compile_client(opt_conduit_build, NAMES_CLIENT, tmp_path / "names")
    proc = run(opt_conduit_build, prog, 1)
    assert proc.returncode == 0, proc.stderr
    name = opt_conduit_build.conduit.upper()
    assert f"core {name} 1.0 extended REFERENCE 1.0 conduit {opt_conduit_build.conduit}" \
        in proc.stdout, proc.stdout
    assert "twice 42 main" in proc.stdout
    assert "platform macros missing" not in proc.stdout
