/* queues.c: completion queues and receive queues (per-QP rings and SRQs), kept in this
 * process's region because other processes push completions into them and take receive
 * requests from them. An idle ibv_poll_cq reads two counters and takes no lock. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fv_internal.h"

/* ---- completion queues ------------------------------------------------------------------------ */
void fv_cq_push(fv_cqring_t *ring, const struct ibv_wc *wc) {
  fv_lock(&ring->lock);
  uint32_t tail = atomic_load_explicit(&ring->tail, memory_order_relaxed);
  if (tail - atomic_load_explicit(&ring->head, memory_order_acquire) >= ring->cap) {
    atomic_store(&ring->overrun, 1); /* the consumer will see its CQ in error */
  } else {
    ring->e[tail % ring->cap] = *wc;
    atomic_store_explicit(&ring->tail, tail + 1, memory_order_release);
  }
  fv_unlock(&ring->lock);
}

struct ibv_cq *ibv_create_cq(struct ibv_context *context, int cqe, void *cq_context,
                             struct ibv_comp_channel *channel, int comp_vector) {
  fv_context_t *c = (fv_context_t *)context;
  (void)comp_vector;
  if (channel) { /* completion events are not simulated */
    errno = EOPNOTSUPP;
    return NULL;
  }
  if (cqe < 1 || cqe > c->fdev->attr.max_cqe) {
    errno = EINVAL;
    return NULL;
  }
  fv_cq_t *cq = calloc(1, sizeof *cq);
  if (!cq) {
    errno = ENOMEM;
    return NULL;
  }
  cq->ring = fv_region_alloc(sizeof(fv_cqring_t) + sizeof(struct ibv_wc) * (size_t)cqe, &cq->off);
  if (!cq->ring) {
    free(cq);
    errno = ENOMEM;
    return NULL;
  }
  fv_shared_mutex_init(&cq->ring->lock);
  cq->ring->cap = (uint32_t)cqe;
  cq->cq.context = context;
  cq->cq.cq_context = cq_context;
  cq->cq.cqe = cqe;
  return &cq->cq;
}

int ibv_destroy_cq(struct ibv_cq *cq) {
  fv_cq_t *q = (fv_cq_t *)cq;
  fv_region_free(q->off);
  free(q);
  return 0;
}

int ibv_resize_cq(struct ibv_cq *cq, int cqe) {
  (void)cq, (void)cqe;
  return EOPNOTSUPP;
}

static int fv_poll_cq(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc) {
  fv_cq_t *q = (fv_cq_t *)cq;
  fv_cqring_t *r = q->ring;
  /* The send engines run here too: work requests waiting on a peer make progress whenever
   * the application polls, as the HCA would without being asked. */
  fv_progress((fv_context_t *)cq->context);
  if (atomic_load_explicit(&r->overrun, memory_order_relaxed)) return -1;
  uint32_t head = atomic_load_explicit(&r->head, memory_order_relaxed);
  if (atomic_load_explicit(&r->tail, memory_order_acquire) == head) return 0;
  fv_lock(&r->lock);
  int n = 0;
  uint32_t tail = atomic_load_explicit(&r->tail, memory_order_acquire);
  head = atomic_load_explicit(&r->head, memory_order_relaxed);
  while (n < num_entries && head != tail) wc[n++] = r->e[head++ % r->cap];
  atomic_store_explicit(&r->head, head, memory_order_release);
  fv_unlock(&r->lock);
  return n;
}

static int fv_req_notify_cq(struct ibv_cq *cq, int solicited_only) {
  (void)cq, (void)solicited_only;
  return EOPNOTSUPP;
}

/* ---- receive rings ----------------------------------------------------------------------------- */
fv_rqring_t *fv_rq_new(uint32_t cap, uint32_t max_sge, uint64_t cq_off, uint64_t *off) {
  fv_rqring_t *r = fv_region_alloc(sizeof(fv_rqring_t) + sizeof(fv_rwqe_t) * cap, off);
  if (!r) return NULL;
  fv_shared_mutex_init(&r->lock);
  r->cap = cap;
  r->max_sge = max_sge;
  r->cq_off = cq_off;
  return r;
}

