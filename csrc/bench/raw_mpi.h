/* raw_mpi.h: the physical baselines of the mpi conduit, measured between ranks 0 and 1 of the
 * same job with the same MPI and no GASNet code on the path: an 8-byte MPI_Send/MPI_Recv
 * ping-pong (raw_mpi_rtt), the same with receives posted ahead and tested (raw_mpi_poll_rtt), and a stream of 1 MiB MPI_Isend messages, WINDOW in flight
 * (raw_mpi_stream). They call MPI through the plugin the job's ranks loaded (mpi_plugin.h),
 * on a communicator of their own: the benchmark links no MPI, so one binary measures Open MPI
 * or MPICH, whichever launcher started it, and the baseline is always the MPI the conduit
 * runs on. The conduit's figures are read as ratios to these, taken in the same run, repeat
 * by repeat. */
#ifndef RAW_MPI_H
#define RAW_MPI_H

#include "bench_util.h"

#ifdef GASNET_CONDUIT_MPI
#include "mpi_plugin.h"

/* Collective (the communicator's duplication is): the plugin when ranks 0 and 1 talk through
 * MPI (different supernodes) and this rank is one of them, else NULL. */
static inline const gasneti_mpi_ops_t *raw_mpi_open(void) {
  const gasneti_mpi_ops_t *ops = gasneti_mpi_loaded();
  if (!ops || gasnet_nodes() < 2) return NULL;
  if (ops->raw_open()) {
    fprintf(stderr, "raw_mpi: cannot duplicate MPI_COMM_WORLD\n");
    gasnet_exit(1);
  }
  return gasnet_mynode() < 2 && !bench_same_supernode() ? ops : NULL;
}

static inline void raw_mpi_check(int rc, const char *what) {
  if (rc) {
    fprintf(stderr, "raw_mpi: %s failed (%d)\n", what, rc);
    gasnet_exit(1);
  }
}

/* One round trip of size bytes, started by rank 0. */
static inline void raw_mpi_round_trip(const gasneti_mpi_ops_t *ops, char *buf, int size) {
  int peer = 1 - (int)gasnet_mynode();
  if (gasnet_mynode() == 0) {
    raw_mpi_check(ops->raw_send(buf, size, peer), "MPI_Send");
    raw_mpi_check(ops->raw_recv(buf, size, peer), "MPI_Recv");
  } else {
    raw_mpi_check(ops->raw_recv(buf, size, peer), "MPI_Recv");
    raw_mpi_check(ops->raw_send(buf, size, peer), "MPI_Send");
  }
}

/* The same round trip as a rank that may not block in MPI_Recv takes it (the conduit's ranks,
 * which keep polling for whatever else arrives): each rank posts its receive after its send,
 * as the conduit posts a receive again at its next poll, and tests it until it completes. What
 * MPI itself charges such a receiver above raw_mpi_round_trip, with no GASNet code on the
 * path (raw_mpi_poll_rtt). */
static inline void raw_mpi_poll_round_trip(const gasneti_mpi_ops_t *ops, char *buf, int size) {
  int peer = 1 - (int)gasnet_mynode(), done = 0;
  if (gasnet_mynode() == 0) raw_mpi_check(ops->raw_send(buf, size, peer), "MPI_Send");
  raw_mpi_check(ops->raw_irecv(buf, size, peer), "MPI_Irecv");
  while (!done) raw_mpi_check(ops->raw_testall(&done), "MPI_Test");
  if (gasnet_mynode() == 1) raw_mpi_check(ops->raw_send(buf, size, peer), "MPI_Send");
}

/* iters windows of `window` messages of size bytes from rank 0 to rank 1, then one byte back,
 * so that rank 0's clock covers their arrival. Rank 0 sends every message from buf; rank 1
 * receives message w of a window at buf + w * size (receives in flight may not overlap). */
static inline void raw_mpi_stream(const gasneti_mpi_ops_t *ops, char *buf, int size, int window,
                                  long iters) {
  char ack = 0;
  for (long i = 0; i < iters; i++) {
    for (int w = 0; w < window; w++)
      raw_mpi_check(gasnet_mynode() == 0 ? ops->raw_isend(buf, size, 1)
                                         : ops->raw_irecv(buf + (size_t)w * (size_t)size, size, 0),
                    "MPI_Isend/Irecv");
    raw_mpi_check(ops->raw_waitall(), "MPI_Waitall");
  }
  if (gasnet_mynode() == 0) raw_mpi_check(ops->raw_recv(&ack, 1, 1), "MPI_Recv");
  else raw_mpi_check(ops->raw_send(&ack, 1, 0), "MPI_Send");
}
#endif

#endif
