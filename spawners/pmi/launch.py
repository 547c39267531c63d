"""The pmi spawner's launch side: the site's process manager starts the ranks (Slurm's srun
inside an allocation, else Open MPI's mpirun, or any launcher PMIRUN_CMD names, e.g. MPICH's
mpiexec) and the ranks bootstrap over its PMIx, PMI-2 or PMI-1 (bootstrap_pmi.c). gasnetrun
runs that command with the launcher's own options for placement, environment and exit
semantics (gasnetrun/launchers.py), forwards signals to it and returns its exit code."""
from __future__ import annotations

from typing import TYPE_CHECKING, Mapping

if TYPE_CHECKING:  # gasnetrun.launchers loads when a job uses this spawner
    from gasnetrun.job import Job, RunningJob
    from gasnetrun.launchers import LaunchCommand
    from gasnetrun.plan import Plan

name = "pmi"
# Tells the ranks that gasnetrun's pmi spawner started them, so that a launcher offering no
# PMI is an error rather than N separate 1-rank jobs.
MARK = {"GASNETRUN_SPAWNER": "pmi"}
__all__ = ["create"]


def default_template(env: Mapping[str, str]) -> str:
    if env.get("SLURM_JOB_ID", "").strip():
        return "srun --mpi=pmix -n %N %C"
    return "mpirun -np %N %C"


class PmiSpawner:
    name = name

    def applies(self, env: Mapping[str, str], hosts: list[str]) -> str | None:
        job = env.get("SLURM_JOB_ID", "").strip()
        if job:
            return f"inside Slurm allocation {job} (SLURM_JOB_ID)"
        return None

    def command(self, plan: Plan) -> LaunchCommand:
        template = plan.env.get("PMIRUN_CMD", "").strip() or default_template(plan.env)
        from gasnetrun.launchers import launch_command
        return launch_command(plan, template, "PMIRUN_CMD", plan.placed, plan.cyclic,
                              extra_names=list(MARK))

    def plan_notes(self, plan: Plan) -> list[str]:
        command = self.command(plan)
        kind = command.flavour.description if command.flavour else "not recognised (no options added)"
        return [f"launcher: {kind}", f"launch command: {command.shown()}"]

    def start(self, plan: Plan, job: Job) -> RunningJob:
        from gasnetrun.launchers import started
        return started(job, self.command(plan), plan, drop=("PMIRUN_CMD",), add=MARK)


def create() -> PmiSpawner:
    return PmiSpawner()
