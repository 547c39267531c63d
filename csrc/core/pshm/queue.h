/* queue.h: the private state behind the host's AM queues, shared by pshm.c (set-up) and
 * queue.c (sending and polling). */
#ifndef GASNETI_PSHM_QUEUE_H
#define GASNETI_PSHM_QUEUE_H

#include <string.h>

#include "solo.h"
#include "pshm.h"
#include "wake.h"

/* Sender's private view of its ring in a peer's region. */
typedef struct {
  gasneti_ring_ctl_t *ctl;
  gasneti_slot_t *slots;
  uint8_t *doorbell; /* this sender's byte among the receiver's doorbells, or NULL */
  uint64_t *summary; /* its group's summary word at the receiver */
  uint64_t summary_id; /* this sender's rank, in the summary word's high half */
  uint32_t sent, acked_cache;
  int peer; /* the receiver's host-local index (to wake it) */
  gasneti_spinlock_t lock; /* PAR: client threads may send to one peer at once (solo.h) */
} gasneti_ring_tx_t;

/* Receiver's private view of one of its own rings. */
typedef struct {
  gasneti_ring_ctl_t *ctl;
  gasneti_slot_t *slots;
  const uint8_t *outbox; /* the sender's outbox of this kind, for payloads that travel there */
  uint32_t received;
  gasnet_node_t src;
  int peer; /* the sender's host-local index (to wake it when its ring has room again) */
} gasneti_ring_rx_t;

/* One of this rank's outboxes: chunks allocated in order, reclaimed in order once marked done.
 * Requests and replies have one each: a handler that replies while its peer's requests fill
 * the request outbox must still find room. */
typedef struct {
  uint8_t *base;
  size_t size;
  uint64_t head, tail; /* monotonic byte positions */
  gasneti_spinlock_t lock;
} gasneti_outbox_t;

typedef struct {
  gasneti_pshm_layout_t layout;
  uint32_t slot_mask;
  gasneti_ring_tx_t *tx[2]; /* [reply][receiver's host-local index] */
  gasneti_ring_rx_t *rx[2]; /* [reply][sender's host-local index] */
  const _Atomic uint64_t *summary[2];  /* [reply]: this rank's summary words */
  const _Atomic uint64_t *doorbell[2]; /* [reply]: this rank's doorbell bytes, as words */
  uint64_t *summary_seen[2]; /* [reply]: per group, the summary value last acted on */
  uint64_t *seen[2];        /* [reply]: per sender, the doorbell value last acted on */
  unsigned idle_polls[2];   /* [reply]: doorbell polls since the last full look */
  gasneti_outbox_t outbox[2]; /* [reply] */
  /* The host-local indices of the ranks that send to this one through these queues: its
   * supernode's others, or where the conduit carries the host's other supernodes through them
   * (GASNETC_HOST_QUEUES: smp) every other rank of the host. A rank never writes its own rings
   * (loopback AMs run directly), so a rank alone in its supernode has none to poll. */
  int *senders, nsenders;
} gasneti_queues_t;

extern gasneti_queues_t gasneti_queues;

/* ---- sending: the fast path is inline, so an AM send is one function deep -------------- */
static inline gasneti_slot_t *gasneti_slot_at(gasneti_slot_t *slots, uint32_t count) {
  return &slots[count & gasneti_queues.slot_mask];
}

/* Inline payloads start 16-byte aligned after the arguments (any datatype fits there). */
static inline uint32_t gasneti_inline_offset(int nargs) {
  return (uint32_t)GASNETI_ALIGNUP(32 + 4 * (uint32_t)nargs, 16);
}

/* Room for len payload bytes in this rank's outbox of the kind: its offset, or SIZE_MAX when
 * the outbox has none yet (queue.c). */
size_t gasneti_outbox_reserve(int reply, uint32_t len);
/* Copies a payload too large for the slot into this rank's outbox of the kind; false when the
 * outbox has no room yet. */
bool gasneti_outbox_place(gasneti_slot_t *s, const gasneti_am_t *am, int reply, uint8_t *flags);
/* The rest of a send whose ring or outbox was full: serves this rank's queues until it fits. */
void gasneti_pshm_send_wait(int host_index, int reply, const gasneti_am_t *am, void *long_dst);

/* Fills the slot after the sender's count with the message and publishes it (the caller holds
 * the ring, and the slot is free); the payload, if any, is already in place. */
