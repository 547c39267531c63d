/* mpi_plugin.c: the mpi spawner's collectives over MPI_COMM_WORLD, compiled once per MPI
 * found (Open MPI, MPICH) into libgasnet-mpi-<flavour>.so and loaded by bootstrap_mpi.c.
 * A private duplicate of MPI_COMM_WORLD keeps our traffic apart from a client's own MPI. */
#include <limits.h>
#include <stdio.h>

#include <mpi.h>

#include "mpi_plugin.h"

static MPI_Comm comm = MPI_COMM_NULL;
static int we_initialized;

gasneti_mpi_init_fn gasneti_mpi_init;
gasneti_mpi_allgather_fn gasneti_mpi_allgather;
gasneti_mpi_bcast_fn gasneti_mpi_bcast;
gasneti_mpi_barrier_fn gasneti_mpi_barrier;
gasneti_mpi_finalize_fn gasneti_mpi_finalize;
gasneti_mpi_abort_fn gasneti_mpi_abort;
gasneti_mpi_error_fn gasneti_mpi_error;

int gasneti_mpi_init(int *argc, char ***argv, int thread_level, int *rank, int *size,
                     int *provided) {
  static const int levels[] = {MPI_THREAD_SINGLE, MPI_THREAD_FUNNELED, MPI_THREAD_SERIALIZED,
                               MPI_THREAD_MULTIPLE};
  int already = 0, rc;
  if ((rc = MPI_Initialized(&already))) return rc;
  if (already) {
    if ((rc = MPI_Query_thread(provided))) return rc;
  } else {
    if ((rc = MPI_Init_thread(argc, argv, levels[thread_level & 3], provided))) return rc;
    we_initialized = 1;
  }
  for (int i = 0; i < 4; i++)
    if (*provided == levels[i]) *provided = i;
  /* Errors come back as codes, which the bootstrap reports with its own context. */
  if ((rc = MPI_Comm_dup(MPI_COMM_WORLD, &comm))) return rc;
  if ((rc = MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN))) return rc;
  if ((rc = MPI_Comm_rank(comm, rank))) return rc;
  return MPI_Comm_size(comm, size);
}

int gasneti_mpi_allgather(const void *mine, size_t len, void *all) {
  if (len > INT_MAX) return MPI_ERR_COUNT;
  return MPI_Allgather(mine, (int)len, MPI_BYTE, all, (int)len, MPI_BYTE, comm);
}

int gasneti_mpi_bcast(void *buf, size_t len, int root) {
  if (len > INT_MAX) return MPI_ERR_COUNT;
  return MPI_Bcast(buf, (int)len, MPI_BYTE, root, comm);
}

int gasneti_mpi_barrier(void) { return MPI_Barrier(comm); }

int gasneti_mpi_finalize(void) {
  if (comm != MPI_COMM_NULL) MPI_Comm_free(&comm);
  return we_initialized ? MPI_Finalize() : 0;
}

void gasneti_mpi_abort(int code) { MPI_Abort(MPI_COMM_WORLD, code); }

void gasneti_mpi_error(int code, char *text, size_t max) {
  char msg[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(code, msg, &len) != MPI_SUCCESS) len = 0;
  snprintf(text, max, "%.*s", len, msg);
}
