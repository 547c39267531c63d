/* mpi_recv.c: from MPI messages to AMs. Every receive slot is pre-posted for any source; MPI
 * matches an arriving message to the oldest posted receive, so the slots are tested oldest
 * first, which keeps each peer's messages in the order it sent them (a Long's pieces before
 * its handler). A handler runs on the slot's buffer, which is posted again after it returns.
 * A request that arrives where only replies may run (a handler waiting to send) is copied
 * aside and run at the next poll that allows requests. */
#include <string.h>

#include "mpi_internal.h"

#if GASNETI_THREADS
/* One thread receives at a time; the one that does may receive again from inside a handler
 * it runs (a handler waiting for a send slot must keep draining, or two ranks whose handlers
 * both wait could each hold what the other needs). */
static gasneti_spinlock_t poller = GASNETI_SPINLOCK_INIT;
static GASNETI_TLS int poller_depth;
#endif

typedef struct deferred {
  struct deferred *next;
  int src;
  uint32_t len;
  uint8_t data[];
} deferred_t;
static deferred_t *deferred_head, **deferred_tail = &deferred_head;

static bool bad(const char *why, int src) {
  static int told;
  if (told++ < 3) gasneti_warning("mpi: dropped a malformed message from rank %d (%s)", src, why);
  return false;
}

/* What a Medium's or a Long piece's header says of itself against what arrived (a Short's:
 * receive_short); false drops it. */
static bool valid(const gasnetc_mpi_msg_t *m, uint32_t len, int src) {
  if (m->category > GASNETI_AM_LONG || m->nargs > 16) return bad("bad category or arguments", src);
  uint32_t head = gasnetc_mpi_head_bytes(false, m->nargs);
  bool direct = m->flags & MPIC_DIRECT;
  if (head > len || len - head != (direct ? 0 : m->chunk)) return bad("length", src);
  if (direct && (m->category != GASNETI_AM_LONG || !m->chunk)) return bad("direct payload", src);
  if (m->category == GASNETI_AM_MEDIUM && (m->nbytes > GASNETC_MAX_MEDIUM || m->chunk != m->nbytes))
    return bad("Medium length", src);
  if (m->category == GASNETI_AM_LONG) {
    bool frag = m->flags & GASNETI_AM_FRAG;
    if (m->chunk > m->nbytes || (!frag && (m->flags & GASNETI_AM_TAIL) == 0 && m->chunk))
      return bad("Long piece length", src);
    if (!gasneti_in_segment(gasneti_mynode, (void *)(uintptr_t)m->dst, frag ? m->chunk : m->nbytes))
      return bad("Long outside this rank's segment", src);
  }
  return true;
}

/* A message's handler ran (lock not held): the credit it brought back, or the one it owes. */
static void settle(int src, bool reply, const gasneti_token_t *token) {
  gasnetc_mpi_state_t *s = &gasnetc_mpi;
  gasnetc_mpi_lock_take();
  bool overdue = false;
  if (reply) {
    gasneti_credit_returned(&s->credits, src, 1);
  } else if (!token->replied) { /* an implicit reply: the credit is owed */
    gasneti_credit_owe(&s->credits, src);
    overdue = gasneti_credit_overdue(&s->credits, src);
  }
  gasnetc_mpi_lock_drop();
  if (overdue) gasnetc_mpi_send_ctrl(src, MPIC_CREDITS, 0, 0, true);
}

/* Runs one message (lock not held), then settles its credit. */
static void run(int src, const gasnetc_mpi_msg_t *m) {
  bool reply = m->flags & MPIC_REPLY;
  /* A Short's header has no nbytes, chunk or dst (mpi_wire.h): they are 0. */
  bool compact = gasnetc_mpi_compact(m->category, m->flags);
  gasneti_am_t am = {.category = m->category, .handler = m->handler, .nargs = m->nargs,
                     .flags = m->flags & (GASNETI_AM_FRAG | GASNETI_AM_TAIL),
                     .nbytes = compact ? 0 : m->nbytes, .chunk = compact ? 0 : m->chunk,
                     .args = (const gasnet_handlerarg_t *)gasnetc_mpi_args(m),
                     .payload = (const uint8_t *)m + gasnetc_mpi_head_bytes(compact, m->nargs),
                     .dst = compact ? 0 : m->dst};
  gasneti_token_t token = {.src = (gasnet_node_t)src, .is_request = !reply};
  if (am.flags & GASNETI_AM_FRAG) {
    gasneti_am_deliver(NULL, &am); /* a copy into place; no handler, no credit */
    return;
  }
  gasneti_am_deliver(&token, &am);
  settle(src, reply, &token);
}

static void control(int src, const gasnetc_mpi_msg_t *m) {
  switch (m->handler) {
    case MPIC_EXIT: gasneti_exit_post((int32_t)m->nbytes, m->chunk); break;
    case MPIC_FINISHED: gasnetc_mpi.peers[src].finished = true; break;
    default: break; /* credits only: already counted */
  }
}

