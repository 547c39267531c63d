/* mpi_plugin.h: the functions a per-MPI plugin (libgasnet-mpi-<flavour>.so, mpi_plugin.c
 * compiled against one MPI) offers the mpi spawner's bootstrap (bootstrap_mpi.c). The
 * runtime library itself is built without MPI, so its clients link nothing more and one
 * build serves Open MPI's and MPICH's launchers (their ABIs differ). Every function returns
 * 0 or an MPI error code, which gasneti_mpi_error describes. */
#ifndef GASNETI_MPI_PLUGIN_H
#define GASNETI_MPI_PLUGIN_H

#include <stddef.h>

/* thread_level: 0 SINGLE, 1 FUNNELED, 2 SERIALIZED, 3 MULTIPLE. Initializes MPI unless the
 * client already did (then it is left for the client to finalize). */
typedef int gasneti_mpi_init_fn(int *argc, char ***argv, int thread_level, int *rank,
                                int *size, int *provided);
typedef int gasneti_mpi_allgather_fn(const void *mine, size_t len, void *all);
typedef int gasneti_mpi_bcast_fn(void *buf, size_t len, int root);
typedef int gasneti_mpi_barrier_fn(void);
typedef int gasneti_mpi_finalize_fn(void);
typedef void gasneti_mpi_abort_fn(int code);
typedef void gasneti_mpi_error_fn(int code, char *text, size_t max);

#endif
