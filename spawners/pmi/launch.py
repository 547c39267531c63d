"""The pmi spawner's launch side: the site's process manager starts the ranks (Slurm's srun
inside an allocation, else Open MPI's mpirun, or any launcher PMIRUN_CMD names, e.g. MPICH's
mpiexec) and the ranks bootstrap over its PMIx, PMI-2 or PMI-1 (bootstrap_pmi.c). gasnetrun
runs that command with the launcher's own options for placement, environment and exit
semantics (gasnetrun/launchers.py), forwards signals to it and returns its exit code. The mark
in the ranks' environment makes a launcher that offers no PMI an error rather than N separate
1-rank jobs."""
from __future__ import annotations

from typing import Mapping

from gasnetrun.sitespawner import SiteLauncherSpawner

name = "pmi"
__all__ = ["create"]


def default_template(env: Mapping[str, str]) -> str:
    if env.get("SLURM_JOB_ID", "").strip():
        return "srun --mpi=pmix -n %N %C"
    return "mpirun -np %N %C"


class PmiSpawner(SiteLauncherSpawner):
    def __init__(self) -> None:
        super().__init__(name, "PMIRUN_CMD", default_template)

    def applies(self, env: Mapping[str, str], hosts: list[str]) -> str | None:
        job = env.get("SLURM_JOB_ID", "").strip()
        if job:
            return f"inside Slurm allocation {job} (SLURM_JOB_ID)"
        return None


def create() -> PmiSpawner:
    return PmiSpawner()
