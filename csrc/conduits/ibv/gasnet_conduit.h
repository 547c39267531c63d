/* gasnet_conduit.h (ibv): what a client sees of the ibv conduit at compile time.
 * Installed as include/ibv-conduit/gasnet_conduit.h, found through the .mak/.pc flags. */
#ifndef GASNET_CONDUIT_H
#define GASNET_CONDUIT_H

#define GASNET_CONDUIT_IBV 1
#define GASNET_CONDUIT_NAME ibv
#define GASNET_CONDUIT_NAME_STR "ibv"
#define GASNET_PSHM 1
#define GASNET_CORE_NAME IBV
#define GASNET_CORE_VERSION 1.0

/* A Medium travels in one registered 4 KiB buffer; a Long's payload is RDMA-written into the
 * target segment (or packed with its header up to GASNET_PACKEDLONG_LIMIT). */
#define GASNETC_MAX_MEDIUM 4096
#define GASNETC_MAX_LONG (4u * 1024 * 1024)
/* Puts and gets to other supernodes are RDMA (csrc/core/rma/rma_am.c asks the conduit). */
#define GASNETC_RDMA 1

#endif
