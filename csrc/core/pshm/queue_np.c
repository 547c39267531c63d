/* queue_np.c: negotiated-payload AMs to a host peer: the message's slot, and its payload's room
 * (inside the slot, or in this rank's outbox), are reserved first; the client writes the
 * payload where the receiver will read it, and the commit publishes the slot. A fixed-payload
 * Medium costs the client a copy into its own buffer and the runtime one into the outbox; this
 * costs the client's write alone. */
#include "queue.h"

bool gasneti_pshm_np_reserve(gasneti_pshm_np_t *np, int host_index, int reply, int nargs,
                             size_t bytes, void **payload, bool immediate) {
  gasneti_ring_tx_t *tx = &gasneti_queues.tx[reply][host_index];
  int which = (reply || gasneti_am_context != GASNETI_CTX_CLIENT) ? GASNETI_POLL_REPLIES
                                                                  : GASNETI_POLL_ALL;
  bool inline_fits = bytes <= GASNETI_PSHM_SLOT_BYTES - gasneti_inline_offset(nargs);
  for (;;) {
    bool solo = gasneti_solo_lock(&tx->lock);
    if (gasneti_pshm_ring_room(tx)) {
      gasneti_slot_t *s = gasneti_slot_at(tx->slots, tx->sent);
      if (!bytes || inline_fits) {
        *np = (gasneti_pshm_np_t){tx, s, solo, bytes ? GASNETI_SLOT_INLINE : 0, (uint8_t)reply};
        *payload = (uint8_t *)s + gasneti_inline_offset(nargs);
        return true;
      }
      size_t off = gasneti_outbox_reserve(reply, (uint32_t)bytes);
      if (off != SIZE_MAX) {
        s->aux = off;
        *np = (gasneti_pshm_np_t){tx, s, solo, GASNETI_SLOT_OUTBOX, (uint8_t)reply};
        *payload = gasneti_queues.outbox[reply].base + off;
        return true;
      }
    }
    gasneti_solo_unlock(&tx->lock, solo);
    if (immediate) return false;
    /* A full ring or outbox drains only if this rank keeps serving its own queues. */
    if (!gasneti_poll(which)) gasneti_wait_backoff();
  }
}

void gasneti_pshm_np_commit(gasneti_pshm_np_t *np, const gasneti_am_t *am) {
  gasneti_ring_tx_t *tx = np->tx;
  uint8_t flags = am->chunk ? np->flags : 0;
  /* An outbox chunk that ends up unused is still released by the receiver: it marks the chunk
   * of any slot that names one done after the handler. */
  if (!am->chunk && np->flags == GASNETI_SLOT_OUTBOX) flags = GASNETI_SLOT_OUTBOX;
  gasneti_pshm_publish(tx, np->slot, am, flags);
  gasneti_solo_unlock(&tx->lock, np->solo);
  gasneti_wake_peer(tx->peer);
}
