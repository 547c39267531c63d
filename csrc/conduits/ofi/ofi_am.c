/* ofi_am.c: AMs as untagged messages into the receives the peers keep posted, with the core's
 * credits. A message is its header, arguments and, for a Medium or a packed Long, its payload;
 * up to the inject limit it goes by fi_inject (nothing to wait for), else from a send buffer
 * given back at its completion. A Long's payload larger than OFI_PACK_LIMIT is an RMA write
 * into the target segment first, on the same endpoint, so it is in place when the header
 * arrives (the provider orders a send after a write, FI_ORDER_SAW); without RMA or that order
 * the core cuts Longs into pieces carried inside messages. Arrived messages
 * are delivered in order by one thread at a time; requests that arrive while only replies may
 * run are copied aside (their buffer goes on) and run first at the next poll that allows them. */
#include <string.h>

#include "ofi_internal.h"

#define OFI_PACK_LIMIT 8192 /* Long payloads up to this travel inside the message */
#define OFI_INJECT_MAX 4096 /* what a message built on the stack may take */

/* ---- waiting for a resource ---------------------------------------------------------------- */
static ofi_op_t *take_op(int which) {
  ofi_op_t *op;
  while (!(op = ofi_op_get())) {
    ofi_lock_drop();
    ofi_wait_step(which);
    ofi_lock_take();
  }
  return op;
}

static void *take_bbuf(int which) {
  void *b;
  while (!(b = ofi_bbuf_get())) {
    ofi_lock_drop();
    ofi_wait_step(which);
    ofi_lock_take();
  }
  return b;
}

static int serve(int which) {
  int ran = gasneti_poll(which);
  return ran;
}

/* ---- sending --------------------------------------------------------------------------------- */
static uint64_t remote(const ofi_peer_t *p, uint64_t addr) {
  return ofi.virt_addr ? addr : addr - p->seg_base;
}

/* A Long payload too large to pack: RMA writes into the target segment, done with their source
 * before the header goes (the provider delivers the header after the writes' data). */
static void long_payload(int dest, const gasneti_am_t *am, int which) {
  ofi_peer_t *p = &ofi.peers[dest];
  _Atomic int64_t local = 0;
  uint64_t flags = FI_COMPLETION | FI_TRANSMIT_COMPLETE;
  const uint8_t *src = am->payload;
  ofi_lock_take();
  for (size_t off = 0; off < am->nbytes; off += OFI_RMA_PIECE) {
    size_t len = am->nbytes - off < OFI_RMA_PIECE ? am->nbytes - off : OFI_RMA_PIECE;
    ofi_op_t *op = take_op(which);
    op->kind = OP_LONG;
    op->peer = dest;
    op->counter = &local;
    atomic_fetch_add_explicit(&local, 1, memory_order_relaxed);
    struct iovec iov = {(void *)(src + off), len};
    struct fi_rma_iov rma = {remote(p, am->dst + off), len, p->seg_key};
    struct fi_msg_rma msg = {.msg_iov = &iov, .iov_count = 1, .addr = p->addr,
                             .rma_iov = &rma, .rma_iov_count = 1, .context = op};
    OFI_SEND(dest, op, fi_writemsg(ofi.ep, &msg, flags), "an RMA write of a Long payload",
             which);
  }
  ofi_lock_drop();
  ofi_wait_counter(&local, which);
}

/* Writes header, arguments and in-message payload to out; returns its length. */
static uint32_t build(uint8_t *out, const gasneti_am_t *am, uint8_t flags, uint32_t inmsg,
                      uint16_t credits) {
  ofi_msg_t *m = (ofi_msg_t *)out;
  *m = (ofi_msg_t){.category = am->category, .handler = am->handler, .nargs = am->nargs,
                   .flags = (uint8_t)(flags | (am->flags & (GASNETI_AM_FRAG | GASNETI_AM_TAIL))),
                   .credits = credits, .src = gasneti_mynode, .nbytes = am->nbytes,
                   .chunk = inmsg, .dst = am->dst};
  uint32_t head = ofi_msg_head(am->nargs);
  if (am->nargs) memcpy(m + 1, am->args, 4u * am->nargs);
  if (inmsg) memcpy(out + head, am->payload, inmsg);
  return ofi_msg_bytes(am->nargs, inmsg);
}

