/* ibv_conn.c: connections. Every rank has one UD queue pair whose address travels, with its
 * LIDs and segment keys, on the rank's card; RC queue pairs to a peer are set up by a handshake
 * over UD, at start-up for the static peers (all, or those of GASNET_CONNECTFILE_IN) and on
 * first use for the others (GASNET_CONNECT_DYNAMIC). A rank that connects to all at start-up
 * receives every card then; otherwise it looks a peer's card up from the spawner the first
 * time the two talk (GASNET_ON_DEMAND_ADDRESSES), so it never holds the whole table.
 *
 * The lower rank of a pair leads: it creates its queue pairs and sends REQ (its QP numbers);
 * the higher one creates its own, connects them and answers REP; the lower connects and says
 * hello on the new connection itself, after which the higher may send (it also takes any
 * message from the lower as the hello). A higher rank that needs the connection first asks
 * with CALL. Datagrams may be lost (no receive posted), so REQ and CALL are repeated, at
 * GASNET_CONNECT_RETRANS_MIN doubling up to _MAX, until answered; duplicates are answered
 * again and change nothing. The last step is the hello because it is reliable: a rank that
 * finished its start-up connections may block in the bootstrap, answering no datagram, and
 * nothing may be left that its peer still needs from it.
 * The UD queue pair also carries exit notices to other hosts' ranks, and the notice that a
 * rank returned from main (FIN: its peers then send it nothing more). */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "knobs.h"
#include "ibv_plan.h"
#include "ibv_internal.h"

typedef ibv_ud_msg_t ud_msg_t;
_Static_assert(sizeof(ud_msg_t) <= IBV_UD_BUFSZ, "a handshake fits its buffer");

static uint32_t job_tag;
static int waiting; /* peers whose handshake is under way (timers to run) */

static const char *const type_names[] = {"?", "REQ", "REP", "?", "CALL", "EXIT", "FIN"};

/* ---- peers' cards ----------------------------------------------------------------------------- */
static void take_card(int r, const ibv_card_t *card) {
  if (card->nports < 1 || card->nports > IBV_MAX_RAILS)
    gasneti_fatalerror("ibv: rank %d (host %s) reports %d ports", r,
                       gasneti_host_name((gasnet_node_t)r), card->nports);
  ibv_peer_t *p = &ibv.peers[r];
  ibv.cards[r] = *card;
  p->nrails = (uint8_t)(ibv.nports > card->nports ? ibv.nports : card->nports);
  p->am_rail = (uint8_t)(((int)gasneti_mynode + r) % p->nrails); /* both ends agree */
  p->seg = card->seg;
}

/* One meeting at a time: two threads meeting one peer look it up once. */
static pthread_mutex_t meet_lock = PTHREAD_MUTEX_INITIALIZER;

void ibv_meet(int r) {
  ibv_peer_t *p = &ibv.peers[r];
  if (atomic_load_explicit(&p->met, memory_order_acquire)) return;
  if (!ibv.lookups)
    gasneti_fatalerror("internal: ibv has no card of rank %d and no way to look it up", r);
  pthread_mutex_lock(&meet_lock);
  bool ended = false;
  if (!atomic_load_explicit(&p->met, memory_order_acquire)) {
    ibv_card_t card;
    ended = gasneti_bootstrap_lookup(r, &card, sizeof card);
    take_card(r, &card);
    if (ended) p->finished = true; /* it returned from main: nothing will go to it */
    atomic_store_explicit(&p->met, true, memory_order_release);
  }
  pthread_mutex_unlock(&meet_lock);
  if (ended)
    gasneti_warning("ibv: rank %d had already exited when this rank first sent to it: what is "
                    "sent to it is dropped", r);
}

static bool met(int r) { return atomic_load_explicit(&ibv.peers[r].met, memory_order_acquire); }

/* ---- the UD queue pair --------------------------------------------------------------------- */
static void post_ud_recv(void *buf) {
  ibv_hca_t *hca = &ibv.hca[ibv.port[0].hca];
  struct ibv_sge sge = {(uint64_t)(uintptr_t)buf, IBV_UD_BUFSZ + 40, hca->buf_mr->lkey};
  struct ibv_recv_wr wr = {.wr_id = (uint64_t)(uintptr_t)buf, .sg_list = &sge, .num_sge = 1};
  struct ibv_recv_wr *bad;
  int rc = ibv_post_recv(ibv.ud, &wr, &bad);
  if (rc) gasneti_fatalerror("ibv: cannot post a handshake receive buffer: %s", strerror(rc));
}

