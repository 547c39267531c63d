/* mpi_plugin.h: what a per-MPI plugin (libgasnet-mpi-<flavour>.so, mpi_plugin.c compiled
 * against one MPI) offers the runtime: the mpi spawner's collectives (bootstrap_mpi.c), the mpi
 * conduit's point-to-point traffic on a communicator of its own, and the raw MPI baselines of
 * the benchmarks. The runtime library itself is built without MPI, so its clients link nothing
 * more and one build serves Open MPI and MPICH (their ABIs differ). The plugin exports one
 * table, gasneti_mpi_ops; every function returning int returns 0 or an MPI error code, which
 * .error describes. Not thread safe: callers serialize (the mpi conduit under its lock). */
#ifndef GASNETI_MPI_PLUGIN_H
#define GASNETI_MPI_PLUGIN_H

#include <stddef.h>

/* Bumped whenever the table changes: a plugin of another build is refused, not misread. */
#define GASNETI_MPI_OPS_VERSION 6

/* Thread levels as the table passes them (MPI's own constants differ between MPIs). */
enum { GASNETI_MPI_SINGLE, GASNETI_MPI_FUNNELED, GASNETI_MPI_SERIALIZED, GASNETI_MPI_MULTIPLE };

/* What .state reports. */
enum {
  GASNETI_MPI_INITIALIZED = 1,   /* MPI_Init has run (the client's or ours) */
  GASNETI_MPI_BY_US = 2,         /* ... and it was ours */
  GASNETI_MPI_FINALIZED = 4,     /* MPI_Finalize has run */
  GASNETI_MPI_DEFERRED = 8,      /* the client asked for MPI_Finalize while GASNet needs MPI */
};

typedef struct {
  int version; /* GASNETI_MPI_OPS_VERSION */

  /* ---- the mpi spawner (bootstrap_mpi.c) ---- */
  /* Initializes MPI at thread_level (GASNETI_MPI_*) unless the client already did (then
   * *provided is the level it got), and duplicates MPI_COMM_WORLD for the collectives. */
  int (*init)(int *argc, char ***argv, int thread_level, int *rank, int *size, int *provided);
  int (*allgather)(const void *mine, size_t len, void *all);
  int (*bcast)(void *buf, size_t len, int root);
  int (*barrier)(void);
  /* A clean exit: cancels the conduit's receives, frees the communicators and finalizes MPI
   * (whoever initialized it: a rank that exits without MPI_Finalize is an error to MPI's
   * launchers) unless it is finalized already. */
  int (*finalize)(void);
  void (*abort)(int code);
  void (*error)(int code, char *text, size_t max);
  int (*state)(void);            /* GASNETI_MPI_* bits */
  void (*defer_finalize)(void);  /* the client's MPI_Finalize, held until the exit */
  /* The ranks' last rendezvous, which .finalize joins (and waits for) before MPI_Finalize: a
   * rank that returned from main joins it early and serves its peers until it completes. */
  int (*leave_start)(void);
  int (*leave_test)(int *done);

  /* ---- the mpi conduit: a private duplicate of MPI_COMM_WORLD, nrecv receive slots (each
   * pre-posted for any source) and nsend send slots, addressed by index ---- */
  int (*p2p_open)(int nrecv, int nsend);
  int (*recv_post)(int slot, void *buf, int cap);
  /* *done: whether slot's receive completed; then its source and length. */
  int (*recv_test)(int slot, int *done, int *src, int *len);
  /* Returns once slot's receive completed (MPI_Wait), with its source and length. */
  int (*recv_wait)(int slot, int *src, int *len);
  /* Sends head (and tail, when tail_len > 0, gathered after it in the same message, straight
   * from where it lies) to dest; the buffers stay untouched until the slot is reaped. */
  int (*send)(int slot, const void *head, int head_len, const void *tail, int tail_len,
              int dest);
  /* Slots whose sends completed (at most max); *n says how many. */
  int (*send_reap)(int *slots, int max, int *n);
  /* A payload as a message of its own, on a tag of its own (after its header, to the same
   * peer: MPI keeps their order), and its receipt straight where it belongs: recv_data
   * returns once it is there. */
  int (*send_data)(int slot, const void *buf, int len, int dest);
  int (*recv_data)(void *buf, int len, int src);

  /* ---- the benchmarks' raw baselines (csrc/bench/raw_mpi.h), on another duplicate ---- */
  int (*raw_open)(void);
  int (*raw_send)(const void *buf, int len, int dest);
  int (*raw_recv)(void *buf, int len, int src);
  /* Up to 64 nonblocking transfers in flight, then waited for together. */
  int (*raw_isend)(const void *buf, int len, int dest);
  int (*raw_irecv)(void *buf, int len, int src);
  int (*raw_waitall)(void);
  /* Whether those in flight completed (MPI_Testall: one pass of MPI's progress when not);
   * once they have, none is in flight. */
  int (*raw_testall)(int *done);
} gasneti_mpi_ops_t;

/* bootstrap_mpi.c: the plugin this process loaded, or NULL (no MPI in this job). */
const gasneti_mpi_ops_t *gasneti_mpi_loaded(void);
/* Which MPI (openmpi, mpich) the loaded plugin serves, or NULL. */
const char *gasneti_mpi_flavour(void);

#endif