/* Posts a message of len bytes (ofi_lock held): inject where it fits, else a send buffer. */
static void post(int dest, const gasneti_am_t *am, uint8_t flags, uint32_t inmsg, int which) {
  ofi_peer_t *p = &ofi.peers[dest];
  uint32_t len = ofi_msg_bytes(am->nargs, inmsg);
  if (len <= ofi.inject_limit) {
    uint8_t stack[OFI_INJECT_MAX] __attribute__((aligned(8)));
    build(stack, am, flags, inmsg, (uint16_t)gasneti_credit_collect(&ofi.credits, dest));
    OFI_SEND(dest, NULL, fi_inject(ofi.ep, stack, len, p->addr), "sending an AM (fi_inject)",
             which);
    return;
  }
  void *buf = take_bbuf(which);
  ofi_op_t *op = take_op(which);
  op->kind = OP_SEND;
  op->peer = dest;
  op->buf = buf;
  build(buf, am, flags, inmsg, (uint16_t)gasneti_credit_collect(&ofi.credits, dest));
  OFI_SEND(dest, op, fi_send(ofi.ep, buf, len, NULL, p->addr, op), "sending an AM (fi_send)",
           which);
}

/* An immediate message (GASNETI_AM_IMMEDIATE, ofi_lock held): one try at the provider; false,
 * with nothing taken or sent, when it or this rank's buffers are full now. */
static bool try_post(int dest, const gasneti_am_t *am, uint8_t flags, uint32_t inmsg) {
  ofi_peer_t *p = &ofi.peers[dest];
  uint32_t len = ofi_msg_bytes(am->nargs, inmsg);
  uint16_t credits = (uint16_t)gasneti_credit_collect(&ofi.credits, dest);
  ssize_t rc;
  if (len <= ofi.inject_limit) {
    uint8_t stack[OFI_INJECT_MAX] __attribute__((aligned(8)));
    build(stack, am, flags, inmsg, credits);
    rc = fi_inject(ofi.ep, stack, len, p->addr);
  } else {
    void *buf = ofi_bbuf_get();
    ofi_op_t *op = buf ? ofi_op_get() : NULL;
    if (!op) {
      if (buf) ofi_bbuf_put(buf);
      rc = -FI_EAGAIN;
    } else {
      op->kind = OP_SEND;
      op->peer = dest;
      op->buf = buf;
      build(buf, am, flags, inmsg, credits);
      rc = fi_send(ofi.ep, buf, len, NULL, p->addr, op);
      if (rc == -FI_EAGAIN) {
        ofi_bbuf_put(buf);
        ofi_op_put(op);
      }
    }
  }
  if (rc == -FI_EAGAIN) {
    gasneti_credit_reowe(&ofi.credits, dest, credits);
    return false;
  }
  if (rc) ofi_fatal_rc("sending an AM", (int)rc);
  return true;
}

bool ofi_send_am(gasnet_node_t dest, const gasneti_am_t *am, gasneti_token_t *reply_to) {
  bool reply = reply_to != NULL;
  bool immediate = am->flags & GASNETI_AM_IMMEDIATE;
  int which = reply ? GASNETI_POLL_REPLIES : ofi_which();
  ofi_met(dest);
  ofi_peer_t *p = &ofi.peers[dest];
  if (p->finished) return true; /* it returned from main: nobody will ever read this */
  /* A request takes a credit, given back by its reply. */
  if (!reply) {
    if (immediate) {
      int got = gasneti_credit_try(&ofi.credits, OFI_LOCK, dest, &p->finished);
      if (got <= 0) return got < 0;
    } else if (!gasneti_credit_wait(&ofi.credits, OFI_LOCK, dest, &p->finished, serve, which)) {
      return true;
    }
  }
  uint8_t flags = reply ? OFI_MSG_REPLY : 0;
  uint32_t inmsg = 0;
  bool rdma_payload = false;
  if (am->category == GASNETI_AM_MEDIUM) {
    inmsg = am->nbytes;
  } else if (am->category == GASNETI_AM_LONG && am->nbytes) {
    if (!ofi.long_rma || am->nbytes <= OFI_PACK_LIMIT) { /* the core's piece, or the whole */
      inmsg = ofi.long_rma ? am->nbytes : am->chunk;
      flags |= OFI_MSG_PACKED;
    } else {
      rdma_payload = true;
    }
  }
  gasneti_am_t packed = *am;
  if (ofi.long_rma && (flags & OFI_MSG_PACKED)) { /* all of it, copied into place first */
    packed.chunk = am->nbytes;
    packed.flags = GASNETI_AM_TAIL;
  }
  if (immediate && !rdma_payload) {
    ofi_lock_take();
    bool sent = try_post(dest, &packed, flags, inmsg);
    if (!sent && !reply) gasneti_credit_returned(&ofi.credits, dest, 1);
    ofi_lock_drop();
    return sent;
  }
  /* (an immediate Long written by RMA waits for its writes' resources, if it must) */
  if (rdma_payload) long_payload(dest, am, which);
  ofi_lock_take();
  post(dest, &packed, flags, inmsg, which);
  ofi_lock_drop();
  return true;
}

