/* ibv_am.c: AMs over RC send/receive with the core's credits. A message is the header, its
 * arguments and, for a Medium or a packed Long (GASNET_PACKEDLONG_LIMIT), its payload; up to
 * GASNET_INLINESEND_LIMIT bytes it is posted inline, otherwise from a registered send buffer.
 * A larger Long's payload is RDMA-written into the target segment first, on the same queue
 * pair, so it is in place when the header arrives. Requests that arrive while only replies may
 * run are copied aside (their receive buffers go straight back) and run at the next poll
 * that allows them. */
#include <string.h>

#include "ibv_internal.h"

/* ---- sending --------------------------------------------------------------------------------- */
/* A Long payload too large to pack: zero-copy from registered memory (waiting for the HCA to
 * have read it: the source must be reusable when the request returns), else through bounce
 * blocks (the copy makes it reusable at once). */
static void long_payload(int dest, int rail, const gasneti_am_t *am, int which) {
  ibv_peer_t *p = &ibv.peers[dest];
  int hca = ibv_hca_of_rail(rail);
  const uint8_t *src = am->payload;
  size_t n = am->nbytes;
  uint32_t rkey = p->seg.rkey[rail % ibv.cards[dest].nports];
  uint32_t lkey = ibv_lkey_of(hca, src, n);
  if (lkey && n > ibv.bounce_limit) {
    _Atomic int64_t local = 0;
    for (size_t off = 0; off < n; off += IBV_PIECE) {
      uint32_t len = (uint32_t)(n - off < IBV_PIECE ? n - off : IBV_PIECE);
      ibv_sreq_t *s = ibv_reserve(dest, which, NEED_NONE);
      s->kind = SR_LONG;
      s->local = &local;
      atomic_fetch_add_explicit(&local, 1, memory_order_relaxed);
      struct ibv_sge sge = {(uint64_t)(uintptr_t)(src + off), len, lkey};
      struct ibv_send_wr wr = {.sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE};
      wr.wr.rdma.remote_addr = am->dst + off;
      wr.wr.rdma.rkey = rkey;
      ibv_post(dest, rail, s, &wr);
      ibv_lock_drop();
    }
    ibv_wait_counter(&local, which);
    return;
  }
  for (size_t off = 0; off < n; off += IBV_BOUNCE_SZ) {
    uint32_t len = (uint32_t)(n - off < IBV_BOUNCE_SZ ? n - off : IBV_BOUNCE_SZ);
    ibv_sreq_t *s = ibv_reserve(dest, which, NEED_BOUNCE);
    s->kind = SR_LONG;
    memcpy(s->buf, src + off, len);
    struct ibv_sge sge = {(uint64_t)(uintptr_t)s->buf, len, ibv_lkey_buf(hca)};
    struct ibv_send_wr wr = {.sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE};
    wr.wr.rdma.remote_addr = am->dst + off;
    wr.wr.rdma.rkey = rkey;
    ibv_post(dest, rail, s, &wr);
    ibv_lock_drop();
  }
}

/* Writes header, arguments and in-message payload to out; returns its length. */
static uint32_t build(uint8_t *out, const gasneti_am_t *am, uint8_t flags, uint32_t inmsg,
                      uint16_t credits) {
  ibv_msg_t *m = (ibv_msg_t *)out;
  *m = (ibv_msg_t){.category = am->category, .handler = am->handler, .nargs = am->nargs,
                   .flags = flags, .credits = credits, .src = gasneti_mynode,
                   .nbytes = am->nbytes, .dst = am->dst};
  if (am->nargs) memcpy(IBV_MSG_ARGS(m), am->args, 4u * am->nargs);
  uint32_t hdr = ibv_msg_bytes(am->nargs);
  if (inmsg) memcpy(out + hdr, am->payload, inmsg);
  return hdr + inmsg;
}

/* Posts a message (ibv_lock held, room reserved in s). */
static void post_msg(int dest, ibv_sreq_t *s, const gasneti_am_t *am, uint8_t flags,
                     uint32_t inmsg) {
  ibv_peer_t *p = &ibv.peers[dest];
  uint16_t credits = (uint16_t)gasneti_credit_collect(&ibv.credits, dest);
  uint32_t total = ibv_msg_bytes(am->nargs) + inmsg;
  uint8_t stack[GASNETI_IBV_BUFSZ > 512 ? 512 : GASNETI_IBV_BUFSZ] __attribute__((aligned(8)));
  s->kind = SR_AM;
  struct ibv_sge sge;
  struct ibv_send_wr wr = {.sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND};
  if (!s->buf) { /* inline: the data is copied as the request is posted */
    build(stack, am, flags, inmsg, credits);
    sge = (struct ibv_sge){(uint64_t)(uintptr_t)stack, total, 0};
    wr.send_flags = IBV_SEND_INLINE;
  } else {
    build(s->buf, am, flags, inmsg, credits);
    sge = (struct ibv_sge){(uint64_t)(uintptr_t)s->buf, total, ibv_lkey_buf(ibv_hca_of_rail(p->am_rail))};
  }
  ibv_post(dest, p->am_rail, s, &wr);
}

