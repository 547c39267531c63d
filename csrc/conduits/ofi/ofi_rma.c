/* ofi_rma.c: the extended API's puts and gets to ranks outside the supernode as fi_write and
 * fi_read on the peer's registered segment, in pieces of at most OFI_RMA_PIECE. A put counts
 * as complete when delivered (FI_DELIVERY_COMPLETE: visible at the target), as GASNet's sync
 * requires. The source of a non-bulk put must be reusable when the call returns: up to the
 * inject limit the provider copies it as it takes the write (FI_INJECT; not on shm, whose
 * libfabric 1.17 provider deadlocks on injected writes with delivery completion), up to
 * GASNET_OFI_BBUF_THRESHOLD the conduit copies it into bounce buffers, and a larger one waits
 * for its writes to be done with it.
 * Local memory needs no registration (the conduit never asks for FI_MR_LOCAL). */
#include <string.h>

#include "ofi_internal.h"

static uint64_t remote(const ofi_peer_t *p, const void *addr) {
  uint64_t a = (uint64_t)(uintptr_t)addr;
  return ofi.virt_addr ? a : a - p->seg_base;
}

/* One RMA operation of at most OFI_RMA_PIECE bytes (ofi_lock held). */
static void post(bool write, int node, void *local, size_t len, const void *target,
                 _Atomic int64_t *counter, void *bounce, uint64_t flags, int which) {
  ofi_peer_t *p = &ofi.peers[node];
  ofi_op_t *op;
  while (!(op = ofi_op_get())) {
    ofi_lock_drop();
    ofi_wait_step(which);
    ofi_lock_take();
  }
  op->kind = write ? OP_PUT : OP_GET;
  op->peer = node;
  op->counter = counter;
  op->buf = bounce;
  atomic_fetch_add_explicit(counter, 1, memory_order_relaxed);
  struct iovec iov = {local, len};
  struct fi_rma_iov rma = {remote(p, target), len, p->seg_key};
  struct fi_msg_rma msg = {.msg_iov = &iov, .iov_count = 1, .addr = p->addr, .rma_iov = &rma,
                           .rma_iov_count = 1, .context = op};
  if (write)
    OFI_SEND(node, op, fi_writemsg(ofi.ep, &msg, flags), "an RMA put (fi_writemsg)", which);
  else
    OFI_SEND(node, op, fi_readmsg(ofi.ep, &msg, flags), "an RMA get (fi_readmsg)", which);
}

void gasnetc_rdma_put(gasnet_node_t node, void *dest, const void *src, size_t n,
                      _Atomic int64_t *counter, int nonbulk) {
  ofi_met(node);
  if (ofi.peers[node].finished) return;
  int which = ofi_which();
  uint8_t *from = (uint8_t *)(uintptr_t)src, *to = dest;
  const uint64_t done = FI_COMPLETION | FI_DELIVERY_COMPLETE;
  ofi_lock_take();
  if (nonbulk && n <= ofi.inject_limit && ofi.inject_puts) { /* the provider copies it now */
    post(true, (int)node, from, n, to, counter, NULL, done | FI_INJECT, which);
  } else if (nonbulk && n <= ofi.bbuf_threshold) { /* copied into bounce buffers */
    for (size_t off = 0; off < n; off += OFI_MSG_MAX) {
      size_t len = n - off < OFI_MSG_MAX ? n - off : OFI_MSG_MAX;
      void *b;
      while (!(b = ofi_bbuf_get())) {
        ofi_lock_drop();
        ofi_wait_step(which);
        ofi_lock_take();
      }
      memcpy(b, from + off, len);
      post(true, (int)node, b, len, to + off, counter, b, done, which);
    }
  } else { /* from where it lies; a non-bulk put waits until its source is free */
    _Atomic int64_t local = 0;
    for (size_t off = 0; off < n; off += OFI_RMA_PIECE) {
      size_t len = n - off < OFI_RMA_PIECE ? n - off : OFI_RMA_PIECE;
      post(true, (int)node, from + off, len, to + off, nonbulk ? &local : counter, NULL, done,
           which);
    }
    if (nonbulk) {
      /* Delivered, so done with its source too: the core has nothing left to wait for. */
      ofi_lock_drop();
      ofi_wait_counter(&local, which);
      return;
    }
  }
  ofi_lock_drop();
}

void gasnetc_rdma_get(void *dest, gasnet_node_t node, const void *src, size_t n,
                      _Atomic int64_t *counter) {
  ofi_met(node);
  if (ofi.peers[node].finished) return;
  int which = ofi_which();
  uint8_t *to = dest;
  const uint8_t *from = src;
  ofi_lock_take();
  for (size_t off = 0; off < n; off += OFI_RMA_PIECE) {
    size_t len = n - off < OFI_RMA_PIECE ? n - off : OFI_RMA_PIECE;
    post(false, (int)node, to + off, len, from + off, counter, NULL, FI_COMPLETION, which);
  }
  ofi_lock_drop();
}
