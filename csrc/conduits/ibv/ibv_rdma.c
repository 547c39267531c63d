/* ibv_rdma.c: the extended API's puts and gets to ranks outside the supernode as RDMA writes
 * and reads on the peer's segment, striped over its rails in pieces of at least 64 KiB.
 * Registered local memory (the segment) moves zero-copy; anything else goes through bounce
 * buffers: a put copies into them first, a get is copied out when its read completes. Puts up
 * to GASNET_INLINESEND_LIMIT are inline (the source is free at once); a non-bulk put larger
 * than GASNET_NONBULKPUT_BOUNCE_LIMIT from registered memory waits for the HCA to have read
 * its source before it returns, a smaller one is bounced. */
#include <string.h>

#include "ibv_internal.h"

static int next_rail(ibv_peer_t *p) {
  int r = p->rr;
  p->rr = (p->rr + 1) % p->nrails;
  return r;
}

static ibv_peer_t *ready(gasnet_node_t node) {
  ibv_peer_t *p = &ibv.peers[node];
  if (!p->usable) ibv_connect((int)node);
  if (!p->recorded && !p->finished) { /* first use: the target learns of it too */
    p->recorded = true;
    ibv_send_ctrl((int)node, false);
  }
  return p;
}

static void post_rdma(int node, int rail, ibv_sreq_t *s, enum ibv_wr_opcode op, uint64_t laddr,
                      uint32_t len, uint32_t lkey, uint64_t raddr, unsigned flags) {
  ibv_peer_t *p = &ibv.peers[node];
  struct ibv_sge sge = {laddr, len, lkey};
  struct ibv_send_wr wr = {.sg_list = &sge, .num_sge = 1, .opcode = op, .send_flags = flags};
  wr.wr.rdma.remote_addr = raddr;
  wr.wr.rdma.rkey = p->seg.rkey[rail % ibv.cards[node].nports];
  ibv_post(node, rail, s, &wr);
}

/* Pieces of a zero-copy transfer: the transfer split evenly over the rails, at least 64 KiB
 * and at most IBV_PIECE each. */
static size_t piece_size(const ibv_peer_t *p, size_t n) {
  size_t piece = (n + p->nrails - 1) / p->nrails;
  if (piece < 65536) piece = 65536;
  if (piece > IBV_PIECE) piece = IBV_PIECE;
  return piece;
}

void gasnetc_rdma_put(gasnet_node_t node, void *dest, const void *src, size_t n,
                      _Atomic int64_t *counter, int nonbulk) {
  ibv_peer_t *p = ready(node);
  if (p->finished) return;
  int which = ibv_which();
  const uint8_t *from = src;
  uint64_t to = (uint64_t)(uintptr_t)dest;
  if (n <= ibv.inline_limit) {
    ibv_sreq_t *s = ibv_reserve((int)node, which, NEED_NONE);
    s->kind = SR_PUT;
    s->counter = counter;
    atomic_fetch_add_explicit(counter, 1, memory_order_relaxed);
    post_rdma((int)node, next_rail(p), s, IBV_WR_RDMA_WRITE, (uint64_t)(uintptr_t)src,
              (uint32_t)n, 0, to, IBV_SEND_INLINE);
    ibv_lock_drop();
    return;
  }
  int rail = p->rr;
  uint32_t lkey = ibv_lkey_of(ibv_hca_of_rail(rail), src, n);
  if (lkey && !(nonbulk && n <= ibv.bounce_limit)) {
    _Atomic int64_t local = 0;
    size_t piece = piece_size(p, n);
    for (size_t off = 0; off < n; off += piece) {
      uint32_t len = (uint32_t)(n - off < piece ? n - off : piece);
      ibv_sreq_t *s = ibv_reserve((int)node, which, NEED_NONE);
      s->kind = SR_PUT;
      s->counter = counter;
      if (nonbulk) s->local = &local, atomic_fetch_add_explicit(&local, 1, memory_order_relaxed);
      atomic_fetch_add_explicit(counter, 1, memory_order_relaxed);
      rail = next_rail(p);
      post_rdma((int)node, rail, s, IBV_WR_RDMA_WRITE, (uint64_t)(uintptr_t)(from + off), len,
                ibv_lkey_of(ibv_hca_of_rail(rail), from + off, len), to + off, 0);
      ibv_lock_drop();
    }
    if (nonbulk) ibv_wait_counter(&local, which); /* the source must be reusable */
    return;
  }
  /* Bounced: small pieces in AM buffers, larger ones in 64 KiB blocks. */
  size_t chunk = n <= IBV_BUFSZ ? IBV_BUFSZ : IBV_BOUNCE_SZ;
  for (size_t off = 0; off < n; off += chunk) {
    uint32_t len = (uint32_t)(n - off < chunk ? n - off : chunk);
    ibv_sreq_t *s = ibv_reserve((int)node, which, chunk == IBV_BUFSZ ? NEED_BBUF : NEED_BOUNCE);
    s->kind = SR_PUT;
    s->counter = counter;
    atomic_fetch_add_explicit(counter, 1, memory_order_relaxed);
    memcpy(s->buf, from + off, len);
    rail = next_rail(p);
    post_rdma((int)node, rail, s, IBV_WR_RDMA_WRITE, (uint64_t)(uintptr_t)s->buf, len,
              ibv_lkey_buf(ibv_hca_of_rail(rail)), to + off, 0);
    ibv_lock_drop();
  }
}

void gasnetc_rdma_get(void *dest, gasnet_node_t node, const void *src, size_t n,
                      _Atomic int64_t *counter) {
  ibv_peer_t *p = ready(node);
  if (p->finished) return;
  int which = ibv_which();
  uint8_t *to = dest;
  uint64_t from = (uint64_t)(uintptr_t)src;
  if (ibv_lkey_of(ibv_hca_of_rail(p->rr), dest, n)) {
    size_t piece = piece_size(p, n);
    for (size_t off = 0; off < n; off += piece) {
      uint32_t len = (uint32_t)(n - off < piece ? n - off : piece);
      ibv_sreq_t *s = ibv_reserve((int)node, which, NEED_NONE);
      s->kind = SR_GET;
      s->counter = counter;
      atomic_fetch_add_explicit(counter, 1, memory_order_relaxed);
      int rail = next_rail(p);
      post_rdma((int)node, rail, s, IBV_WR_RDMA_READ, (uint64_t)(uintptr_t)(to + off), len,
                ibv_lkey_of(ibv_hca_of_rail(rail), to + off, len), from + off, 0);
      ibv_lock_drop();
    }
    return;
  }
  /* Into unregistered memory: read into bounce buffers, copied out on completion (a word with
   * one store, as the extended API promises). */
  size_t chunk = n <= IBV_BUFSZ ? IBV_BUFSZ : IBV_BOUNCE_SZ;
  for (size_t off = 0; off < n; off += chunk) {
    uint32_t len = (uint32_t)(n - off < chunk ? n - off : chunk);
    ibv_sreq_t *s = ibv_reserve((int)node, which, chunk == IBV_BUFSZ ? NEED_BBUF : NEED_BOUNCE);
    s->kind = SR_GET;
    s->counter = counter;
    s->copy_to = to + off;
    s->copy_len = len;
    atomic_fetch_add_explicit(counter, 1, memory_order_relaxed);
    int rail = next_rail(p);
    post_rdma((int)node, rail, s, IBV_WR_RDMA_READ, (uint64_t)(uintptr_t)s->buf, len,
              ibv_lkey_buf(ibv_hca_of_rail(rail)), from + off, 0);
    ibv_lock_drop();
  }
}
