/* knob_table.c: every GASNET_* environment variable, declared once. The runtime reads only
 * these; gasnetrun validates and documents them through the CFFI binding; nothing else exists. */
#include <string.h>

#include "knob_api.h"

#define BIG 9.0e18
#define J GASNETI_SCOPE_JOB
#define R GASNETI_SCOPE_RANK
#define NOT_TUNED 0, NULL, NULL

static const gasneti_knob_t table[] = {
    /* ---- job layout and memory ---- */
    {"GASNET_SUPERNODE_MAXSIZE", GASNETI_KNOB_INT, "0", 0, 65535, NULL, "ranks", J, "all",
     "Most ranks per shared-memory supernode (0: all ranks of a host; 1: no PSHM peers).", NOT_TUNED},
    {"GASNET_PSHM_NODES", GASNETI_KNOB_INT, "0", 0, 256, NULL, "ranks", J, "smp",
     "Without a launcher, fork into this many ranks on this host (0 or 1: a 1-rank job).", NOT_TUNED},
    {"GASNET_MAX_SEGSIZE", GASNETI_KNOB_SEGSIZE, "0.85/H", 4096, BIG, NULL, "bytes", R, "all",
     "Largest segment per rank: a size or a fraction of physical memory, per host (/H, shared "
     "by its ranks) or per process (/P, the default).", NOT_TUNED},
    {"GASNET_PHYSMEM_MAX", GASNETI_KNOB_FRACTION_SIZE, "2/3", 4096, BIG, NULL, "bytes", R, "all",
     "Memory per host that segments (and, on ibv, pinned memory) may use, divided among the "
     "host's ranks: a size or a fraction of physical memory.", NOT_TUNED},
    {"GASNET_PHYSMEM_PROBE", GASNETI_KNOB_BOOL, "0", 0, 1, NULL, "", J, "ibv",
     "Probe how much memory the HCA can really pin instead of trusting GASNET_PHYSMEM_MAX.", NOT_TUNED},
    /* ---- collectives and exit ---- */
    {"GASNET_BARRIER", GASNETI_KNOB_ENUM, "PSHM", 0, 0, "PSHM|AMDISSEM", "", J, "all",
     "Barrier algorithm: PSHM (shared memory inside a supernode, AM dissemination between "
     "supernodes) or AMDISSEM (AM dissemination among all ranks).",
     1, "PSHM,AMDISSEM", NULL},
    {"GASNET_EXITTIMEOUT", GASNETI_KNOB_DOUBLE, "", 0.001, 86400, NULL, "seconds", J, "all",
     "Time for all ranks to leave once one has (default: min(_MAX, _MIN + _FACTOR * ranks)).", NOT_TUNED},
    {"GASNET_EXITTIMEOUT_MAX", GASNETI_KNOB_DOUBLE, "360", 0.001, 86400, NULL, "seconds", J,
     "all", "Upper bound of the computed GASNET_EXITTIMEOUT.", NOT_TUNED},
    {"GASNET_EXITTIMEOUT_MIN", GASNETI_KNOB_DOUBLE, "2", 0.001, 86400, NULL, "seconds", J, "all",
     "Constant part of the computed GASNET_EXITTIMEOUT.", NOT_TUNED},
    {"GASNET_EXITTIMEOUT_FACTOR", GASNETI_KNOB_DOUBLE, "0.25", 0, 3600, NULL, "seconds/rank", J,
     "all", "Per-rank part of the computed GASNET_EXITTIMEOUT.", NOT_TUNED},
    {"GASNET_WAIT_MODE", GASNETI_KNOB_ENUM, "auto", 0, 0, "auto|spin|block|spinblock", "", R,
     "all", "How a rank waits for communication: spin (poll), block (poll, then give the core "
     "away), spinblock (poll a while first); auto spins unless the host's ranks outnumber its "
     "cores. Use block when hosts share cores (virtual machines, containers on one machine).",
     1, "spin,block,spinblock", NULL},
    /* ---- signals and debugging (GASNet-1's names) ---- */
    {"GASNET_BACKTRACE", GASNETI_KNOB_BOOL, "0", 0, 1, NULL, "", R, "all",
     "A rank that hits a fatal signal (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT) or a fatal "
     "GASNet error prints its backtrace to stderr (functions, and files and lines where "
     "addr2line finds debug information) before it ends.", NOT_TUNED},
    {"GASNET_BACKTRACE_SIGNAL", GASNETI_KNOB_ENUM, "", 0, 0, "SIGUSR1|SIGUSR2", "", R, "all",
     "A rank that receives this signal prints its backtrace and goes on: send it to gasnetrun "
     "to see where every rank of a job that hangs is.", NOT_TUNED},
    {"GASNET_FREEZE", GASNETI_KNOB_BOOL, "0", 0, 1, NULL, "", R, "all",
     "Every rank stops in gasnet_init until a debugger sets gasnet_frozen to 0.", NOT_TUNED},
    {"GASNET_FREEZE_ON_ERROR", GASNETI_KNOB_BOOL, "0", 0, 1, NULL, "", R, "all",
     "A rank that hits a fatal signal or fatal GASNet error stops (printing its pid and host) "
     "until a debugger sets gasnet_frozen to 0 or the job is interrupted.", NOT_TUNED},
    {"GASNET_FREEZE_SIGNAL", GASNETI_KNOB_ENUM, "", 0, 0, "SIGUSR1|SIGUSR2", "", R, "all",
     "A rank that receives this signal stops until a debugger sets gasnet_frozen to 0.",
     NOT_TUNED},
    {"GASNET_NO_CATCH_SIGNAL", GASNETI_KNOB_LIST, "", 0, 0,
     "*|SIGINT|SIGTERM|SIGHUP|SIGQUIT|SIGSEGV|SIGBUS|SIGILL|SIGFPE|SIGABRT|INT|TERM|HUP|QUIT|"
     "SEGV|BUS|ILL|FPE|ABRT", "", R, "all",
     "Signals GASNet leaves to their default action (or to the client) instead of turning "
     "them into its exit path; * for all.", NOT_TUNED},
    {"GASNET_VERBOSEENV", GASNETI_KNOB_BOOL, "0", 0, 1, NULL, "", R, "all",
     "Rank 0 prints every knob it read, its value, and whether it was the default.", NOT_TUNED},
    {"GASNET_SPAWNER", GASNETI_KNOB_ENUM, "local", 0, 0, "local|ssh|pmi|mpi", "", J, "all",
     "How gasnetrun starts ranks when -spawner is not given.", NOT_TUNED},
    {"GASNET_MPI_THREAD", GASNETI_KNOB_ENUM, "SINGLE", 0, 0,
     "SINGLE|FUNNELED|SERIALIZED|MULTIPLE", "", R, "all",
     "Thread level the mpi spawner asks of MPI_Init_thread (raise it when the client uses MPI "
     "from several threads itself); the job fails if MPI offers less.", NOT_TUNED},
    {"GASNET_SSH_SERVERS", GASNETI_KNOB_LIST, "", 0, 0, NULL, "", J, "all",
     "Hosts the ssh spawner may start ranks on, comma-separated (e.g. node1,node2).", NOT_TUNED},
    {"GASNET_SSH_CMD", GASNETI_KNOB_STRING, "ssh", 0, 0, NULL, "", J, "all",
     "Remote shell command the ssh spawner runs (split like a shell would, e.g. 'ssh -q').",
     NOT_TUNED},
    {"GASNET_SSH_OPTIONS", GASNETI_KNOB_STRING, "", 0, 0, NULL, "", J, "all",
     "More options for the remote shell command, split like a shell would (e.g. '-p 2222 -F "
     "cfg').", NOT_TUNED},
    {"GASNET_SSH_NODEFILE", GASNETI_KNOB_FILENAME, "", 0, 0, NULL, "", J, "all",
     "File of hosts for the ssh spawner: 'host', 'host slots=N' or 'host:N' lines.", NOT_TUNED},
    {"GASNET_NODEFILE", GASNETI_KNOB_FILENAME, "", 0, 0, NULL, "", J, "all",
     "File of hosts (as GASNET_SSH_NODEFILE), read when that one is not set.", NOT_TUNED},
    {"GASNET_SSH_OUT_DEGREE", GASNETI_KNOB_INT, "32", 0, 4096, NULL, "agents", J, "all",
     "Children each agent of the ssh spawner's tree starts (0: gasnetrun starts every host's "
     "agent itself).", NOT_TUNED},
    {"GASNET_SSH_REMOTE_PATH", GASNETI_KNOB_STRING, "", 0, 0, NULL, "", J, "all",
     "Working directory of the ranks on other hosts (default: gasnetrun's own).", NOT_TUNED},
    /* ---- AM flow control and network resources (network conduits) ---- */
    {"GASNET_RCV_THREAD", GASNETI_KNOB_BOOL, "0", 0, 1, NULL, "", R, "udp",
     "Run a thread that serves incoming AMs while the application computes.", NOT_TUNED},
    {"GASNET_AM_CREDITS_PP", GASNETI_KNOB_INT, "12", 1, 1024, NULL, "requests", J, "udp,ibv,mpi",
     "AM requests in flight from a rank to each peer (a reply returns the credit).",
     1, "2,4,8,12,16,32,64", NULL},
    {"GASNET_AM_CREDITS_TOTAL", GASNETI_KNOB_INT, "", 0, 65535, NULL, "requests", J,
     "udp,ibv,mpi",
     "AM requests in flight from a rank in all (default: min(256, ranks * _PP); 0: no limit "
     "beyond the hardware's).",
     1, "32,64,128,256,512,1024", NULL},
    {"GASNET_AM_CREDITS_SLACK", GASNETI_KNOB_INT, "1", 0, 1024, NULL, "credits", J, "udp,ibv,mpi",
     "Credits a responder may bank before it sends a hidden reply to return them.",
     1, "0,1,2,4,8", "<=GASNET_AM_CREDITS_PP"},
    {"GASNET_NETWORKDEPTH_PP", GASNETI_KNOB_INT, "24", 1, 4096, NULL, "operations", J, "ibv,udp",
     "Network operations in flight to each peer (ibv: RDMA and AMs; udp: unacknowledged "
     "datagrams, rounded up to a power of two).",
     1, "4,8,16,24,32,64", NULL},
    {"GASNET_NETWORKDEPTH_TOTAL", GASNETI_KNOB_INT, "255", 0, 65535, NULL, "operations", J, "ibv,udp",
     "Network operations in flight from a rank in all (0: the most the hardware allows).",
     1, "64,128,255,512,1024", NULL},
    {"GASNET_PACKEDLONG_LIMIT", GASNETI_KNOB_SIZE, "4012", 0, 65536, NULL, "bytes", J, "ibv",
     "Long payloads up to this size travel packed with the header, copied in place on arrival "
     "(at most gasnet_AMMaxMedium(), 4096 on ibv; udp always packs them: it has no RDMA).",
     1, "0,512,1024,2048,4012,8192,16384", NULL},
    /* ---- udp ---- */
    {"GASNET_REQUESTTIMEOUT_INITIAL", GASNETI_KNOB_DOUBLE, "0.02", 0.00001, 60, NULL, "seconds",
     J, "udp",
     "udp: first retransmission timeout, before any round trip was measured (it then adapts "
     "to the measured round trips).", NOT_TUNED},
    {"GASNET_REQUESTTIMEOUT_BACKOFF", GASNETI_KNOB_DOUBLE, "2", 1, 16, NULL, "", J, "udp",
     "udp: each retransmission of a datagram multiplies its timeout by this.", NOT_TUNED},
    {"GASNET_REQUESTTIMEOUT_MAX", GASNETI_KNOB_DOUBLE, "30", 0.01, 86400, NULL, "seconds", J,
     "udp",
     "udp: a peer that acknowledges nothing for this long is unreachable: the job ends naming "
     "it and its host.", NOT_TUNED},
    {"GASNET_UDP_DATAGRAM", GASNETI_KNOB_SIZE, "", 512, 65507, NULL, "bytes", J, "udp",
     "udp: largest datagram (default: 65507 between ranks of one host, the interface MTU "
     "minus headers between hosts); IP fragmentation is never used.",
     1, "1472,4096,8192,16384,32768,65507", NULL},
    {"GASNET_UDP_COALESCE", GASNETI_KNOB_BOOL, "1", 0, 1, NULL, "", J, "udp",
     "udp: small AMs to one peer produced within one poll travel in one datagram.",
     1, "0,1", NULL},
    {"GASNET_UDP_GSO", GASNETI_KNOB_BOOL, "1", 0, 1, NULL, "", J, "udp",
     "udp: send runs of full datagrams with UDP segmentation offload (and receive with GRO) "
     "where the kernel has them.", 1, "0,1", NULL},
    {"GASNET_UDP_ADDRESS", GASNETI_KNOB_STRING, "", 0, 0, NULL, "", R, "udp",
     "udp: the IPv4 address or interface name to bind, the one other ranks reach this rank at "
     "(default: the first non-loopback interface that is up, else 127.0.0.1, with the socket "
     "bound to every address so that ranks of one host talk over 127.0.0.1).", NOT_TUNED},
    /* ---- connections (ibv) ---- */
    {"GASNET_CONNECT_STATIC", GASNETI_KNOB_BOOL, "1", 0, 1, NULL, "", J, "ibv",
     "Connect at start-up to the peers of GASNET_CONNECTFILE_IN, or to all peers.", NOT_TUNED},
    {"GASNET_CONNECT_DYNAMIC", GASNETI_KNOB_BOOL, "1", 0, 1, NULL, "", J, "ibv",
     "Connect on demand to peers not connected at start-up.", NOT_TUNED},
    {"GASNET_CONNECTFILE_IN", GASNETI_KNOB_FILENAME, "", 0, 0, NULL, "", R, "ibv",
     "Connect file limiting start-up connections ('%' becomes the rank).", NOT_TUNED},
    {"GASNET_CONNECTFILE_OUT", GASNETI_KNOB_FILENAME, "", 0, 0, NULL, "", R, "ibv",
     "Write the connections this run used, in connect-file form ('%' becomes the rank).", NOT_TUNED},
    {"GASNET_CONNECTFILE_BASE", GASNETI_KNOB_INT, "36", 2, 36, NULL, "", R, "ibv",
     "Numeric base of node numbers in GASNET_CONNECTFILE_OUT files.", NOT_TUNED},
    {"GASNET_CONNECT_RETRANS_MIN", GASNETI_KNOB_DOUBLE, "1000", 1, 60e6, NULL, "microseconds",
     J, "ibv", "First wait before a connection request (UD) is sent again; it doubles up to "
     "GASNET_CONNECT_RETRANS_MAX.", NOT_TUNED},
    {"GASNET_CONNECT_RETRANS_MAX", GASNETI_KNOB_DOUBLE, "1000000", 1, 600e6, NULL,
     "microseconds", J, "ibv",
     "Longest wait between repeats of an unanswered connection request (a peer computing "
     "without polling answers when it next enters GASNet).", NOT_TUNED},
    /* ---- ibv resources ---- */
    {"GASNET_RBUF_COUNT", GASNETI_KNOB_INT, "1024", 16, 1048576, NULL, "buffers", J, "ibv",
     "AM receive buffers per rank when they are shared by all peers (GASNET_USE_SRQ); also "
     "the threshold above which per-peer receive queues give way to a shared one.", NOT_TUNED},
    {"GASNET_BBUF_COUNT", GASNETI_KNOB_INT, "1024", 0, 1048576, NULL, "buffers", J, "ibv",
     "Registered send and bounce buffers per rank (at most GASNET_NETWORKDEPTH_TOTAL; 0: that "
     "many).", NOT_TUNED},
    {"GASNET_USE_SRQ", GASNETI_KNOB_INT, "-1", -1, 65535, NULL, "", J, "ibv",
     "Shared receive queues: -1 when per-peer queues would need more than GASNET_RBUF_COUNT "
     "buffers, 0 never, n in jobs of n ranks or more.", NOT_TUNED},
    {"GASNET_INLINESEND_LIMIT", GASNETI_KNOB_SIZE, "72", 0, 256, NULL, "bytes", J, "ibv",
     "Messages and puts up to this size are posted inline (copied into the work request).",
     1, "0,32,72,128,256", NULL},
    {"GASNET_NONBULKPUT_BOUNCE_LIMIT", GASNETI_KNOB_SIZE, "64K", 0, 1073741824, NULL, "bytes", J,
     "ibv", "Non-bulk puts (and Long payloads) from registered memory up to this size are "
     "copied to bounce buffers and return at once; larger ones wait for the HCA to have read "
     "their source.", 1, "0,4K,16K,64K,256K", NULL},
    {"GASNET_QP_TIMEOUT", GASNETI_KNOB_INT, "18", 0, 31, NULL, "", J, "ibv",
     "Acknowledgement timeout of RC queue pairs: 4.096 us x 2^value (18: about 1 s; 0: "
     "infinite).", NOT_TUNED},
    {"GASNET_QP_RETRY_COUNT", GASNETI_KNOB_INT, "7", 0, 7, NULL, "retries", J, "ibv",
     "Retransmissions after a timeout before a peer counts as unreachable (the job then ends "
     "naming it).", NOT_TUNED},
    {"GASNET_MAX_MTU", GASNETI_KNOB_ENUM, "0", 0, 0, "0|-1|256|512|1024|2048|4096", "bytes", J,
     "ibv", "Largest path MTU of RC queue pairs: 0 or -1 the port's active MTU, else the smaller "
     "of this and it.", NOT_TUNED},
    {"GASNET_IBV_VERBOSE", GASNETI_KNOB_BOOL, "0", 0, 1, NULL, "", R, "ibv",
     "Each rank says which HCA ports it uses, the connections it made and the memory it "
     "registered (stderr).", NOT_TUNED},
    /* ---- HCA ports (ibv) ---- */
    {"GASNET_IBV_PORTS", GASNETI_KNOB_PORTS, "", 0, 0, NULL, "", R, "ibv",
     "Which HCAs and ports to use: HCA[:port,port][+HCA...], e.g. mlx5_0+mlx5_1:1,2.", NOT_TUNED},
    {"GASNET_IBV_PORTS_<n>", GASNETI_KNOB_PORTS, "", 0, 0, NULL, "", R, "ibv",
     "GASNET_IBV_PORTS for ranks bound to socket (or NUMA node) n, see GASNET_IBV_PORTS_TYPE.", NOT_TUNED},
    {"GASNET_IBV_PORTS_TYPE", GASNETI_KNOB_ENUM, "socket", 0, 0, "socket|numa", "", R, "ibv",
     "What n in GASNET_IBV_PORTS_<n> numbers: sockets or NUMA nodes.", NOT_TUNED},
    {"GASNET_PROBE_ROOT", GASNETI_KNOB_STRING, "", 0, 0, NULL, "", J, "ibv",
     "gasnetrun plans each node of an ibv job from this recorded node (a directory with sys/, "
     "ibv_devinfo-v.txt, topology.synthetic or .xml, meminfo, memlock) instead of probing the "
     "host: planning offline, and tests.", NOT_TUNED},
};

size_t gasneti_knob_count(void) { return sizeof table / sizeof table[0]; }

const gasneti_knob_t *gasneti_knob_at(size_t index) {
  return index < gasneti_knob_count() ? &table[index] : NULL;
}

const gasneti_knob_t *gasneti_knob_find(const char *name) {
  for (size_t i = 0; i < gasneti_knob_count(); i++) {
    const char *family = strstr(table[i].name, "_<n>");
    if (!family) {
      if (strcmp(table[i].name, name) == 0) return &table[i];
      continue;
    }
    size_t stem = (size_t)(family - table[i].name) + 1; /* through the '_' */
    if (strncmp(table[i].name, name, stem) != 0 || !name[stem]) continue;
    const char *p = name + stem;
    while (*p >= '0' && *p <= '9') p++;
    if (!*p) return &table[i];
  }
  return NULL;
}
