/* ofi_internal.h: the ofi conduit's state, shared by its files: opening the provider and the
 * start-up agreement on one (ofi_open.c), buffers and transmit records (ofi_bufs.c), AMs
 * (ofi_am.c), RMA for the extended API (ofi_rma.c), and set-up, polling and exit
 * (ofi_conduit.c).
 *
 * One RDM endpoint per rank carries AMs and RMA, with one completion queue: a Long's RMA write
 * and the header that follows it leave on the same endpoint, so the provider's send-after-write
 * ordering (FI_ORDER_SAW) puts the payload in place before the header arrives, and one
 * completion queue read progresses everything (providers progress manually). */
#ifndef GASNETC_OFI_INTERNAL_H
#define GASNETC_OFI_INTERNAL_H

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>

#include "am/credits.h"
#include "conduit.h"
#include "ofi_wire.h"

/* The largest message: a header, 16 arguments and the largest Medium. */
#define OFI_MSG_MAX (sizeof(ofi_msg_t) + 64 + GASNETC_MAX_MEDIUM)
#define OFI_RMA_PIECE ((size_t)1 << 20) /* largest RMA transfer of one operation */
#define OFI_RXD_MAX_OPS 32       /* see gasnetc_init */

/* ---- a transmit in flight: what its completion settles ------------------------------------ */
enum { OP_SEND, OP_PUT, OP_GET, OP_LONG };
typedef struct ofi_op {
  struct fi_context2 ctx; /* first: the provider's, where it asks for FI_CONTEXT(2) */
  struct ofi_op *next;    /* in the free list */
  uint8_t kind;
  int peer;
  void *buf;                /* a send or bounce buffer to give back, or NULL */
  _Atomic int64_t *counter; /* counted down when complete (RMA), or NULL */
} ofi_op_t;

/* ---- a posted receive: one message of at most OFI_MSG_MAX bytes ---------------------------
 * Not a multi-receive buffer: libfabric 1.17's ofi_rxm (rendezvous above its eager size) and
 * ofi_rxd (messages of several packets) flag a multi-receive buffer released on the completion
 * of the last message placed in it while earlier ones are still arriving, so no count of
 * completions says when such a buffer may be posted again; reposting it early let later
 * messages overwrite those (tests/c/mutual_flood_test.c caught it). One message per receive
 * is complete when its completion says so, on every provider. */
typedef struct ofi_rbuf {
  struct fi_context2 ctx; /* first: the completion's op_context is this */
  uint8_t *mem;
} ofi_rbuf_t;

/* ---- a received message waiting for delivery (in arrival order) ------------------------- */
typedef struct {
  ofi_rbuf_t *rbuf;
  uint8_t *data;
  uint32_t len;
} ofi_arrived_t;

/* ---- per peer -------------------------------------------------------------------------------- */
typedef struct {
  fi_addr_t addr; /* in the address vector once met (ofi_meet) */
  _Atomic bool met; /* its address card was looked up and inserted: set once, under ofi_lock */
  /* A message from it arrived (set under ofi_lock): a peer this rank never sent to may still
   * be owed its "finished" notice (gasnetc_fini). */
  _Atomic bool heard;
  bool network;   /* reached through this conduit (not self, not a supernode peer) */
  bool finished;  /* it returned from main: nothing more goes to it, its errors are moot */
  uint64_t seg_base, seg_key; /* its segment: where RMA goes, with which key */
} ofi_peer_t;

typedef struct {
  struct fi_info *info;
  struct fid_fabric *fabric;
  struct fid_domain *domain;
  struct fid_ep *ep;
  struct fid_cq *cq;
  struct fid_av *av;
  struct fid_mr *seg_mr;
  char provider[64], device[64];
  char shm_region[80];     /* shm provider: /dev/shm/<name> of this rank's region, until unlinked */
  ofi_card_t card;         /* what peers look up: the endpoint's address (and the segment) */
  bool cards_at_init;      /* shm: cards went out at init, without segments (ofi_open) */
  int max_ops; /* transmit records: operations in flight at once */
  ofi_peer_t *peers;
  gasneti_credits_t credits;
  size_t inject_limit;     /* messages (and puts) up to this many bytes go by fi_inject */
  bool inject_puts;        /* non-bulk puts up to inject_limit are written with FI_INJECT */
  bool rma;                /* puts, gets and Long payloads by fi_write/fi_read */
  bool virt_addr;          /* FI_MR_VIRT_ADDR: remote addresses are virtual, else offsets */
  bool saw;                /* FI_ORDER_SAW: a send arrives after an earlier write's data */
  bool long_rma;           /* Long payloads by RMA write (RMA and send-after-write order) */
  size_t bbuf_threshold;   /* non-bulk puts up to this size are bounced and return at once */
  /* transmit records and send/bounce buffers (ofi_bufs.c) */
  ofi_op_t *ops, *free_ops;
  int ops_busy;            /* transmits in flight */
  uint8_t *bbuf_mem;
  void **free_bbufs;
  int nbbufs, bbufs_free;
  /* receive buffers */
  ofi_rbuf_t *rbufs;
  int nrbufs;
  /* received messages not yet delivered */
  ofi_arrived_t *arrived;
  uint32_t arrived_head, arrived_count, arrived_cap;
  bool verbose;
  bool in_exit;
  /* Sleeping waits (SEQ, where the rank may sleep): the completion queue's descriptor, -1
   * when the provider gives none (then the rank yields); armed: fi_trywait said it may sleep,
   * and the next poll must not run the provider's progress (conduit.h, GASNETC_WAIT_ARM). */
  int wait_fd;
  bool wait_armed;
} ofi_state_t;

