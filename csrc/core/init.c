/* init.c: gasnet_init and gasnet_attach, handler registration, and the job queries.
 * Order matters: bootstrap, exit handling, host map, PSHM regions, conduit; then attach. */
#include <string.h>
#include <unistd.h>

#include "conduit.h"
#include "gasnet_internal.h"
#include "knobs.h"
#include "pshm/pshm.h"
#include "rma/rma.h"

gasnet_node_t gasneti_mynode, gasneti_nodes;
int gasneti_init_done, gasneti_attach_done;
char gasneti_hostname[64];
char gasneti_jobid[32];
const gasneti_bootstrap_t *gasneti_boot;
gasnet_seginfo_t *gasneti_seginfo;
static uintptr_t max_local_segment, max_global_segment;

int gasnet_init(int *argc, char ***argv) {
  if (gasneti_init_done) {
    gasneti_warning("gasnet_init called a second time");
    return GASNET_ERR_RESOURCE;
  }
  gasneti_boot = gasnetc_bootstrap_open(argc, argv);
  if (gasneti_boot->size > GASNET_MAXNODES)
    gasneti_fatalerror("a job of %d ranks exceeds GASNET_MAXNODES (%d)", gasneti_boot->size,
                       GASNET_MAXNODES);
  gasneti_mynode = (gasnet_node_t)gasneti_boot->rank;
  gasneti_nodes = (gasnet_node_t)gasneti_boot->size;
  snprintf(gasneti_jobid, sizeof gasneti_jobid, "%s", gasneti_boot->jobid);
  if (gethostname(gasneti_hostname, sizeof gasneti_hostname - 1) != 0)
    strcpy(gasneti_hostname, "localhost");
  gasneti_exit_init();
  gasneti_hostmap_build();
  gasneti_pshm_init();
  gasneti_wait_init();
  gasnetc_init();

  max_local_segment = gasneti_segment_limit();
  uint64_t mine = max_local_segment, *all = gasneti_calloc(gasneti_nodes, sizeof *all);
  gasneti_boot->exchange(&mine, sizeof mine, all);
  max_global_segment = max_local_segment;
  for (int i = 0; i < gasneti_nodes; i++)
    if (all[i] < max_global_segment) max_global_segment = (uintptr_t)all[i];
  free(all);
  gasneti_init_done = 1;
  return GASNET_OK;
}

uintptr_t gasnet_getMaxLocalSegmentSize(void) {
  if (!gasneti_init_done) gasneti_fatalerror("gasnet_getMaxLocalSegmentSize before gasnet_init");
  return max_local_segment;
}

uintptr_t gasnet_getMaxGlobalSegmentSize(void) {
  if (!gasneti_init_done) gasneti_fatalerror("gasnet_getMaxGlobalSegmentSize before gasnet_init");
  return max_global_segment;
}

/* Fixed indices first, then "don't care" entries get the lowest free client index, so the same
 * table gives the same assignment on every rank. */
static int register_handlers(gasnet_handlerentry_t *table, int n) {
  bool used[256] = {false};
  for (int i = 0; i < n; i++) {
    int idx = table[i].index;
    if (!table[i].fnptr) {
      gasneti_warning("gasnet_attach: handler table entry %d has a NULL function", i);
      return GASNET_ERR_BAD_ARG;
    }
    if (idx == 0) continue;
    if (idx < GASNETI_HANDLER_FIRST_CLIENT) {
      gasneti_warning("gasnet_attach: handler index %d is reserved: client indices are "
                      "128..255, or 0 to have one assigned", idx);
      return GASNET_ERR_BAD_ARG;
    }
    if (used[idx]) {
      gasneti_warning("gasnet_attach: handler index %d appears twice in the table", idx);
      return GASNET_ERR_BAD_ARG;
    }
    used[idx] = true;
  }
  int next = GASNETI_HANDLER_FIRST_CLIENT;
  for (int i = 0; i < n; i++) {
    if (table[i].index != 0) continue;
    while (next < 256 && used[next]) next++;
    if (next == 256) {
      gasneti_warning("gasnet_attach: more than 128 client handlers");
      return GASNET_ERR_BAD_ARG;
    }
    used[next] = true;
    table[i].index = (gasnet_handler_t)next;
  }
  for (int i = 0; i < n; i++) gasneti_handlers[table[i].index] = (gasneti_handler_fn)table[i].fnptr;
  return GASNET_OK;
}

int gasnet_attach(gasnet_handlerentry_t *table, int numentries, uintptr_t segsize,
                  uintptr_t minheapoffset) {
  (void)minheapoffset; /* segments are mmap'd away from the heap; nothing to reserve */
  if (!gasneti_init_done) return GASNET_ERR_NOT_INIT;
  if (gasneti_attach_done) {
    gasneti_warning("gasnet_attach called a second time");
    return GASNET_ERR_RESOURCE;
  }
  if (numentries < 0 || (numentries > 0 && !table)) return GASNET_ERR_BAD_ARG;
  if (segsize % GASNET_PAGESIZE) {
    gasneti_warning("gasnet_attach: segsize %lu is not a multiple of GASNET_PAGESIZE (%d)",
                    (unsigned long)segsize, GASNET_PAGESIZE);
    return GASNET_ERR_BAD_ARG;
  }
  if (segsize > max_local_segment) {
    gasneti_warning("gasnet_attach: segsize %lu exceeds gasnet_getMaxLocalSegmentSize() = %lu "
                    "(raise GASNET_MAX_SEGSIZE or free shared memory)",
                    (unsigned long)segsize, (unsigned long)max_local_segment);
    return GASNET_ERR_BAD_ARG;
  }
  int rc = register_handlers(table, numentries);
  if (rc != GASNET_OK) return rc;
  gasneti_segment_attach(segsize);
  gasneti_barrier_init();
  gasneti_rma_am_init();
  gasneti_boot->barrier(); /* every rank's handlers and segment are ready */
  gasneti_attach_done = 1;
  return GASNET_OK;
}

int gasnet_getSegmentInfo(gasnet_seginfo_t *table, int numentries) {
  if (!gasneti_attach_done) return GASNET_ERR_NOT_INIT;
  if (numentries < 0 || (numentries > 0 && !table)) return GASNET_ERR_BAD_ARG;
  int n = numentries < gasneti_nodes ? numentries : gasneti_nodes;
  memcpy(table, gasneti_seginfo, sizeof(gasnet_seginfo_t) * (size_t)n);
  return GASNET_OK;
}

int gasnet_getNodeInfo(gasnet_nodeinfo_t *table, int numentries) {
  if (!gasneti_init_done) return GASNET_ERR_NOT_INIT;
  if (numentries < 0 || (numentries > 0 && !table)) return GASNET_ERR_BAD_ARG;
  int n = numentries < gasneti_nodes ? numentries : gasneti_nodes;
  for (int i = 0; i < n; i++) {
    table[i].host = gasneti_host_of[i];
    table[i].supernode = gasneti_supernode_of[i];
    table[i].offset = gasneti_pshm_offset[i];
  }
  return GASNET_OK;
}
