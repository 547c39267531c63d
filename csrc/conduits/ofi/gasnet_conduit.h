/* gasnet_conduit.h (ofi): what a client sees of the ofi conduit at compile time.
 * Installed as include/ofi-conduit/gasnet_conduit.h, found through the .mak/.pc flags. */
#ifndef GASNET_CONDUIT_H
#define GASNET_CONDUIT_H

#define GASNET_CONDUIT_OFI 1
#define GASNET_CONDUIT_NAME ofi
#define GASNET_CONDUIT_NAME_STR "ofi"
#define GASNET_PSHM 1
#define GASNET_CORE_NAME OFI
#define GASNET_CORE_VERSION 1.0

/* A Medium travels in one message (header, arguments and payload) into one of the receives
 * the peer keeps posted; Longs are an RMA write followed by the header where the provider has RMA, else
 * pieces the core cuts to the largest Medium. */
#define GASNETC_MAX_MEDIUM 65024
#define GASNETC_MAX_LONG (4u * 1024 * 1024)
/* Puts and gets to other supernodes are fi_write/fi_read where the provider has RMA. */
#define GASNETC_RDMA 1
/* A waiting rank may sleep on the completion queue's descriptor where the provider gives one
 * (csrc/core/pshm/wake.h); it asks the provider whether it may when it arms (conduit.h). */
#define GASNETC_WAIT_FDS 1
#define GASNETC_WAIT_ARM 1

#endif
