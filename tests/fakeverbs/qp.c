/* qp.c: queue pairs (RC and UD): creation with the device's limits, the state machine of the
 * verbs specification with its required attributes per transition, queries, destruction and
 * receive posting. A QP's fabric entry is what senders see of it. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fv_internal.h"

static uint32_t mtu_bytes(enum ibv_mtu m) {
  return m >= IBV_MTU_256 && m <= IBV_MTU_4096 ? 128u << m : 0;
}

struct ibv_qp *ibv_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *init) {
  fv_context_t *c = (fv_context_t *)pd->context;
  const struct ibv_device_attr *lim = &c->fdev->attr;
  struct ibv_qp_cap *cap = &init->cap;
  if (init->qp_type != IBV_QPT_RC && init->qp_type != IBV_QPT_UD) {
    errno = EOPNOTSUPP;
    return NULL;
  }
  if (!init->send_cq || !init->recv_cq || cap->max_send_wr < 1 ||
      cap->max_send_wr > (uint32_t)lim->max_qp_wr || cap->max_send_sge > (uint32_t)lim->max_sge ||
      cap->max_inline_data > FV_MAX_INLINE ||
      (!init->srq && (cap->max_recv_wr > (uint32_t)lim->max_qp_wr ||
                      cap->max_recv_sge > (uint32_t)lim->max_sge))) {
    errno = EINVAL;
    return NULL;
  }
  if (!fv_fabric) { /* the QP directory lives in the fabric */
    errno = ENODEV;
    return NULL;
  }
  fv_qp_t *q = calloc(1, sizeof *q);
  if (!q) {
    errno = ENOMEM;
    return NULL;
  }
  if (cap->max_send_sge == 0) cap->max_send_sge = 1;
  q->cap = *cap;
  q->cap.max_inline_data = cap->max_inline_data;
  q->sq = calloc(cap->max_send_wr, sizeof *q->sq);
  q->scq = (fv_cq_t *)init->send_cq;
  q->rcq = (fv_cq_t *)init->recv_cq;
  q->srq = (fv_srq_t *)init->srq;
  q->sq_sig_all = init->sq_sig_all;
  q->slot = fv_qp_slot_alloc();
  if (!q->sq || q->slot < 0) goto fail;
  if (q->srq) {
    q->rq_off = q->srq->off;
  } else {
    uint32_t n = cap->max_recv_wr ? cap->max_recv_wr : 1;
    q->rq = fv_rq_new(n, cap->max_recv_sge ? cap->max_recv_sge : 1, q->rcq->off, &q->rq_off);
    if (!q->rq) goto fail;
  }
  fv_qp_ent_t *e = &fv_fabric->qps[q->slot];
  q->ent = e;
  e->pid = getpid();
  e->start = fv_self_start();
  e->region_fd = fv_region_fd();
  e->type = init->qp_type;
  e->pd = ((fv_pd_t *)pd)->id;
  e->rq_off = q->rq_off;
  e->rcq_off = q->rcq->off;
  e->mtu = 4096;
  atomic_store(&e->state, IBV_QPS_RESET);
  q->qp = (struct ibv_qp){.context = pd->context, .qp_context = init->qp_context, .pd = pd,
                          .send_cq = init->send_cq, .recv_cq = init->recv_cq, .srq = init->srq,
                          .handle = (uint32_t)q->slot, .qp_num = atomic_load(&e->qpn),
                          .state = IBV_QPS_RESET, .qp_type = init->qp_type};
  pthread_mutex_lock(&c->lock);
  q->next = c->qps;
  c->qps = q;
  pthread_mutex_unlock(&c->lock);
  return &q->qp;
fail:
  if (q->slot >= 0) fv_qp_slot_free(q->slot);
  free(q->sq);
  free(q);
  errno = ENOMEM;
  return NULL;
}

/* Required attributes per transition (IB specification, table of QP attributes). */
static int required(enum ibv_qp_type t, enum ibv_qp_state from, enum ibv_qp_state to) {
  if (to == IBV_QPS_RESET || to == IBV_QPS_ERR) return IBV_QP_STATE;
  bool rc = t == IBV_QPT_RC;
  if (from == IBV_QPS_RESET && to == IBV_QPS_INIT)
    return IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
           (rc ? IBV_QP_ACCESS_FLAGS : IBV_QP_QKEY);
  if (from == IBV_QPS_INIT && to == IBV_QPS_INIT) return IBV_QP_STATE;
  if (from == IBV_QPS_INIT && to == IBV_QPS_RTR)
    return rc ? IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                    IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER
              : IBV_QP_STATE;
  if (from == IBV_QPS_RTR && to == IBV_QPS_RTS)
    return rc ? IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
                    IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC
              : IBV_QP_STATE | IBV_QP_SQ_PSN;
  if (from == IBV_QPS_RTS && to == IBV_QPS_RTS) return IBV_QP_STATE;
  return -1; /* not a transition this provider (or the specification) allows */
}

void fv_qp_set_error(fv_qp_t *q) {
  q->qp.state = IBV_QPS_ERR;
  atomic_store(&q->ent->state, IBV_QPS_ERR);
  if (q->rq) fv_rq_flush(q->rq, q->rcq->ring, q->qp.qp_num);
}

