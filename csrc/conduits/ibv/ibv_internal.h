/* ibv_internal.h: the ibv conduit's state, shared by its files: HCAs and ports (ibv_hca.c),
 * registered buffers and work-request descriptors (ibv_bufs.c), connections and the UD
 * handshake (ibv_conn.c), AMs (ibv_am.c), RDMA for the extended API (ibv_rdma.c), and set-up,
 * polling and exit (ibv_conduit.c).
 *
 * Between two ranks on different supernodes there is one RC queue pair per rail (a rail pairs
 * one of our ports with one of theirs); AMs travel on one rail per peer, so they stay in order;
 * RDMA puts and gets are striped over all rails. */
#ifndef GASNETC_IBV_INTERNAL_H
#define GASNETC_IBV_INTERNAL_H

#include <infiniband/verbs.h>

#include "am/credits.h"
#include "conduit.h"
#include "ibv_plan.h"
#include "ibv_wire.h"

#define IBV_MAX_HCAS 4
/* Buffer sizes are the plan's (knob_api.h), which gasnetrun's PHYSMEM arithmetic shares. */
#define IBV_BUFSZ GASNETI_IBV_BUFSZ
#define IBV_BOUNCE_SZ GASNETI_IBV_BOUNCE_SZ
#define IBV_BOUNCE_COUNT GASNETI_IBV_BOUNCE_COUNT
#define IBV_UD_BUFSZ GASNETI_IBV_UD_BUFSZ /* a handshake datagram, after the 40-byte GRH space */
#define IBV_UD_RBUFS GASNETI_IBV_UD_RBUFS
#define IBV_UD_SBUFS GASNETI_IBV_UD_SBUFS
#define IBV_PIECE (1u << 20) /* largest RDMA transfer of one work request */
_Static_assert(IBV_BUFSZ >= 16 + 8 + 4 * 16 + GASNETC_MAX_MEDIUM, "an AM fits its buffer");

/* ---- HCAs and ports ------------------------------------------------------------------------ */
typedef struct {
  struct ibv_context *ctx;
  struct ibv_pd *pd;
  struct ibv_cq *scq, *rcq;
  struct ibv_srq *srq;
  struct ibv_device_attr attr;
  char name[64];
  struct ibv_mr *seg_mr, *buf_mr;
  int srq_posted; /* receive buffers posted to its SRQ */
} ibv_hca_t;

typedef struct {
  int hca;
  uint8_t num;
  uint16_t lid;
  enum ibv_mtu mtu;
  uint64_t wrs, bytes; /* work requests posted through it, and their payload (GASNET_IBV_VERBOSE) */
} ibv_port_t;

/* ---- what ranks tell each other --------------------------------------------------------------- */
typedef struct {
  uint64_t base, size;
  uint32_t rkey[IBV_MAX_RAILS]; /* per port of the owner: its HCA's key for the segment */
} ibv_segcard_t;

/* A rank's address card, made at attach: every rank receives every card when it connects to
 * all at start-up; otherwise a peer's card is looked up the first time the two talk. */
typedef struct {
  uint8_t nports;
  uint8_t pad[3];
  uint32_t ud_qpn;
  uint16_t lid[IBV_MAX_RAILS];
  ibv_segcard_t seg;
} ibv_card_t;

/* ---- registered buffers ------------------------------------------------------------------------ */
typedef struct ibv_buf {
  struct ibv_buf *next;
} ibv_buf_t;

typedef struct {
  uint8_t *base;
  size_t size;
  uint8_t *rbufs, *bbufs, *bounce, *ud_r, *ud_s;
  int nrbufs, nbbufs;
  ibv_buf_t *free_bbufs, *free_bounce, *free_ud_s, *free_rbufs;
  int bbufs_free, bounce_free, ud_s_free;
} ibv_pool_t;

