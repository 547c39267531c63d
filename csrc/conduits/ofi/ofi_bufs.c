/* ofi_bufs.c: the ofi conduit's buffers, all made at start-up (nothing is allocated on the AM
 * or RMA path): transmit records (what a completion settles), send and bounce buffers of one
 * largest message each (GASNET_OFI_NUM_BBUFS), and the receives kept posted
 * (GASNET_OFI_RECV_BUFFERS of one largest message each), each posted again once its message was
 * delivered or copied aside. */
#include <string.h>
#include <sys/mman.h>

#include "ofi_internal.h"

void ofi_bufs_init(int nbbufs, int nops) {
  ofi.ops = gasneti_calloc((size_t)nops, sizeof *ofi.ops);
  for (int i = 0; i < nops; i++) {
    ofi.ops[i].next = ofi.free_ops;
    ofi.free_ops = &ofi.ops[i];
  }
  ofi.nbbufs = ofi.bbufs_free = nbbufs;
  ofi.bbuf_mem = gasneti_malloc((size_t)nbbufs * OFI_MSG_MAX);
  ofi.free_bbufs = gasneti_malloc((size_t)nbbufs * sizeof *ofi.free_bbufs);
  for (int i = 0; i < nbbufs; i++) ofi.free_bbufs[i] = ofi.bbuf_mem + (size_t)i * OFI_MSG_MAX;
}

ofi_op_t *ofi_op_get(void) {
  ofi_op_t *op = ofi.free_ops;
  if (op) {
    ofi.free_ops = op->next;
    ofi.ops_busy++;
    memset(&op->ctx, 0, sizeof op->ctx);
    op->buf = NULL;
    op->counter = NULL;
  }
  return op;
}

void ofi_op_put(ofi_op_t *op) {
  ofi.ops_busy--;
  op->next = ofi.free_ops;
  ofi.free_ops = op;
}

void *ofi_bbuf_get(void) { return ofi.bbufs_free ? ofi.free_bbufs[--ofi.bbufs_free] : NULL; }

void ofi_bbuf_put(void *buf) { ofi.free_bbufs[ofi.bbufs_free++] = buf; }

void ofi_post_rbuf(ofi_rbuf_t *r) {
  memset(&r->ctx, 0, sizeof r->ctx);
  struct iovec iov = {r->mem, OFI_MSG_MAX};
  struct fi_msg msg = {.msg_iov = &iov, .iov_count = 1, .addr = FI_ADDR_UNSPEC, .context = r};
  OFI_POST(fi_recvmsg(ofi.ep, &msg, 0), "posting a receive (fi_recvmsg)");
}

/* Each buffer starts on a cache line; its message's arguments and payload stay 8-aligned. */
#define OFI_RBUF_STRIDE ((OFI_MSG_MAX + 63) & ~(size_t)63)

void ofi_rbufs_init(int count) {
  ofi.nrbufs = count;
  ofi.rbufs = gasneti_calloc((size_t)count, sizeof *ofi.rbufs);
  uint8_t *mem = mmap(NULL, (size_t)count * OFI_RBUF_STRIDE, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED)
    gasneti_fatalerror("ofi: cannot map %d receive buffers of %zu bytes (GASNET_OFI_RECV_BUFFERS)",
                       count, OFI_RBUF_STRIDE);
  ofi_lock_take();
  for (int i = 0; i < count; i++) {
    ofi.rbufs[i].mem = mem + (size_t)i * OFI_RBUF_STRIDE;
    ofi_post_rbuf(&ofi.rbufs[i]);
  }
  ofi_lock_drop();
}
