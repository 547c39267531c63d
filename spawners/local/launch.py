"""The local spawner's launch side: every rank is a child of gasnetrun on this host, served by
one agent inside gasnetrun (the root of a one-agent tree)."""
from __future__ import annotations

import socket
import sys
from typing import Callable, Mapping

from gasnetrun.agent.agent import Agent, AgentSpec
from gasnetrun.job import Job, RunningJob
from gasnetrun.plan import Plan

name = "local"


class LocalSpawner:
    name = name

    def applies(self, env: Mapping[str, str], hosts: list[str]) -> str | None:
        from gasnetrun.thishost import is_this_host
        if all(is_this_host(h) for h in hosts):
            return "the job runs on this host only"
        return None

    def plan_notes(self, plan: Plan) -> list[str]:
        return []

    def start(self, plan: Plan, job: Job) -> RunningJob:
        # Rank 0 may read piped input; a terminal stays with gasnetrun (a background process
        # group reading it would be stopped).
        stdin_ok = sys.stdin is not None and not sys.stdin.isatty()
        spec = AgentSpec(jobid=plan.jobid, cookie=job.cookie, index=0,
                         host=socket.gethostname(), ranks=list(range(plan.nranks)),
                         subtree=list(range(plan.nranks)), nranks=plan.nranks, argv=plan.argv,
                         env={**plan.env, **plan.host_env.get(socket.gethostname(), {})},
                         stdin_rank=0 if stdin_ok else None,
                         pipe_output=plan.tag_output)
        agent = Agent(job.loop, spec, job, sink=job.sink,
                      log=job_log(plan))
        job.deliver = agent.deliver
        agent.start()
        job.started = True
        return agent


def job_log(plan: Plan) -> Callable[[str], None] | None:
    if not plan.verbose:
        return None
    return lambda message: print(f"gasnetrun: {message}", file=sys.stderr, flush=True)


def create() -> LocalSpawner:
    return LocalSpawner()
