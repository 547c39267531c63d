/* send.c: ibv_post_send and the send engines. Each QP's work requests run in the order they
 * were posted; the one at the head may have to wait (receiver not ready, peer not yet
 * connected) and then holds the rest back, as the reliable connected service orders them.
 * Errors end with the statuses the specification gives and put the QP in the error state,
 * after which everything queued completes as flushed. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "fv_internal.h"

enum { DONE, WAIT };

/* RNR NAK timer values of the specification, in milliseconds (index = min_rnr_timer). */
static const double rnr_ms[32] = {655.36, 0.01, 0.02, 0.03, 0.04, 0.06, 0.08, 0.12, 0.16, 0.24,
                                  0.32, 0.48, 0.64, 0.96, 1.28, 1.92, 2.56, 3.84, 5.12, 7.68,
                                  10.24, 15.36, 20.48, 30.72, 40.96, 61.44, 81.92, 122.88, 163.84,
                                  245.76, 327.68, 491.52};

static enum ibv_wc_opcode wc_opcode(enum ibv_wr_opcode op) {
  switch (op) {
    case IBV_WR_RDMA_WRITE:
    case IBV_WR_RDMA_WRITE_WITH_IMM: return IBV_WC_RDMA_WRITE;
    case IBV_WR_RDMA_READ: return IBV_WC_RDMA_READ;
    default: return IBV_WC_SEND;
  }
}

static void complete(fv_qp_t *q, const fv_swqe_t *w, enum ibv_wc_status status, uint32_t len) {
  if (status == IBV_WC_SUCCESS && !(w->flags & IBV_SEND_SIGNALED) && !q->sq_sig_all) return;
  struct ibv_wc wc = {.wr_id = w->wr_id, .status = status, .opcode = wc_opcode(w->opcode),
                      .vendor_err = status == IBV_WC_SUCCESS ? 0 : 0x80u | status,
                      .byte_len = len, .qp_num = q->qp.qp_num};
  fv_cq_push(q->scq->ring, &wc);
}

/* An error completion: the QP goes to the error state (its queue then flushes). */
static int fail(fv_qp_t *q, const fv_swqe_t *w, enum ibv_wc_status status) {
  complete(q, w, status, 0);
  fv_qp_set_error(q);
  return DONE;
}

static uint64_t sge_bytes(const fv_swqe_t *w) {
  if (w->flags & IBV_SEND_INLINE) return w->inline_len;
  uint64_t n = 0;
  for (int i = 0; i < w->nsge; i++) n += w->sge[i].length;
  return n;
}

/* The local side of a transfer: inline data, or registered memory of this QP's PD. */
static bool local_iov(fv_qp_t *q, fv_swqe_t *w, uint32_t need, struct iovec *iov, int *n) {
  if (w->flags & IBV_SEND_INLINE) {
    iov[0] = (struct iovec){w->inline_data, w->inline_len};
    *n = 1;
    return true;
  }
  uint32_t pd = ((fv_pd_t *)q->qp.pd)->id;
  *n = 0;
  for (int i = 0; i < w->nsge; i++) {
    const struct ibv_sge *s = &w->sge[i];
    if (!fv_mr_check(s->lkey, getpid(), fv_self_start(), pd, need, s->addr, s->length))
      return false;
    if (s->length) iov[(*n)++] = (struct iovec){(void *)(uintptr_t)s->addr, s->length};
  }
  return true;
}

/* A receive request's buffers as remote iovecs for len bytes after skip bytes. */
static int remote_iov(const fv_rwqe_t *r, uint64_t skip, uint64_t len, struct iovec *iov) {
  int n = 0;
  for (uint32_t i = 0; i < r->nsge && len; i++) {
    uint64_t a = r->sge[i].addr, l = r->sge[i].length;
    if (skip >= l) {
      skip -= l;
      continue;
    }
    a += skip, l -= skip, skip = 0;
    if (l > len) l = len;
    iov[n++] = (struct iovec){(void *)(uintptr_t)a, l};
    len -= l;
  }
  return n;
}

static uint64_t rwqe_bytes(const fv_rwqe_t *r) {
  uint64_t n = 0;
  for (uint32_t i = 0; i < r->nsge; i++) n += r->sge[i].length;
  return n;
}

static bool rwqe_writable(const fv_rwqe_t *r, const fv_qp_ent_t *d) {
  for (uint32_t i = 0; i < r->nsge; i++)
    if (!fv_mr_check(r->sge[i].lkey, d->pid, d->start, d->pd, IBV_ACCESS_LOCAL_WRITE,
                     r->sge[i].addr, r->sge[i].length))
      return false;
  return true;
}