static void ud_open(void) {
  ibv_port_t *port = &ibv.port[0];
  ibv_hca_t *hca = &ibv.hca[port->hca];
  struct ibv_qp_init_attr init = {
      .send_cq = hca->scq, .recv_cq = hca->rcq,
      .cap = {.max_send_wr = IBV_UD_SBUFS, .max_recv_wr = IBV_UD_RBUFS, .max_send_sge = 1,
              .max_recv_sge = 1},
      .qp_type = IBV_QPT_UD, .sq_sig_all = 1};
  ibv.ud = ibv_create_qp(hca->pd, &init);
  if (!ibv.ud) gasneti_fatalerror("ibv: cannot create the UD queue pair on %s: %s", hca->name,
                                  strerror(errno));
  struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT, .pkey_index = 0, .port_num = port->num,
                          .qkey = IBV_QKEY};
  int rc = ibv_modify_qp(ibv.ud, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY);
  a.qp_state = IBV_QPS_RTR;
  if (!rc) rc = ibv_modify_qp(ibv.ud, &a, IBV_QP_STATE);
  a.qp_state = IBV_QPS_RTS;
  a.sq_psn = 0;
  if (!rc) rc = ibv_modify_qp(ibv.ud, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
  if (rc) gasneti_fatalerror("ibv: cannot bring the UD queue pair up: %s", strerror(rc));
  for (int i = 0; i < IBV_UD_RBUFS; i++) post_ud_recv(ibv.pool.ud_r + (size_t)i * (IBV_UD_BUFSZ + 40));
}

uint32_t ibv_ud_qpn(void) { return ibv.ud->qp_num; }

static struct ibv_ah *ah_of(int rank) {
  if (!ibv.ah[rank]) {
    struct ibv_ah_attr a = {.dlid = ibv.cards[rank].lid[0], .sl = 0, .port_num = ibv.port[0].num};
    ibv.ah[rank] = ibv_create_ah(ibv.hca[ibv.port[0].hca].pd, &a);
    if (!ibv.ah[rank]) gasneti_fatalerror("ibv: cannot make an address handle for rank %d", rank);
  }
  return ibv.ah[rank];
}

static void ud_send(int rank, int type, int code) {
  void *buf;
  while (!(buf = ibv_ud_sbuf_get())) ibv_poll_send(); /* completions free them */
  ibv_peer_t *p = &ibv.peers[rank];
  ud_msg_t *m = buf;
  *m = (ud_msg_t){.magic = IBV_UD_MAGIC, .tag = job_tag, .type = (uint8_t)type, .nrails = p->nrails,
                  .src = gasneti_mynode, .code = code,
                  .phase = type == UD_EXIT ? gasneti_exit_phase() : 0};
  if (type == UD_REQ || type == UD_REP)
    for (int r = 0; r < p->nrails; r++) m->qpn[r] = p->qp[r]->qp_num;
  ibv_sreq_t *s;
  while (!(s = ibv_sreq_get())) ibv_poll_send();
  s->kind = SR_UD;
  s->buf = buf;
  s->hca = (uint8_t)ibv.port[0].hca;
  struct ibv_sge sge = {(uint64_t)(uintptr_t)buf, sizeof *m, ibv_lkey_buf(ibv.port[0].hca)};
  struct ibv_send_wr wr = {.wr_id = (uint64_t)(uintptr_t)s, .sg_list = &sge, .num_sge = 1,
                           .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED};
  wr.wr.ud.ah = ah_of(rank);
  wr.wr.ud.remote_qpn = ibv.cards[rank].ud_qpn;
  wr.wr.ud.remote_qkey = IBV_QKEY;
  struct ibv_send_wr *bad;
  int rc = ibv_post_send(ibv.ud, &wr, &bad);
  if (rc) gasneti_fatalerror("ibv: cannot send a %s datagram to rank %d: %s", type_names[type],
                             rank, strerror(rc));
}

