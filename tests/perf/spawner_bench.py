#!/usr/bin/python3
"""spawner_bench.py: start-to-exit time of a 16-rank hello (examples/hello_ring, udp) under
each spawner, next to the same program started by the launcher alone, in the same run.

Pairs (each launcher that is installed; the srun ones start their own single-host Slurm, as
tests/slurmcluster.py does, and need root):

  local            gasnetrun -spawner=local (baseline: none; reported for reference)
  pmi_openmpi      gasnetrun -spawner=pmi            vs  mpirun -np 16 hello
  pmi_hydra        PMIRUN_CMD=mpiexec.mpich...       vs  mpiexec.mpich -n 16 hello
  mpi_openmpi      gasnetrun -spawner=mpi            vs  mpirun -np 16 mpi_hello (MPI's own)
  pmi_srun_pmix    gasnetrun inside salloc           vs  srun --mpi=pmix -n 16 hello
  pmi_srun_pmi2    PMIRUN_CMD=srun --mpi=pmi2...     vs  srun --mpi=pmi2 -n 16 hello

Repeats are interleaved (every configuration once per round). One record per result like
the C benchmarks, plus <pair>_ratio = gasnetrun median / launcher median (--json: JSON lines).

usage: spawner_bench.py [--json] [--repeats N] [--only NAME[,NAME...]]"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))
from slurmcluster import Slurm, why_not_available as slurm_missing  # noqa: E402

RANKS = 16
OPENMPI = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
           "OMPI_MCA_rmaps_base_oversubscribe": "1"}
PAIRS = ["local", "pmi_openmpi", "pmi_hydra", "mpi_openmpi", "pmi_srun_pmix", "pmi_srun_pmi2"]


def timed(argv: list[str], env: dict[str, str]) -> float:
    start = time.monotonic()
    proc = subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                          stdin=subprocess.DEVNULL, timeout=300)
    seconds = time.monotonic() - start
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed ({proc.returncode}): "
                           f"{proc.stderr.decode(errors='replace')[-800:]}")
    return seconds


def record(name: str, unit: str, samples: list[float], as_json: bool) -> None:
    median = statistics.median(samples)
    if as_json:
        print(json.dumps({"bench": name, "path": "launch", "conduit": "udp", "ranks": RANKS,
                          "hosts": 1, "size": 0, "unit": unit, "better": "lower",
                          "median": median, "min": min(samples), "max": max(samples),
                          "n": len(samples), "iters": 1, "env": {}}))
    else:
        print(f"{name:<24} {median:9.3f} {min(samples):9.3f} {max(samples):9.3f}  {unit}")


def main() -> int:
    parser = argparse.ArgumentParser(description="start-to-exit time per spawner")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--only", default="")
    args = parser.parse_args()
    if args.repeats < 1:
        print("spawner_bench: --repeats must be at least 1", file=sys.stderr)
        return 2
    only = [n for n in args.only.split(",") if n]
    unknown = [n for n in only if n not in PAIRS]
    if unknown:
        print(f"spawner_bench: --only {','.join(unknown)}: not one of {', '.join(PAIRS)}",
              file=sys.stderr)
        return 2
    build = ROOT / "build"
    gasnetrun = str(build / "bin" / "gasnetrun")
    hello = str(build / "udp" / "examples" / "hello_ring-seq")
    if not Path(hello).exists():
        print("spawner_bench: build first (scons)", file=sys.stderr)
        return 2
    wanted = only or PAIRS
    base = {k: v for k, v in os.environ.items() if not k.startswith(("GASNET_", "GASNETRUN_"))}
    base.update(OPENMPI)
    with tempfile.TemporaryDirectory(prefix="spawner-bench-") as tmp:
        configs: dict[str, tuple[list[str], dict[str, str]]] = {}
        slurm = None
        if any(p.startswith("pmi_srun") for p in wanted) and not slurm_missing():
            slurm = Slurm(Path(tmp) / "slurm")
            slurm.up()
        try:
            add_configs(configs, wanted, gasnetrun, hello, base, slurm, Path(tmp))
            samples: dict[str, list[float]] = {name: [] for name in configs}
            for name, (argv, env) in configs.items():  # warm-up: page cache, --version probes
                timed(argv, env)
            for _ in range(args.repeats):
                for name, (argv, env) in configs.items():
                    samples[name].append(timed(argv, env))
        finally:
            if slurm:
                slurm.down()
    for name, values in samples.items():
        record(name, "s", values, args.json)
    for pair in wanted:
        if pair in samples and f"{pair}_launcher" in samples:
            ratio = statistics.median(samples[pair]) / statistics.median(samples[f"{pair}_launcher"])
            record(f"{pair}_ratio", "x", [ratio], args.json)
    return 0


def add_configs(configs: dict[str, tuple[list[str], dict[str, str]]], wanted: list[str],
                gasnetrun: str, hello: str, base: dict[str, str], slurm: Slurm | None,
                tmp: Path) -> None:
    n = str(RANKS)
    if "local" in wanted:
        configs["local"] = ([gasnetrun, "-spawner=local", "-n", n, hello], base)
    if "pmi_openmpi" in wanted and shutil.which("mpirun"):
        configs["pmi_openmpi"] = ([gasnetrun, "-spawner=pmi", "-n", n, hello], base)
        configs["pmi_openmpi_launcher"] = (["mpirun", "-np", n, hello], base)
    if "pmi_hydra" in wanted and shutil.which("mpiexec.mpich"):
        configs["pmi_hydra"] = ([gasnetrun, "-spawner=pmi", "-n", n, hello],
                                {**base, "PMIRUN_CMD": "mpiexec.mpich -n %N %C"})
        configs["pmi_hydra_launcher"] = (["mpiexec.mpich", "-n", n, hello], base)
    if "mpi_openmpi" in wanted and shutil.which("mpirun") and shutil.which("mpicc"):
        mpi_hello = tmp / "mpi_hello"
        subprocess.run(["mpicc", "-O2", "-o", str(mpi_hello),
                        str(ROOT / "tests" / "perf" / "mpi_hello.c")], check=True)
        configs["mpi_openmpi"] = ([gasnetrun, "-spawner=mpi", "-n", n, hello], base)
        configs["mpi_openmpi_launcher"] = (["mpirun", "-np", n, str(mpi_hello)], base)
    if slurm:
        senv = {**base, **slurm.env}
        for pair, mpi in (("pmi_srun_pmix", "pmix"), ("pmi_srun_pmi2", "pmi2")):
            if pair not in wanted:
                continue
            extra = {} if mpi == "pmix" else {"PMIRUN_CMD": "srun --mpi=pmi2 -n %N %C"}
            configs[pair] = (slurm.salloc(RANKS, [gasnetrun, "-n", n, hello]), {**senv, **extra})
            configs[f"{pair}_launcher"] = (slurm.salloc(RANKS, ["srun", f"--mpi={mpi}", "-n", n,
                                                                hello]), senv)


if __name__ == "__main__":
    sys.exit(main())