/* No answer from the peer: the requester retransmits until its retry count is used up. */
static int unanswered(fv_qp_t *q, fv_swqe_t *w, double now) {
  if (q->timeout == 0) return WAIT; /* 0: wait for ever */
  double ack = 4.096e-6 * (double)(1ull << q->timeout);
  if (now - w->first_try < ack * (q->retry_cnt + 1)) return WAIT;
  return fail(q, w, IBV_WC_RETRY_EXC_ERR);
}

/* No receive posted at the responder. */
static int not_ready(fv_qp_t *q, fv_swqe_t *w, const fv_qp_ent_t *d, double now) {
  /* A responder that died answers nothing at all: the retry timeout applies. */
  if ((w->rnr_tries & 63) == 63 && !fv_alive(d->pid, d->start)) return unanswered(q, w, now);
  if (q->rnr_retry != 7 && w->rnr_tries >= (int)q->rnr_retry)
    return fail(q, w, IBV_WC_RNR_RETRY_EXC_ERR);
  w->rnr_tries++;
  w->next_try = now + rnr_ms[d->min_rnr_timer & 31] * 1e-3;
  return WAIT;
}

static void recv_completion(void *region, const fv_qp_ent_t *d, uint32_t dqpn,
                            const fv_rwqe_t *r, enum ibv_wc_status status,
                            enum ibv_wc_opcode op, uint32_t len, fv_qp_t *src, bool imm,
                            uint32_t imm_data) {
  struct ibv_wc wc = {.wr_id = r->wr_id, .status = status, .opcode = op, .byte_len = len,
                      .qp_num = dqpn, .src_qp = src->qp.qp_num, .slid = (uint16_t)src->ent->lid,
                      .wc_flags = imm ? IBV_WC_WITH_IMM : 0, .imm_data = imm_data};
  fv_cq_push((fv_cqring_t *)((uint8_t *)region + d->rcq_off), &wc);
}

static int exec_ud(fv_qp_t *q, fv_swqe_t *w) {
  uint64_t len = sge_bytes(w);
  struct iovec liov[FV_MAX_SGE];
  int nl;
  if (!local_iov(q, w, 0, liov, &nl)) return fail(q, w, IBV_WC_LOC_PROT_ERR);
  if (len > 4096) return fail(q, w, IBV_WC_LOC_LEN_ERR);
  fv_qp_ent_t *d = fv_qp_lookup(w->ud_qpn);
  /* An unreliable datagram to nowhere is simply lost; the send still completes. */
  if (!d || d->type != IBV_QPT_UD || !q->ent->lid || d->lid != w->ud_dlid ||
      d->qkey != w->ud_qkey ||
      (atomic_load(&d->state) != IBV_QPS_RTR && atomic_load(&d->state) != IBV_QPS_RTS)) {
    complete(q, w, IBV_WC_SUCCESS, 0);
    return DONE;
  }
  void *region = fv_region_of(d->pid, d->start, d->region_fd);
  fv_rwqe_t r;
  if (region && fv_rq_take((fv_rqring_t *)((uint8_t *)region + d->rq_off), &r)) {
    if (rwqe_bytes(&r) < len + FV_UD_GRH || !rwqe_writable(&r, d)) {
      recv_completion(region, d, w->ud_qpn, &r, IBV_WC_LOC_LEN_ERR, IBV_WC_RECV, 0, q, false, 0);
    } else {
      struct iovec riov[FV_MAX_SGE];
      int nr = remote_iov(&r, FV_UD_GRH, len, riov);
      if (!len || process_vm_writev(d->pid, liov, (unsigned long)nl, riov, (unsigned long)nr, 0) ==
                      (ssize_t)len)
        recv_completion(region, d, w->ud_qpn, &r, IBV_WC_SUCCESS, IBV_WC_RECV,
                        (uint32_t)(len + FV_UD_GRH), q, w->opcode == IBV_WR_SEND_WITH_IMM,
                        w->imm);
    }
  }
  complete(q, w, IBV_WC_SUCCESS, 0);
  return DONE;
}

