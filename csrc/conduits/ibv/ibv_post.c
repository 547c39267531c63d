/* ibv_post.c: work requests. Every send is signalled and carries a descriptor (its wr_id) that
 * says what to do when it completes: free a buffer, copy a bounced get into place, count an
 * operation down. GASNET_NETWORKDEPTH_PP and _TOTAL bound what is in flight per peer and in
 * all; a sender out of room (or buffers) reaps completions while it waits. */
#include <string.h>

#include "ibv_internal.h"

static bool room(int peer, int need) {
  ibv_peer_t *p = &ibv.peers[peer];
  if (p->depth >= ibv.depth_pp || ibv.depth >= ibv.depth_total || !ibv.free_sreqs) return false;
  if (need == NEED_BBUF) return ibv.pool.free_bbufs != NULL;
  if (need == NEED_BOUNCE) return ibv.pool.free_bounce != NULL;
  return true;
}

/* Room for count work requests to peer (the last needing `need`), counting only the queue's. */
static bool room_for(int peer, int count, int need) {
  ibv_peer_t *p = &ibv.peers[peer];
  if (p->depth + count > ibv.depth_pp || ibv.depth + count > ibv.depth_total) return false;
  int n = 0;
  for (ibv_sreq_t *s = ibv.free_sreqs; s && n < count; s = s->next) n++;
  return n >= count && room(peer, need);
}

ibv_sreq_t *ibv_try_reserve(int peer, int need) {
  ibv_lock_take();
  if (!room(peer, need)) ibv_poll_send(); /* reaps completions: runs no handler */
  if (!room(peer, need)) {
    ibv_lock_drop();
    return NULL;
  }
  ibv_sreq_t *s = ibv_sreq_get();
  s->peer = peer;
  if (need == NEED_BBUF) s->buf = ibv_bbuf_get();
  else if (need == NEED_BOUNCE) s->buf = ibv_bounce_get(), s->bounce = true;
  return s; /* ibv_lock stays held */
}

bool ibv_room_now(int peer, int count, int need) {
  ibv_lock_take();
  if (!room_for(peer, count, need)) ibv_poll_send();
  bool ok = room_for(peer, count, need);
  ibv_lock_drop();
  return ok;
}

ibv_sreq_t *ibv_reserve(int peer, int which, int need) {
  for (;;) {
    ibv_lock_take();
    if (!room(peer, need)) ibv_poll_send();
    if (room(peer, need)) {
      ibv_sreq_t *s = ibv_sreq_get();
      s->peer = peer;
      if (need == NEED_BBUF) s->buf = ibv_bbuf_get();
      else if (need == NEED_BOUNCE) s->buf = ibv_bounce_get(), s->bounce = true;
      return s; /* ibv_lock stays held */
    }
    ibv_lock_drop();
    if (!ibv_poll_network(which)) gasneti_wait_backoff();
    gasneti_exit_check();
  }
}

void ibv_post(int peer, int rail, ibv_sreq_t *s, struct ibv_send_wr *wr) {
  ibv_peer_t *p = &ibv.peers[peer];
  s->peer = peer;
  s->hca = (uint8_t)ibv_hca_of_rail(rail);
  wr->wr_id = (uint64_t)(uintptr_t)s;
  wr->send_flags |= IBV_SEND_SIGNALED;
  p->depth++;
  ibv.depth++;
  ibv_port_t *port = &ibv.port[rail % ibv.nports];
  port->wrs++;
  for (int i = 0; i < wr->num_sge; i++) port->bytes += wr->sg_list[i].length;
  struct ibv_send_wr *bad;
  int rc = ibv_post_send(p->qp[rail], wr, &bad);
  if (rc)
    gasneti_fatalerror("ibv: cannot post a work request to rank %d (host %s): %s", peer,
                       gasneti_host_name(peer), strerror(rc));
}

static void completed(ibv_sreq_t *s, const struct ibv_wc *wc) {
  if (s->kind == SR_UD) {
    ibv_ud_sbuf_put(s->buf);
    ibv_sreq_put(s);
    return;
  }
  ibv_peer_t *p = &ibv.peers[s->peer];
  p->depth--;
  ibv.depth--;
  if (wc->status != IBV_WC_SUCCESS && !p->finished && !ibv.in_exit) {
    static const char *const what[] = {"an AM", "an RDMA put", "an RDMA get", "a datagram",
                                       "a Long payload"};
    ibv_fatal_wc(wc, s->peer, what[s->kind]);
  }
  if (s->copy_to && wc->status == IBV_WC_SUCCESS) gasneti_copy(s->copy_to, s->buf, s->copy_len);
  if (s->buf) {
    if (s->bounce) ibv_bounce_put(s->buf);
    else ibv_bbuf_put(s->buf);
  }
  if (s->counter) atomic_fetch_sub_explicit(s->counter, 1, memory_order_release);
  if (s->local) atomic_fetch_sub_explicit(s->local, 1, memory_order_release);
  ibv_sreq_put(s);
}

int ibv_poll_send(void) {
  int n = 0;
  for (int h = 0; h < ibv.nhcas; h++) {
    struct ibv_wc wc[16];
    int got;
    while ((got = ibv_poll_cq(ibv.hca[h].scq, 16, wc)) > 0) {
      for (int i = 0; i < got; i++) completed((ibv_sreq_t *)(uintptr_t)wc[i].wr_id, &wc[i]);
      n += got;
    }
    if (got < 0)
      gasneti_fatalerror("ibv: the send completion queue of %s failed (overrun: more work "
                         "requests in flight than it holds)", ibv.hca[h].name);
  }
  return n;
}

void ibv_wait_counter(_Atomic int64_t *counter, int which) {
  while (atomic_load_explicit(counter, memory_order_acquire) != 0) {
    if (!ibv_poll_network(which)) gasneti_wait_backoff();
    gasneti_exit_check();
  }
}
