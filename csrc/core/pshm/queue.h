/* queue.h: the private state behind the host's AM queues, shared by pshm.c (set-up) and
 * queue.c (sending and polling). */
#ifndef GASNETI_PSHM_QUEUE_H
#define GASNETI_PSHM_QUEUE_H

#include "pshm.h"

/* Sender's private view of its ring in a peer's region. */
typedef struct {
  gasneti_ring_ctl_t *ctl;
  gasneti_slot_t *slots;
  uint8_t *doorbell; /* this sender's byte among the receiver's doorbells, or NULL */
  uint32_t sent, acked_cache;
  gasneti_spinlock_t lock; /* PAR: client threads may send to one peer at once */
} gasneti_ring_tx_t;

/* Receiver's private view of one of its own rings. */
typedef struct {
  gasneti_ring_ctl_t *ctl;
  gasneti_slot_t *slots;
  const uint8_t *outbox; /* the sender's outbox of this kind, for payloads that travel there */
  uint32_t received;
  gasnet_node_t src;
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
  const _Atomic uint64_t *doorbell[2]; /* [reply]: this rank's doorbells, as words */
  uint64_t *seen[2];        /* [reply]: per sender, the doorbell value last acted on */
  gasneti_outbox_t outbox[2]; /* [reply] */
} gasneti_queues_t;

extern gasneti_queues_t gasneti_queues;

/* The rings of (region, kind, sender) and the pieces of a region, by the layout. */
gasneti_ring_ctl_t *gasneti_ring_at(gasneti_region_t *r, int reply, int sender);
uint8_t *gasneti_doorbells_at(gasneti_region_t *r, int reply);
uint8_t *gasneti_outbox_at(gasneti_region_t *r, int reply);

#endif