extern ofi_state_t ofi;

#if GASNETI_THREADS
extern gasneti_spinlock_t ofi_lock;     /* libfabric calls and all of the above */
extern gasneti_spinlock_t ofi_deliver_lock; /* one thread delivers at a time, in order */
#define OFI_LOCK (&ofi_lock)
#else
#define OFI_LOCK NULL
#endif
static inline void ofi_lock_take(void) {
#if GASNETI_THREADS
  gasneti_spin_lock(&ofi_lock);
#endif
}
static inline void ofi_lock_drop(void) {
#if GASNETI_THREADS
  gasneti_spin_unlock(&ofi_lock);
#endif
}

/* ofi_open.c: the provider all ranks agree on, the domain this rank uses, the endpoint. */
void ofi_open(void);
/* ofi_signals.c: PSM's load-time signal handlers give way (unless on psm). */
void ofi_drop_foreign_handlers(void);
void ofi_close(void);
/* The shm provider's region of this rank, unlinked once every peer has mapped it. */
void ofi_unlink_shm_region(void);
_Noreturn void ofi_fatal_rc(const char *what, int rc);

/* ofi_bufs.c (callers hold ofi_lock) */
void ofi_bufs_init(int nbbufs, int nops);
ofi_op_t *ofi_op_get(void); /* NULL when none is free */
void ofi_op_put(ofi_op_t *op);
void *ofi_bbuf_get(void);   /* NULL when none is free */
void ofi_bbuf_put(void *buf);
void ofi_post_rbuf(ofi_rbuf_t *r);
void ofi_rbufs_init(int count);

/* ofi_conduit.c */
/* Reads completions (ofi_lock not held): settles transmits, queues arrivals. */
int ofi_progress(void);
/* Waits (serving the network as `which` allows) until *counter is 0. */
void ofi_wait_counter(_Atomic int64_t *counter, int which);
/* One step of a wait: progress, and deliver what `which` allows; backs off when idle. */
void ofi_wait_step(int which);
/* What a wait in this context may serve: replies only inside a handler. */
int ofi_which(void);
/* A failed completion: fatal, naming the operation, the peer and its host (moot, and so
 * ignored, for a peer that finished). */
void ofi_failed(ofi_op_t *op, int err, int prov_errno, const void *err_data, size_t len);

/* ofi_am.c */
bool ofi_send_am(gasnet_node_t dest, const gasneti_am_t *am, gasneti_token_t *reply_to);
/* First contact (ofi_open.c): the peer's address card looked up from the spawner and inserted
 * into the address vector; call without ofi_lock held (the lookup may block). A peer that has
 * ended already is marked finished, with a warning unless quiet. */
void ofi_meet_peer(int peer, bool quiet);
static inline void ofi_meet(int peer) { ofi_meet_peer(peer, false); }
/* Whether peer has ended (or finished) while this rank waited *since (0: the wait starts now)
 * to send to it; asks the spawner at most once a second. Call without ofi_lock. */
bool ofi_gone(int peer, double *since);
/* An operation done with (its buffer back, its counter down), whether or not it ran. */
void ofi_settle(ofi_op_t *op);
static inline void ofi_met(int peer) {
  if (!atomic_load_explicit(&ofi.peers[peer].met, memory_order_acquire)) ofi_meet(peer);
}
void ofi_send_ctrl(int peer, int ctrl, int code);
/* A message arrived in r (ofi_lock held): queued for delivery, or false (dropped: repost r). */
bool ofi_arrive(ofi_rbuf_t *r, uint8_t *data, uint32_t len);
int ofi_deliver(int which);  /* arrived messages' handlers (no ofi_lock held) */
int ofi_run_deferred(void);
bool ofi_deferred_pending(void); /* requests copied aside, to run at a poll that allows them */

/* Posts a receive, reading completions while the provider says -FI_EAGAIN (ofi_lock held on
 * entry and exit). */
#define OFI_POST(call, what)                                   \
  do {                                                         \
    ssize_t rc_;                                               \
    while ((rc_ = (call)) == -FI_EAGAIN) {                     \
      ofi_lock_drop();                                         \
      ofi_progress();                                          \
      ofi_lock_take();                                         \
    }                                                          \
    if (rc_) ofi_fatal_rc(what, (int)rc_);                     \
  } while (0)

/* Posts a transmit; while the provider says -FI_EAGAIN (its queues full because a peer is not
 * taking messages) it also delivers what arrived, as `which` allows (requests it may not run
 * are copied aside), so its own receives are posted again: two ranks that send to each other
 * at once never wait on each other (ofi_lock held on entry and exit). */
/* Posts to peer, waiting while the provider says EAGAIN (serving the network meanwhile). A
 * peer that left without this rank hearing of it (it never met this rank, so no "finished"
 * notice came) can hold a send there for good, on a connection it will never accept: after a
 * second of waiting the spawner is asked whether it ended (ofi_gone), and then what was to go
 * there is dropped and op (NULL for an inject) settled as done. */
#define OFI_SEND(peer, op, call, what, which)                  \
  do {                                                         \
    ssize_t rc_;                                               \
    double since_ = 0;                                         \
    while ((rc_ = (call)) == -FI_EAGAIN) {                     \
      ofi_lock_drop();                                         \
      ofi_wait_step(which);                                    \
      bool gone_ = ofi_gone((peer), &since_);                  \
      ofi_lock_take();                                         \
      if (gone_) {                                             \
        if (op) ofi_settle(op);                                \
        rc_ = 0;                                               \
        break;                                                 \
      }                                                        \
    }                                                          \
    if (rc_) ofi_fatal_rc(what, (int)rc_);                     \
  } while (0)

#endif
