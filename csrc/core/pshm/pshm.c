/* pshm.c: set-up of the host's shared regions and the supernode's cross-mapped segments,
 * and the poll loop over incoming rings. Every object is unlinked once all peers mapped it. */
#include "pshm.h"

#include <string.h>
#include <sys/mman.h>

gasneti_region_t **gasneti_regions;
gasneti_region_t *gasneti_host_leader_region;
gasneti_ring_tx_t *gasneti_tx[2];
static gasneti_ring_rx_t *rx_rings[2]; /* [reply][host-local index of the sender] */
static size_t region_bytes;

void gasneti_pshm_init(void) {
  int n = gasneti_host_size, me = gasneti_host_index;
  region_bytes = GASNETI_ALIGNUP(sizeof(gasneti_region_t) + sizeof(gasneti_ring_t) * 2 * (size_t)n,
                                 GASNET_PAGESIZE);
  gasneti_regions = gasneti_calloc((size_t)n, sizeof *gasneti_regions);
  gasneti_region_t *mine = gasneti_shm_create('q', gasneti_mynode, region_bytes);
  atomic_store(&mine->exit_code, GASNETI_EXIT_NONE);
  gasneti_regions[me] = mine;
  gasneti_boot->barrier(); /* every region exists */
  for (int i = 0; i < n; i++)
    if (i != me) gasneti_regions[i] = gasneti_shm_map('q', gasneti_host_peers[i], region_bytes);
  gasneti_boot->barrier(); /* every region is mapped by every peer: names can go */
  gasneti_shm_unlink('q', gasneti_mynode);
  gasneti_host_leader_region = gasneti_regions[0];

  for (int reply = 0; reply < 2; reply++) {
    gasneti_tx[reply] = gasneti_calloc((size_t)n, sizeof(gasneti_ring_tx_t));
    rx_rings[reply] = gasneti_calloc((size_t)n, sizeof(gasneti_ring_rx_t));
    for (int i = 0; i < n; i++) {
      gasneti_tx[reply][i].ring = gasneti_region_ring(gasneti_regions[i], me, reply);
      gasneti_tx[reply][i].lock = (gasneti_spinlock_t)GASNETI_SPINLOCK_INIT;
      rx_rings[reply][i].ring = gasneti_region_ring(mine, i, reply);
    }
  }
}

void gasneti_pshm_attach_segments(void) {
  for (int i = 0; i < gasneti_snode_size; i++) {
    gasnet_node_t peer = gasneti_snode_peers[i];
    if (peer == gasneti_mynode || gasneti_seginfo[peer].size == 0) continue;
    void *local = gasneti_shm_map('s', peer, gasneti_seginfo[peer].size);
    gasneti_pshm_offset[peer] = (uintptr_t)local - (uintptr_t)gasneti_seginfo[peer].addr;
  }
}

#if GASNETI_THREADS
/* One thread at a time drains each kind of ring; others find the work being done. */
static gasneti_spinlock_t poll_lock[2] = {GASNETI_SPINLOCK_INIT, GASNETI_SPINLOCK_INIT};
#endif

static int drain_kind(int reply) {
#if GASNETI_THREADS
  if (!gasneti_spin_trylock(&poll_lock[reply])) return 0;
#endif
  int ran = 0;
  gasneti_ring_rx_t *rx = rx_rings[reply];
  for (int i = 0; i < gasneti_host_size; i++)
    if (gasneti_ring_ready(&rx[i])) ran += gasneti_ring_drain(&rx[i], gasneti_host_peers[i], !reply, 32);
#if GASNETI_THREADS
  gasneti_spin_unlock(&poll_lock[reply]);
#endif
  return ran;
}

int gasneti_pshm_poll(int which) {
  int ran = 0;
  if (which & GASNETI_POLL_REPLIES) ran += drain_kind(1);
  if (which & GASNETI_POLL_REQUESTS) ran += drain_kind(0);
  return ran;
}

void gasneti_pshm_send(int host_index, int reply, const gasneti_msg_t *msg) {
  gasneti_ring_tx_t *tx = &gasneti_tx[reply][host_index];
  /* A full ring drains only if this rank keeps serving its own queues; handlers may only
   * drain replies (they cannot run requests re-entrantly). */
  int which = (reply || gasneti_am_context != GASNETI_CTX_CLIENT) ? GASNETI_POLL_REPLIES
                                                                  : GASNETI_POLL_ALL;
  while (!gasneti_ring_try_send(tx, msg)) {
    if (!gasneti_poll(which)) gasneti_wait_backoff();
  }
}
