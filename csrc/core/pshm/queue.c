/* queue.c: sending and polling the host's AM queues. Each (sender, receiver, kind) ring is
 * single-producer single-consumer; a slot is published with one release store. On hosts with
 * more than a few ranks a receiver learns which rings hold work from one doorbell byte per
 * sender (the sender's message count, mod 256), so an idle poll reads a line or two whatever
 * the number of ranks, and neither side needs a locked instruction or a fence. */
#include <string.h>

#include "queue.h"

gasneti_queues_t gasneti_queues;

/* ---- outbox ------------------------------------------------------------------------------ */
static void outbox_reclaim(gasneti_outbox_t *ob) {
  while (ob->tail < ob->head) {
    gasneti_chunk_hdr_t *h = (gasneti_chunk_hdr_t *)(ob->base + ob->tail % ob->size);
    if (!atomic_load_explicit(&h->done, memory_order_acquire)) break;
    ob->tail += h->size;
  }
}

/* Reserves a chunk for len payload bytes; returns its payload's offset, or SIZE_MAX. */
static size_t outbox_alloc(gasneti_outbox_t *ob, uint32_t len) {
  size_t need = GASNETI_PSHM_CHUNK_HDR_BYTES + GASNETI_ALIGNUP(len, GASNETI_CACHELINE);
  size_t pos = ob->head % ob->size;
  size_t skip = pos + need > ob->size ? ob->size - pos : 0; /* chunks never wrap */
  if (ob->head + skip + need - ob->tail > ob->size) {
    outbox_reclaim(ob);
    if (ob->head + skip + need - ob->tail > ob->size) return SIZE_MAX;
  }
  if (skip) { /* the end of the buffer becomes a chunk nobody waits for */
    gasneti_chunk_hdr_t *h = (gasneti_chunk_hdr_t *)(ob->base + pos);
    h->size = (uint32_t)skip;
    atomic_store_explicit(&h->done, 1, memory_order_relaxed);
    ob->head += skip;
    pos = 0;
  }
  gasneti_chunk_hdr_t *h = (gasneti_chunk_hdr_t *)(ob->base + pos);
  h->size = (uint32_t)need;
  atomic_store_explicit(&h->done, 0, memory_order_relaxed);
  ob->head += need;
  return pos + GASNETI_PSHM_CHUNK_HDR_BYTES;
}

/* ---- sending (the fast path is queue.h's) ----------------------------------------------- */
size_t gasneti_outbox_reserve(int reply, uint32_t len) {
  gasneti_outbox_t *ob = &gasneti_queues.outbox[reply];
  bool solo = gasneti_solo_lock(&ob->lock);
  size_t off = outbox_alloc(ob, len);
  gasneti_solo_unlock(&ob->lock, solo);
  return off;
}

bool gasneti_outbox_place(gasneti_slot_t *s, const gasneti_am_t *am, int reply, uint8_t *flags) {
  gasneti_outbox_t *ob = &gasneti_queues.outbox[reply];
  size_t off = gasneti_outbox_reserve(reply, am->chunk);
  if (off == SIZE_MAX) return false;
  memcpy(ob->base + off, am->payload, am->chunk);
  *flags |= GASNETI_SLOT_OUTBOX;
  s->aux = off;
  return true;
}

void gasneti_pshm_send_wait(int host_index, int reply, const gasneti_am_t *am, void *long_dst) {
  gasneti_ring_tx_t *tx = &gasneti_queues.tx[reply][host_index];
  /* A full ring or outbox drains only if this rank keeps serving its own queues; handlers may
   * only drain replies (they cannot run requests re-entrantly). */
  int which = (reply || gasneti_am_context != GASNETI_CTX_CLIENT) ? GASNETI_POLL_REPLIES
                                                                  : GASNETI_POLL_ALL;
  do {
    if (!gasneti_poll(which)) gasneti_wait_backoff();
  } while (!gasneti_pshm_try_send(tx, reply, am, long_dst));
}

/* ---- receiving --------------------------------------------------------------------------- */
static inline bool ring_ready(const gasneti_ring_rx_t *rx) {
  const gasneti_slot_t *s = gasneti_slot_at(rx->slots, rx->received);
  return atomic_load_explicit(&s->stamp, memory_order_acquire) == rx->received + 1;
}

