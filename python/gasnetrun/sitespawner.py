"""What the spawners whose ranks a site launcher starts (pmi, mpi) have in common: a launch
command from a template variable (PMIRUN_CMD, MPIRUN_CMD), the launcher's own options for
placement, environment and exit semantics (gasnetrun/launchers.py, loaded only when such a job
runs), and a mark in the ranks' environment saying which spawner started them."""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Mapping

if TYPE_CHECKING:  # gasnetrun.launchers loads when a job uses one of these spawners
    from .job import Job, RunningJob
    from .launchers import LaunchCommand
    from .plan import Plan


class SiteLauncherSpawner:
    def __init__(self, name: str, variable: str,
                 default_template: Callable[[Mapping[str, str]], str]) -> None:
        self.name = name
        self.variable = variable  # the launch-command template, e.g. "mpirun -np %N %C"
        self.default_template = default_template
        # Tells the ranks which spawner started them (their launcher may offer PMI either way).
        self.mark = {"GASNETRUN_SPAWNER": name}

    def command(self, plan: Plan) -> LaunchCommand:
        template = plan.env.get(self.variable, "").strip() or self.default_template(plan.env)
        from .launchers import launch_command
        return launch_command(plan, template, self.variable, plan.placed, plan.cyclic,
                              extra_names=list(self.mark))

    def plan_notes(self, plan: Plan) -> list[str]:
        command = self.command(plan)
        kind = (command.flavour.description if command.flavour
                else "not recognised (no options added)")
        return [f"launcher: {kind}", f"launch command: {command.shown()}"]

    def start(self, plan: Plan, job: Job) -> RunningJob:
        from .job import say
        from .launchers import oversubscribe_hint, started
        command = self.command(plan)
        if (hint := oversubscribe_hint(plan, command)):
            say(f"warning: {hint}")
        return started(job, command, plan, drop=(self.variable,), add=self.mark)
