"""Whether a host name means the host this process runs on (by name, or by an address one of
its interfaces has). Its own module: the launcher needs it without the agent machinery."""
from __future__ import annotations

import os


def is_this_host(name: str) -> bool:
    if name in ("localhost", "127.0.0.1", "::1"):
        return True
    me = os.uname().nodename  # what gethostname() returns, without importing socket
    if name in (me, me.split(".")[0]):
        return True
    import socket  # only for other names (every job asks about its own host)
    try:
        theirs = {str(a[4][0]) for a in socket.getaddrinfo(name, None, socket.AF_INET)}
    except OSError:
        return False
    return any(_is_local_address(address) for address in theirs)


def _is_local_address(address: str) -> bool:
    """Whether an interface of this host has `address`: only then can a socket bind to it
    (a host name need not resolve to itself, e.g. hosts known only by address)."""
    import socket
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        probe.bind((address, 0))
        return True
    except OSError:
        return False
    finally:
        probe.close()