static inline __attribute__((always_inline)) void gasneti_pshm_publish(gasneti_ring_tx_t *tx,
                                                                       gasneti_slot_t *s,
                                                                       const gasneti_am_t *am,
                                                                       uint8_t flags) {
  s->handler = am->handler;
  s->category = am->category;
  s->flags = flags;
  s->nargs = am->nargs;
  s->nbytes = am->nbytes;
  s->chunk = am->chunk;
  s->dst = am->dst;
  if (am->nargs) memcpy(s->args, am->args, sizeof(gasnet_handlerarg_t) * am->nargs);
  tx->sent++;
  atomic_store_explicit(&s->stamp, tx->sent, memory_order_release);
  /* After the slot (x86 keeps stores in order): a receiver that sees the new count finds the
   * message. Plain stores: the receiver only compares them with what it last saw. The group's
   * summary word holds who wrote last and its full count, so it never repeats a value the
   * receiver recorded before draining that sender (queue.c). */
  if (tx->doorbell) {
    __atomic_store_n(tx->doorbell, (uint8_t)tx->sent, __ATOMIC_RELEASE);
    __atomic_store_n(tx->summary, tx->summary_id | tx->sent, __ATOMIC_RELEASE);
  }
}

/* Whether the ring has a free slot (the caller holds it). */
static inline __attribute__((always_inline)) bool gasneti_pshm_ring_room(gasneti_ring_tx_t *tx) {
  uint32_t slots = gasneti_queues.layout.slots;
  if (GASNETI_UNLIKELY((uint32_t)(tx->sent - tx->acked_cache) >= slots)) {
    tx->acked_cache = atomic_load_explicit(&tx->ctl->acked, memory_order_acquire);
    if ((uint32_t)(tx->sent - tx->acked_cache) >= slots) return false;
  }
  return true;
}

/* long_dst: where a Long's payload lands through this process's mapping of the target
 * segment (NULL for other messages, whose chunk travels in the slot or the outbox): copied
 * only once the message has its slot, so that a send that cannot go yet (GEX_FLAG_IMMEDIATE)
 * has written nothing. */
static inline __attribute__((always_inline)) bool gasneti_pshm_try_send(gasneti_ring_tx_t *tx, int reply,
                                         const gasneti_am_t *am, void *long_dst) {
  bool solo = gasneti_solo_lock(&tx->lock);
  if (!gasneti_pshm_ring_room(tx)) {
    gasneti_solo_unlock(&tx->lock, solo);
    return false;
  }
  gasneti_slot_t *s = gasneti_slot_at(tx->slots, tx->sent);
  uint8_t flags = am->flags;
  if (am->chunk) {
    if (am->chunk <= GASNETI_PSHM_SLOT_BYTES - gasneti_inline_offset(am->nargs)) {
      flags |= GASNETI_SLOT_INLINE;
      memcpy((uint8_t *)s + gasneti_inline_offset(am->nargs), am->payload, am->chunk);
    } else if (!gasneti_outbox_place(s, am, reply, &flags)) {
      gasneti_solo_unlock(&tx->lock, solo);
      return false;
    }
  }
  if (long_dst && am->nbytes) memcpy(long_dst, am->payload, am->nbytes);
  gasneti_pshm_publish(tx, s, am, flags);
  gasneti_solo_unlock(&tx->lock, solo);
  gasneti_wake_peer(tx->peer);
  return true;
}

/* Blocking send to a host peer (host-local index): while its ring or this rank's outbox is
 * full, serves this rank's own queues. The payload is copied before it returns. */
static inline void gasneti_pshm_send(int host_index, int reply, const gasneti_am_t *am,
                                     void *long_dst) {
  if (GASNETI_LIKELY(gasneti_pshm_try_send(&gasneti_queues.tx[reply][host_index], reply, am,
                                           long_dst)))
    return;
  gasneti_pshm_send_wait(host_index, reply, am, long_dst);
}

/* Negotiated payload (queue_np.c): a slot, and room for up to `bytes` of payload in it or in
 * this rank's outbox, reserved for a message of nargs arguments to a host peer; *payload is
 * where the client writes it. The ring stays held (PAR) until gasneti_pshm_np_commit. false,
 * holding nothing, when immediate and there is no room now; otherwise it waits for room. */
typedef struct {
  gasneti_ring_tx_t *tx;
  gasneti_slot_t *slot;
  bool solo;
  uint8_t flags; /* GASNETI_SLOT_INLINE or _OUTBOX (or 0: no payload room) */
  uint8_t reply;
} gasneti_pshm_np_t;
bool gasneti_pshm_np_reserve(gasneti_pshm_np_t *np, int host_index, int reply, int nargs,
                             size_t bytes, void **payload, bool immediate);
/* Sends the reserved message (am: its header; am->chunk the payload bytes written). */
void gasneti_pshm_np_commit(gasneti_pshm_np_t *np, const gasneti_am_t *am);

/* The rings of (region, kind, sender) and the pieces of a region, by the layout. */
gasneti_ring_ctl_t *gasneti_ring_at(gasneti_region_t *r, int reply, int sender);
uint8_t *gasneti_doorbells_at(gasneti_region_t *r, int reply);
uint8_t *gasneti_outbox_at(gasneti_region_t *r, int reply);

#endif