/* Runs up to max waiting messages of one ring; returns how many ran. */
static int drain(gasneti_ring_rx_t *rx, bool requests, int max) {
  int ran = 0;
  while (ran < max && !gasneti_poll_stop && ring_ready(rx)) {
    gasneti_slot_t *s = gasneti_slot_at(rx->slots, rx->received);
    gasneti_am_t am = {.category = s->category, .handler = s->handler, .nargs = s->nargs,
                       .flags = s->flags & (GASNETI_AM_FRAG | GASNETI_AM_TAIL),
                       .nbytes = s->nbytes, .chunk = s->chunk, .args = s->args, .dst = s->dst};
    gasneti_chunk_hdr_t *chunk = NULL;
    if (s->flags & GASNETI_SLOT_INLINE) {
      am.payload = (uint8_t *)s + gasneti_inline_offset(s->nargs);
    } else if (s->flags & GASNETI_SLOT_OUTBOX) {
      am.payload = rx->outbox + s->aux;
      chunk = (gasneti_chunk_hdr_t *)(rx->outbox + s->aux - GASNETI_PSHM_CHUNK_HDR_BYTES);
    }
    gasneti_token_t token = {.src = rx->src, .is_request = requests};
    gasneti_am_deliver(&token, &am);
    if (chunk) atomic_store_explicit(&chunk->done, 1, memory_order_release);
    rx->received++;
    ran++;
  }
  /* Slots are released in batches: one store per drain, not per message. A sender that
   * found the ring or its outbox full may sleep until then. */
  if (ran) {
    atomic_store_explicit(&rx->ctl->acked, rx->received, memory_order_release);
    gasneti_wake_peer(rx->peer);
  }
  return ran;
}

#if GASNETI_THREADS
/* One thread at a time drains each kind of ring; others find the work being done. */
static gasneti_spinlock_t poll_lock[2] = {GASNETI_SPINLOCK_INIT, GASNETI_SPINLOCK_INIT};
#endif

enum { BATCH = 32 };

/* Small hosts: check every sender's ring head (one load each, as cheap as a doorbell). */
static int poll_direct(int reply) {
  int ran = 0;
  gasneti_ring_rx_t *rx = gasneti_queues.rx[reply];
  for (int k = 0; k < gasneti_queues.nsenders; k++) {
    gasneti_ring_rx_t *r = &rx[gasneti_queues.senders[k]];
    if (ring_ready(r)) ran += drain(r, !reply, BATCH);
  }
  return ran;
}

/* Larger hosts, second level: a ring needs a look when its sender's doorbell byte differs
 * from the value the receiver recorded. After draining, the record is the receiver's own count
 * when the ring is empty, else one less, so it differs again whenever messages wait: a sender
 * is at most `slots` (<= 64) messages ahead, so the byte cannot wrap around to the record.
 * Returns messages run; *busy is set when a ring still holds messages. */
static int poll_group(int reply, int group, bool *busy) {
  const _Atomic uint64_t *bell = gasneti_queues.doorbell[reply];
  uint64_t *seen = gasneti_queues.seen[reply];
  gasneti_ring_rx_t *rx = gasneti_queues.rx[reply];
  int first = group * (GASNETI_PSHM_GROUP / 8);
  int last = (gasneti_host_size + 7) / 8;
  if (last > first + GASNETI_PSHM_GROUP / 8) last = first + GASNETI_PSHM_GROUP / 8;
  int ran = 0;
  for (int w = first; w < last; w++) {
    uint64_t diff = atomic_load_explicit(&bell[w], memory_order_acquire) ^ seen[w];
    while (diff) {
      int byte = __builtin_ctzll(diff) / 8;
      diff &= ~(0xffull << (8 * byte));
      gasneti_ring_rx_t *r = &rx[w * 8 + byte];
      ran += drain(r, !reply, BATCH);
      bool left = ring_ready(r);
      *busy |= left;
      ((uint8_t *)&seen[w])[byte] = (uint8_t)(left ? r->received - 1 : r->received);
    }
  }
  return ran;
}

