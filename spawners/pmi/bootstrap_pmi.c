/* bootstrap_pmi.c: the rank's half of the pmi spawner: which process manager interface
 * started this rank. PMIx where the server offers it (srun --mpi=pmix, Open MPI's mpirun),
 * else PMI-2 (srun --mpi=pmi2), else the PMI-1 wire protocol (MPICH's Hydra). */
#include <stdlib.h>
#include <string.h>

#include "pmi_kvs.h"

#include "gasnet_internal.h"

static gasneti_bootstrap_t kvs_boot;

const gasneti_bootstrap_t *gasneti_bootstrap_pmi_open(int *argc, char ***argv) {
  (void)argc, (void)argv;
  /* gasnetrun's mpi spawner also runs under these launchers; its ranks are its own. */
  const char *chosen = getenv("GASNETRUN_SPAWNER");
  if (chosen && *chosen && strcmp(chosen, "pmi")) return NULL;
#ifdef GASNETI_HAVE_PMIX
  const gasneti_bootstrap_t *pmix = gasneti_pmix_open();
  if (pmix) return pmix;
#endif
  const gasneti_pmi_kvs_t *kvs = gasneti_pmi2_open();
  if (!kvs) kvs = gasneti_pmi1_wire_open();
  if (!kvs && chosen && *chosen)
    gasneti_fatalerror("pmi spawner: gasnetrun started this rank through a launcher that offers "
                       "no PMI (none of PMIX_NAMESPACE, PMI_FD is set): give it one in "
                       "PMIRUN_CMD (e.g. srun --mpi=pmix)");
  if (!kvs) return NULL;
  gasneti_pmi_kvs_bootstrap(kvs, &kvs_boot);
  return &kvs_boot;
}
