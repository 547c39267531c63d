"""The local spawner's launch side: every rank is a child process of gasnetrun on this host.

Ranks inherit gasnetrun's environment, standard output and standard error; each leads its own
process group, so a terminal's Ctrl-C reaches gasnetrun alone and gasnetrun decides.
"""
from __future__ import annotations

import os
import signal
import sys

from ..job import Channel, JobSpec, RankLaunch

name = "local"


class LocalSpawner:
    name = name

    def plan(self, spec: JobSpec, channel: Channel) -> list[RankLaunch]:
        return [RankLaunch(rank, [spec.program, *spec.args], channel.rank_env(rank, spec.nranks))
                for rank in range(spec.nranks)]

    def start(self, spec: JobSpec, launches: list[RankLaunch]) -> dict[int, int]:
        pids: dict[int, int] = {}
        # Rank 0 may read piped input; a terminal stays with gasnetrun (a background process
        # group reading it would be stopped).
        stdin_ok = sys.stdin is not None and not sys.stdin.isatty()
        try:
            for launch in launches:
                env = {**spec.env, **launch.env_additions}
                actions = []
                if not (launch.rank == 0 and stdin_ok):
                    actions.append((os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0))
                pids[launch.rank] = os.posix_spawn(launch.argv[0], launch.argv, env,
                                                   file_actions=actions, setpgroup=0,
                                                   setsigdef=(signal.SIGINT, signal.SIGQUIT,
                                                              signal.SIGTERM, signal.SIGHUP))
        except OSError:
            for pid in pids.values():  # never leave a partial job behind
                os.killpg(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
            raise
        return pids


def create() -> LocalSpawner:
    return LocalSpawner()