/* First level: one summary word per group of 64 senders, holding the rank and count of its
 * last writer: a value the receiver recorded cannot come back while that sender has more to
 * say (it would take 2^32 messages, and a sender stalls after `slots` undrained ones). An idle
 * poll reads one line at 512 ranks as at 5. Stores of different senders reach the receiver in
 * one order on x86 (and ARMv8); a full look every 4096 idle polls bounds any other case. */
enum { FULL_LOOK_EVERY = 4096 };

static int poll_doorbells(int reply) {
  const _Atomic uint64_t *summary = gasneti_queues.summary[reply];
  uint64_t *recorded = gasneti_queues.summary_seen[reply];
  int groups = (gasneti_host_size + GASNETI_PSHM_GROUP - 1) / GASNETI_PSHM_GROUP;
  bool full = ++gasneti_queues.idle_polls[reply] >= FULL_LOOK_EVERY;
  int ran = 0;
  for (int g = 0; g < groups; g++) {
    uint64_t now = atomic_load_explicit(&summary[g], memory_order_acquire);
    if (now == recorded[g] && !full) continue;
    bool busy = false;
    ran += poll_group(reply, g, &busy);
    __atomic_store_n(&recorded[g], busy ? ~now : now, __ATOMIC_RELAXED); /* busy: look again */
  }
  if (full || ran) gasneti_queues.idle_polls[reply] = 0;
  return ran;
}

#if GASNETI_THREADS
/* Whether a poll of this kind may find work, read without the poll lock: idle polls (most of
 * them) then only read lines the senders write, instead of bouncing the lock's line between
 * the polling threads and paying an atomic exchange each. A stale answer costs at most one
 * poll: the next one reads again. recorded[] is written under the lock; reading it here is
 * the same relaxed load. Every FULL_LOOK_EVERY idle peeks, a thread takes the lock anyway so
 * the full look of poll_doorbells still happens. */
static GASNETI_TLS unsigned idle_peeks[2];

static bool may_have_work(int reply) {
  if (!gasneti_queues.layout.doorbells) {
    for (int k = 0; k < gasneti_queues.nsenders; k++) {
      const gasneti_ring_rx_t *r = &gasneti_queues.rx[reply][gasneti_queues.senders[k]];
      uint32_t received = __atomic_load_n(&r->received, __ATOMIC_RELAXED);
      const gasneti_slot_t *s = gasneti_slot_at(r->slots, received);
      if (atomic_load_explicit(&s->stamp, memory_order_relaxed) == received + 1) return true;
    }
  } else {
    const _Atomic uint64_t *summary = gasneti_queues.summary[reply];
    const uint64_t *recorded = gasneti_queues.summary_seen[reply];
    int groups = (gasneti_host_size + GASNETI_PSHM_GROUP - 1) / GASNETI_PSHM_GROUP;
    for (int g = 0; g < groups; g++)
      if (atomic_load_explicit(&summary[g], memory_order_relaxed) !=
          __atomic_load_n(&recorded[g], __ATOMIC_RELAXED))
        return true;
  }
  if (++idle_peeks[reply] < FULL_LOOK_EVERY) return false;
  idle_peeks[reply] = 0;
  return true;
}
#endif

/* A thread already draining this kind (a handler that polls) must not drain it again: the
 * message being handled is still at the ring's head. The poll lock alone no longer says so,
 * since a lone thread skips it (solo.h). */
static GASNETI_TLS bool draining[2];

static int poll_kind(int reply) {
  if (draining[reply]) return 0;
#if GASNETI_THREADS
  bool solo;
  if (!may_have_work(reply) || !gasneti_solo_trylock(&poll_lock[reply], &solo)) return 0;
#endif
  draining[reply] = true;
  int ran = gasneti_queues.layout.doorbells ? poll_doorbells(reply) : poll_direct(reply);
  draining[reply] = false;
#if GASNETI_THREADS
  gasneti_solo_unlock(&poll_lock[reply], solo);
#endif
  return ran;
}

int gasneti_pshm_poll(int which) {
  if (!gasneti_queues.nsenders) return 0; /* nobody writes to this rank's rings */
  int ran = 0;
  if (which & GASNETI_POLL_REPLIES) ran += poll_kind(1);
  if (which & GASNETI_POLL_REQUESTS) ran += poll_kind(0);
  return ran;
}
