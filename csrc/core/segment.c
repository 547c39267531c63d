/* segment.c: how large a segment may be, and creating it at attach: in POSIX shared memory
 * when supernode peers will map it, in private memory when the rank is alone. */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "gasnet_internal.h"
#include "knobs.h"
#include "conduit.h"
#include "pshm/pshm.h"

/* GASNET_MAX_SEGSIZE and GASNET_PHYSMEM_MAX applied to this host's memory, its free shared
 * memory and its rank count (the same arithmetic gasnetrun -v shows). */
uintptr_t gasneti_segment_limit(void) {
  uint64_t phys = (uint64_t)sysconf(_SC_PHYS_PAGES) * (uint64_t)sysconf(_SC_PAGESIZE);
  uint64_t shm_free = 0;
  struct statvfs vfs;
  if (statvfs("/dev/shm", &vfs) == 0) shm_free = (uint64_t)vfs.f_bavail * vfs.f_frsize;
  char err[256];
  uint64_t limit = gasneti_segment_budget(gasneti_knob_text("GASNET_MAX_SEGSIZE"),
                                          gasneti_knob_text("GASNET_PHYSMEM_MAX"), phys, shm_free,
                                          gasneti_host_size,
                                          gasneti_pshm_host_bytes(gasneti_host_size),
                                          gasnetc_pinned_bytes, err, sizeof err);
  if (!limit) gasneti_fatalerror("%s", err);
  if (gasnetc_segment_cap && limit > gasnetc_segment_cap) limit = gasnetc_segment_cap & ~4095ull;
  if (!limit)
    gasneti_fatalerror("the network can register no memory for a segment: GASNET_PHYSMEM_PROBE "
                       "found too little pinnable memory (raise the memlock limit, ulimit -l)");
  if (limit > UINTPTR_MAX / 2) limit = UINTPTR_MAX / 2;
  return (uintptr_t)limit;
}

void gasneti_segment_attach(uintptr_t segsize) {
  bool shared = gasneti_snode_size > 1;
  void *base = NULL;
  if (segsize) {
    if (shared) {
      base = gasneti_shm_create('s', gasneti_mynode, segsize);
    } else {
      base = mmap(NULL, segsize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (base == MAP_FAILED)
        gasneti_fatalerror("mmap of a %lu-byte segment failed: %s", (unsigned long)segsize,
                           strerror(errno));
    }
  }
  /* Every rank's segment to every rank, as pages: 12 bytes a rank, not 16 (docs/scale.md). */
  uint8_t mine[2 * GASNETI_PAGES_BYTES];
  gasneti_pages_put(mine, (uintptr_t)base); /* mmap's, so whole pages */
  gasneti_pages_put(mine + GASNETI_PAGES_BYTES, segsize); /* gasnet_attach checked it */
  uint8_t *all = gasneti_calloc(gasneti_nodes, sizeof mine);
  gasneti_bootstrap_exchange(mine, sizeof mine, all); /* also: all segments exist */
  gasneti_seginfo = gasneti_calloc(gasneti_nodes, sizeof *gasneti_seginfo);
  for (int r = 0; r < (int)gasneti_nodes; r++) {
    const uint8_t *card = all + (size_t)r * sizeof mine;
    gasneti_seginfo[r].addr = (void *)(uintptr_t)gasneti_pages_get(card);
    gasneti_seginfo[r].size = (uintptr_t)gasneti_pages_get(card + GASNETI_PAGES_BYTES);
  }
  free(all);
  gasneti_pshm_attach_segments();
  gasneti_boot->barrier(); /* every peer mapped every segment: names can go */
  if (segsize && shared) gasneti_shm_unlink('s', gasneti_mynode);
}
