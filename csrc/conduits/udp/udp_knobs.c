/* udp_knobs.c: the udp conduit's rows of the knob table (the build collects them with the
 * core's and every other conduit's into the one table). */
#include "knob_api.h"

#define BIG 9.0e18
#define J GASNETI_SCOPE_JOB
#define R GASNETI_SCOPE_RANK

static const gasneti_knob_t rows[] = {
    {"GASNET_RCV_THREAD", GASNETI_KNOB_BOOL, "0", 0, 1, NULL, "", R, "udp",
     "udp: run a thread that serves incoming AMs while the application computes (PAR "
     "builds).", GASNETI_NOT_TUNED},
    {"GASNET_REQUESTTIMEOUT_INITIAL", GASNETI_KNOB_DOUBLE, "0.02", 0.00001, 60, NULL, "seconds",
     J, "udp",
     "udp: first retransmission timeout, before any round trip was measured (it then adapts "
     "to the measured round trips).", GASNETI_NOT_TUNED},
    {"GASNET_REQUESTTIMEOUT_BACKOFF", GASNETI_KNOB_DOUBLE, "2", 1, 16, NULL, "", J, "udp",
     "udp: each retransmission of a datagram multiplies its timeout by this.", GASNETI_NOT_TUNED},
    {"GASNET_REQUESTTIMEOUT_MAX", GASNETI_KNOB_DOUBLE, "30", 0.01, 86400, NULL, "seconds", J,
     "udp",
     "udp: a peer that acknowledges nothing for this long, and whose process answers no "
     "liveness probe meanwhile (or answers but never receives), is unreachable: the job ends "
     "naming it and its host. A peer that answers while it computes is waited for.",
     GASNETI_NOT_TUNED},
    {"GASNET_UDP_DATAGRAM", GASNETI_KNOB_SIZE, "", 512, 65507, NULL, "bytes", J, "udp",
     "udp: largest datagram (default: 65507 between ranks of one host, the interface MTU "
     "minus headers between hosts); IP fragmentation is never used. The default stays: "
     "gasnet-tune's smaller picks were measured on loopback only, and between hosts the "
     "default is the largest datagram that needs no fragments (docs/knob-defaults.md).",
     GASNETI_TUNED("1472,4096,8192,16384,32768,65507", NULL)},
    {"GASNET_UDP_COALESCE", GASNETI_KNOB_BOOL, "1", 0, 1, NULL, "", J, "udp",
     "udp: small AMs to one peer produced within one poll travel in one datagram (gasnet-tune "
     "keeps it on).",
     GASNETI_TUNED("0,1", NULL)},
    {"GASNET_UDP_GSO", GASNETI_KNOB_BOOL, "1", 0, 1, NULL, "", J, "udp",
     "udp: send runs of full datagrams with UDP segmentation offload (and receive with GRO) "
     "where the kernel has them (gasnet-tune keeps it on).", GASNETI_TUNED("0,1", NULL)},
    {"GASNET_SPAWNFN", GASNETI_KNOB_ENUM, "", 0, 0, "L|S|C", "", J, "udp",
     "udp: GASNet's own start-up convention 'prog N args': L hands the job to gasnetrun with the "
     "local spawner, S with the ssh spawner (hosts from GASNET_SSH_SERVERS); C (a custom spawn "
     "command) is refused. Unset: a program no launcher started is a 1-rank job.",
     GASNETI_NOT_TUNED},
    {"GASNET_UDP_ADDRESS", GASNETI_KNOB_STRING, "", 0, 0, NULL, "", R, "udp",
     "udp: the IPv4 address or interface name to bind, the one other ranks reach this rank at "
     "(default: the first non-loopback interface that is up, else 127.0.0.1, with the socket "
     "bound to every address so that ranks of one host talk over 127.0.0.1).", GASNETI_NOT_TUNED},
};

const gasneti_knob_group_t gasnetc_udp_knobs = {"udp", rows, sizeof rows / sizeof rows[0]};