/* A message with no handler: credits going back, an exit notice, "I finished". Best effort for
 * the last two (they are sent on the way out): a full transmit queue is retried a while. */
void ofi_send_ctrl(int peer, int ctrl, int code) {
  ofi_peer_t *p = &ofi.peers[peer];
  ofi_msg_t m = {.category = GASNETI_AM_SHORT, .flags = OFI_MSG_CTRL | OFI_MSG_REPLY,
                 .ctrl = (uint8_t)ctrl, .src = gasneti_mynode, .chunk = (uint32_t)code,
                 .phase = ctrl == OFI_CTRL_EXIT ? gasneti_exit_phase() : 0};
  if (ctrl == OFI_CTRL_CREDITS) { /* to a requester, perhaps never sent to before */
    ofi_met(peer);
    ofi_lock_take();
    m.credits = (uint16_t)gasneti_credit_collect(&ofi.credits, peer);
    if (m.credits && !p->finished)
      OFI_SEND(peer, NULL, fi_inject(ofi.ep, &m, sizeof m, p->addr),
               "returning AM credits (fi_inject)",
               GASNETI_POLL_REPLIES);
    ofi_lock_drop();
    return;
  }
  for (int tries = 0; tries < 1000; tries++) {
    ssize_t rc = fi_inject(ofi.ep, &m, sizeof m, p->addr);
    if (rc != -FI_EAGAIN) return;
    struct fi_cq_data_entry e[8];
    (void)fi_cq_read(ofi.cq, e, 0); /* progress only */
  }
}

/* ---- receiving ---------------------------------------------------------------------------------- */
typedef struct deferred {
  struct deferred *next;
  uint32_t len;
  _Alignas(8) uint8_t data[]; /* a message: its header and payload are read in place */
} deferred_t;
static deferred_t *deferred_head, **deferred_tail = &deferred_head;

static bool bad(const char *why, int src) {
  static int told;
  if (told++ < 3) gasneti_warning("ofi: dropped a malformed message from rank %d (%s)", src, why);
  return false;
}

/* Checks what a message says of itself against what arrived; false drops it. */
static bool valid(const ofi_msg_t *m, uint32_t len) {
  int src = (int)m->src;
  if (m->category > GASNETI_AM_LONG || m->nargs > 16) return bad("bad category or arguments", src);
  if (ofi_msg_bytes(m->nargs, m->chunk) != len) return bad("length", src);
  uint32_t payload = m->chunk;
  if (m->category == GASNETI_AM_SHORT && payload) return bad("Short with a payload", src);
  if (m->category == GASNETI_AM_MEDIUM && (m->nbytes > GASNETC_MAX_MEDIUM || payload != m->nbytes))
    return bad("Medium length", src);
  if (m->category == GASNETI_AM_LONG) {
    bool frag = m->flags & GASNETI_AM_FRAG;
    if ((m->flags & OFI_MSG_PACKED) ? payload > m->nbytes : payload != 0)
      return bad("Long length", src);
    if (!gasneti_in_segment(gasneti_mynode, (void *)(uintptr_t)m->dst, frag ? payload : m->nbytes))
      return bad("Long outside this rank's segment", src);
  }
  return true;
}

/* A message has arrived (ofi_lock held): its credits count now (a request copied aside must
 * not hold them); it waits in arrival order for delivery. */
bool ofi_arrive(ofi_rbuf_t *r, uint8_t *data, uint32_t len) {
  const ofi_msg_t *m = (const ofi_msg_t *)data;
  if (len < sizeof *m || m->src >= gasneti_nodes || !ofi.peers[m->src].network)
    return bad("not from a rank this conduit carries", len >= sizeof *m ? (int)m->src : -1);
  if (m->credits) gasneti_credit_returned(&ofi.credits, (int)m->src, m->credits);
  _Atomic bool *heard = &ofi.peers[m->src].heard;
  if (!atomic_load_explicit(heard, memory_order_relaxed))
    atomic_store_explicit(heard, true, memory_order_relaxed);
  if (ofi.arrived_count == ofi.arrived_cap) { /* grow; rare, bounded by the receive buffers */
    uint32_t cap = ofi.arrived_cap ? 2 * ofi.arrived_cap : 64;
    ofi_arrived_t *a = gasneti_malloc(cap * sizeof *a);
    for (uint32_t i = 0; i < ofi.arrived_count; i++)
      a[i] = ofi.arrived[(ofi.arrived_head + i) % ofi.arrived_cap];
    free(ofi.arrived);
    ofi.arrived = a, ofi.arrived_head = 0, ofi.arrived_cap = cap;
  }
  ofi.arrived[(ofi.arrived_head + ofi.arrived_count++) % ofi.arrived_cap] =
      (ofi_arrived_t){r, data, len};
  return true;
}