bool ibv_send_am(gasnet_node_t dest, const gasneti_am_t *am, gasneti_token_t *reply_to) {
  bool reply = reply_to != NULL;
  bool immediate = am->flags & GASNETI_AM_IMMEDIATE;
  int which = (reply || gasneti_am_context != GASNETI_CTX_CLIENT) ? GASNETI_POLL_REPLIES
                                                                   : GASNETI_POLL_ALL;
  ibv_peer_t *p = &ibv.peers[dest];
  if (!p->usable) ibv_connect(dest); /* first contact: a handshake, immediate or not */
  if (p->finished) return true; /* it returned from main: nobody will ever read this */
  p->recorded = true;
  /* A request takes a credit, given back by its reply. */
  if (!reply) {
    if (immediate) {
      int got = gasneti_credit_try(&ibv.credits, IBV_LOCK, dest, &p->finished);
      if (got <= 0) return got < 0;
    } else if (!gasneti_credit_wait(&ibv.credits, IBV_LOCK, dest, &p->finished,
                                    ibv_poll_network, which)) {
      return true;
    }
  }
  uint8_t flags = reply ? MSG_REPLY : 0;
  uint32_t inmsg = 0;
  bool rdma_payload = false;
  if (am->category == GASNETI_AM_MEDIUM) {
    inmsg = am->nbytes;
  } else if (am->category == GASNETI_AM_LONG && am->nbytes) {
    if (am->nbytes <= ibv.packed_limit) {
      inmsg = am->nbytes;
      flags |= MSG_PACKED;
    } else {
      rdma_payload = true;
    }
  }
  bool inline_ok = ibv_msg_bytes(am->nargs) + inmsg <= ibv.inline_limit;
  int need = inline_ok ? NEED_NONE : NEED_BBUF;
  ibv_sreq_t *s = NULL;
  if (immediate) {
    /* An RDMA payload's pieces and the header after them: the queue's room for all of them
     * now (their bounce buffers, if any, are taken as they go). */
    int pieces = rdma_payload ? (int)((am->nbytes + IBV_PIECE - 1) / IBV_PIECE) : 0;
    if ((rdma_payload && !ibv_room_now(dest, pieces + 1, need)) ||
        (!rdma_payload && !(s = ibv_try_reserve(dest, need)))) {
      if (!reply) gasneti_credit_untake(&ibv.credits, IBV_LOCK, dest);
      return false;
    }
  }
  if (rdma_payload) {
    long_payload(dest, p->am_rail, am, which);
    s = ibv_reserve(dest, which, need);
  } else if (!immediate) {
    s = ibv_reserve(dest, which, need);
  }
  post_msg(dest, s, am, flags, inmsg);
  ibv_lock_drop();
  return true;
}

/* A message with no handler: banked credits going back (a hidden reply, when `overdue_only`
 * and more than the slack are owed), or the news that this rank used the connection (RDMA
 * leaves no trace at the target, whose GASNET_CONNECTFILE_OUT must still list the pair). */
void ibv_send_ctrl(int peer, bool overdue_only) {
  bool inline_ok = ibv_msg_bytes(0) <= ibv.inline_limit;
  ibv_sreq_t *s = ibv_reserve(peer, GASNETI_POLL_REPLIES, inline_ok ? NEED_NONE : NEED_BBUF);
  if ((overdue_only && !gasneti_credit_overdue(&ibv.credits, peer)) || ibv.peers[peer].finished) {
    if (s->buf) ibv_bbuf_put(s->buf);
    ibv_sreq_put(s); /* another message took them back meanwhile */
  } else {
    gasneti_am_t none = {.category = GASNETI_AM_SHORT};
    post_msg(peer, s, &none, MSG_CTRL | MSG_REPLY, 0);
  }
  ibv_lock_drop();
}

/* ---- receiving ---------------------------------------------------------------------------------- */
typedef struct deferred {
  struct deferred *next;
  int src;
  uint32_t len;
  uint8_t data[];
} deferred_t;
static deferred_t *deferred_head, **deferred_tail = &deferred_head;

static bool bad(const char *why, int src) {
  static int told;
  if (told++ < 3)
    gasneti_warning("ibv: dropped a malformed message from rank %d (%s)", src, why);
  return false;
}

/* Checks what a message says of itself against what arrived; false drops it. */
static bool valid(const ibv_msg_t *m, uint32_t len, int src) {
  if (m->category > GASNETI_AM_LONG || m->nargs > 16) return bad("bad category or arguments", src);
  uint32_t hdr = ibv_msg_bytes(m->nargs);
  if (hdr > len) return bad("shorter than its header", src);
  uint32_t payload = len - hdr;
  if (m->category == GASNETI_AM_MEDIUM && (m->nbytes > GASNETC_MAX_MEDIUM || payload != m->nbytes))
    return bad("Medium length", src);
  if (m->category == GASNETI_AM_LONG) {
    if (!gasneti_in_segment(gasneti_mynode, (void *)(uintptr_t)m->dst, m->nbytes))
      return bad("Long outside this rank's segment", src);
    if ((m->flags & MSG_PACKED) ? payload != m->nbytes : payload != 0)
      return bad("Long length", src);
  }
  return true;
}