bool fv_rq_take(fv_rqring_t *rq, fv_rwqe_t *out) {
  uint32_t head = atomic_load_explicit(&rq->head, memory_order_relaxed);
  if (atomic_load_explicit(&rq->tail, memory_order_acquire) == head) return false;
  fv_lock(&rq->lock);
  head = atomic_load_explicit(&rq->head, memory_order_relaxed);
  bool got = atomic_load_explicit(&rq->tail, memory_order_acquire) != head;
  if (got) {
    *out = rq->e[head % rq->cap];
    atomic_store_explicit(&rq->head, head + 1, memory_order_release);
  }
  fv_unlock(&rq->lock);
  return got;
}

int fv_rq_post(fv_rqring_t *rq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad, uint32_t pd) {
  (void)pd;
  int rc = 0;
  fv_lock(&rq->lock);
  for (; wr; wr = wr->next) {
    uint32_t tail = atomic_load_explicit(&rq->tail, memory_order_relaxed);
    if (wr->num_sge < 0 || (uint32_t)wr->num_sge > rq->max_sge) {
      rc = EINVAL;
      break;
    }
    if (tail - atomic_load_explicit(&rq->head, memory_order_acquire) >= rq->cap) {
      rc = ENOMEM;
      break;
    }
    fv_rwqe_t *e = &rq->e[tail % rq->cap];
    e->wr_id = wr->wr_id;
    e->nsge = (uint32_t)wr->num_sge;
    memcpy(e->sge, wr->sg_list, sizeof(struct ibv_sge) * (size_t)wr->num_sge);
    atomic_store_explicit(&rq->tail, tail + 1, memory_order_release);
  }
  fv_unlock(&rq->lock);
  if (rc && bad) *bad = wr;
  return rc;
}

void fv_rq_flush(fv_rqring_t *rq, fv_cqring_t *cq, uint32_t qpn) {
  fv_rwqe_t e;
  while (fv_rq_take(rq, &e)) {
    struct ibv_wc wc = {.wr_id = e.wr_id, .status = IBV_WC_WR_FLUSH_ERR, .opcode = IBV_WC_RECV,
                        .qp_num = qpn};
    fv_cq_push(cq, &wc);
  }
}

/* ---- shared receive queues -------------------------------------------------------------------- */
struct ibv_srq *ibv_create_srq(struct ibv_pd *pd, struct ibv_srq_init_attr *init) {
  fv_context_t *c = (fv_context_t *)pd->context;
  struct ibv_srq_attr *a = &init->attr;
  if (a->max_wr < 1 || a->max_wr > (uint32_t)c->fdev->attr.max_srq_wr || a->max_sge < 1 ||
      a->max_sge > (uint32_t)c->fdev->attr.max_srq_sge) {
    errno = EINVAL;
    return NULL;
  }
  fv_srq_t *s = calloc(1, sizeof *s);
  if (!s) {
    errno = ENOMEM;
    return NULL;
  }
  s->ring = fv_rq_new(a->max_wr, a->max_sge, 0, &s->off);
  if (!s->ring) {
    free(s);
    errno = ENOMEM;
    return NULL;
  }
  s->attr = *a;
  s->srq.context = pd->context;
  s->srq.srq_context = init->srq_context;
  s->srq.pd = pd;
  return &s->srq;
}

int ibv_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr, int mask) {
  fv_srq_t *s = (fv_srq_t *)srq;
  if (mask & IBV_SRQ_MAX_WR) return EINVAL; /* resizing is not simulated */
  if (mask & IBV_SRQ_LIMIT) s->attr.srq_limit = attr->srq_limit;
  return 0;
}

int ibv_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr) {
  *attr = ((fv_srq_t *)srq)->attr;
  return 0;
}

int ibv_destroy_srq(struct ibv_srq *srq) {
  fv_srq_t *s = (fv_srq_t *)srq;
  fv_region_free(s->off);
  free(s);
  return 0;
}

static int fv_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr,
                            struct ibv_recv_wr **bad) {
  fv_srq_t *s = (fv_srq_t *)srq;
  return fv_rq_post(s->ring, wr, bad, ((fv_pd_t *)srq->pd)->id);
}

/* ---- the operations verbs.h calls through the context ----------------------------------------- */
int fv_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad);
int fv_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad);

const struct ibv_context_ops fv_ops = {
    .poll_cq = fv_poll_cq,
    .req_notify_cq = fv_req_notify_cq,
    .post_srq_recv = fv_post_srq_recv,
    .post_send = fv_post_send,
    .post_recv = fv_post_recv,
};
