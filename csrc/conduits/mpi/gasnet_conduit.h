/* gasnet_conduit.h (mpi): what a client sees of the mpi conduit at compile time.
 * Installed as include/mpi-conduit/gasnet_conduit.h, found through the .mak/.pc flags. */
#ifndef GASNET_CONDUIT_H
#define GASNET_CONDUIT_H

#define GASNET_CONDUIT_MPI 1
#define GASNET_CONDUIT_NAME mpi
#define GASNET_CONDUIT_NAME_STR "mpi"
#define GASNET_PSHM 1
#define GASNET_CORE_NAME MPI
#define GASNET_CORE_VERSION 1.0

/* Between supernodes every AM is one MPI message into a receive buffer pre-posted for the
 * largest one; a Long travels in pieces of the largest Medium, which the core cuts. */
#define GASNETC_MAX_MEDIUM 65536
#define GASNETC_MAX_LONG (4u * 1024 * 1024)

#endif