/* One outstanding work request (its wr_id). */
enum { SR_AM, SR_PUT, SR_GET, SR_UD, SR_LONG };
typedef struct ibv_sreq {
  struct ibv_sreq *next;
  uint8_t kind;
  uint8_t hca;
  int peer;
  void *buf;                /* a bbuf or bounce block to free on completion */
  bool bounce;
  _Atomic int64_t *counter; /* decremented on completion */
  _Atomic int64_t *local;   /* also decremented: a caller waiting for its source to be free */
  void *copy_to;            /* a get through a bounce block: copied here on completion */
  uint32_t copy_len;
} ibv_sreq_t;

/* ---- messages over RC (laid out in ibv_wire.h) ------------------------------------------------- */
#define IBV_MSG_ARGS(m) ((gasnet_handlerarg_t *)((ibv_msg_t *)(m) + 1))

/* ---- peers --------------------------------------------------------------------------------------- */
enum { CONN_NONE = 0, CONN_WAIT, CONN_UP };
typedef struct {
  uint8_t state;
  uint8_t nrails, am_rail;
  bool usable;         /* its QPs are ready to receive what we send (RTS ours, RTR theirs) */
  bool recorded;       /* used by this run (GASNET_CONNECTFILE_OUT) */
  bool static_peer;    /* connected at start-up */
  bool finished;       /* it returned from main: nothing more goes to it, its errors are moot */
  struct ibv_qp *qp[IBV_MAX_RAILS];
  uint32_t remote_qpn[IBV_MAX_RAILS];
  double next_try, interval;
  int depth;           /* work requests in flight to it */
  int rr;              /* next rail for striped RDMA */
  ibv_segcard_t seg;
  int rbufs;           /* per-QP mode: receive buffers owned by its AM queue pair */
  _Atomic int64_t hello_out; /* our hello to it is not yet delivered (counted down) */
  _Atomic bool met;    /* its card is in (ibv.cards[], rails, seg): set once, by ibv_meet */
} ibv_peer_t;

typedef struct {
  int nhcas, nports;
  ibv_hca_t hca[IBV_MAX_HCAS];
  ibv_port_t port[IBV_MAX_RAILS];
  ibv_card_t *cards;  /* per rank, filled in as each is met (all at once when connecting to all) */
  bool cards_ready;   /* this rank's card is out: peers' cards can be had (ibv_meet) */
  bool lookups;       /* cards come from the spawner, one at a time (else the full table) */
  ibv_peer_t *peers;
  ibv_pool_t pool;
  gasneti_credits_t credits;
  struct ibv_qp *ud;
  struct ibv_ah **ah; /* per rank (UD), made on first use */
  bool use_srq;
  int rq_depth;       /* per-QP receive queue depth (when no SRQ) */
  int depth_pp, depth_total, depth;
  int qp_timeout, qp_retry;
  enum ibv_mtu max_mtu;
  uint32_t inline_limit, packed_limit, bounce_limit;
  bool dynamic;
  double retrans_min, retrans_max;
  ibv_sreq_t *sreqs, *free_sreqs;
  int nsreqs;
  uint64_t pinned, pin_limit;
  bool verbose;
  int connections, static_connections;
  bool in_exit;
} ibv_state_t;

extern ibv_state_t ibv;

#if GASNETI_THREADS
extern gasneti_spinlock_t ibv_lock;
#define IBV_LOCK (&ibv_lock)
#else
#define IBV_LOCK NULL
#endif
static inline void ibv_lock_take(void) {
#if GASNETI_THREADS
  gasneti_spin_lock(&ibv_lock);
#endif
}
static inline void ibv_lock_drop(void) {
#if GASNETI_THREADS
  gasneti_spin_unlock(&ibv_lock);
#endif
}

double ibv_now(void);

/* ibv_hca.c */
void ibv_hca_open(void);           /* GASNET_IBV_PORTS(_<n>), contexts, PDs, CQs */
void ibv_hca_close(void);
/* Completion queues (and shared receive queues of srq_size, 0: none) on every HCA. */
void ibv_hca_queues(int scq_size, int rcq_size, int srq_size);
const char *ibv_ports_text(char *buf, size_t len);