/* ---- RC queue pairs -------------------------------------------------------------------------- */
static void create_qps(int peer) {
  ibv_peer_t *p = &ibv.peers[peer];
  for (int r = 0; r < p->nrails; r++) {
    ibv_port_t *lp = &ibv.port[r % ibv.nports];
    ibv_hca_t *hca = &ibv.hca[lp->hca];
    bool am = r == p->am_rail;
    struct ibv_qp_init_attr init = {
        .send_cq = hca->scq, .recv_cq = hca->rcq, .srq = ibv.use_srq ? hca->srq : NULL,
        .cap = {.max_send_wr = (uint32_t)ibv.depth_pp + 2,
                .max_recv_wr = ibv.use_srq ? 0 : (uint32_t)(am ? ibv.rq_depth : 1),
                .max_send_sge = 1, .max_recv_sge = 1, .max_inline_data = ibv.inline_limit},
        .qp_type = IBV_QPT_RC, .sq_sig_all = 1};
    p->qp[r] = ibv_create_qp(hca->pd, &init);
    if (!p->qp[r])
      gasneti_fatalerror("ibv: cannot create a queue pair to rank %d on %s: %s", peer, hca->name,
                         strerror(errno));
    struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT, .pkey_index = 0, .port_num = lp->num,
                            .qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
                                               IBV_ACCESS_LOCAL_WRITE};
    int rc = ibv_modify_qp(p->qp[r], &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
                                             IBV_QP_ACCESS_FLAGS);
    if (rc) gasneti_fatalerror("ibv: cannot initialise a queue pair to rank %d: %s", peer,
                               strerror(rc));
    if (am && !ibv.use_srq) {
      for (int i = 0; i < ibv.rq_depth; i++) {
        ibv_buf_t *b = ibv.pool.free_rbufs;
        if (!b) gasneti_fatalerror("ibv: out of receive buffers connecting to rank %d", peer);
        ibv.pool.free_rbufs = b->next;
        ibv_post_rbuf(lp->hca, p->qp[r], b);
      }
    }
  }
}