static void defer(int src, const uint8_t *buf, uint32_t len) {
  deferred_t *d = gasneti_malloc(sizeof *d + len);
  d->next = NULL;
  d->src = src;
  d->len = len;
  memcpy(d->data, buf, len);
  *deferred_tail = d;
  deferred_tail = &d->next;
}

static int run_deferred(void) {
  int ran = 0;
  while (!gasneti_poll_stop) { /* a barrier message stops it, as the batch below */
    gasnetc_mpi_lock_take();
    deferred_t *d = deferred_head;
    if (d && !(deferred_head = d->next)) deferred_tail = &deferred_head;
    gasnetc_mpi_lock_drop();
    if (!d) return ran;
    run(d->src, (const gasnetc_mpi_msg_t *)(const void *)d->data);
    free(d);
    ran++;
  }
  return ran;
}

static void repost(int slot) {
  gasnetc_mpi_state_t *s = &gasnetc_mpi;
  int rc = s->ops->recv_post(slot, s->rbufs + (size_t)slot * s->rcap, (int)s->rcap);
  if (rc) gasnetc_mpi_fail(rc, "MPI_Irecv", -1);
  int at = s->head + s->nposted++; /* (a wrap, not a %: a division is ~25 cycles' wait) */
  s->posted[at < s->nrecv ? at : at - s->nrecv] = slot;
}

/* A Long piece's payload that follows its header as a message of its own: into the segment,
 * where the header says (lock held); then the header reads as that of a Long whose payload
 * is in place. One that fails the checks is still taken (the next one must not get it). */
static bool take_direct(gasnetc_mpi_msg_t *m, int src, bool ok) {
  static uint8_t *scratch;
  uint8_t *at = (uint8_t *)(uintptr_t)m->dst;
  if (!(m->flags & GASNETI_AM_FRAG)) at += m->nbytes - m->chunk;
  if (!ok) {
    if (m->chunk > GASNETC_LONG_CHUNK_STABLE)
      gasneti_fatalerror("mpi: rank %d sent a Long piece of %u bytes, larger than any", src,
                         (unsigned)m->chunk);
    if (!scratch) scratch = gasneti_malloc(GASNETC_LONG_CHUNK_STABLE);
    at = scratch;
  }
  int rc = gasnetc_mpi.ops->recv_data(at, (int)m->chunk, src);
  if (rc) gasnetc_mpi_fail(rc, "MPI_Recv (a Long's payload)", src);
  m->flags &= (uint8_t) ~(MPIC_DIRECT | GASNETI_AM_TAIL);
  m->chunk = 0;
  return ok;
}

/* A Short (not runtime traffic) by the shortest way, as mpi_send.c's send_short: its header's
 * first 8 bytes and its arguments, exactly, and no flag but the reply's. Lock held; dropped
 * while its handler runs. Returns messages run. */
static int receive_short(int src, const gasnetc_mpi_msg_t *m, uint32_t len, int which) {
  if (m->nargs > 16 || len != gasnetc_mpi_head_bytes(true, m->nargs) || (m->flags & ~MPIC_REPLY))
    return bad("a Short's length or flags", src);
  bool reply = m->flags & MPIC_REPLY;
  if (!reply && !(which & GASNETI_POLL_REQUESTS)) {
    defer(src, (const uint8_t *)m, len);
    return 0;
  }
  gasneti_token_t token = {.src = (gasnet_node_t)src, .is_request = !reply};
  gasnetc_mpi_lock_drop();
  gasneti_am_deliver_short(&token, m->handler, m->nargs,
                           (const gasnet_handlerarg_t *)gasnetc_mpi_args(m));
  settle(src, reply, &token);
  gasnetc_mpi_lock_take();
  return 1;
}

/* The message in slot (lock held; dropped while a handler runs). Returns messages run. */
static int receive(int slot, int src, uint32_t len, int which) {
  gasnetc_mpi_state_t *s = &gasnetc_mpi;
  uint8_t *buf = s->rbufs + (size_t)slot * s->rcap;
  gasnetc_mpi_msg_t *m = (gasnetc_mpi_msg_t *)buf;
  if (src < 0 || src >= (int)gasneti_nodes || src == (int)gasneti_mynode)
    return bad("not from another rank of the job", src);
  if (len < MPIC_SHORT_HEAD ||
      (!gasnetc_mpi_compact(m->category, m->flags) && len < sizeof *m))
    return bad("shorter than a header", src);
  if (!s->peers[src].network) { /* a supernode peer: the exit's runtime messages only */
    if ((m->flags & MPIC_CTRL) && len == sizeof *m) control(src, m);
    else bad("an AM from a rank of this supernode", src);
    return 0;
  }
  if (m->credits) gasneti_credit_returned(&s->credits, src, m->credits);
  if (m->flags & MPIC_CTRL) {
    control(src, m);
    return 0;
  }
  if (m->category == GASNETI_AM_SHORT) return receive_short(src, m, len, which);
  bool ok = valid(m, len, src);
  if (m->flags & MPIC_DIRECT) {
    bool frag = m->flags & GASNETI_AM_FRAG;
    if (!take_direct(m, src, ok) || frag) return 0; /* a leading piece: it is in place */
    len = gasnetc_mpi_head_bytes(false, m->nargs);
  } else if (!ok) {
    return 0;
  }
  if (!(m->flags & (MPIC_REPLY | GASNETI_AM_FRAG)) && !(which & GASNETI_POLL_REQUESTS)) {
    defer(src, buf, len);
    return 0;
  }
  gasnetc_mpi_lock_drop();
  run(src, m);
  gasnetc_mpi_lock_take();
  return !(m->flags & GASNETI_AM_FRAG);
}