/* ibv_bufs.c (callers hold ibv_lock) */
void *ibv_ud_sbuf_get(void);
void ibv_ud_sbuf_put(void *buf);
void ibv_bufs_init(void);          /* allocates and registers the buffer pool on every HCA */
void ibv_bufs_register_segment(void *seg, uintptr_t size);
void *ibv_bbuf_get(void);
void ibv_bbuf_put(void *buf);
void *ibv_bounce_get(void);
void ibv_bounce_put(void *buf);
ibv_sreq_t *ibv_sreq_get(void);
void ibv_sreq_put(ibv_sreq_t *s);
uint32_t ibv_lkey_buf(int hca);
/* lkey of [p, p+n) on hca when registered (segment or pool), else 0. */
uint32_t ibv_lkey_of(int hca, const void *p, size_t n);
void ibv_post_rbuf(int hca, struct ibv_qp *qp, void *buf);
uint64_t ibv_physmem_probe(uint64_t want);

/* ibv_conn.c */
void ibv_conn_init(void);          /* the UD queue pair, the peer table */
uint32_t ibv_ud_qpn(void);
/* At attach: the cards (the full table, or this rank's published for lookups), then the
 * static connections. */
void ibv_conn_start(const ibv_card_t *mine);
/* The peer's card is in: looked up from the spawner the first time (blocking for that round
 * trip). It never takes ibv_lock, so the poller may call it holding that lock. */
void ibv_meet(int peer);
void ibv_conn_fini(void);
/* The peer is connected (connecting on demand when allowed); serves the network meanwhile. */
void ibv_connect(int peer);
void ibv_ud_recv(struct ibv_wc *wc); /* a handshake, exit or finish datagram (ibv_lock held) */
void ibv_conn_timers(double now);
bool ibv_conn_waiting(void);
void ibv_connectfile_write(void);
void ibv_ud_exit_notice(int code);
void ibv_ud_finished_notice(void);
/* A message arrived on one of peer's queue pairs: it is ready, whatever the handshake said
 * (and the connection carried traffic: GASNET_CONNECTFILE_OUT records it). */
void ibv_conn_heard(int peer);
/* The peer's hello arrived: the connection is ready (no traffic yet). */
void ibv_conn_ready(int peer);

/* ibv_post.c: work requests (callers hold ibv_lock unless said otherwise) */
enum { NEED_NONE, NEED_BBUF, NEED_BOUNCE };
/* Room for one work request to peer (depth, a descriptor, a buffer of the kind asked): waits,
 * serving the network with `which`, and returns with ibv_lock held. Call without it. */
ibv_sreq_t *ibv_reserve(int peer, int which, int need);
/* The same without waiting (GASNETI_AM_IMMEDIATE): NULL, ibv_lock not held, when there is no
 * room now. */
ibv_sreq_t *ibv_try_reserve(int peer, int need);
/* Whether count work requests to peer (the last needing `need`) would find room now. */
bool ibv_room_now(int peer, int count, int need);
/* Posts wr (its wr_id becomes s) to peer on rail. */
void ibv_post(int peer, int rail, ibv_sreq_t *s, struct ibv_send_wr *wr);
int ibv_poll_send(void);           /* reaps send completions of every HCA */
/* Waits (without ibv_lock) until *counter is 0, serving the network. */
void ibv_wait_counter(_Atomic int64_t *counter, int which);
static inline int ibv_which(void) {
  return gasneti_am_context == GASNETI_CTX_CLIENT ? GASNETI_POLL_ALL : GASNETI_POLL_REPLIES;
}
static inline int ibv_hca_of_rail(int rail) { return ibv.port[rail % ibv.nports].hca; }

/* ibv_am.c */
bool ibv_send_am(gasnet_node_t dest, const gasneti_am_t *am, gasneti_token_t *reply_to);
/* A receive completion of hca's CQ; returns handlers run (ibv_lock held, dropped inside). */
int ibv_recv_am(struct ibv_wc *wc, int hca, int which);
int ibv_run_deferred(void);
bool ibv_have_deferred(void);
void ibv_send_ctrl(int peer, bool overdue_only);

/* ibv_conduit.c */
int ibv_poll_network(int which);
_Noreturn void ibv_fatal_wc(const struct ibv_wc *wc, int peer, const char *what);

#endif
