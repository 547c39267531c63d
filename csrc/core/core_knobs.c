/* core_knobs.c: the core's rows of the knob table: every GASNET_* variable that is not one
 * conduit's (layout, memory, exit, signals, spawners, and the AM flow control every network
 * conduit shares). Conduits declare their own rows in csrc/conduits/<name>/<name>_knobs.c. */
#include "knob_api.h"
#include "trace_syntax.h"

#define BIG 9.0e18
#define J GASNETI_SCOPE_JOB
#define R GASNETI_SCOPE_RANK
#define MASK 0, NULL, NULL, &gasneti_tracemask_syntax
#define NODES 0, NULL, NULL, &gasneti_tracenodes_syntax

static const gasneti_knob_t rows[] = {
    /* ---- job layout and memory ---- */
    {"GASNET_SUPERNODE_MAXSIZE", GASNETI_KNOB_INT, "0", 0, 65535, NULL, "ranks", J, "all",
     "Most ranks per shared-memory supernode (0: all ranks of a host; 1: no PSHM peers).", GASNETI_NOT_TUNED},
    {"GASNET_PSHM_NODES", GASNETI_KNOB_INT, "0", 0, 256, NULL, "ranks", J, "all",
     "Without a launcher (the fork spawner), fork into this many ranks on this host (0 or 1: a 1-rank job).", GASNETI_NOT_TUNED},
    {"GASNET_MAX_SEGSIZE", GASNETI_KNOB_SEGSIZE, "0.85/H", 4096, BIG, NULL, "bytes", R, "all",
     "Largest segment per rank: a size or a fraction of physical memory, per host (/H, shared "
     "by its ranks) or per process (/P, the default).", GASNETI_NOT_TUNED},
    {"GASNET_PHYSMEM_MAX", GASNETI_KNOB_FRACTION_SIZE, "2/3", 4096, BIG, NULL, "bytes", R, "all",
     "Memory per host that segments (and what conduits register with the network) may use, "
     "divided among the host's ranks: a size or a fraction of physical memory.", GASNETI_NOT_TUNED},
    /* ---- collectives and exit ---- */
    {"GASNET_BARRIER", GASNETI_KNOB_ENUM, "PSHM", 0, 0, "PSHM|AMDISSEM", "", J, "all",
     "Barrier algorithm: PSHM (shared memory inside a supernode, AM dissemination between "
     "supernodes) or AMDISSEM (AM dissemination among all ranks). PSHM stays the default: "
     "gasnet-tune found no gain from AMDISSEM on smp (2 and 8 ranks) and met it on udp only "
     "inside whole points (docs/knob-defaults.md).",
     GASNETI_TUNED("PSHM,AMDISSEM", NULL)},
    {"GASNET_EXITTIMEOUT", GASNETI_KNOB_DOUBLE, "", 0.001, 86400, NULL, "seconds", J, "all",
     "Time for all ranks to leave once one has (default: min(_MAX, _MIN + _FACTOR * ranks)).", GASNETI_NOT_TUNED},
    {"GASNET_EXITTIMEOUT_MAX", GASNETI_KNOB_DOUBLE, "360", 0.001, 86400, NULL, "seconds", J,
     "all", "Upper bound of the computed GASNET_EXITTIMEOUT.", GASNETI_NOT_TUNED},
    {"GASNET_EXITTIMEOUT_MIN", GASNETI_KNOB_DOUBLE, "2", 0.001, 86400, NULL, "seconds", J, "all",
     "Constant part of the computed GASNET_EXITTIMEOUT.", GASNETI_NOT_TUNED},
    {"GASNET_EXITTIMEOUT_FACTOR", GASNETI_KNOB_DOUBLE, "0.25", 0, 3600, NULL, "seconds/rank", J,
     "all", "Per-rank part of the computed GASNET_EXITTIMEOUT.", GASNETI_NOT_TUNED},
    {"GASNET_WAIT_MODE", GASNETI_KNOB_ENUM, "auto", 0, 0, "auto|spin|block|spinblock", "", R,
     "all", "How a rank waits for communication: spin (poll), block (poll, then give the core "
     "away: yield, and in SEQ builds on smp and udp sleep in the kernel once idle for 50 us, "
     "until a message, a datagram or a peer's store wakes it), spinblock (the same, as in "
     "GASNet); auto spins unless the host's ranks outnumber its cores, and then waits as block "
     "whatever mode gasnet_set_waitmode asks. gasnet_AMPoll and the try calls yield but never "
     "sleep. Use block when hosts "
     "share cores (virtual machines, containers on one machine) or other work runs on them: "
     "auto cannot see it. auto stays the default (gasnet-tune on smp, 2 ranks: block made AM "
     "latency and barriers 20x slower, though a 1 MiB exchange 3x faster while other work "
     "kept the cores busy; 8 ranks: no significant gain; docs/knob-defaults.md).",
     GASNETI_TUNED("spin,block,spinblock", NULL)},
    {"GASNET_WAIT_SLEEP_MIN", GASNETI_KNOB_DOUBLE, "0.01", 0.0001, 3600, NULL, "seconds", R,
     "all", "How long a sleeping wait (GASNET_WAIT_MODE) first sleeps before it looks again "
     "though nothing woke it; each such sleep of the same wait lasts twice as long, up to "
     "GASNET_WAIT_SLEEP_MAX. Only a wait on a word a supernode peer stores to through its own "
     "mapping (not through GASNet) needs it: it notices within about twice its wait.",
     GASNETI_NOT_TUNED},
    {"GASNET_WAIT_SLEEP_MAX", GASNETI_KNOB_DOUBLE, "1", 0.0001, 3600, NULL, "seconds", R,
     "all", "The longest a sleeping wait sleeps before it looks again though nothing woke it "
     "(see GASNET_WAIT_SLEEP_MIN).", GASNETI_NOT_TUNED},
    /* ---- signals and debugging (GASNet-1's names) ---- */
    {"GASNET_BACKTRACE", GASNETI_KNOB_BOOL, "0", 0, 1, NULL, "", R, "all",
     "A rank that hits a fatal signal (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT) or a fatal "
     "GASNet error prints its backtrace to stderr (functions, and files and lines where "
     "addr2line finds debug information) before it ends.", GASNETI_NOT_TUNED},
    {"GASNET_BACKTRACE_SIGNAL", GASNETI_KNOB_ENUM, "", 0, 0, "SIGUSR1|SIGUSR2", "", R, "all",
     "A rank that receives this signal prints its backtrace and goes on: send it to gasnetrun "
     "to see where every rank of a job that hangs is.", GASNETI_NOT_TUNED},
    {"GASNET_FREEZE", GASNETI_KNOB_BOOL, "0", 0, 1, NULL, "", R, "all",
     "Every rank stops in gasnet_init until a debugger sets gasnet_frozen to 0.", GASNETI_NOT_TUNED},
    {"GASNET_FREEZE_ON_ERROR", GASNETI_KNOB_BOOL, "0", 0, 1, NULL, "", R, "all",
     "A rank that hits a fatal signal or fatal GASNet error stops (printing its pid and host) "
     "until a debugger sets gasnet_frozen to 0 or the job is interrupted.", GASNETI_NOT_TUNED},
    {"GASNET_FREEZE_SIGNAL", GASNETI_KNOB_ENUM, "", 0, 0, "SIGUSR1|SIGUSR2", "", R, "all",
     "A rank that receives this signal stops until a debugger sets gasnet_frozen to 0.",
     GASNETI_NOT_TUNED},
    {"GASNET_NO_CATCH_SIGNAL", GASNETI_KNOB_LIST, "", 0, 0,
     "*|SIGINT|SIGTERM|SIGHUP|SIGQUIT|SIGSEGV|SIGBUS|SIGILL|SIGFPE|SIGABRT|INT|TERM|HUP|QUIT|"
     "SEGV|BUS|ILL|FPE|ABRT", "", R, "all",
     "Signals GASNet leaves to their default action (or to the client) instead of turning "
     "them into its exit path; * for all.", GASNETI_NOT_TUNED},
    {"GASNET_VERBOSEENV", GASNETI_KNOB_BOOL, "0", 0, 1, NULL, "", R, "all",
     "Rank 0 prints every knob of its library, its value, and whether it is the default, once (at the end of gasnet_init).", GASNETI_NOT_TUNED},
    /* ---- tracing and statistics (csrc/core/trace, docs/tracing.md) ---- */
    {"GASNET_TRACEFILE", GASNETI_KNOB_FILENAME, "", 0, 0, NULL, "", R, "all",
     "Write a trace of the rank's communication here: a path ('%' stands for the rank), "
     "stdout, stderr or - (stdout). Unset: no tracing.", GASNETI_NOT_TUNED},
    {"GASNET_TRACEMASK", GASNETI_KNOB_CUSTOM, "GPSWXBLAICDNHUO", 0, 0, NULL, "", R, "all",
     "Categories traced: G gets, P puts, S syncs, B barriers, A AMs (and their handlers), I "
     "information, X exit, C the conduit's own (its counters in the statistics), H and U a "
     "client's own lines, O GASNet-EX objects; GASNet's other letters (W L D N) are accepted "
     "and have no events here.", MASK},
    {"GASNET_TRACENODES", GASNETI_KNOB_CUSTOM, "*", 0, 0, NULL, "", R, "all",
     "Ranks that trace: * or a list such as 0,2-4.", NODES},
    {"GASNET_TRACELOCAL", GASNETI_KNOB_BOOL, "1", 0, 1, NULL, "", R, "all",
     "Trace puts and gets whose peer shares memory with the rank (itself, its supernode); 0 "
     "leaves them out of the trace (statistics still count them).", GASNETI_NOT_TUNED},
    {"GASNET_TRACEFLUSH", GASNETI_KNOB_BOOL, "0", 0, 1, NULL, "", R, "all",
     "Flush the trace file after every line (slow; keeps the trace of a rank that crashes).",
     GASNETI_NOT_TUNED},
    {"GASNET_STATSFILE", GASNETI_KNOB_FILENAME, "", 0, 0, NULL, "", R, "all",
     "Write the rank's statistics here at exit (a path, '%' for the rank, stdout, stderr or "
     "-). Unset: with GASNET_TRACEFILE, at the end of the trace; else none.", GASNETI_NOT_TUNED},
    {"GASNET_STATSMASK", GASNETI_KNOB_CUSTOM, "GPSWXBLAICDNHUO", 0, 0, NULL, "", R, "all",
     "Categories counted in the statistics (letters as GASNET_TRACEMASK).", MASK},
    {"GASNET_STATSNODES", GASNETI_KNOB_CUSTOM, "*", 0, 0, NULL, "", R, "all",
     "Ranks that collect statistics: * or a list such as 0,2-4.", NODES},
    {"GASNET_SAME_ADDRESSES", GASNETI_KNOB_BOOL, "0", 0, 1, NULL, "", J, "all",
     "Start each host's ranks without address-space randomisation, so that the program's "
     "functions and data (and its libraries') lie at the same addresses in every rank of a "
     "host, as in ranks forked from one process, for clients that send function pointers "
     "between ranks. Makes memory-corruption exploits of the job's processes easier.",
     GASNETI_NOT_TUNED},
    {"GASNET_SPAWN_VERBOSE", GASNETI_KNOB_BOOL, "0", 0, 1, NULL, "", J, "all",
     "gasnetrun narrates the launch (as -v): hosts, spawner, knobs, each agent and rank as it "
     "starts and ends.", GASNETI_NOT_TUNED},
    /* No default: unset, gasnetrun chooses from the situation (a "local" default here made
       --knobs and the knob reference say so when it is not what happens). */
    {"GASNET_SPAWNER", GASNETI_KNOB_ENUM, "", 0, 0, "local|ssh|pmi|mpi", "", J, "all",
     "How gasnetrun starts ranks when -spawner is not given (unset: pmi inside a Slurm "
     "allocation, ssh when a host is not this one, else local).", GASNETI_NOT_TUNED},
    {"GASNET_MPI_THREAD", GASNETI_KNOB_ENUM, "", 0, 0,
     "SINGLE|FUNNELED|SERIALIZED|MULTIPLE", "", R, "all",
     "Thread level the mpi spawner asks of MPI_Init_thread (default: SINGLE for SEQ "
     "libraries, SERIALIZED for PAR and PARSYNC; raise it to MULTIPLE when the client calls "
     "MPI from a thread while another is in GASNet); the job fails, naming both, if MPI "
     "grants less (also when the client initialized MPI first). The mpi conduit's PAR "
     "library needs SERIALIZED or more.", GASNETI_NOT_TUNED},
    {"GASNET_SSH_SERVERS", GASNETI_KNOB_LIST, "", 0, 0, NULL, "", J, "all",
     "Hosts the ssh spawner may start ranks on, in placement order, separated by commas, spaces or "
     "newlines (e.g. node1,node2 or 'node1 node2').", GASNETI_NOT_TUNED},
    {"GASNET_SSH_CMD", GASNETI_KNOB_STRING, "ssh", 0, 0, NULL, "", J, "all",
     "Remote shell command the ssh spawner runs (split like a shell would, e.g. 'ssh -q').",
     GASNETI_NOT_TUNED},
    {"GASNET_SSH_OPTIONS", GASNETI_KNOB_STRING, "", 0, 0, NULL, "", J, "all",
     "More options for the remote shell command, split like a shell would (e.g. '-p 2222 -F "
     "cfg').", GASNETI_NOT_TUNED},
    {"GASNET_SSH_NODEFILE", GASNETI_KNOB_FILENAME, "", 0, 0, NULL, "", J, "all",
     "File of hosts for the ssh spawner: 'host', 'host slots=N' or 'host:N' lines.", GASNETI_NOT_TUNED},
    {"GASNET_NODEFILE", GASNETI_KNOB_FILENAME, "", 0, 0, NULL, "", J, "all",
     "File of hosts (as GASNET_SSH_NODEFILE), read when that one is not set.", GASNETI_NOT_TUNED},
    {"GASNET_SSH_OUT_DEGREE", GASNETI_KNOB_INT, "32", 0, 4096, NULL, "agents", J, "all",
     "Children each agent of the ssh spawner's tree starts (0: gasnetrun starts every host's "
     "agent itself).", GASNETI_NOT_TUNED},
    {"GASNET_SSH_START_TIMEOUT", GASNETI_KNOB_DOUBLE, "60", 1, 86400, NULL, "seconds", J, "all",
     "Time an agent of the ssh spawner's tree has to log in, start and check its host, for each "
     "level of the tree below the agent that starts it (an agent with a subtree 3 deep has 3 "
     "times this, plus half a second for each agent in it).", GASNETI_NOT_TUNED},
    {"GASNET_SSH_REMOTE_PATH", GASNETI_KNOB_STRING, "", 0, 0, NULL, "", J, "all",
     "Working directory of the ranks on other hosts (default: gasnetrun's own).", GASNETI_NOT_TUNED},
    /* ---- AM flow control and network resources (network conduits) ---- */
    {"GASNET_ON_DEMAND_ADDRESSES", GASNETI_KNOB_BOOL, "1", 0, 0, NULL, "", J, "network",
     "A rank fetches a peer's network address from its host's agent (or the process "
     "manager) the first time it talks to it, so that no rank holds every address; 0: every "
     "rank receives every address at start-up (one exchange).", GASNETI_NOT_TUNED},
    {"GASNET_AM_CREDITS_PP", GASNETI_KNOB_INT, "12", 1, 1024, NULL, "requests", J, "network",
     "AM requests in flight from a rank to each peer (a reply returns the credit). 12 stays "
     "the default although gasnet-tune on one host (udp, PSHM off, 2 and 8 ranks) recommends "
     "64 for AM floods: loopback cannot show incast, and at 1,000 ranks a rank can be owed "
     "999 x credits requests at once, which must fit udp's one socket buffer (a drop costs a "
     "retransmission timeout) or ibv's receive buffers; raise it for jobs of few ranks "
     "(docs/knob-defaults.md).",
     GASNETI_TUNED("2,4,8,12,16,32,64", NULL)},
    {"GASNET_AM_CREDITS_TOTAL", GASNETI_KNOB_INT, "", 0, 65535, NULL, "requests", J,
     "network",
     "AM requests in flight from a rank in all (default: min(256, ranks * _PP); 0: no limit "
     "beyond the hardware's). gasnet-tune's udp pick, 256, is this default at _PP=64 "
     "(docs/knob-defaults.md).",
     GASNETI_TUNED("32,64,128,256,512,1024", NULL)},
    {"GASNET_AM_CREDITS_SLACK", GASNETI_KNOB_INT, "", 0, 1024, NULL, "credits", J, "network",
     "Credits a responder may bank before it sends a hidden reply to return them (default: "
     "_PP / 3, at most 4; never more than _PP - 1, and less where _TOTAL spread over every "
     "peer could be banked). 4 came from an across-hosts sweep of floods: 1 sent a hidden "
     "reply per 2 requests that have none (docs/knob-defaults.md).",
     GASNETI_TUNED("0,1,2,4,8", "<=GASNET_AM_CREDITS_PP")},
    {"GASNET_NETWORKDEPTH_PP", GASNETI_KNOB_INT, "24", 1, 4096, NULL, "operations", J, "network",
     "Network operations in flight to each peer (what one operation is belongs to the "
     "conduit: its README says). 24 stays the default: gasnet-tune's picks went both ways "
     "(16 to 64 on udp and ofi), each inside a whole point (docs/knob-defaults.md).",
     GASNETI_TUNED("4,8,16,24,32,64", NULL)},
    {"GASNET_NETWORKDEPTH_TOTAL", GASNETI_KNOB_INT, "255", 0, 65535, NULL, "operations", J, "network",
     "Network operations in flight from a rank in all (0: the most the hardware allows). 255 "
     "stays the default: gasnet-tune's picks came only inside whole points, never measured "
     "alone (docs/knob-defaults.md).",
     GASNETI_TUNED("64,128,255,512,1024", NULL)},
    /* ---- node planning (gasnetrun) ---- */
    {"GASNET_PROBE_ROOT", GASNETI_KNOB_STRING, "", 0, 0, NULL, "", J, "all",
     "gasnetrun plans each node from this recorded node (a directory with sys/, "
     "topology.synthetic or .xml, meminfo, memlock, and what conduits' probes read, such as "
     "ibv_devinfo-v.txt) instead of probing the host: planning offline, and tests.",
     GASNETI_NOT_TUNED},
};

const gasneti_knob_group_t gasneti_core_knobs = {"core", rows, sizeof rows / sizeof rows[0]};
