"""The mpi spawner's launch side: an MPI launcher (MPIRUN_CMD, default Open MPI's mpirun)
starts the ranks, which bootstrap over MPI (bootstrap_mpi.c and its per-MPI plugin). Which
launcher it is (Open MPI, MPICH's Hydra, Slurm's srun) is asked of the launcher itself, and
its own options give our placement, environment and exit semantics (gasnetrun/launchers.py).
Never chosen without being asked for: -spawner=mpi or GASNET_SPAWNER=mpi."""
from __future__ import annotations

from typing import TYPE_CHECKING, Mapping

if TYPE_CHECKING:  # gasnetrun.launchers loads when a job uses this spawner
    from gasnetrun.job import Job, RunningJob
    from gasnetrun.launchers import LaunchCommand
    from gasnetrun.plan import Plan

name = "mpi"
# Tells the ranks that gasnetrun's mpi spawner started them (their launcher also offers PMI).
MARK = {"GASNETRUN_SPAWNER": "mpi"}


class MpiSpawner:
    name = name

    def applies(self, env: Mapping[str, str], hosts: list[str]) -> str | None:
        return None

    def command(self, plan: Plan) -> LaunchCommand:
        template = plan.env.get("MPIRUN_CMD", "").strip() or "mpirun -np %N %C"
        from gasnetrun.launchers import launch_command
        return launch_command(plan, template, "MPIRUN_CMD", plan.placed, plan.cyclic,
                              extra_names=list(MARK))

    def plan_notes(self, plan: Plan) -> list[str]:
        command = self.command(plan)
        kind = command.flavour.description if command.flavour else "not recognised (no options added)"
        return [f"launcher: {kind}", f"launch command: {command.shown()}"]

    def start(self, plan: Plan, job: Job) -> RunningJob:
        from gasnetrun.launchers import started
        return started(job, self.command(plan), plan, drop=("MPIRUN_CMD",), add=MARK)


def create() -> MpiSpawner:
    return MpiSpawner()