static int exec_rc(fv_qp_t *q, fv_swqe_t *w, double now) {
  fv_qp_ent_t *e = q->ent;
  fv_qp_ent_t *d = fv_qp_lookup(e->dest_qpn);
  enum ibv_qp_state ds = d ? (enum ibv_qp_state)atomic_load(&d->state) : IBV_QPS_RESET;
  bool paired = d && d->type == IBV_QPT_RC && (ds == IBV_QPS_RTR || ds == IBV_QPS_RTS) &&
                d->dest_qpn == q->qp.qp_num && d->lid == e->dest_lid && d->dest_lid == e->lid &&
                e->lid != 0;
  void *region = paired ? fv_region_of(d->pid, d->start, d->region_fd) : NULL;
  if (!region) return unanswered(q, w, now);
  if (w->next_try > now) return WAIT;
  uint64_t len = sge_bytes(w);
  if (len > FV_MAX_MSG) return fail(q, w, IBV_WC_LOC_LEN_ERR);
  bool is_read = w->opcode == IBV_WR_RDMA_READ;
  struct iovec liov[FV_MAX_SGE];
  int nl;
  if (!local_iov(q, w, is_read ? IBV_ACCESS_LOCAL_WRITE : 0, liov, &nl))
    return fail(q, w, IBV_WC_LOC_PROT_ERR);
  bool rdma = w->opcode != IBV_WR_SEND && w->opcode != IBV_WR_SEND_WITH_IMM;
  if (rdma) {
    uint32_t need = is_read ? IBV_ACCESS_REMOTE_READ : IBV_ACCESS_REMOTE_WRITE;
    if (!(d->access & need) || !fv_mr_check(w->rkey, d->pid, d->start, d->pd, need,
                                            w->remote_addr, len))
      return fail(q, w, IBV_WC_REM_ACCESS_ERR);
  }
  bool consumes = !rdma || w->opcode == IBV_WR_RDMA_WRITE_WITH_IMM;
  fv_rwqe_t r = {0};
  if (consumes && !fv_rq_take((fv_rqring_t *)((uint8_t *)region + d->rq_off), &r))
    return not_ready(q, w, d, now);
  if (consumes && !rdma) {
    if (rwqe_bytes(&r) < len) {
      recv_completion(region, d, e->dest_qpn, &r, IBV_WC_LOC_LEN_ERR, IBV_WC_RECV, 0, q, false, 0);
      atomic_store(&d->state, IBV_QPS_ERR);
      return fail(q, w, IBV_WC_REM_INV_REQ_ERR);
    }
    if (!rwqe_writable(&r, d)) {
      recv_completion(region, d, e->dest_qpn, &r, IBV_WC_LOC_PROT_ERR, IBV_WC_RECV, 0, q, false,
                      0);
      atomic_store(&d->state, IBV_QPS_ERR);
      return fail(q, w, IBV_WC_REM_OP_ERR);
    }
  }
  ssize_t moved = 0;
  if (len) {
    struct iovec riov[FV_MAX_SGE];
    int nr = 1;
    if (rdma) riov[0] = (struct iovec){(void *)(uintptr_t)w->remote_addr, len};
    else nr = remote_iov(&r, 0, len, riov);
    moved = is_read ? process_vm_readv(d->pid, liov, (unsigned long)nl, riov, (unsigned long)nr, 0)
                    : process_vm_writev(d->pid, liov, (unsigned long)nl, riov, (unsigned long)nr, 0);
    if (moved != (ssize_t)len) {
      if (moved < 0 && errno == ESRCH) return unanswered(q, w, now); /* it just died */
      return fail(q, w, rdma ? IBV_WC_REM_ACCESS_ERR : IBV_WC_REM_OP_ERR);
    }
  }
  if (consumes)
    recv_completion(region, d, e->dest_qpn, &r, IBV_WC_SUCCESS,
                    rdma ? IBV_WC_RECV_RDMA_WITH_IMM : IBV_WC_RECV, rdma ? 0 : (uint32_t)len, q,
                    w->opcode == IBV_WR_SEND_WITH_IMM || w->opcode == IBV_WR_RDMA_WRITE_WITH_IMM,
                    w->imm);
  complete(q, w, IBV_WC_SUCCESS, is_read ? (uint32_t)len : 0);
  return DONE;
}

