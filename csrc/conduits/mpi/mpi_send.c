/* mpi_send.c: from AMs to MPI messages. A request takes one of the core's credits (a Long's
 * leading pieces do not: only its last piece runs a handler and is answered); every message
 * takes a send slot, whose buffer holds it until MPI says the send completed (slots are
 * GASNET_NETWORKDEPTH_TOTAL: the sends in flight). Waiting for either keeps serving this
 * rank's network. */
#include <string.h>

#include "knobs.h"
#include "mpi_internal.h"

void gasnetc_mpi_reap(void) {
  gasnetc_mpi_state_t *s = &gasnetc_mpi;
  int n = 0, rc = s->ops->send_reap(s->reaped, s->nsend, &n);
  if (rc) gasnetc_mpi_fail(rc, "MPI_Testsome (sends)", -1);
  for (int i = 0; i < n; i++) {
    int slot = s->reaped[i];
    if (s->slot_large[slot] >= 0) {
      s->free_large[s->nlarge_free++] = s->slot_large[slot];
      s->slot_large[slot] = -1;
    }
    s->free_slots[s->nfree++] = slot;
  }
  s->inflight -= n;
}

/* A free slot (with a large buffer when large), or -1. */
static int try_slot(bool large) {
  gasnetc_mpi_state_t *s = &gasnetc_mpi;
  if ((!s->nfree || (large && !s->nlarge_free)) && s->inflight) gasnetc_mpi_reap();
  if (!s->nfree || (large && !s->nlarge_free)) return -1;
  int slot = s->free_slots[--s->nfree];
  if (large) s->slot_large[slot] = s->free_large[--s->nlarge_free];
  return slot;
}

/* A slot, serving the network while none is free (lock held on entry and return). */
static int wait_slot(bool large, int which) {
  for (;;) {
    int slot = try_slot(large);
    if (slot >= 0) return slot;
    gasnetc_mpi_lock_drop();
    if (!gasnetc_mpi_poll(which)) gasneti_wait_backoff();
    gasneti_exit_check();
    gasnetc_mpi_lock_take();
  }
}

/* A slot taken for a message that then did not go (an immediate one, lock held). */
static void untake_slot(int slot) {
  gasnetc_mpi_state_t *s = &gasnetc_mpi;
  if (s->slot_large[slot] >= 0) {
    s->free_large[s->nlarge_free++] = s->slot_large[slot];
    s->slot_large[slot] = -1;
  }
  s->free_slots[s->nfree++] = slot;
}

static uint8_t *slot_buffer(int slot) {
  gasnetc_mpi_state_t *s = &gasnetc_mpi;
  int large = s->slot_large[slot];
  return large >= 0 ? s->large + (size_t)large * s->rcap : s->small + (size_t)slot * MPIC_SMALL;
}

static void post(int slot, int dest, const uint8_t *head, uint32_t head_len, const void *tail,
                 uint32_t tail_len) {
  gasnetc_mpi_state_t *s = &gasnetc_mpi;
  int rc = s->ops->send(slot, head, (int)head_len, tail, (int)tail_len, dest);
  if (rc) gasnetc_mpi_fail(rc, "MPI_Isend", dest);
  s->inflight++;
}

/* What a sender waiting for a credit or a slot serves meanwhile: a reply or a handler's
 * message must not run requests (only the client's own context may). */
static int serve_while_sending(bool reply) {
  return (reply || gasneti_am_context != GASNETI_CTX_CLIENT) ? GASNETI_POLL_REPLIES
                                                             : GASNETI_POLL_ALL;
}

/* A request's credit (lock not held): 1 taken; -1 when the peer returned from main (nobody
 * will ever read it); 0 (an immediate request only) when none is free now. A free one is taken
 * without a call in SEQ builds (no lock to take). */
static inline int take_credit(gasnet_node_t dest, gasnetc_mpi_peer_t *p, bool reply,
                              bool immediate) {
  gasnetc_mpi_state_t *s = &gasnetc_mpi;
#if !GASNETI_THREADS
  if (GASNETI_LIKELY(!p->finished && gasneti_credit_take(&s->credits, dest))) return 1;
#endif
  if (GASNETI_UNLIKELY(immediate)) return gasneti_credit_try(&s->credits, MPIC_LOCK, dest,
                                                             &p->finished);
  return gasneti_credit_wait(&s->credits, MPIC_LOCK, dest, &p->finished, gasnetc_mpi_poll,
                             serve_while_sending(reply)) ? 1 : -1;
}

