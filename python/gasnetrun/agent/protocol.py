"""Wire formats: ranks <-> their agent (a Unix socket, host byte order, see
spawners/local/protocol.md) and agent <-> parent agent (TCP, network byte order)."""
from __future__ import annotations

import struct

# ---- rank <-> agent ------------------------------------------------------------------------
OP_HELLO, OP_EXCHANGE, OP_ABORT, OP_LEAVING, OP_PUT, OP_GET = 1, 2, 4, 5, 6, 7
OP_NAMES = {OP_HELLO: "HELLO", OP_EXCHANGE: "EXCHANGE", OP_ABORT: "ABORT",
            OP_LEAVING: "LEAVING", OP_PUT: "PUT", OP_GET: "GET"}
HEADER = struct.Struct("=II")
HELLO = struct.Struct("=32sII")
LEAVING = struct.Struct("=II")  # code, ends_job
GET = struct.Struct("=I")          # the rank whose card is wanted
CARD_HEAD = struct.Struct("=II")   # the answer to a GET: rank, flags (CARD_ENDED), then the card
CARD_ENDED = 1                     # that rank has ended (its card, if any, still follows)
COOKIE_LEN = 32
# csrc/core/bootstrap.h: GASNETI_BOOTSTRAP_BLOB_MAX
BLOB_MAX = 1024

# ---- agent <-> parent agent ----------------------------------------------------------------
TREE_HEADER = struct.Struct("!II")  # type, length
(T_CHALLENGE, T_AUTH, T_CONTRIB, T_RESULT, T_EVENT, T_OUTPUT, T_SIGNAL, T_ERROR,
 T_READY, T_SHUTDOWN, T_GO, T_PROBLEM, T_STDIN, T_HEARTBEAT, T_NOTE, T_STDIN_ACK, T_GET,
 T_CARD) = range(1, 19)
# T_READY: the subtree passed its checks; T_PROBLEM: a check failed (text), the job must not
# start; T_GO: start the ranks; T_STDIN: bytes for rank 0's standard input (empty: its end);
# T_NOTE: what an agent found on its host (the ibv node plan), for the root's -v;
# T_HEARTBEAT: the peer agent is alive, sent both ways every HEARTBEAT seconds (a parent that
# hears nothing from a child for the job's exit timeout gives it up for lost; a child that hears
# nothing from its parent as long ends its ranks and leaves);
# T_READY's payload: the agent's pid ("!I"), so that a parent can have a frozen one killed;
# T_STDIN_ACK: "!I" bytes of T_STDIN that rank 0 took (or that were dropped because its input
# had closed), relayed up to the launcher, which keeps at most STDIN_WINDOW bytes unacknowledged
# on the way (end-to-end backpressure: it stops reading its own stdin meanwhile);
# T_GET: "!I" a rank whose address card a rank below (or above) wants: sent towards the agent
# of that rank (down to the child whose subtree holds it, else up); T_CARD: the answer, sent
# back the way the T_GET came: CARD_WIRE, then the card (empty: that rank published none).
CARD_WANT = struct.Struct("!I")
CARD_WIRE = struct.Struct("!II")  # rank, flags
HEARTBEAT = 1.0
STDIN_WINDOW = 1 << 20
TREE_MAX_FRAME = 256 << 20
NONCE_LEN = 16
# T_EVENT kinds
EV_LEAVING, EV_ABORT, EV_ENDED = 1, 2, 3
EVENT = struct.Struct("!BiiiI")  # kind, rank, code, flag (ends_job or signal), pid
OUTPUT_HEAD = struct.Struct("!iB")  # rank, stream (1 stdout, 2 stderr)
