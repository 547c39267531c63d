/* mpi_interpose.c: MPI_Init, MPI_Init_thread, MPI_Finalize and MPI_Finalized for a hybrid
 * client (one that calls MPI itself), so that it may start MPI before gasnet_init, after it or
 * never, and finalize it before gasnet_exit or not at all. This object is linked only into a
 * client that calls one of them (a static library's member is taken for the symbols the
 * program lacks), ahead of its MPI library (the .mak's GASNET_LIBS come first), so these are
 * the definitions the client calls; they forward to MPI's profiling names (PMPI_*), which
 * the client's MPI library has, static or shared. No mpi.h: the signatures are ints and
 * pointers in every MPI, and one library serves Open MPI and MPICH. */
#include <stddef.h>

#include "mpi_plugin.h"

int PMPI_Init(int *argc, char ***argv);
int PMPI_Init_thread(int *argc, char ***argv, int required, int *provided);
int PMPI_Query_thread(int *provided);
int PMPI_Finalize(void);
int PMPI_Finalized(int *flag);

int MPI_Init(int *argc, char ***argv);
int MPI_Init_thread(int *argc, char ***argv, int required, int *provided);
int MPI_Finalize(void);
int MPI_Finalized(int *flag);

/* gasnet_init started MPI for this job (the client had not): a second MPI_Init would be an
 * error to MPI, so the client's is a no-op that succeeds. */
static int started_by_gasnet(void) {
  const gasneti_mpi_ops_t *ops = gasneti_mpi_loaded();
  return ops && (ops->state() & GASNETI_MPI_BY_US);
}

int MPI_Init(int *argc, char ***argv) {
  return started_by_gasnet() ? 0 : PMPI_Init(argc, argv);
}

/* The level MPI runs at is the one GASNET_MPI_THREAD asked for (MPI may grant less than
 * required: the client reads *provided). */
int MPI_Init_thread(int *argc, char ***argv, int required, int *provided) {
  if (started_by_gasnet()) return PMPI_Query_thread(provided);
  return PMPI_Init_thread(argc, argv, required, provided);
}

/* While GASNet runs over MPI (from gasnet_init to the process's end), the finalize waits for
 * its clean exit (gasnet_exit(0), or returning 0 from main), which makes it on every rank. */
int MPI_Finalize(void) {
  const gasneti_mpi_ops_t *ops = gasneti_mpi_loaded();
  if (ops && !(ops->state() & GASNETI_MPI_FINALIZED)) {
    ops->defer_finalize();
    return 0;
  }
  return PMPI_Finalize();
}

int MPI_Finalized(int *flag) {
  const gasneti_mpi_ops_t *ops = gasneti_mpi_loaded();
  if (ops && (ops->state() & GASNETI_MPI_DEFERRED)) {
    *flag = 1;
    return 0;
  }
  return PMPI_Finalized(flag);
}
