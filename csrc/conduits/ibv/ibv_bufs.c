/* ibv_bufs.c: the memory this rank registers (one pool of AM receive and send buffers, bounce
 * blocks and handshake datagrams, registered once on every HCA; the segment at attach), the
 * descriptors of outstanding work requests, and the GASNET_PHYSMEM_PROBE. Nothing here
 * allocates after start-up: buffers and descriptors circulate through free lists. */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include "ibv_plan.h"
#include "ibv_internal.h"

enum { ACCESS_BUF = IBV_ACCESS_LOCAL_WRITE,
       ACCESS_SEG = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ };

static void push(ibv_buf_t **list, void *p) {
  ibv_buf_t *b = p;
  b->next = *list;
  *list = b;
}

static void *pop(ibv_buf_t **list) {
  ibv_buf_t *b = *list;
  if (b) *list = b->next;
  return b;
}

static const char *pin_advice(int err) {
  return err == ENOMEM ? " (the memlock limit, ulimit -l, or GASNET_PHYSMEM_MAX is too low)" : "";
}

void ibv_bufs_init(void) {
  ibv_pool_t *p = &ibv.pool;
  size_t rb = (size_t)p->nrbufs * IBV_BUFSZ, bb = (size_t)p->nbbufs * IBV_BUFSZ;
  size_t bo = (size_t)IBV_BOUNCE_COUNT * IBV_BOUNCE_SZ;
  size_t ur = (size_t)IBV_UD_RBUFS * (IBV_UD_BUFSZ + 40), us = (size_t)IBV_UD_SBUFS * IBV_UD_BUFSZ;
  p->size = (bo + rb + bb + ur + us + 4095) & ~(size_t)4095;
  p->base = mmap(NULL, p->size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p->base == MAP_FAILED) gasneti_fatalerror("ibv: cannot allocate %zu bytes of buffers", p->size);
  p->bounce = p->base; /* first: the 64 KiB blocks stay page aligned */
  p->rbufs = p->bounce + bo;
  p->bbufs = p->rbufs + rb;
  p->ud_r = p->bbufs + bb;
  p->ud_s = p->ud_r + ur;
  for (int h = 0; h < ibv.nhcas; h++) {
    ibv.hca[h].buf_mr = ibv_reg_mr(ibv.hca[h].pd, p->base, p->size, ACCESS_BUF);
    if (!ibv.hca[h].buf_mr)
      gasneti_fatalerror("ibv: cannot register %zu bytes of buffers on %s: %s%s", p->size,
                         ibv.hca[h].name, strerror(errno), pin_advice(errno));
  }
  ibv.pinned += p->size * (size_t)ibv.nhcas;
  for (int i = p->nbbufs - 1; i >= 0; i--) push(&p->free_bbufs, p->bbufs + (size_t)i * IBV_BUFSZ);
  for (int i = IBV_BOUNCE_COUNT - 1; i >= 0; i--)
    push(&p->free_bounce, p->bounce + (size_t)i * IBV_BOUNCE_SZ);
  for (int i = IBV_UD_SBUFS - 1; i >= 0; i--) push(&p->free_ud_s, p->ud_s + (size_t)i * IBV_UD_BUFSZ);
  p->bbufs_free = p->nbbufs;
  p->ud_s_free = IBV_UD_SBUFS;
  /* Receive buffers: posted to the shared receive queues now, or handed to each peer's queue
   * pair as it connects. */
  for (int i = p->nrbufs - 1; i >= 0; i--) {
    uint8_t *b = p->rbufs + (size_t)i * IBV_BUFSZ;
    if (ibv.use_srq) ibv_post_rbuf(i % ibv.nhcas, NULL, b);
    else push(&p->free_rbufs, b);
  }
  p->bounce_free = IBV_BOUNCE_COUNT;
  /* One descriptor per work request that can be in flight, and a margin for handshakes. */
  ibv.nsreqs = ibv.depth_total + IBV_UD_SBUFS + 64;
  ibv.sreqs = gasneti_calloc((size_t)ibv.nsreqs, sizeof *ibv.sreqs);
  for (int i = ibv.nsreqs - 1; i >= 0; i--) {
    ibv.sreqs[i].next = ibv.free_sreqs;
    ibv.free_sreqs = &ibv.sreqs[i];
  }
}

