/* gasnet_conduit.h (smp): what a client sees of the smp conduit at compile time.
 * Installed as include/smp-conduit/gasnet_conduit.h, found through the .mak/.pc flags. */
#ifndef GASNET_CONDUIT_H
#define GASNET_CONDUIT_H

#define GASNET_CONDUIT_SMP 1
#define GASNET_CONDUIT_NAME smp
#define GASNET_CONDUIT_NAME_STR "smp"
#define GASNET_PSHM 1
#define GASNET_CORE_NAME SMP
#define GASNET_CORE_VERSION 1.0

/* Medium payloads travel through the receiver's shared-memory queues; Long payloads are copied
 * straight into the target segment, so their limit is a protocol choice, not a buffer size. */
#define GASNETC_MAX_MEDIUM 65536
#define GASNETC_MAX_LONG (4u * 1024 * 1024)
/* A waiting rank may sleep: everything it waits for comes through shared memory, whose writers
 * wake it (csrc/core/pshm/wake.h); no descriptor of its own. */
#define GASNETC_WAIT_FDS 0
/* Messages between the host's supernodes (GASNET_SUPERNODE_MAXSIZE) travel through the same
 * shared queues as a supernode's own: every rank of the host may write to this rank's rings. */
#define GASNETC_HOST_QUEUES 1

#endif