/* Runs one message's handler (ibv_lock not held), then settles its credit. */
static void run(int src, ibv_msg_t *m) {
  bool reply = m->flags & MSG_REPLY;
  const uint8_t *payload = (const uint8_t *)m + ibv_msg_bytes(m->nargs);
  gasneti_am_t am = {.category = m->category, .handler = m->handler, .nargs = m->nargs,
                     .nbytes = m->nbytes, .args = IBV_MSG_ARGS(m), .payload = payload,
                     .dst = m->dst};
  if (m->category == GASNETI_AM_MEDIUM) am.chunk = m->nbytes;
  if (m->category == GASNETI_AM_LONG && (m->flags & MSG_PACKED) && m->nbytes) {
    am.chunk = m->nbytes; /* copied into place before the handler runs */
    am.flags = GASNETI_AM_TAIL;
  }
  gasneti_token_t token = {.src = (gasnet_node_t)src, .is_request = !reply};
  gasneti_am_deliver(&token, &am);
  ibv_lock_take();
  bool overdue = false;
  if (reply) {
    gasneti_credit_returned(&ibv.credits, src, 1);
  } else if (!token.replied) { /* an implicit reply: the credit is owed */
    gasneti_credit_owe(&ibv.credits, src);
    overdue = gasneti_credit_overdue(&ibv.credits, src);
  }
  ibv_lock_drop();
  if (overdue) ibv_send_ctrl(src, true);
}

/* The receive buffer goes back where it came from: the SRQ of the HCA whose CQ delivered it,
 * or the queue pair that received it (found by number when the message named no peer). */
static void repost(int hca, struct ibv_wc *wc, void *buf) {
  if (ibv.use_srq) {
    ibv_post_rbuf(hca, NULL, buf);
    return;
  }
  for (int r = 0; r < (int)gasneti_nodes; r++) {
    ibv_peer_t *p = &ibv.peers[r];
    if (p->state == CONN_UP && p->qp[p->am_rail]->qp_num == wc->qp_num) {
      ibv_post_rbuf(hca, p->qp[p->am_rail], buf);
      return;
    }
  }
}

static inline void repost_from(int hca, ibv_peer_t *p, void *buf) {
  ibv_post_rbuf(hca, ibv.use_srq ? NULL : p->qp[p->am_rail], buf);
}

int ibv_recv_am(struct ibv_wc *wc, int hca, int which) {
  uint8_t *buf = (uint8_t *)(uintptr_t)wc->wr_id;
  ibv_msg_t *m = (ibv_msg_t *)buf;
  if (wc->status != IBV_WC_SUCCESS) {
    if (wc->status == IBV_WC_WR_FLUSH_ERR || ibv.in_exit) return 0; /* a queue pair went down */
    ibv_fatal_wc(wc, -1, "a receive");
  }
  int src = wc->byte_len >= sizeof *m ? (int)m->src : -1;
  ibv_peer_t *p = src >= 0 && src < (int)gasneti_nodes ? &ibv.peers[src] : NULL;
  /* Only the peer's own AM queue pair may speak for it. */
  if (!p || p->state != CONN_UP || p->qp[p->am_rail]->qp_num != wc->qp_num) {
    bad("not from the queue pair of the rank it names", src);
    repost(hca, wc, buf);
    return 0;
  }
  if ((m->flags & (MSG_CTRL | MSG_HELLO)) == (MSG_CTRL | MSG_HELLO)) {
    ibv_conn_ready(src); /* the connection is up; no traffic to record yet */
    repost_from(hca, p, buf);
    return 0;
  }
  ibv_conn_heard(src);
  if (m->credits) gasneti_credit_returned(&ibv.credits, src, m->credits);
  if ((m->flags & MSG_CTRL) || !valid(m, wc->byte_len, src)) {
    repost_from(hca, p, buf);
    return 0;
  }
  if (!(m->flags & MSG_REPLY) && !(which & GASNETI_POLL_REQUESTS)) {
    deferred_t *d = gasneti_malloc(sizeof *d + wc->byte_len);
    d->next = NULL;
    d->src = src;
    d->len = wc->byte_len;
    memcpy(d->data, buf, wc->byte_len);
    *deferred_tail = d;
    deferred_tail = &d->next;
    repost_from(hca, p, buf);
    return 0;
  }
  ibv_lock_drop();
  run(src, m);
  ibv_lock_take();
  repost_from(hca, p, buf);
  return 1;
}

int ibv_run_deferred(void) {
  int ran = 0;
  while (!gasneti_poll_stop) {
    ibv_lock_take();
    deferred_t *d = deferred_head;
    if (d) {
      deferred_head = d->next;
      if (!deferred_head) deferred_tail = &deferred_head;
    }
    ibv_lock_drop();
    if (!d) return ran;
    run(d->src, (ibv_msg_t *)(void *)d->data);
    free(d);
    ran++;
  }
  return ran;
}

bool ibv_have_deferred(void) { return deferred_head != NULL; }