/* A Short by the shortest way: its 8-byte header and arguments in a slot's own buffer
 * (mpi_wire.h). It is the AM sent most, and its round trip is what the conduit is held to
 * against MPI's own ping-pong: every instruction here is on that path (so the Mediums' and
 * Longs' path is a function of its own, and what waiting needs is worked out only to wait). */
static bool send_short(gasnet_node_t dest, const gasneti_am_t *am, bool reply) {
  gasnetc_mpi_state_t *s = &gasnetc_mpi;
  gasnetc_mpi_peer_t *p = &s->peers[dest];
  bool immediate = am->flags & GASNETI_AM_IMMEDIATE;
  if (!reply) {
    int got = take_credit(dest, p, reply, immediate);
    if (got <= 0) return got < 0;
  }
  gasnetc_mpi_lock_take();
  if (GASNETI_UNLIKELY(p->finished)) {
    gasnetc_mpi_lock_drop();
    return true;
  }
  int slot = GASNETI_LIKELY(s->nfree) ? s->free_slots[--s->nfree]
             : immediate ? try_slot(false) : wait_slot(false, serve_while_sending(reply));
  if (slot < 0) { /* an immediate one: no send slot now */
    if (!reply) gasneti_credit_returned(&s->credits, dest, 1);
    gasnetc_mpi_lock_drop();
    return false;
  }
  uint8_t *buf = s->small + (size_t)slot * MPIC_SMALL; /* never a large buffer: see try_slot */
  gasnetc_mpi_msg_t *m = (gasnetc_mpi_msg_t *)buf;
  m->category = GASNETI_AM_SHORT;
  m->handler = am->handler;
  m->nargs = am->nargs;
  m->flags = reply ? MPIC_REPLY : 0;
  m->credits = (uint16_t)gasneti_credit_collect(&s->credits, dest);
  m->pad = 0;
  /* (a loop, not memcpy: most Shorts carry a few arguments or none, and a call costs more) */
  gasnet_handlerarg_t *args = (gasnet_handlerarg_t *)(void *)(buf + MPIC_SHORT_HEAD);
  for (int i = 0; i < am->nargs; i++) args[i] = am->args[i];
  post(slot, dest, buf, gasnetc_mpi_head_bytes(true, am->nargs), NULL, 0);
  gasnetc_mpi_lock_drop();
  return true;
}

static bool send_bulk(gasnet_node_t dest, const gasneti_am_t *am, bool reply);

bool gasnetc_mpi_send_am(gasnet_node_t dest, const gasneti_am_t *am, gasneti_token_t *reply_to) {
  if (am->category == GASNETI_AM_SHORT) return send_short(dest, am, reply_to != NULL);
  return send_bulk(dest, am, reply_to != NULL);
}

