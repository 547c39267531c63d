/* ring.c: the single-producer, single-consumer AM rings between two ranks of a host.
 * The sender fills a slot (and payload bytes) and publishes it with one release store. */
#include <string.h>

#include "pshm.h"

static inline uint32_t inline_offset(int nargs) {
  /* Inline payloads start 16-byte aligned after the arguments (any datatype fits there). */
  return (uint32_t)GASNETI_ALIGNUP(32 + 4 * (uint32_t)nargs, 16);
}

static inline uint32_t inline_capacity(int nargs) {
  return GASNETI_SLOT_BYTES - inline_offset(nargs);
}

/* Reserve payload bytes in the byte ring; returns the start (monotonic) or UINT64_MAX. */
static uint64_t reserve_payload(gasneti_ring_tx_t *tx, uint32_t len) {
  uint64_t need = GASNETI_ALIGNUP(len, GASNETI_CACHELINE);
  uint64_t pos = tx->pay_head % GASNETI_RING_PAYLOAD;
  uint64_t skip = (pos + need > GASNETI_RING_PAYLOAD) ? GASNETI_RING_PAYLOAD - pos : 0;
  uint64_t end = tx->pay_head + skip + need;
  if (end - tx->pay_acked_cache > GASNETI_RING_PAYLOAD) {
    tx->pay_acked_cache = atomic_load_explicit(&tx->ring->acked_payload, memory_order_acquire);
    if (end - tx->pay_acked_cache > GASNETI_RING_PAYLOAD) return UINT64_MAX;
  }
  tx->pay_head = end;
  return end - need;
}

bool gasneti_ring_try_send(gasneti_ring_tx_t *tx, const gasneti_msg_t *m) {
  gasneti_spin_lock(&tx->lock);
  if ((uint32_t)(tx->sent - tx->acked_cache) >= GASNETI_RING_SLOTS) {
    tx->acked_cache = atomic_load_explicit(&tx->ring->acked, memory_order_acquire);
    if ((uint32_t)(tx->sent - tx->acked_cache) >= GASNETI_RING_SLOTS) {
      gasneti_spin_unlock(&tx->lock);
      return false;
    }
  }
  gasneti_slot_t *s = &tx->ring->slots[tx->sent % GASNETI_RING_SLOTS];
  uint8_t flags = m->flags;
  if (m->chunk) {
    if (m->chunk <= inline_capacity(m->nargs)) {
      flags |= GASNETI_MSG_INLINE;
      memcpy((uint8_t *)s + inline_offset(m->nargs), m->payload, m->chunk);
    } else {
      uint64_t start = reserve_payload(tx, m->chunk);
      if (start == UINT64_MAX) {
        gasneti_spin_unlock(&tx->lock);
        return false;
      }
      flags |= GASNETI_MSG_RINGPAY;
      memcpy(&tx->ring->payload[start % GASNETI_RING_PAYLOAD], m->payload, m->chunk);
      s->aux = tx->pay_head;
    }
  }
  s->handler = m->handler;
  s->flags = flags;
  s->nargs = m->nargs;
  s->nbytes = m->nbytes;
  s->chunk = m->chunk;
  s->addr = m->addr;
  if (m->nargs) memcpy(s->args, m->args, sizeof(gasnet_handlerarg_t) * m->nargs);
  tx->sent++;
  atomic_store_explicit(&s->stamp, tx->sent, memory_order_release);
  gasneti_spin_unlock(&tx->lock);
  return true;
}

/* Publish what was consumed, so senders can reuse slots and payload bytes. */
static void publish_acks(gasneti_ring_rx_t *rx) {
  atomic_store_explicit(&rx->ring->acked_payload, rx->pay_done, memory_order_release);
  atomic_store_explicit(&rx->ring->acked, rx->received, memory_order_release);
}

int gasneti_ring_drain(gasneti_ring_rx_t *rx, gasnet_node_t src, bool requests, int max) {
  int ran = 0;
  while (ran < max) {
    gasneti_slot_t *s = &rx->ring->slots[rx->received % GASNETI_RING_SLOTS];
    if (atomic_load_explicit(&s->stamp, memory_order_acquire) != rx->received + 1) break;
    uint8_t flags = s->flags;
    void *data = NULL;
    if (flags & GASNETI_MSG_INLINE)
      data = (uint8_t *)s + inline_offset(s->nargs);
    else if (flags & GASNETI_MSG_RINGPAY)
      data = &rx->ring->payload[(s->aux - GASNETI_ALIGNUP(s->chunk, GASNETI_CACHELINE)) %
                                GASNETI_RING_PAYLOAD];
    int cat = flags & GASNETI_MSG_CAT_MASK;
    if (flags & GASNETI_MSG_LONGFRAG) {
      memcpy((void *)(uintptr_t)s->addr, data, s->chunk);
    } else {
      void *buf = data;
      if (cat == GASNETI_AM_LONG) {
        buf = (void *)(uintptr_t)s->addr;
        if (flags & GASNETI_MSG_LONGCOPY)
          memcpy((uint8_t *)buf + (s->nbytes - s->chunk), data, s->chunk);
      }
      gasneti_token_t token = {.src = src, .is_request = requests, .replied = 0};
      gasneti_run_handler(&token, s->handler, cat, buf, s->nbytes, s->nargs, s->args);
    }
    if (flags & GASNETI_MSG_RINGPAY) rx->pay_done = s->aux;
    rx->received++;
    ran++;
    /* Large payloads release ring space at once; small messages are acknowledged in batches. */
    if (flags & GASNETI_MSG_RINGPAY) publish_acks(rx);
  }
  if (ran) publish_acks(rx);
  return ran;
}
