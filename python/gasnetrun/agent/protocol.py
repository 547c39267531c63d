"""Wire formats: ranks <-> their agent (a Unix socket, host byte order, see
spawners/local/protocol.md) and agent <-> parent agent (TCP, network byte order)."""
from __future__ import annotations

import struct

# ---- rank <-> agent ------------------------------------------------------------------------
OP_HELLO, OP_EXCHANGE, OP_ABORT, OP_LEAVING = 1, 2, 4, 5
OP_NAMES = {OP_HELLO: "HELLO", OP_EXCHANGE: "EXCHANGE", OP_ABORT: "ABORT",
            OP_LEAVING: "LEAVING"}
HEADER = struct.Struct("=II")
HELLO = struct.Struct("=32sII")
LEAVING = struct.Struct("=II")  # code, ends_job
COOKIE_LEN = 32
# csrc/core/bootstrap.h: GASNETI_BOOTSTRAP_BLOB_MAX
BLOB_MAX = 1024

# ---- agent <-> parent agent ----------------------------------------------------------------
TREE_HEADER = struct.Struct("!II")  # type, length
(T_CHALLENGE, T_AUTH, T_CONTRIB, T_RESULT, T_EVENT, T_OUTPUT, T_SIGNAL, T_ERROR,
 T_READY, T_SHUTDOWN, T_GO, T_PROBLEM, T_STDIN, T_HEARTBEAT, T_NOTE, T_STDIN_ACK) = range(1, 17)
# T_READY: the subtree passed its checks; T_PROBLEM: a check failed (text), the job must not
# start; T_GO: start the ranks; T_STDIN: bytes for rank 0's standard input (empty: its end);
# T_NOTE: what an agent found on its host (the ibv node plan), for the root's -v;
# T_HEARTBEAT: the peer agent is alive, sent both ways every HEARTBEAT seconds (a parent that
# hears nothing from a child for the job's exit timeout gives it up for lost; a child that hears
# nothing from its parent as long ends its ranks and leaves);
# T_READY's payload: the agent's pid ("!I"), so that a parent can have a frozen one killed;
# T_STDIN_ACK: "!I" bytes of T_STDIN that rank 0 took (or that were dropped because its input
# had closed), relayed up to the launcher, which keeps at most STDIN_WINDOW bytes unacknowledged
# on the way (end-to-end backpressure: it stops reading its own stdin meanwhile).
HEARTBEAT = 1.0
STDIN_WINDOW = 1 << 20
TREE_MAX_FRAME = 256 << 20
NONCE_LEN = 16
# T_EVENT kinds
EV_LEAVING, EV_ABORT, EV_ENDED = 1, 2, 3
EVENT = struct.Struct("!BiiiI")  # kind, rank, code, flag (ends_job or signal), pid
OUTPUT_HEAD = struct.Struct("!iB")  # rank, stream (1 stdout, 2 stderr)