/* A Medium, or a Long or a piece of one (lock not held). */
static __attribute__((noinline)) bool send_bulk(gasnet_node_t dest, const gasneti_am_t *am,
                                                bool reply) {
  gasnetc_mpi_state_t *s = &gasnetc_mpi;
  gasnetc_mpi_peer_t *p = &s->peers[dest];
  bool immediate = am->flags & GASNETI_AM_IMMEDIATE;
  bool credit = !reply && !(am->flags & GASNETI_AM_FRAG);
  if (credit) {
    int got = take_credit(dest, p, reply, immediate);
    if (got <= 0) return got < 0;
  }
  int which = serve_while_sending(reply);
  uint32_t head = gasnetc_mpi_head_bytes(false, am->nargs); /* a whole header (mpi_wire.h) */
  uint32_t chunk = am->chunk;
  bool stable = am->flags & GASNETI_AM_STABLE;
  bool direct = am->category == GASNETI_AM_LONG && chunk >= MPIC_DIRECT_MIN;
  bool zcopy = !direct && stable && chunk >= MPIC_ZCOPY_MIN;
  bool inline_payload = !direct && !zcopy && chunk;
  bool large = inline_payload && head + chunk > MPIC_SMALL;
  gasnetc_mpi_lock_take();
  if (p->finished) {
    gasnetc_mpi_lock_drop();
    return true;
  }
  int slot, data_slot = -1;
  if (immediate) { /* both slots now, or neither */
    slot = try_slot(large);
    if (slot >= 0 && direct && (data_slot = try_slot(!stable)) < 0) {
      untake_slot(slot);
      slot = -1;
    }
    if (slot < 0) {
      if (credit) gasneti_credit_returned(&s->credits, dest, 1);
      gasnetc_mpi_lock_drop();
      return false;
    }
  } else {
    slot = wait_slot(large, which);
    /* A direct payload's own send: from where it lies when it stays unchanged until answered,
     * else from a copy in a large buffer. */
    data_slot = direct ? wait_slot(!stable, which) : -1;
  }
  uint8_t *buf = slot_buffer(slot);
  gasnetc_mpi_msg_t *m = (gasnetc_mpi_msg_t *)buf;
  *m = (gasnetc_mpi_msg_t){.category = am->category, .handler = am->handler, .nargs = am->nargs,
                           .flags = (uint8_t)((reply ? MPIC_REPLY : 0) | (direct ? MPIC_DIRECT : 0) |
                                              (am->flags & (GASNETI_AM_FRAG | GASNETI_AM_TAIL))),
                           .credits = (uint16_t)gasneti_credit_collect(&s->credits, dest),
                           .nbytes = am->nbytes, .chunk = chunk, .dst = am->dst};
  if (am->nargs) memcpy(buf + sizeof *m, am->args, 4u * am->nargs);
  if (inline_payload) memcpy(buf + head, am->payload, chunk);
  post(slot, dest, buf, inline_payload ? head + chunk : head, zcopy ? am->payload : NULL,
       zcopy ? chunk : 0);
  if (direct) {
    const void *data = stable ? am->payload : memcpy(slot_buffer(data_slot), am->payload, chunk);
    int rc = s->ops->send_data(data_slot, data, (int)chunk, dest);
    if (rc) gasnetc_mpi_fail(rc, "MPI_Isend (a Long's payload)", dest);
    s->inflight++;
  }
  gasnetc_mpi_lock_drop();
  return true;
}

bool gasnetc_mpi_send_ctrl(int peer, int kind, int32_t code, uint32_t phase, bool wait) {
  gasnetc_mpi_state_t *s = &gasnetc_mpi;
  if (wait) gasnetc_mpi_lock_take();
  bool sent = false;
  if (s->peers[peer].finished || (kind == MPIC_CREDITS && !gasneti_credit_overdue(&s->credits, peer)))
    goto out; /* nobody to tell, or another message took the credits back meanwhile */
  int slot = wait ? wait_slot(false, GASNETI_POLL_REPLIES) : try_slot(false);
  if (slot < 0) goto out;
  gasnetc_mpi_msg_t *m = (gasnetc_mpi_msg_t *)slot_buffer(slot);
  *m = (gasnetc_mpi_msg_t){.handler = (uint8_t)kind, .flags = MPIC_CTRL | MPIC_REPLY,
                           .credits = (uint16_t)gasneti_credit_collect(&s->credits, peer),
                           .nbytes = (uint32_t)code, .chunk = phase};
  post(slot, peer, (const uint8_t *)m, sizeof *m, NULL, 0);
  sent = true;
out:
  if (wait) gasnetc_mpi_lock_drop();
  return sent;
}

void gasnetc_mpi_send_init(void) {
  gasnetc_mpi_state_t *s = &gasnetc_mpi;
  int64_t depth = gasneti_knob_int("GASNET_NETWORKDEPTH_TOTAL");
  s->nsend = depth > 0 ? (int)depth : 4096; /* 0: as many as MPI takes; a bound all the same */
  s->small = gasneti_malloc((size_t)s->nsend * MPIC_SMALL);
  s->large = gasneti_malloc((size_t)MPIC_LARGE_BUFS * s->rcap);
  s->free_slots = gasneti_malloc(sizeof(int) * (size_t)s->nsend);
  s->slot_large = gasneti_malloc(sizeof(int) * (size_t)s->nsend);
  s->reaped = gasneti_malloc(sizeof(int) * (size_t)s->nsend);
  for (int i = 0; i < s->nsend; i++) {
    s->free_slots[i] = s->nsend - 1 - i;
    s->slot_large[i] = -1;
  }
  s->nfree = s->nsend;
  for (int i = 0; i < MPIC_LARGE_BUFS; i++) s->free_large[i] = i;
  s->nlarge_free = MPIC_LARGE_BUFS;
}
