"""Starting an agent's rank processes and watching them end.

Each rank leads its own process group (the launcher decides what a terminal's Ctrl-C does),
dies with its agent (the runtime sets PR_SET_PDEATHSIG), and is watched through a pidfd. Its
output either goes straight to the agent's own stdout/stderr or through pipes that the agent
forwards line by line (remote hosts, --tag-output)."""
from __future__ import annotations

import errno
import os
import resource
import signal
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field

DEFAULT_SIGNALS = (signal.SIGINT, signal.SIGQUIT, signal.SIGTERM, signal.SIGHUP,
                   signal.SIGUSR1, signal.SIGUSR2, signal.SIGPIPE)


class SpawnError(Exception):
    """A rank could not be started; the message names the rank, the cause and the remedy."""


@dataclass
class RankProcess:
    rank: int
    pid: int
    pidfd: int
    pipes: dict[int, int] = field(default_factory=dict)  # stream (1, 2) -> read end
    stdin: int | None = None  # write end of its input, when the launcher feeds it
    ended: bool = False


def spawn_error(rank: int, argv0: str, err: OSError) -> SpawnError:
    if err.errno == errno.EAGAIN:
        soft, hard = resource.getrlimit(resource.RLIMIT_NPROC)
        return SpawnError(f"cannot start rank {rank}: the process limit is reached (EAGAIN; "
                          f"RLIMIT_NPROC soft {soft}, hard {hard}); raise it (ulimit -u) or run "
                          "fewer ranks")
    if err.errno == errno.E2BIG:
        return SpawnError(f"cannot start rank {rank}: its arguments and environment are too "
                          f"large for the kernel (E2BIG; ARG_MAX {os.sysconf('SC_ARG_MAX')})")
    if err.errno in (errno.EMFILE, errno.ENFILE):
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        return SpawnError(f"cannot start rank {rank}: out of file descriptors "
                          f"(RLIMIT_NOFILE soft {soft}, hard {hard})")
    return SpawnError(f"cannot start rank {rank} ({argv0}): {err.strerror}")


ADDR_NO_RANDOMIZE = 0x0040000  # <linux/personality.h>
PERSONALITY_QUERY = 0xffffffff


def wants_same_addresses(env: Mapping[str, str]) -> bool:
    """GASNET_SAME_ADDRESSES as the ranks see it (gasnetrun validated it before launch)."""
    value = env.get("GASNET_SAME_ADDRESSES")
    if value is None or not value.strip():
        return False
    from .. import _native
    return _native.check("GASNET_SAME_ADDRESSES", value).endswith(":1")


@contextmanager
def same_addresses(enabled: bool) -> Iterator[None]:
    """Processes started inside run without address-space randomisation (GASNET_SAME_ADDRESSES):
    the persona is inherited through fork and exec, so the ranks' images and libraries lie at
    the same addresses on this host; the agent's own persona is restored afterwards, so nothing
    else it starts (ssh to other hosts) goes without."""
    if not enabled:
        yield
        return
    import ctypes  # only for such jobs: it costs every other job's start-up
    libc = ctypes.CDLL(None, use_errno=True)
    libc.personality.argtypes = [ctypes.c_ulong]
    old = libc.personality(PERSONALITY_QUERY)
    if old == -1 or libc.personality(old | ADDR_NO_RANDOMIZE) == -1:
        err = ctypes.get_errno()
        raise SpawnError(f"GASNET_SAME_ADDRESSES=1: cannot turn address-space randomisation off "
                         f"for the ranks (personality: {os.strerror(err)}; a container's seccomp "
                         "profile may forbid it)")
    try:
        yield
    finally:
        libc.personality(old)


def spawn_rank(rank: int, argv: list[str], env: dict[str, str], stdin_from: str | None,
               pipe_output: bool) -> RankProcess:
    """Starts one rank. stdin_from None: /dev/null; '': the agent's own stdin; 'pipe': a pipe
    the agent writes (RankProcess.stdin)."""
    actions: list[tuple] = []
    if stdin_from is None:
        actions.append((os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0))
    reads: dict[int, int] = {}
    writes: list[int] = []
    feed: int | None = None
    try:
        if stdin_from == "pipe":
            r, feed = os.pipe2(os.O_CLOEXEC)
            writes.append(r)  # the child's end: closed here once it started
            actions.append((os.POSIX_SPAWN_DUP2, r, 0))
        if pipe_output:
            for stream in (1, 2):
                r, w = os.pipe2(os.O_CLOEXEC)
                reads[stream] = r
                writes.append(w)
                actions.append((os.POSIX_SPAWN_DUP2, w, stream))
        pid = os.posix_spawn(argv[0], argv, env, file_actions=actions, setpgroup=0,
                             setsigdef=DEFAULT_SIGNALS)
    except (OSError, ValueError) as err:
        for fd in list(reads.values()) + writes + ([feed] if feed is not None else []):
            os.close(fd)
        if isinstance(err, OSError):
            raise spawn_error(rank, argv[0], err) from err
        raise SpawnError(f"cannot start rank {rank}: {err}") from err  # e.g. a NUL byte
    for w in writes:
        os.close(w)
    for r in reads.values():
        os.set_blocking(r, False)
    if feed is not None:
        os.set_blocking(feed, False)
    return RankProcess(rank, pid, os.pidfd_open(pid), reads, feed)


def status_of(pid: int) -> tuple[int, int]:
    """(exit code, signal) of an ended child."""
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        return 0, os.WTERMSIG(status)
    return os.WEXITSTATUS(status), 0


def signal_group(proc: RankProcess, signum: int) -> None:
    """The rank and whatever it started (it leads its own process group)."""
    if proc.ended:
        return
    try:
        os.killpg(proc.pid, signum)
    except ProcessLookupError:
        pass
    except PermissionError:
        try:
            os.kill(proc.pid, signum)
        except ProcessLookupError:
            pass