void ibv_bufs_register_segment(void *seg, uintptr_t size) {
  if (!size) return;
  for (int h = 0; h < ibv.nhcas; h++) {
    ibv.hca[h].seg_mr = ibv_reg_mr(ibv.hca[h].pd, seg, size, ACCESS_SEG);
    if (!ibv.hca[h].seg_mr)
      gasneti_fatalerror("ibv: cannot register the %lu-byte segment on %s: %s%s",
                         (unsigned long)size, ibv.hca[h].name, strerror(errno), pin_advice(errno));
  }
  ibv.pinned += (uint64_t)size * (uint64_t)ibv.nhcas;
}

void *ibv_bbuf_get(void) {
  void *b = pop(&ibv.pool.free_bbufs);
  if (b) ibv.pool.bbufs_free--;
  return b;
}

void ibv_bbuf_put(void *buf) {
  push(&ibv.pool.free_bbufs, buf);
  ibv.pool.bbufs_free++;
}

void *ibv_bounce_get(void) {
  void *b = pop(&ibv.pool.free_bounce);
  if (b) ibv.pool.bounce_free--;
  return b;
}

void ibv_bounce_put(void *buf) {
  push(&ibv.pool.free_bounce, buf);
  ibv.pool.bounce_free++;
}

void *ibv_ud_sbuf_get(void) {
  void *b = pop(&ibv.pool.free_ud_s);
  if (b) ibv.pool.ud_s_free--;
  return b;
}

void ibv_ud_sbuf_put(void *buf) {
  push(&ibv.pool.free_ud_s, buf);
  ibv.pool.ud_s_free++;
}

ibv_sreq_t *ibv_sreq_get(void) {
  ibv_sreq_t *s = ibv.free_sreqs;
  if (s) {
    ibv.free_sreqs = s->next;
    *s = (ibv_sreq_t){0};
  }
  return s;
}

void ibv_sreq_put(ibv_sreq_t *s) {
  s->next = ibv.free_sreqs;
  ibv.free_sreqs = s;
}

uint32_t ibv_lkey_buf(int hca) { return ibv.hca[hca].buf_mr->lkey; }

uint32_t ibv_lkey_of(int hca, const void *p, size_t n) {
  uintptr_t a = (uintptr_t)p;
  struct ibv_mr *mr = ibv.hca[hca].seg_mr;
  if (mr && a >= (uintptr_t)mr->addr && a - (uintptr_t)mr->addr <= mr->length &&
      n <= mr->length - (a - (uintptr_t)mr->addr))
    return mr->lkey;
  mr = ibv.hca[hca].buf_mr;
  if (mr && a >= (uintptr_t)mr->addr && a - (uintptr_t)mr->addr <= mr->length &&
      n <= mr->length - (a - (uintptr_t)mr->addr))
    return mr->lkey;
  return 0;
}

void ibv_post_rbuf(int hca, struct ibv_qp *qp, void *buf) {
  struct ibv_sge sge = {(uint64_t)(uintptr_t)buf, IBV_BUFSZ, ibv.hca[hca].buf_mr->lkey};
  struct ibv_recv_wr wr = {.wr_id = (uint64_t)(uintptr_t)buf, .sg_list = &sge, .num_sge = 1};
  struct ibv_recv_wr *bad;
  int rc = qp ? ibv_post_recv(qp, &wr, &bad) : ibv_post_srq_recv(ibv.hca[hca].srq, &wr, &bad);
  if (rc) gasneti_fatalerror("ibv: cannot post a receive buffer on %s: %s", ibv.hca[hca].name,
                             strerror(rc));
}

/* How much of `want` bytes the first HCA can really register: halving the unknown range until
 * it is within 1/32 of want. Registration pins, so this takes time on real hardware. */
uint64_t ibv_physmem_probe(uint64_t want) {
  want &= ~(uint64_t)4095;
  if (!want) return 0;
  void *area = mmap(NULL, want, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                    -1, 0);
  if (area == MAP_FAILED) return 0;
  uint64_t lo = 0, hi = want, step = want / 32 > 4096 ? want / 32 : 4096;
  struct ibv_mr *mr = ibv_reg_mr(ibv.hca[0].pd, area, want, ACCESS_SEG);
  if (mr) {
    ibv_dereg_mr(mr);
    lo = want;
  }
  while (hi - lo > step && lo < want) {
    uint64_t mid = (lo + (hi - lo) / 2) & ~(uint64_t)4095;
    mr = ibv_reg_mr(ibv.hca[0].pd, area, mid, ACCESS_SEG);
    if (mr) {
      ibv_dereg_mr(mr);
      lo = mid;
    } else {
      hi = mid;
    }
  }
  munmap(area, want);
  return lo;
}
