/* pshm.c: set-up of the host's shared regions (one per rank: its incoming rings, doorbells
 * and outbox) and the supernode's cross-mapped segments. Every object is unlinked as soon as
 * all peers mapped it. */
#include <string.h>
#include <sys/mman.h>

#include "queue.h"
#include "trace/trace.h"
#include "wake.h"

gasneti_region_t **gasneti_regions;
gasneti_region_t *gasneti_host_leader_region;

gasneti_ring_ctl_t *gasneti_ring_at(gasneti_region_t *r, int reply, int sender) {
  const gasneti_pshm_layout_t *l = &gasneti_queues.layout;
  size_t index = (size_t)reply * (size_t)gasneti_host_size + (size_t)sender;
  return (gasneti_ring_ctl_t *)((uint8_t *)r + l->rings_off + index * l->ring_bytes);
}

uint8_t *gasneti_doorbells_at(gasneti_region_t *r, int reply) {
  const gasneti_pshm_layout_t *l = &gasneti_queues.layout;
  return (uint8_t *)r + l->doorbell_off + (size_t)reply * l->doorbell_bytes;
}

uint8_t *gasneti_outbox_at(gasneti_region_t *r, int reply) {
  const gasneti_pshm_layout_t *l = &gasneti_queues.layout;
  return (uint8_t *)r + l->outbox_off + (size_t)reply * l->outbox_bytes;
}

static gasneti_slot_t *slots_of(gasneti_ring_ctl_t *ctl) { return (gasneti_slot_t *)(ctl + 1); }

static void setup_queues(void) {
  gasneti_queues_t *q = &gasneti_queues;
  int n = gasneti_host_size, me = gasneti_host_index;
  gasneti_region_t *mine = gasneti_regions[me];
  q->slot_mask = q->layout.slots - 1;
  for (int reply = 0; reply < 2; reply++) {
    q->outbox[reply] = (gasneti_outbox_t){.base = gasneti_outbox_at(mine, reply),
                                          .size = q->layout.outbox_bytes,
                                          .lock = GASNETI_SPINLOCK_INIT};
    q->tx[reply] = gasneti_calloc((size_t)n, sizeof(gasneti_ring_tx_t));
    q->rx[reply] = gasneti_calloc((size_t)n, sizeof(gasneti_ring_rx_t));
    uint8_t *bells = gasneti_doorbells_at(mine, reply);
    q->summary[reply] = (const _Atomic uint64_t *)bells;
    q->doorbell[reply] = (const _Atomic uint64_t *)(bells + q->layout.summary_bytes);
    q->summary_seen[reply] = gasneti_calloc(q->layout.summary_bytes / 8 + 1, sizeof(uint64_t));
    q->seen[reply] = gasneti_calloc((size_t)(n + 7) / 8, sizeof(uint64_t));
    for (int i = 0; i < n; i++) {
      gasneti_ring_tx_t *tx = &q->tx[reply][i];
      tx->ctl = gasneti_ring_at(gasneti_regions[i], reply, me);
      tx->slots = slots_of(tx->ctl);
      if (q->layout.doorbells) {
        uint8_t *bells = gasneti_doorbells_at(gasneti_regions[i], reply);
        tx->summary = (uint64_t *)bells + me / GASNETI_PSHM_GROUP;
        tx->doorbell = bells + q->layout.summary_bytes + me;
        tx->summary_id = (uint64_t)me << 32;
      }
      tx->peer = i;
      tx->lock = (gasneti_spinlock_t)GASNETI_SPINLOCK_INIT;
      gasneti_ring_rx_t *rx = &q->rx[reply][i];
      rx->ctl = gasneti_ring_at(mine, reply, i);
      rx->slots = slots_of(rx->ctl);
      rx->outbox = gasneti_outbox_at(gasneti_regions[i], reply);
      rx->src = gasneti_host_peers[i];
      rx->peer = i;
    }
  }
  q->senders = gasneti_calloc((size_t)n, sizeof(int));
  q->nsenders = 0;
  for (int i = 0; i < n; i++) {
#ifdef GASNETC_HOST_QUEUES
    bool sends = i != me;
#else
    bool sends = i != me && gasneti_pshm_reach[gasneti_host_peers[i]];
#endif
    if (sends) q->senders[q->nsenders++] = i;
  }
}

void gasneti_pshm_init(void) {
  int n = gasneti_host_size, me = gasneti_host_index;
  gasneti_pshm_layout(n, &gasneti_queues.layout);
  size_t bytes = gasneti_queues.layout.region_bytes;
  gasneti_regions = gasneti_calloc((size_t)n, sizeof *gasneti_regions);
  gasneti_region_t *mine = gasneti_shm_create('q', gasneti_mynode, bytes);
  atomic_store(&mine->exit_code, GASNETI_EXIT_NONE);
  atomic_store(&mine->exit_phase, 0);
  gasneti_regions[me] = mine;
  gasneti_boot->barrier(); /* every region exists */
  for (int i = 0; i < n; i++)
    if (i != me) gasneti_regions[i] = gasneti_shm_map('q', gasneti_host_peers[i], bytes);
  gasneti_boot->barrier(); /* every region is mapped by every peer: names can go */
  gasneti_shm_unlink('q', gasneti_mynode);
  gasneti_host_leader_region = gasneti_regions[0];
  setup_queues();
  gasneti_solo_init(); /* still one thread: the queues' locks may now be skipped (solo.h) */
}

void gasneti_pshm_attach_segments(void) {
  gasneti_wake_attach(); /* every rank of the host said whether it sleeps (gasnet_init) */
  for (int i = 0; i < gasneti_snode_size; i++) {
    gasnet_node_t peer = gasneti_snode_peers[i];
    if (peer == gasneti_mynode || gasneti_seginfo[peer].size == 0) continue;
    void *local = gasneti_shm_map('s', peer, gasneti_seginfo[peer].size);
    gasneti_pshm_offset[peer] = (uintptr_t)local - (uintptr_t)gasneti_seginfo[peer].addr;
  }
  /* The inline paths go direct from now on: to this rank's own segment and to every mapped
   * peer's (a peer without a segment stays far: its AM path reports the bad address).
   * A rank that traces or counts keeps them far, so that every transfer reaches the library
   * (csrc/core/trace), which goes direct through gasneti_trace_direct. */
  /* So does a rank whose host peers may sleep (wake.h), for its puts to them: a peer waiting
   * for the bytes of a put must be woken. Its own segment stays inline. */
  uintptr_t *direct = gasneti_trace_active ? gasneti_trace_direct : gasneti_pshm_direct;
  if (gasneti_wake_on && !gasneti_trace_active) {
    gasneti_trace_direct = gasneti_calloc(gasneti_nodes, sizeof *gasneti_trace_direct);
    for (int r = 0; r < (int)gasneti_nodes; r++) gasneti_trace_direct[r] = GASNETI_PSHM_FAR;
    gasneti_pshm_direct[gasneti_mynode] = gasneti_pshm_offset[gasneti_mynode];
    direct = gasneti_trace_direct;
  }
  for (int i = 0; i < gasneti_snode_size; i++) {
    gasnet_node_t peer = gasneti_snode_peers[i];
    if (peer == gasneti_mynode || gasneti_seginfo[peer].size != 0)
      direct[peer] = gasneti_pshm_offset[peer];
  }
}