/* Runs one valid message's handler (ofi_lock not held), then settles its credit. */
static void run(ofi_msg_t *m, uint32_t len) {
  int src = (int)m->src;
  bool reply = m->flags & OFI_MSG_REPLY;
  uint32_t head = ofi_msg_head(m->nargs);
  gasneti_am_t am = {.category = m->category, .handler = m->handler, .nargs = m->nargs,
                     .nbytes = m->nbytes, .args = (const gasnet_handlerarg_t *)(m + 1),
                     .payload = (const uint8_t *)m + head, .dst = m->dst};
  if (m->category == GASNETI_AM_MEDIUM) am.chunk = m->nbytes;
  (void)len;
  if (m->category == GASNETI_AM_LONG && (m->flags & OFI_MSG_PACKED)) {
    am.chunk = m->chunk; /* copied into place before the handler runs */
    am.flags = (m->flags & GASNETI_AM_FRAG) ? GASNETI_AM_FRAG : am.chunk ? GASNETI_AM_TAIL : 0;
  }
  gasneti_token_t token = {.src = (gasnet_node_t)src, .is_request = !reply};
  gasneti_am_deliver(&token, &am);
  ofi_lock_take();
  bool overdue = false;
  if (reply) {
    gasneti_credit_returned(&ofi.credits, src, 1);
  } else if (!token.replied) { /* an implicit reply (a Long's piece too): the credit is owed */
    gasneti_credit_owe(&ofi.credits, src);
    overdue = gasneti_credit_overdue(&ofi.credits, src);
  }
  ofi_lock_drop();
  if (overdue) ofi_send_ctrl(src, OFI_CTRL_CREDITS, 0);
}

static void control(const ofi_msg_t *m) {
  int src = (int)m->src;
  if (m->ctrl == OFI_CTRL_EXIT) {
    if (gasneti_host_of[src] != gasneti_host_of[gasneti_mynode]) /* others use the exit word */
      gasneti_exit_post((int)m->chunk, m->phase);
  } else if (m->ctrl == OFI_CTRL_FIN) {
    ofi.peers[src].finished = true;
  }
}

static void defer(const ofi_msg_t *m, uint32_t len) {
  deferred_t *d = gasneti_malloc(sizeof *d + len);
  d->next = NULL;
  d->len = len;
  memcpy(d->data, m, len);
  *deferred_tail = d;
  deferred_tail = &d->next;
}

bool ofi_deferred_pending(void) { return deferred_head != NULL; }

int ofi_run_deferred(void) {
  int ran = 0;
  for (deferred_t *d; !gasneti_poll_stop && (d = deferred_head);) {
    deferred_head = d->next;
    if (!deferred_head) deferred_tail = &deferred_head;
    run((ofi_msg_t *)(void *)d->data, d->len);
    free(d);
    ran++;
  }
  return ran;
}

int ofi_deliver(int which) {
  int ran = 0;
  for (;;) {
    if (GASNETI_UNLIKELY(gasneti_poll_stop)) return ran; /* the rest waits for the next poll */
    ofi_lock_take();
    if (!ofi.arrived_count) {
      ofi_lock_drop();
      return ran;
    }
    ofi_arrived_t a = ofi.arrived[ofi.arrived_head];
    ofi.arrived_head = (ofi.arrived_head + 1) % ofi.arrived_cap;
    ofi.arrived_count--;
    ofi_lock_drop();
    ofi_msg_t *m = (ofi_msg_t *)(void *)a.data;
    if (m->flags & OFI_MSG_CTRL) {
      control(m);
    } else if (valid(m, a.len)) {
      /* A request waits while only replies may run, and never overtakes one that waits. */
      if (!(m->flags & OFI_MSG_REPLY) && (!(which & GASNETI_POLL_REQUESTS) || deferred_head)) {
        defer(m, a.len);
        if (which & GASNETI_POLL_REQUESTS) ran += ofi_run_deferred();
      } else {
        run(m, a.len);
        ran++;
      }
    }
    ofi_lock_take();
    ofi_post_rbuf(a.rbuf); /* its message was handled or copied aside */
    ofi_lock_drop();
  }
}