static void connect_qps(int peer, const uint32_t *remote) {
  ibv_peer_t *p = &ibv.peers[peer];
  const ibv_card_t *card = &ibv.cards[peer];
  for (int r = 0; r < p->nrails; r++) {
    ibv_port_t *lp = &ibv.port[r % ibv.nports];
    ibv_hca_t *hca = &ibv.hca[lp->hca];
    enum ibv_mtu mtu = lp->mtu < ibv.max_mtu ? lp->mtu : ibv.max_mtu;
    int rd = hca->attr.max_qp_rd_atom < 4 ? hca->attr.max_qp_rd_atom : 4;
    int ird = hca->attr.max_qp_init_rd_atom < 4 ? hca->attr.max_qp_init_rd_atom : 4;
    struct ibv_qp_attr a = {.qp_state = IBV_QPS_RTR, .path_mtu = mtu, .dest_qp_num = remote[r],
                            .rq_psn = 0, .max_dest_rd_atomic = (uint8_t)rd,
                            .min_rnr_timer = 6, /* 0.08 ms between tries of a full receiver */
                            .ah_attr = {.dlid = card->lid[r % card->nports], .sl = 0,
                                        .port_num = lp->num}};
    int rc = ibv_modify_qp(p->qp[r], &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
                                             IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                                             IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
    a = (struct ibv_qp_attr){.qp_state = IBV_QPS_RTS, .timeout = (uint8_t)ibv.qp_timeout,
                             .retry_cnt = (uint8_t)ibv.qp_retry, .rnr_retry = 7, .sq_psn = 0,
                             .max_rd_atomic = (uint8_t)ird};
    if (!rc)
      rc = ibv_modify_qp(p->qp[r], &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
                                           IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
                                           IBV_QP_MAX_QP_RD_ATOMIC);
    if (rc) gasneti_fatalerror("ibv: cannot connect a queue pair to rank %d (host %s): %s", peer,
                               gasneti_host_name(peer), strerror(rc));
    p->remote_qpn[r] = remote[r];
  }
  p->state = CONN_UP;
  ibv.connections++;
  if (p->static_peer) ibv.static_connections++;
}

/* ---- the handshake ----------------------------------------------------------------------------- */
static void arm(ibv_peer_t *p, bool first) {
  double now = ibv_now();
  p->interval = first ? ibv.retrans_min : p->interval * 2;
  if (p->interval > ibv.retrans_max) p->interval = ibv.retrans_max;
  p->next_try = now + p->interval;
}

static void begin(int peer) {
  ibv_peer_t *p = &ibv.peers[peer];
  if (p->state != CONN_NONE) return;
  if ((int)gasneti_mynode < peer) {
    create_qps(peer);
    ud_send(peer, UD_REQ, 0);
  } else {
    ud_send(peer, UD_CALL, 0);
  }
  p->state = CONN_WAIT;
  arm(p, true);
  waiting++;
}

bool ibv_conn_waiting(void) { return waiting > 0; }

static void make_usable(ibv_peer_t *p) {
  if (!p->usable && p->state == CONN_UP) {
    p->usable = true;
    waiting--;
  }
}

void ibv_conn_heard(int peer) {
  ibv_peer_t *p = &ibv.peers[peer];
  p->recorded = true;
  make_usable(p);
}

void ibv_conn_ready(int peer) { make_usable(&ibv.peers[peer]); }

/* The lower rank's first message on a new connection (ibv_lock held): RC delivers it, and its
 * completion (hello_out back to 0) says the higher rank has it. */
static void send_hello(int peer) {
  ibv_peer_t *p = &ibv.peers[peer];
  ibv_sreq_t *s;
  while (!(s = ibv_sreq_get())) ibv_poll_send();
  s->kind = SR_AM;
  s->counter = &p->hello_out;
  atomic_fetch_add(&p->hello_out, 1);
  ibv_msg_t m = {.category = GASNETI_AM_SHORT, .flags = MSG_CTRL | MSG_HELLO,
                 .src = gasneti_mynode};
  struct ibv_sge sge = {(uint64_t)(uintptr_t)&m, sizeof m, 0};
  struct ibv_send_wr wr = {.sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
                           .send_flags = IBV_SEND_INLINE};
  if (ibv.inline_limit < sizeof m) { /* inline sends off: from a registered buffer */
    void *buf;
    while (!(buf = ibv_bbuf_get())) ibv_poll_send();
    memcpy(buf, &m, sizeof m);
    s->buf = buf;
    sge = (struct ibv_sge){(uint64_t)(uintptr_t)buf, sizeof m, ibv_lkey_buf(ibv_hca_of_rail(p->am_rail))};
    wr.send_flags = 0;
  }
  ibv_post(peer, p->am_rail, s, &wr);
}

static bool valid_qpns(const ud_msg_t *m, int src) {
  if (m->nrails != ibv.peers[src].nrails) return false;
  for (int r = 0; r < m->nrails; r++)
    if (!m->qpn[r]) return false;
  return true;
}

/* Why a handshake datagram cannot be trusted, or NULL. The HCA says which port (LID) and
 * queue pair sent it: they must be the claimed rank's own, so a local process that read the
 * job id from a rank's environment cannot pass for a member. */
static const char *untrusted(const struct ibv_wc *wc, const ud_msg_t *m, char *why, size_t len) {
  if (wc->byte_len < IBV_UD_GRH + sizeof *m) return "too short";
  if (m->magic != IBV_UD_MAGIC) return "not a handshake (bad magic)";
  if (m->tag != job_tag) return "another job's tag";
  if (m->src >= gasneti_nodes || m->src == gasneti_mynode) return "it names no peer rank";
  if (!ibv.cards_ready) return "it came before the ranks' addresses";
  ibv_meet(m->src); /* a rank not met yet: the spawner has its card */
  const ibv_card_t *card = &ibv.cards[m->src];
  if (wc->slid != card->lid[0]) {
    snprintf(why, len, "it claims rank %u but came from LID %u, not that rank's (%u)",
             (unsigned)m->src, (unsigned)wc->slid, (unsigned)card->lid[0]);
    return why;
  }
  if (wc->src_qp != card->ud_qpn) {
    snprintf(why, len, "it claims rank %u but came from queue pair %u, not that rank's (%u)",
             (unsigned)m->src, (unsigned)wc->src_qp, (unsigned)card->ud_qpn);
    return why;
  }
  return NULL;
}

void ibv_ud_recv(struct ibv_wc *wc) {
  uint8_t *buf = (uint8_t *)(uintptr_t)wc->wr_id;
  const ud_msg_t *m = (const ud_msg_t *)(buf + IBV_UD_GRH);
  char why_buf[160];
  const char *why = wc->status == IBV_WC_SUCCESS ? untrusted(wc, m, why_buf, sizeof why_buf)
                                                 : "failed";
  bool ok = why == NULL;
  int src = ok ? (int)m->src : -1;
  ibv_peer_t *p = ok ? &ibv.peers[src] : NULL;
  if (ok && m->type == UD_EXIT) {
    if (gasneti_host_of[src] != gasneti_host_of[gasneti_mynode]) /* others use the exit word */
      gasneti_exit_post(m->code, m->phase); /* the ranks here follow at their next poll */
  } else if (ok && m->type == UD_FIN) {
    p->finished = true;
  } else if (ok && gasneti_pshm_reach[src]) {
    ok = false;
    why = "a supernode peer's (they never handshake)";
  } else if (ok && m->type == UD_REQ && (int)gasneti_mynode > src && valid_qpns(m, src)) {
    if (p->state != CONN_UP) { /* NONE, or our CALL crossed its REQ */
      if (p->state == CONN_NONE) waiting++;
      create_qps(src);
      connect_qps(src, m->qpn);
    } else if (memcmp(p->remote_qpn, m->qpn, sizeof(uint32_t) * p->nrails) != 0) {
      ok = false;
      why = "not the connection made with that rank (a stale datagram)";
    }
    if (ok) ud_send(src, UD_REP, 0);
  } else if (ok && m->type == UD_REP && (int)gasneti_mynode < src && valid_qpns(m, src)) {
    if (p->state == CONN_WAIT) {
      connect_qps(src, m->qpn);
      p->usable = true;
      waiting--;
      send_hello(src);
    } /* a repeated REP changes nothing: the hello is on its way, reliably */
  } else if (ok && m->type == UD_CALL && (int)gasneti_mynode < src) {
    if (p->state == CONN_NONE) begin(src);
    else if (p->state == CONN_WAIT) ud_send(src, UD_REQ, 0);
    /* already connected: our hello is on its way */
  } else if (ok) {
    ok = false;
    why = "a stray or repeated handshake";
  }
  if (!ok && wc->status == IBV_WC_SUCCESS) {
    static int told;
    if (told++ < 3)
      gasneti_warning("ibv: ignored a connection datagram (%u bytes): %s", wc->byte_len, why);
  }
  if (wc->status != IBV_WC_WR_FLUSH_ERR) post_ud_recv(buf);
}

/* A peer looked up (not told of the table) sends its FIN only to the ranks it met: one that
 * returned from main just after this rank looked it up never answers. Once its handshake has
 * waited the longest interval, the spawner is asked again whether it ended. */
static bool gone_meanwhile(int r) {
  ibv_peer_t *p = &ibv.peers[r];
  if (!ibv.lookups || p->interval < ibv.retrans_max) return false;
  ibv_card_t card;
  if (!gasneti_bootstrap_lookup(r, &card, sizeof card)) return false;
  p->finished = true;
  p->state = CONN_NONE;
  waiting--;
  gasneti_warning("ibv: rank %d exited before answering this rank's connection request: what "
                  "is sent to it is dropped", r);
  return true;
}

/* Repeats unanswered REQ and CALL datagrams (a peer busy computing answers when it polls). A
 * higher rank already connected (REP sent) only waits: the hello comes by RC, or a lost REP
 * brings the REQ again. */
void ibv_conn_timers(double now) {
  if (!waiting) return;
  for (int r = 0; r < (int)gasneti_nodes; r++) {
    ibv_peer_t *p = &ibv.peers[r];
    if (p->usable || p->state != CONN_WAIT || now < p->next_try) continue;
    if (gone_meanwhile(r)) continue;
    ud_send(r, (int)gasneti_mynode < r ? UD_REQ : UD_CALL, 0);
    arm(p, false);
  }
}

void ibv_connect(int peer) {
  ibv_peer_t *p = &ibv.peers[peer];
  if (p->usable) return;
  if (!ibv.dynamic)
    gasneti_fatalerror("ibv: rank %d needs a connection to rank %d (host %s), which was not made "
                       "at start-up, and GASNET_CONNECT_DYNAMIC=0 forbids making it now: add the "
                       "pair to GASNET_CONNECTFILE_IN or allow dynamic connections",
                       (int)gasneti_mynode, peer, gasneti_host_name(peer));
  ibv_meet(peer); /* the first time: its card from the spawner (without ibv_lock) */
  ibv_lock_take();
  if (!p->finished) begin(peer);
  ibv_lock_drop();
  while (!p->usable && !p->finished) { /* a peer that returned from main takes nothing more */
    int which = gasneti_am_context == GASNETI_CTX_CLIENT ? GASNETI_POLL_ALL : GASNETI_POLL_REPLIES;
    if (!ibv_poll_network(which)) gasneti_wait_backoff();
    gasneti_exit_check();
  }
}

/* ---- start-up ------------------------------------------------------------------------------------- */
/* Which peers this rank wants at start-up; returns whether a connect file said so. */
static bool static_peers(bool *want) {
  if (!gasneti_knob_bool("GASNET_CONNECT_STATIC")) return false;
  const char *pattern = gasneti_knob_is_set("GASNET_CONNECTFILE_IN")
                            ? gasneti_knob_text("GASNET_CONNECTFILE_IN") : "";
  if (!*pattern) {
    for (int r = 0; r < (int)gasneti_nodes; r++) want[r] = true;
    return false;
  }
  char path[4096], err[512];
  if (!gasneti_expand_filename(pattern, gasneti_mynode, path, sizeof path))
    gasneti_fatalerror("ibv: GASNET_CONNECTFILE_IN='%s' expands to a name too long", pattern);
  FILE *f = fopen(path, "r");
  if (!f) gasneti_fatalerror("ibv: cannot read GASNET_CONNECTFILE_IN file %s: %s", path,
                             strerror(errno));
  size_t cap = 65536, len = 0;
  char *text = gasneti_malloc(cap);
  size_t got;
  while ((got = fread(text + len, 1, cap - len - 1, f)) > 0) {
    len += got;
    if (len + 1 == cap) text = realloc(text, cap *= 2);
    if (!text) gasneti_fatalerror("ibv: out of memory reading %s", path);
  }
  bool failed = ferror(f);
  fclose(f);
  if (failed) gasneti_fatalerror("ibv: cannot read GASNET_CONNECTFILE_IN file %s (is it a "
                                 "directory?)", path);
  if (memchr(text, 0, len))
    gasneti_fatalerror("ibv: GASNET_CONNECTFILE_IN file %s is not text (it holds a NUL byte)",
                       path);
  text[len] = 0;
  gasneti_conngraph_t g = {0};
  if (!gasneti_connectfile_parse(text, path, gasneti_nodes, &g, err, sizeof err))
    gasneti_fatalerror("ibv: GASNET_CONNECTFILE_IN: %s", err);
  free(text);
  for (int i = 0; i < g.nedges; i++) {
    int a = g.edges[2 * i], b = g.edges[2 * i + 1];
    if (a == (int)gasneti_mynode) want[b] = true;
    if (b == (int)gasneti_mynode) want[a] = true;
  }
  gasneti_conngraph_free(&g);
  return true;
}

/* Both ends of a pair must agree that it is made at start-up, or one waits for ever for the
 * other (which may already block in the bootstrap). Per-rank connect files need not agree (a
 * user's, or records of one-sided traffic), so every rank learns who wants it: a pair is
 * static when either end wants it. Exchanged only when some rank read a connect file; a rank
 * without one wants everyone (count -1); lists go in rounds that fit the bootstrap's blobs. */
static void agree_on_static_peers(bool *want, bool from_file) {
  int me = gasneti_mynode, n = gasneti_nodes;
  int32_t count = 0;
  for (int r = 0; r < n; r++) count += want[r] && r != me;
  if (!from_file) count = count ? -1 : 0;
  int32_t *counts = gasneti_calloc((size_t)n, sizeof *counts);
  gasneti_bootstrap_exchange(&count, sizeof count, counts);
  int32_t most = 0;
  bool any_file = false;
  for (int q = 0; q < n; q++) {
    if (counts[q] < 0) {
      want[q] = q != me; /* it wants everyone, this rank included */
    } else {
      any_file = true;
      if (counts[q] > most) most = counts[q];
    }
  }
  if (!any_file || !most) {
    free(counts);
    return;
  }
  enum { PER_ROUND = (GASNETI_BOOTSTRAP_BLOB_MAX / 4) - 1 };
  int32_t *mine = gasneti_calloc(PER_ROUND + 1, sizeof *mine);
  int32_t *peers = gasneti_calloc((size_t)(from_file ? count : 0) + 1, sizeof *peers);
  int k = 0;
  for (int r = 0; r < n && from_file; r++)
    if (want[r] && r != me) peers[k++] = r;
  for (int first = 0; first < most; first += PER_ROUND) {
    int width = most - first < PER_ROUND ? most - first : PER_ROUND;
    size_t len = sizeof(int32_t) * (size_t)(width + 1);
    int32_t *all = gasneti_calloc((size_t)n, len);
    int have = from_file && count > first ? (count - first < width ? count - first : width) : 0;
    mine[0] = have;
    memcpy(mine + 1, peers + first, sizeof(int32_t) * (size_t)have);
    gasneti_bootstrap_exchange(mine, len, all);
    for (int q = 0; q < n; q++) {
      const int32_t *list = (const int32_t *)((const char *)all + len * (size_t)q);
      for (int i = 0; i < list[0] && i < width; i++)
        if (list[1 + i] == me && q != me) want[q] = true;
    }
    free(all);
  }
  free(mine);
  free(peers);
  free(counts);
}

void ibv_conn_init(void) {
  if (gasneti_nodes > 1 && gasneti_knob_is_set("GASNET_CONNECTFILE_OUT") &&
      !strchr(gasneti_knob_text("GASNET_CONNECTFILE_OUT"), '%'))
    gasneti_fatalerror("ibv: GASNET_CONNECTFILE_OUT='%s' has no '%%': every rank would write the "
                       "same file; put '%%' (it becomes the rank) in the name, e.g. conn/%%.txt",
                       gasneti_knob_text("GASNET_CONNECTFILE_OUT"));
  ud_open();
  job_tag = ibv_job_tag(gasneti_jobid);
  ibv.ah = gasneti_calloc(gasneti_nodes, sizeof *ibv.ah);
  ibv.peers = gasneti_calloc(gasneti_nodes, sizeof *ibv.peers);
  ibv.cards = gasneti_calloc(gasneti_nodes, sizeof *ibv.cards); /* untouched pages until met */
}

/* The cards, then the static connections. Connecting to every peer at start-up (static
 * connections and no connect file: the same on every rank) needs every card: one exchange.
 * Otherwise this rank publishes its card and meets its peers one by one. */
void ibv_conn_start(const ibv_card_t *mine) {
  int me = gasneti_mynode;
  if (gasneti_knob_bool("GASNET_CONNECT_STATIC") && !gasneti_knob_is_set("GASNET_CONNECTFILE_IN")) {
    gasneti_bootstrap_exchange(mine, sizeof *mine, ibv.cards);
    for (int r = 0; r < (int)gasneti_nodes; r++) {
      take_card(r, &ibv.cards[r]);
      atomic_store_explicit(&ibv.peers[r].met, true, memory_order_release);
    }
  } else {
    ibv.lookups = true;
    gasneti_bootstrap_publish(mine, sizeof *mine); /* with a barrier: all cards are out */
  }
  ibv.cards_ready = true;
  bool *want = gasneti_calloc(gasneti_nodes, sizeof *want);
  bool from_file = static_peers(want);
  if (gasneti_knob_bool("GASNET_CONNECT_STATIC")) agree_on_static_peers(want, from_file);
  int all = 0, wanted = 0;
  for (int r = 0; r < (int)gasneti_nodes; r++) {
    ibv_peer_t *p = &ibv.peers[r];
    if (r == me || gasneti_pshm_reach[r]) continue;
    all++;
    if (want[r]) {
      p->static_peer = true;
      wanted++;
      if (r > me) ibv_meet(r); /* this rank leads: it needs the card now */
    }
  }
  /* Fully connected at start-up: no peer is left to connect later. */
  if (wanted == all && all > 0 && gasneti_knob_bool("GASNET_CONNECT_STATIC")) ibv.dynamic = false;
  ibv_lock_take();
  for (int r = me + 1; r < (int)gasneti_nodes; r++)
    if (ibv.peers[r].static_peer) begin(r);
  ibv_lock_drop();
  /* Done when every static peer is usable and every hello we sent was delivered: then no
   * peer needs anything more from this rank, which may block in the bootstrap. */
  for (int r = 0; r < (int)gasneti_nodes; r++) {
    ibv_peer_t *p = &ibv.peers[r];
    while (p->static_peer && (!p->usable || atomic_load(&p->hello_out))) {
      if (!ibv_poll_network(GASNETI_POLL_REPLIES)) gasneti_wait_backoff();
      gasneti_exit_check();
    }
  }
  free(want);
}

/* ---- exit notices and the record of connections ------------------------------------------------------ */
/* Lets the datagrams just posted leave before the process goes (at most 50 ms). */
static void drain_ud(void) {
  double until = ibv_now() + 0.05;
  while (ibv.pool.ud_s_free < IBV_UD_SBUFS && ibv_now() < until) ibv_poll_send();
}

/* With every card at hand (GASNET_ON_DEMAND_ADDRESSES=0, or a spawner without lookups),
 * notices go to every rank, as with the full table. */
static void meet_all_if_local(void) {
  if (!ibv.lookups || !gasneti_bootstrap_cards_local()) return;
  for (int r = 0; r < (int)gasneti_nodes; r++)
    if (r != (int)gasneti_mynode) ibv_meet(r);
}

void ibv_ud_exit_notice(int code) {
  meet_all_if_local();
  for (int round = 0; round < 2; round++)
    for (int r = 0; r < (int)gasneti_nodes; r++)
      if (r != (int)gasneti_mynode && met(r) &&
          gasneti_host_of[r] != gasneti_host_of[gasneti_mynode])
        ud_send(r, UD_EXIT, code); /* the ranks not met hear it from their agents */
  drain_ud();
}

/* Every rank met outside the supernode hears it, connected or not: one that would connect
 * later must not wait for an answer that will never come. With the full table that is every
 * rank; a rank not met yet learns it from the spawner when it looks this one up (or asks
 * again when its handshake goes unanswered: gone_meanwhile). */
void ibv_ud_finished_notice(void) {
  meet_all_if_local();
  for (int round = 0; round < 2; round++)
    for (int r = 0; r < (int)gasneti_nodes; r++)
      if (r != (int)gasneti_mynode && !gasneti_pshm_reach[r] && met(r)) ud_send(r, UD_FIN, 0);
  drain_ud();
}

void ibv_connectfile_write(void) {
  if (!gasneti_knob_is_set("GASNET_CONNECTFILE_OUT")) return;
  const char *pattern = gasneti_knob_text("GASNET_CONNECTFILE_OUT");
  char path[4096];
  if (!*pattern || !gasneti_expand_filename(pattern, gasneti_mynode, path, sizeof path)) return;
  gasneti_conngraph_t g = {0};
  for (int r = 0; r < (int)gasneti_nodes; r++)
    if (ibv.peers[r].recorded && ibv.peers[r].state == CONN_UP)
      gasneti_conngraph_add(&g, (int)gasneti_mynode, r);
  char *text = gasneti_connectfile_write(&g, gasneti_nodes,
                                         (int)gasneti_knob_int("GASNET_CONNECTFILE_BASE"));
  gasneti_conngraph_free(&g);
  FILE *f = text ? fopen(path, "w") : NULL;
  if (!f || fputs(text, f) < 0 || fclose(f) != 0)
    gasneti_warning("ibv: cannot write GASNET_CONNECTFILE_OUT file %s: %s", path,
                    strerror(errno));
  gasneti_free(text);
}

void ibv_conn_fini(void) {
  for (int r = 0; r < (int)gasneti_nodes; r++) {
    ibv_peer_t *p = &ibv.peers[r];
    for (int k = 0; k < p->nrails; k++)
      if (p->qp[k]) ibv_destroy_qp(p->qp[k]);
    if (ibv.ah[r]) ibv_destroy_ah(ibv.ah[r]);
  }
  if (ibv.ud) ibv_destroy_qp(ibv.ud);
}