void fv_progress(fv_context_t *c) {
  if (!atomic_load_explicit(&c->pending, memory_order_relaxed)) return;
  pthread_mutex_lock(&c->lock);
  double now = 0;
  for (fv_qp_t *q = c->qps; q; q = q->next) {
    if (q->qp.state != IBV_QPS_ERR && atomic_load(&q->ent->state) == IBV_QPS_ERR)
      fv_qp_set_error(q); /* a peer found an error on our side */
    while (q->sq_count) {
      fv_swqe_t *w = &q->sq[q->sq_head];
      int r;
      if (q->qp.state == IBV_QPS_ERR) {
        struct ibv_wc wc = {.wr_id = w->wr_id, .status = IBV_WC_WR_FLUSH_ERR,
                            .opcode = wc_opcode(w->opcode), .qp_num = q->qp.qp_num};
        fv_cq_push(q->scq->ring, &wc);
        r = DONE;
      } else {
        if (now == 0) now = fv_now();
        if (w->first_try == 0) w->first_try = now;
        r = q->qp.qp_type == IBV_QPT_UD ? exec_ud(q, w) : exec_rc(q, w, now);
      }
      if (r == WAIT) break;
      q->sq_head = (q->sq_head + 1) % q->cap.max_send_wr;
      q->sq_count--;
      atomic_fetch_sub_explicit(&c->pending, 1, memory_order_relaxed);
    }
  }
  pthread_mutex_unlock(&c->lock);
}

static bool opcode_ok(const fv_qp_t *q, enum ibv_wr_opcode op) {
  switch (op) {
    case IBV_WR_SEND:
    case IBV_WR_SEND_WITH_IMM: return true;
    case IBV_WR_RDMA_WRITE:
    case IBV_WR_RDMA_WRITE_WITH_IMM:
    case IBV_WR_RDMA_READ: return q->qp.qp_type == IBV_QPT_RC;
    default: return false; /* atomics and the rest are not simulated */
  }
}

int fv_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad);
int fv_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad) {
  fv_qp_t *q = (fv_qp_t *)qp;
  fv_context_t *c = (fv_context_t *)qp->context;
  int rc = 0;
  pthread_mutex_lock(&c->lock);
  if (q->qp.state != IBV_QPS_ERR && atomic_load(&q->ent->state) == IBV_QPS_ERR)
    fv_qp_set_error(q);
  for (; wr; wr = wr->next) {
    if (q->qp.state != IBV_QPS_RTS && q->qp.state != IBV_QPS_ERR) {
      rc = EINVAL;
      break;
    }
    if (!opcode_ok(q, wr->opcode) || wr->num_sge < 0 ||
        (uint32_t)wr->num_sge > q->cap.max_send_sge ||
        (q->qp.qp_type == IBV_QPT_UD && !wr->wr.ud.ah)) {
      rc = EINVAL;
      break;
    }
    if (q->sq_count == q->cap.max_send_wr) {
      rc = ENOMEM;
      break;
    }
    fv_swqe_t *w = &q->sq[(q->sq_head + q->sq_count) % q->cap.max_send_wr];
    memset(w, 0, offsetof(fv_swqe_t, inline_data));
    w->wr_id = wr->wr_id;
    w->opcode = wr->opcode;
    w->flags = wr->send_flags;
    w->imm = wr->imm_data;
    w->first_try = w->next_try = 0;
    w->rnr_tries = 0;
    if (wr->send_flags & IBV_SEND_INLINE) {
      uint64_t total = 0;
      for (int i = 0; i < wr->num_sge; i++) total += wr->sg_list[i].length;
      if (total > q->cap.max_inline_data || wr->opcode == IBV_WR_RDMA_READ) {
        rc = EINVAL;
        break;
      }
      /* Inline data is copied now: the caller may reuse its buffer when this returns. */
      uint32_t off = 0;
      for (int i = 0; i < wr->num_sge; i++) {
        memcpy(w->inline_data + off, (void *)(uintptr_t)wr->sg_list[i].addr,
               wr->sg_list[i].length);
        off += wr->sg_list[i].length;
      }
      w->inline_len = off;
    } else {
      w->nsge = wr->num_sge;
      memcpy(w->sge, wr->sg_list, sizeof(struct ibv_sge) * (size_t)wr->num_sge);
    }
    if (q->qp.qp_type == IBV_QPT_UD) {
      w->ud_dlid = ((fv_ah_t *)wr->wr.ud.ah)->attr.dlid;
      w->ud_qpn = wr->wr.ud.remote_qpn;
      w->ud_qkey = wr->wr.ud.remote_qkey;
    } else {
      w->remote_addr = wr->wr.rdma.remote_addr;
      w->rkey = wr->wr.rdma.rkey;
    }
    q->sq_count++;
    atomic_fetch_add_explicit(&c->pending, 1, memory_order_relaxed);
  }
  pthread_mutex_unlock(&c->lock);
  if (rc && bad) *bad = wr;
  fv_progress(c);
  return rc;
}