/* The oldest posted receive completed: its message (lock held; dropped while a handler
 * runs). Returns messages run. */
static int take(int slot, int src, int len, int which) {
  gasnetc_mpi_state_t *s = &gasnetc_mpi;
  if (++s->head == s->nrecv) s->head = 0;
  s->nposted--;
  int ran = receive(slot, src, (uint32_t)len, which);
  s->unposted[s->nunposted++] = slot;
  return ran;
}

int gasnetc_mpi_poll(int which) {
  gasnetc_mpi_state_t *s = &gasnetc_mpi;
  int ran = 0;
  gasnetc_mpi_lock_take();
  /* Receives are posted again here rather than right after their message ran: the MPI_Irecv
   * then falls in the wait for the next message, not between a message and the caller that
   * waits for it (a round trip's reply). */
  while (s->nunposted) repost(s->unposted[--s->nunposted]);
  /* Sends give their slots back in batches: a completed eager send needs nothing more, and
   * an MPI_Testsome per poll (a pass of MPI's progress engine) cost Open MPI's AMShort round
   * trip ~1 us here. A send that finds no slot free reaps at once (mpi_send.c). */
  if (s->inflight > s->nsend / 2) gasnetc_mpi_reap();
#if GASNETI_THREADS
  if (poller_depth || gasneti_spin_trylock(&poller)) {
    poller_depth++;
#endif
    /* A bounded batch: a flood must not keep this call from returning. */
    for (int budget = 64; budget > 0 && s->nposted; budget--) {
      int slot = s->posted[s->head], done = 0, src = -1, len = 0;
      int rc = s->ops->recv_test(slot, &done, &src, &len);
      if (rc) gasnetc_mpi_fail(rc, "MPI_Test (a receive)", -1);
      if (!done) break;
      ran += take(slot, src, len, which);
      /* A handler that ran ends the batch: the caller's wait may be over (a round trip's
       * reply), and the next MPI_Test, when nothing is there, is a pass of MPI's progress
       * engine the caller would wait for. A flood is served a message a poll, at no more MPI
       * calls (a batch ends with such a test too). */
      if (ran) break;
    }
#if GASNETI_THREADS
    if (--poller_depth == 0) gasneti_spin_unlock(&poller);
  }
#endif
  gasnetc_mpi_lock_drop();
  if ((which & GASNETI_POLL_REQUESTS) && deferred_head) ran += run_deferred();
  return ran;
}

#if !GASNETI_THREADS
/* A blocking wait whose poll found nothing (wait.c), in a SEQ rank alone in its supernode:
 * nothing but a message can end the wait (no other thread, no supernode peer storing into its
 * segment, no request set aside), and the next message lands in the oldest posted receive.
 * MPI_Wait on it is MPI's own tight loop, not a return to the caller between passes of its
 * progress engine (each MPI_Test's own fences and checks): Open MPI's polled ping-pong is
 * 1.07-1.13x its blocking one. Host peers' exit notices come as messages too
 * (mpi_conduit.c); the launcher's signals end the rank from their handler. */
int gasnetc_wait_block(void) {
  gasnetc_mpi_state_t *s = &gasnetc_mpi;
  if (!s->network || gasneti_snode_size > 1 || deferred_head) return -1;
  while (s->nunposted) repost(s->unposted[--s->nunposted]);
  if (s->inflight > s->nsend / 2) gasnetc_mpi_reap();
  if (!s->nposted) return -1;
  int slot = s->posted[s->head], src = -1, len = 0;
  int rc = s->ops->recv_wait(slot, &src, &len);
  if (rc) gasnetc_mpi_fail(rc, "MPI_Wait (a receive)", -1);
  return take(slot, src, len, GASNETI_POLL_ALL);
}
#endif

void gasnetc_mpi_recv_init(void) {
  gasnetc_mpi_state_t *s = &gasnetc_mpi;
  s->rbufs = gasneti_malloc((size_t)s->nrecv * s->rcap);
  s->posted = gasneti_malloc(sizeof(int) * (size_t)s->nrecv);
  s->unposted = gasneti_malloc(sizeof(int) * (size_t)s->nrecv);
  s->head = s->nposted = 0;
  for (int slot = 0; slot < s->nrecv; slot++) repost(slot);
}
