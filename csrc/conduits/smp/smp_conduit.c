/* smp_conduit.c: bringing the smp conduit up: every rank on this one host, started by
 * gasnetrun, by forking (GASNET_PSHM_NODES), or alone. */
#include "../../core/conduit.h"

const gasneti_bootstrap_t *gasnetc_bootstrap_open(int *argc, char ***argv) {
  const gasneti_bootstrap_t *boot = gasneti_bootstrap_local_open();
  if (!boot) boot = gasnetc_bootstrap_fork_open(argc, argv);
  if (!boot) boot = gasneti_bootstrap_single_open();
  return boot;
}

void gasnetc_init(void) {
  if (gasneti_host_count != 1)
    gasneti_fatalerror("the smp conduit runs on one host, but this job's ranks are on %d hosts "
                       "(use a network conduit)",
                       (int)gasneti_host_count);
}
