/* pmi_kvs.h: what the pmi spawner needs from a process manager interface that offers only a
 * key-value store of short strings (PMI-1, PMI-2), and the bootstrap built on it
 * (pmi_kvs.c): binary blobs are hex-encoded and split into values the protocol accepts. */
#ifndef GASNETI_PMI_KVS_H
#define GASNETI_PMI_KVS_H

#include <stddef.h>

#include "bootstrap.h"

typedef struct gasneti_pmi_kvs {
  const char *protocol;  /* "PMI-1", "PMI-2": named in error messages */
  size_t value_max;      /* the longest value the protocol carries, without its NUL */
  int rank, size;
  int abort_on_error_exit; /* a rank ending the job with an error aborts through the server */
  char job[256];         /* the job's name in the process manager: its kvs or job id */
  void (*put)(const char *key, const char *value);
  void (*fence)(void);   /* collective: every rank's puts are visible to every rank after */
  /* The value put under key by rank (into value[max]); fatal if there is none. */
  void (*get)(int rank, const char *key, char *value, size_t max);
  void (*finalize)(void);
  void (*abort)(int code);
} gasneti_pmi_kvs_t;

/* Fills a bootstrap whose collectives run over kvs (which must outlive it). */
void gasneti_pmi_kvs_bootstrap(const gasneti_pmi_kvs_t *kvs, gasneti_bootstrap_t *boot);

/* The PMI-1 wire protocol over the socket in PMI_FD (MPICH's Hydra), and PMI-2 through
 * Slurm's libpmi2 (srun --mpi=pmi2): each returns NULL when it did not start this process. */
const gasneti_pmi_kvs_t *gasneti_pmi1_wire_open(void);
const gasneti_pmi_kvs_t *gasneti_pmi2_open(void);
/* PMIx (Slurm's srun --mpi=pmix, Open MPI's mpirun); NULL when not started by PMIx. */
const gasneti_bootstrap_t *gasneti_pmix_open(void);

#endif
