/* ibv_knobs.c: the ibv conduit's rows of the knob table (the build collects them with the
 * core's and every other conduit's into the one table). */
#include "ibv_plan.h"

#define BIG 9.0e18
#define J GASNETI_SCOPE_JOB
#define R GASNETI_SCOPE_RANK
/* GASNET_IBV_PORTS values parse with the ports syntax (ibv_ports.c). */
#define PORTS 0, NULL, NULL, &gasnetc_ibv_ports_syntax

static const gasneti_knob_t rows[] = {
    {"GASNET_PHYSMEM_PROBE", GASNETI_KNOB_BOOL, "0", 0, 1, NULL, "", J, "ibv",
     "Probe how much memory the HCA can really pin instead of trusting GASNET_PHYSMEM_MAX.", GASNETI_NOT_TUNED},
    {"GASNET_PACKEDLONG_LIMIT", GASNETI_KNOB_SIZE, "4012", 0, 65536, NULL, "bytes", J, "ibv",
     "Long payloads up to this size travel packed with the header, copied in place on arrival "
     "(at most gasnet_AMMaxMedium(), 4096: a larger value means 4096). 4012 stays the "
     "default: gasnet-tune found no significant gain on fakeverbs, a simulator whose timings "
     "say nothing about an HCA (docs/knob-defaults.md).",
     GASNETI_TUNED("0,512,1024,2048,4012,4096", NULL)},
    /* ---- connections (ibv) ---- */
    {"GASNET_CONNECT_STATIC", GASNETI_KNOB_BOOL, "1", 0, 1, NULL, "", J, "ibv",
     "Connect at start-up to the peers of GASNET_CONNECTFILE_IN, or to all peers.", GASNETI_NOT_TUNED},
    {"GASNET_CONNECT_DYNAMIC", GASNETI_KNOB_BOOL, "1", 0, 1, NULL, "", J, "ibv",
     "Connect on demand to peers not connected at start-up.", GASNETI_NOT_TUNED},
    {"GASNET_CONNECTFILE_IN", GASNETI_KNOB_FILENAME, "", 0, 0, NULL, "", R, "ibv",
     "Connect file limiting start-up connections ('%' becomes the rank).", GASNETI_NOT_TUNED},
    {"GASNET_CONNECTFILE_OUT", GASNETI_KNOB_FILENAME, "", 0, 0, NULL, "", R, "ibv",
     "Write the connections this run used, in connect-file form ('%' becomes the rank).", GASNETI_NOT_TUNED},
    {"GASNET_CONNECTFILE_BASE", GASNETI_KNOB_INT, "36", 2, 36, NULL, "", R, "ibv",
     "Numeric base of node numbers in GASNET_CONNECTFILE_OUT files.", GASNETI_NOT_TUNED},
    {"GASNET_CONNECT_RETRANS_MIN", GASNETI_KNOB_DOUBLE, "1000", 1, 60e6, NULL, "microseconds",
     J, "ibv", "First wait before a connection request (UD) is sent again; it doubles up to "
     "GASNET_CONNECT_RETRANS_MAX.", GASNETI_NOT_TUNED},
    {"GASNET_CONNECT_RETRANS_MAX", GASNETI_KNOB_DOUBLE, "1000000", 1, 600e6, NULL,
     "microseconds", J, "ibv",
     "Longest wait between repeats of an unanswered connection request (a peer computing "
     "without polling answers when it next enters GASNet).", GASNETI_NOT_TUNED},
    /* ---- ibv resources ---- */
    {"GASNET_RBUF_COUNT", GASNETI_KNOB_INT, "1024", 16, 1048576, NULL, "buffers", J, "ibv",
     "AM receive buffers per rank when they are shared by all peers (GASNET_USE_SRQ); also "
     "the threshold above which per-peer receive queues give way to a shared one.", GASNETI_NOT_TUNED},
    {"GASNET_BBUF_COUNT", GASNETI_KNOB_INT, "1024", 0, 1048576, NULL, "buffers", J, "ibv",
     "Registered send and bounce buffers per rank (at most GASNET_NETWORKDEPTH_TOTAL; 0: that "
     "many).", GASNETI_NOT_TUNED},
    {"GASNET_USE_SRQ", GASNETI_KNOB_INT, "-1", -1, 65535, NULL, "", J, "ibv",
     "Shared receive queues: -1 when per-peer queues would need more than GASNET_RBUF_COUNT "
     "buffers, 0 never, n in jobs of n ranks or more.", GASNETI_NOT_TUNED},
    {"GASNET_INLINESEND_LIMIT", GASNETI_KNOB_SIZE, "72", 0, 256, NULL, "bytes", J, "ibv",
     "Messages and puts up to this size are posted inline (copied into the work request). 72 "
     "stays the default: gasnet-tune found no significant gain on fakeverbs, a simulator "
     "whose timings say nothing about an HCA's inline limits (docs/knob-defaults.md).",
     GASNETI_TUNED("0,32,72,128,256", NULL)},
    {"GASNET_NONBULKPUT_BOUNCE_LIMIT", GASNETI_KNOB_SIZE, "64K", 0, 1073741824, NULL, "bytes", J,
     "ibv", "Non-bulk puts (and Long payloads) from registered memory up to this size are "
     "copied to bounce buffers and return at once; larger ones wait for the HCA to have read "
     "their source. 64K stays the default: on fakeverbs, where the simulated HCA reads a "
     "source at once, gasnet-tune found no difference (docs/knob-defaults.md).",
     GASNETI_TUNED("0,4K,16K,64K,256K", NULL)},
    {"GASNET_QP_TIMEOUT", GASNETI_KNOB_INT, "18", 0, 31, NULL, "", J, "ibv",
     "Acknowledgement timeout of RC queue pairs: 4.096 us x 2^value (18: about 1 s; 0: "
     "infinite).", GASNETI_NOT_TUNED},
    {"GASNET_QP_RETRY_COUNT", GASNETI_KNOB_INT, "7", 0, 7, NULL, "retries", J, "ibv",
     "Retransmissions after a timeout before a peer counts as unreachable (the job then ends "
     "naming it).", GASNETI_NOT_TUNED},
    {"GASNET_MAX_MTU", GASNETI_KNOB_ENUM, "0", 0, 0, "0|-1|256|512|1024|2048|4096", "bytes", J,
     "ibv", "Largest path MTU of RC queue pairs: 0 or -1 the port's active MTU, else the smaller "
     "of this and it.", GASNETI_NOT_TUNED},
    {"GASNET_IBV_VERBOSE", GASNETI_KNOB_BOOL, "0", 0, 1, NULL, "", R, "ibv",
     "Each rank says which HCA ports it uses, the connections it made and the memory it "
     "registered (stderr).", GASNETI_NOT_TUNED},
    /* ---- HCA ports (ibv) ---- */
    {"GASNET_IBV_PORTS", GASNETI_KNOB_CUSTOM, "", 0, 0, NULL, "", R, "ibv",
     "Which HCAs and ports to use: HCA[:port,port][+HCA...], e.g. mlx5_0+mlx5_1:1,2.", PORTS},
    {"GASNET_IBV_PORTS_<n>", GASNETI_KNOB_CUSTOM, "", 0, 0, NULL, "", R, "ibv",
     "GASNET_IBV_PORTS for ranks bound to socket (or NUMA node) n, see GASNET_IBV_PORTS_TYPE.", PORTS},
    {"GASNET_IBV_PORTS_TYPE", GASNETI_KNOB_ENUM, "socket", 0, 0, "socket|numa", "", R, "ibv",
     "What n in GASNET_IBV_PORTS_<n> numbers: sockets or NUMA nodes.", GASNETI_NOT_TUNED},
};

const gasneti_knob_group_t gasnetc_ibv_knobs = {"ibv", rows, sizeof rows / sizeof rows[0]};
