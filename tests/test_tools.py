"""The GASNet tools (gasnet_tools.h): the standalone libgasnet_tools-{seq,par} run by a program
with no conduit, and the same tools inside every conduit library for GASNet clients."""
import re
import subprocess

import pytest

from conftest import BUILDS, built, job_env


@pytest.fixture(params=list(BUILDS), scope="module")
def tools_build(request):
    build = built(request.param)
    if not (build.path / "tools").is_dir():
        pytest.skip("this build has no standalone tools programs")
    return build


def tools_program(build, mode):
    return str(build.path / "tools" / f"tools_test-{mode}")


def run(args):
    return subprocess.run(args, capture_output=True, text=True, timeout=120, env=job_env())


@pytest.mark.parametrize("mode,model", [("seq", "SEQ"), ("par", "PAR")])
def test_standalone_library_passes_every_group_of_checks(tools_build, mode, model):
    proc = run([tools_program(tools_build, mode)])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"tools_test: OK ({model})" in proc.stdout


def test_malformed_integer_is_a_fatal_error_naming_it(tools_build):
    proc = run([tools_program(tools_build, "seq"), "parse", "12x"])
    assert proc.returncode != 0
    assert "'12x' is not an integer" in proc.stderr and "K, M, G or T" in proc.stderr
    assert run([tools_program(tools_build, "seq"), "parse", "3k"]).stdout.strip() == "3072"


def test_fatalerror_prints_and_aborts(tools_build):
    proc = run([tools_program(tools_build, "par"), "fatal"])
    assert proc.returncode != 0
    assert "FATAL ERROR: tools_test says 42" in proc.stderr


def test_backtrace_names_the_program(tools_build):
    proc = run([tools_program(tools_build, "seq"), "backtrace"])
    assert proc.returncode == 0, proc.stderr
    assert "tools_test-seq" in proc.stdout and "backtrace of pid" in proc.stdout


def test_client_of_one_model_linked_with_the_other_library_fails_naming_it(tools_build, tmp_path):
    src = tmp_path / "single.c"
    src.write_text("#include <gasnet_tools.h>\nint main(void) { return gasnett_cpu_count() < 0; }\n")
    sanitizers = ["-fsanitize=address,undefined"] if tools_build.name == "debug" else []

    def link(library):
        return run(["gcc", "-std=c11", "-D_GNU_SOURCE", "-DGASNETT_THREAD_SINGLE", *sanitizers,
                    f"-I{tools_build.path / 'include'}", str(src), "-o", str(tmp_path / "single"),
                    f"-L{tools_build.path / 'lib'}", library, "-lrt"])

    proc = link("-lgasnet_tools-par")
    assert proc.returncode != 0
    assert "gasnett_linkconfig_threadmodel_SEQ" in proc.stderr
    proc = link("-lgasnet_tools-seq")
    assert proc.returncode == 0, proc.stderr


@pytest.mark.parametrize("mode", ["seq", "par"])
def test_gasnet_client_gets_the_tools_from_its_conduit_library(build, mode):
    result = build.job(3, "tools_client", mode=mode)
    assert result.returncode == 0, result.describe()
    assert result.stdout.count("OK") == 3, result.describe()


def test_tools_fatalerror_in_a_client_ends_the_job_naming_the_rank(build):
    result = build.job(2, "tools_client", "fatal")
    assert result.returncode != 0, result.describe()
    assert "tools_client gives up on rank 0" in result.stderr, result.describe()


@pytest.mark.parametrize("mode", ["seq", "par"])
def test_gasnet1_harness_surface_of_gasnet_h_and_the_tools(build, mode):
    """What GASNet-1's test harness takes from gasnet.h and gasnet_tools.h (tools_gasnet1_test
    lists it): every macro compiles where the harness writes it, and each behaves."""
    result = build.job(2, "tools_gasnet1_test", mode=mode, timeout=120)
    assert result.returncode == 0, result.describe()
    assert result.stdout.count("OK") == 2, result.describe()
    warning = "performance warnings: ''" if build.name == "opt" else "debugging"
    assert warning in result.stdout, result.describe()


@pytest.mark.parametrize("mode", ["seq", "par"])
def test_the_runtimes_self_test_passes_on_every_conduit(build, mode):
    """gasnett_run_diagnostics (GASNet 1.x's testinternal calls it): every section on 3 ranks
    (the last one pairs with itself), 3 threads in PAR."""
    result = build.job(3, "diagnostics_test", "150", "3", mode=mode, timeout=240)
    assert result.returncode == 0, result.describe()
    assert result.stdout.count("errors 0") == 3, result.describe()
    threads = "3 threads" if mode == "par" else "1 thread"
    for letter in "ABCD":
        assert re.search(rf"^gasnett_run_diagnostics: {letter}: .*, 150 iterations, {threads}$",
                         result.stdout, re.M), result.describe()
    assert "gasnett_run_diagnostics: E: barriers" in result.stdout, result.describe()


def test_the_self_test_names_a_section_it_lacks_and_skips_ams_without_its_handlers(variant_build):
    result = variant_build.job(2, "diagnostics_test", "20", "1", "AbZ", mode="par")
    assert result.returncode == 1, result.describe()
    assert "section -: test section 'Z' is not one of A-E" in result.stderr, result.describe()
    assert "gasnett_run_diagnostics: B: timers" in result.stdout, result.describe()
    assert "gasnett_run_diagnostics: C:" not in result.stdout, result.describe()
    result = variant_build.job(2, "diagnostics_test", "20", "1", "", "nohandlers")
    assert result.returncode == 0, result.describe()
    assert re.search(r"C: active messages .*: skipped \(the table of "
                     r"gasnett_diagnostic_gethandlers was not asked for\)", result.stdout)
    assert "gasnett_run_diagnostics: E: barriers" in result.stdout, result.describe()
