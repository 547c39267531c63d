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
 * largest one; a Long travels in pieces of the largest Medium, which the core cuts. A Long
 * whose payload stays unchanged until answered (a put) goes in pieces of up to the largest
 * Long, each a header and then its payload as an MPI message of its own, sent from where it
 * lies and received straight into the segment: across hosts, every piece of 64 KiB waited for
 * its own rendezvous (a 1 MiB put stream ran at 0.57x an MPI_Isend stream over Open MPI's TCP). */
#define GASNETC_MAX_MEDIUM 65536
#define GASNETC_MAX_LONG (4u * 1024 * 1024)
#define GASNETC_LONG_CHUNK_STABLE GASNETC_MAX_LONG
/* A SEQ rank alone in its supernode waits in MPI_Wait (conduit.h). */
#define GASNETC_WAIT_BLOCK 1

#endif