int ibv_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask) {
  fv_qp_t *q = (fv_qp_t *)qp;
  fv_context_t *c = (fv_context_t *)qp->context;
  fv_qp_ent_t *e = q->ent;
  enum ibv_qp_state from = qp->state;
  enum ibv_qp_state to = (mask & IBV_QP_STATE) ? attr->qp_state : from;
  int need = required(qp->qp_type, from, to);
  if (need < 0 || (mask & need) != need) return EINVAL;
  if ((mask & IBV_QP_PORT) && (attr->port_num < 1 || attr->port_num > c->fdev->nports))
    return EINVAL;
  if ((mask & IBV_QP_PKEY_INDEX) && attr->pkey_index != 0) return EINVAL;
  if ((mask & IBV_QP_PATH_MTU) && !mtu_bytes(attr->path_mtu)) return EINVAL;
  if ((mask & IBV_QP_RETRY_CNT) && attr->retry_cnt > 7) return EINVAL;
  if ((mask & IBV_QP_RNR_RETRY) && attr->rnr_retry > 7) return EINVAL;
  if ((mask & IBV_QP_TIMEOUT) && attr->timeout > 31) return EINVAL;
  if ((mask & IBV_QP_MIN_RNR_TIMER) && attr->min_rnr_timer > 31) return EINVAL;
  if ((mask & IBV_QP_MAX_QP_RD_ATOMIC) && attr->max_rd_atomic > c->fdev->attr.max_qp_init_rd_atom)
    return EINVAL;
  if ((mask & IBV_QP_MAX_DEST_RD_ATOMIC) && attr->max_dest_rd_atomic > c->fdev->attr.max_qp_rd_atom)
    return EINVAL;
  pthread_mutex_lock(&c->lock);
  if (mask & IBV_QP_PORT) {
    q->port = attr->port_num;
    e->lid = c->lid[q->port];
  }
  if (mask & IBV_QP_ACCESS_FLAGS) e->access = (uint32_t)attr->qp_access_flags;
  if (mask & IBV_QP_QKEY) e->qkey = attr->qkey;
  if (mask & IBV_QP_PATH_MTU) {
    q->path_mtu = mtu_bytes(attr->path_mtu);
    e->mtu = q->path_mtu;
  }
  if (mask & IBV_QP_AV) e->dest_lid = attr->ah_attr.dlid;
  if (mask & IBV_QP_DEST_QPN) e->dest_qpn = attr->dest_qp_num;
  if (mask & IBV_QP_MIN_RNR_TIMER) e->min_rnr_timer = attr->min_rnr_timer;
  if (mask & IBV_QP_TIMEOUT) q->timeout = attr->timeout;
  if (mask & IBV_QP_RETRY_CNT) q->retry_cnt = attr->retry_cnt;
  if (mask & IBV_QP_RNR_RETRY) q->rnr_retry = attr->rnr_retry;
  if (to == IBV_QPS_RESET) { /* queues emptied without completions */
    atomic_fetch_sub(&c->pending, (int)q->sq_count);
    q->sq_count = 0;
    fv_rwqe_t dropped;
    if (q->rq)
      while (fv_rq_take(q->rq, &dropped)) continue;
  }
  qp->state = to;
  if (to == IBV_QPS_ERR) fv_qp_set_error(q);
  else atomic_store(&e->state, to);
  pthread_mutex_unlock(&c->lock);
  if (to == IBV_QPS_ERR) fv_progress(c); /* flushes what its send queue holds */
  return 0;
}

int ibv_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask,
                 struct ibv_qp_init_attr *init) {
  (void)mask;
  fv_qp_t *q = (fv_qp_t *)qp;
  fv_qp_ent_t *e = q->ent;
  enum ibv_qp_state state = (enum ibv_qp_state)atomic_load(&e->state);
  qp->state = state; /* an error found by a peer shows here */
  memset(attr, 0, sizeof *attr);
  attr->qp_state = attr->cur_qp_state = state;
  attr->port_num = q->port;
  attr->dest_qp_num = e->dest_qpn;
  attr->ah_attr.dlid = (uint16_t)e->dest_lid;
  attr->qkey = e->qkey;
  attr->qp_access_flags = (int)e->access;
  attr->timeout = (uint8_t)q->timeout;
  attr->retry_cnt = (uint8_t)q->retry_cnt;
  attr->rnr_retry = (uint8_t)q->rnr_retry;
  attr->min_rnr_timer = (uint8_t)e->min_rnr_timer;
  attr->cap = q->cap;
  if (init) {
    memset(init, 0, sizeof *init);
    init->send_cq = qp->send_cq;
    init->recv_cq = qp->recv_cq;
    init->srq = qp->srq;
    init->cap = q->cap;
    init->qp_type = qp->qp_type;
    init->sq_sig_all = q->sq_sig_all;
  }
  return 0;
}

int ibv_destroy_qp(struct ibv_qp *qp) {
  fv_qp_t *q = (fv_qp_t *)qp;
  fv_context_t *c = (fv_context_t *)qp->context;
  pthread_mutex_lock(&c->lock);
  for (fv_qp_t **pp = &c->qps; *pp; pp = &(*pp)->next)
    if (*pp == q) {
      *pp = q->next;
      break;
    }
  atomic_store(&q->ent->state, IBV_QPS_RESET);
  atomic_fetch_sub(&c->pending, (int)q->sq_count);
  fv_qp_slot_free(q->slot);
  pthread_mutex_unlock(&c->lock);
  if (q->rq) fv_region_free(q->rq_off);
  free(q->sq);
  free(q);
  return 0;
}

int fv_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad);
int fv_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad) {
  fv_qp_t *q = (fv_qp_t *)qp;
  enum ibv_qp_state state = (enum ibv_qp_state)atomic_load(&q->ent->state);
  if (q->srq || state == IBV_QPS_RESET) {
    if (bad) *bad = wr;
    return EINVAL;
  }
  int rc = fv_rq_post(q->rq, wr, bad, ((fv_pd_t *)qp->pd)->id);
  if (state == IBV_QPS_ERR) fv_rq_flush(q->rq, q->rcq->ring, qp->qp_num);
  return rc;
}
