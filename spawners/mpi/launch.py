"""The mpi spawner's launch side: an MPI launcher (MPIRUN_CMD, default Open MPI's mpirun)
starts the ranks, which bootstrap over MPI (bootstrap_mpi.c and its per-MPI plugin). Which
launcher it is (Open MPI, MPICH's Hydra, Slurm's srun) is asked of the launcher itself, and
its own options give our placement, environment and exit semantics (gasnetrun/launchers.py).
Never chosen without being asked for: -spawner=mpi or GASNET_SPAWNER=mpi."""
from __future__ import annotations

from typing import Mapping

from gasnetrun.sitespawner import SiteLauncherSpawner

name = "mpi"


class MpiSpawner(SiteLauncherSpawner):
    def __init__(self) -> None:
        super().__init__(name, "MPIRUN_CMD", lambda env: "mpirun -np %N %C")

    def applies(self, env: Mapping[str, str], hosts: list[str]) -> str | None:
        return None


def create() -> MpiSpawner:
    return MpiSpawner()
