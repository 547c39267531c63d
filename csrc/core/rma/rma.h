/* rma.h: what the extended API's pieces share: operations (explicit handles, access regions,
 * value gets) and per-thread implicit-operation counters. */
#ifndef GASNETI_RMA_H
#define GASNETI_RMA_H

#include "am/am.h"

/* An explicit handle, an access region or a value get: a count of AMs still to complete. */
struct gasneti_op {
  _Atomic int64_t pending;
  uint32_t state;                /* GASNETI_OP_LIVE while the client holds it */
  gasnet_register_value_t value; /* value gets land here */
  struct gasneti_op *next;       /* free list */
  /* An operation that completes only when something looks (a barrier's event): called by every
   * test and wait before they read pending; NULL for those AMs complete. */
  void (*advance)(struct gasneti_op *op);
};
typedef struct gasneti_op gasneti_op_t;
struct gasneti_valget {
  gasneti_op_t op;
};

/* Per client thread: a pool of operations (refilled in blocks, so issuing allocates nothing
 * in the steady state) and the open access region. The implicit-operation counters are
 * gasneti_nbi_counts (gasnet_extended.h), which clients read inline. */
typedef struct {
  gasneti_op_t *free_ops;
  gasneti_op_t *region;
} gasneti_rma_thread_t;

/* The implicit-operation counters as the atomics they are (the public header declares plain
 * int64_t for C++ clients and accesses them with __atomic builtins: same size and layout). */
_Static_assert(sizeof(_Atomic int64_t) == sizeof(int64_t) &&
                  _Alignof(_Atomic int64_t) == _Alignof(int64_t),
              "the nbi counters are shared as plain and atomic int64_t");
#define GASNETI_NBI_PUTS ((_Atomic int64_t *)&gasneti_nbi_counts.puts_out)
#define GASNETI_NBI_GETS ((_Atomic int64_t *)&gasneti_nbi_counts.gets_out)
#define GASNETI_NBI_RMWS ((_Atomic int64_t *)&gasneti_nbi_counts.rmws_out)

extern GASNETI_TLS gasneti_rma_thread_t gasneti_rma_td;

enum { GASNETI_OP_LIVE = 0x4c495645, GASNETI_OP_FREE = 0x46524545 };
/* A handle given to a sync call must be live: syncing one twice would put it in the pool
 * twice and hand it to two operations later. */
static inline void gasneti_op_check_live(const gasneti_op_t *op, const char *what) {
  if (GASNETI_UNLIKELY(op->state != GASNETI_OP_LIVE))
    gasneti_fatalerror("%s: handle %p was already synchronized (a handle may be synchronized "
                       "only once; afterwards it must not be used)", what, (const void *)op);
}
gasneti_op_t *gasneti_op_get(void);
void gasneti_op_put(gasneti_op_t *op);
/* Waits (serving AMs) until the counter reaches zero. */
void gasneti_wait_counter(_Atomic int64_t *counter);
/* Whether a live operation is complete (advancing it first, never polling), and waiting for it
 * (serving AMs meanwhile). */
bool gasneti_op_done(gasneti_op_t *op);
void gasneti_op_wait(gasneti_op_t *op);

void gasneti_rma_am_init(void);
/* The remote atomics' AM handlers (csrc/core/ratomic). */
void gasneti_ratomic_init(void);

/* The network path of the extended API (AMs, or RDMA where the conduit has it). */
gasnet_handle_t gasneti_put_am(gasnet_node_t node, void *dest, const void *src, size_t n, int kind,
                               int bulk);
gasnet_handle_t gasneti_get_am(void *dest, gasnet_node_t node, const void *src, size_t n, int kind);
gasnet_handle_t gasneti_memset_am(gasnet_node_t node, void *dest, int val, size_t n, int kind);

/* Where the completions of one operation are counted, by kind (GASNETI_RMA_*): a blocking
 * operation on the caller's stack, nb on a new handle, nbi on the thread's counters or open
 * access region. Every AM is added before it is sent, so a fast reply cannot underflow. */
typedef struct {
  _Atomic int64_t *counter;
  gasneti_op_t *op;      /* NB: the handle to return */
  _Atomic int64_t local; /* BLOCKING */
} gasneti_target_t;
void gasneti_target_open(gasneti_target_t *t, int kind, bool is_put);
static inline void gasneti_target_add(gasneti_target_t *t) {
  atomic_fetch_add_explicit(t->counter, 1, memory_order_relaxed);
}
/* Blocking: waits. NB: the handle, or GASNET_INVALID_HANDLE when already complete. */
gasnet_handle_t gasneti_target_close(gasneti_target_t *t, int kind);
/* A put over AMs (Long requests, pipelined) whose chunks complete on this counter; stable:
 * src stays unchanged until they complete (GASNETI_AM_STABLE). */
void gasneti_put_am_counted(gasnet_node_t node, void *dest, const void *src, size_t n,
                            _Atomic int64_t *counter, bool stable);
/* A get over AMs whose chunks complete on this counter (value gets count on their op). */
void gasneti_get_am_counted(void *dest, gasnet_node_t node, const void *src, size_t n,
                            _Atomic int64_t *counter);

#endif
