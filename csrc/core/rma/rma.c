/* rma.c: operation handles, implicit-operation counters, access regions, value gets, and the
 * synchronization calls of the extended API; plus the debug check of remote addresses. */
#include "rma.h"
#include "trace/trace.h"

#include "pshm/pshm.h"
#include "pshm/wake.h"

GASNETI_TLS gasneti_rma_thread_t gasneti_rma_td;
GASNETI_TLS gasneti_nbi_counts_t gasneti_nbi_counts;

enum { POOL_BLOCK = 256 };

#if GASNETI_THREADS
#include <pthread.h>
/* Ops of threads that ended: the next thread to run dry takes them before allocating. */
static gasneti_op_t *spare_ops;
static pthread_mutex_t spare_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_key_t pool_key;
static pthread_once_t pool_once = PTHREAD_ONCE_INIT;

static void pool_return(void *arg) {
  (void)arg;
  gasneti_op_t *list = gasneti_rma_td.free_ops;
  if (!list) return;
  gasneti_op_t *last = list;
  while (last->next) last = last->next;
  pthread_mutex_lock(&spare_lock);
  last->next = spare_ops;
  spare_ops = list;
  pthread_mutex_unlock(&spare_lock);
  gasneti_rma_td.free_ops = NULL;
}

static void pool_key_init(void) { pthread_key_create(&pool_key, pool_return); }
#endif

static void refill(gasneti_rma_thread_t *td) {
#if GASNETI_THREADS
  pthread_once(&pool_once, pool_key_init);
  pthread_setspecific(pool_key, td); /* non-NULL: pool_return runs when the thread ends */
  pthread_mutex_lock(&spare_lock);
  td->free_ops = spare_ops;
  spare_ops = NULL;
  pthread_mutex_unlock(&spare_lock);
  if (td->free_ops) return;
#endif
  /* A new block; blocks are never freed, ops only circulate. */
  gasneti_op_t *block = gasneti_calloc(POOL_BLOCK, sizeof *block);
  for (int i = 0; i < POOL_BLOCK - 1; i++) block[i].next = &block[i + 1];
  td->free_ops = block;
}

int64_t gasneti_ops_live; /* gasnet_extended.h: ops between gasneti_op_get and gasneti_op_put */

/* Ops may be synchronized by another thread than the one that issued them, so the count is
 * the process's. */
static inline void count_live(int64_t delta) {
#if GASNETI_THREADS
  __atomic_fetch_add(&gasneti_ops_live, delta, __ATOMIC_RELAXED);
#else
  gasneti_ops_live += delta;
#endif
}

gasneti_op_t *gasneti_op_get(void) {
  gasneti_rma_thread_t *td = &gasneti_rma_td;
  if (GASNETI_UNLIKELY(!td->free_ops)) refill(td);
  gasneti_op_t *op = td->free_ops;
  td->free_ops = op->next;
  atomic_store_explicit(&op->pending, 0, memory_order_relaxed);
  op->value = 0;
  op->advance = NULL;
  op->state = GASNETI_OP_LIVE;
  count_live(1);
  return op;
}

void gasneti_op_put(gasneti_op_t *op) {
  op->state = GASNETI_OP_FREE;
  count_live(-1);
  op->next = gasneti_rma_td.free_ops;
  gasneti_rma_td.free_ops = op;
}

static bool counter_done(_Atomic int64_t *counter) {
  return atomic_load_explicit(counter, memory_order_acquire) == 0;
}

void gasneti_wait_counter(_Atomic int64_t *counter) {
  while (!counter_done(counter)) gasneti_wait_step();
}

bool gasneti_op_done(gasneti_op_t *op) {
  if (GASNETI_UNLIKELY(op->advance)) op->advance(op);
  return counter_done(&op->pending);
}

void gasneti_op_wait(gasneti_op_t *op) {
  while (!gasneti_op_done(op)) gasneti_wait_step();
}

void gasneti_rma_check(const char *what, gasnet_node_t node, const void *addr, size_t n) {
  if (!gasneti_attach_done) gasneti_fatalerror("%s before gasnet_attach", what);
  if (node >= gasneti_nodes)
    gasneti_fatalerror("%s to rank %d: the job has ranks 0..%d", what, (int)node,
                       (int)gasneti_nodes - 1);
  if (!gasneti_in_segment(node, addr, n))
    gasneti_fatalerror("%s of %zu bytes at %p on rank %d: outside its segment [%p, %p)", what, n,
                       addr, (int)node, gasneti_seginfo[node].addr,
                       (void *)((uintptr_t)gasneti_seginfo[node].addr + gasneti_seginfo[node].size));
}

/* The try_sync calls poll as a wait does: inside a handler (where they may be called) they
 * must not run the kind of message being handled again. */
static void try_poll(void) {
  gasneti_poll(gasneti_am_context == GASNETI_CTX_CLIENT ? GASNETI_POLL_ALL : 0);
}

/* ---- explicit handles ------------------------------------------------------------------ */
/* The inline parts (gasnet_extended.h) have already let GASNET_INVALID_HANDLE through. */
/* A rank that traces reaches these also with GASNET_INVALID_HANDLE (every sync is recorded). */
void gasneti_wait_syncnb(const char *loc, gasnet_handle_t h) {
  double start = gasneti_trace_active ? gasneti_trace_now() : 0;
  if (h != GASNET_INVALID_HANDLE) {
    gasneti_op_check_live(h, "gasnet_wait_syncnb");
    gasneti_op_wait(h);
    gasneti_op_put(h);
  }
  if (GASNETI_UNLIKELY(gasneti_trace_active)) gasneti_trace_sync(loc, "WAIT_SYNCNB", start, -1);
}

static int try_syncnb(gasnet_handle_t h, int poll, const char *what) {
  if (h == GASNET_INVALID_HANDLE) return GASNET_OK;
  gasneti_op_check_live(h, what);
  if (poll) try_poll();
  if (!gasneti_op_done(h)) return GASNET_ERR_NOT_READY;
  gasneti_op_put(h);
  return GASNET_OK;
}
int gasneti_try_syncnb(const char *loc, gasnet_handle_t h) {
  double start = gasneti_trace_active ? gasneti_trace_now() : 0;
  int rc = try_syncnb(h, 1, "gasnet_try_syncnb");
  if (GASNETI_UNLIKELY(gasneti_trace_active))
    gasneti_trace_sync(loc, "TRY_SYNCNB", start, rc == GASNET_OK);
  return rc;
}
/* GASNet 1.x's _nopoll forms (for runtimes that poll on their own schedule, such as a CAF
 * runtime's): the same check without serving the network. */
int gasneti_try_syncnb_nopoll(gasnet_handle_t h) {
  return try_syncnb(h, 0, "gasnet_try_syncnb_nopoll");
}

/* Retires every completed handle in the array (setting it to GASNET_INVALID_HANDLE); returns
 * how many are still pending, and in *retired how many completed in this call. */
static size_t retire_completed(gasnet_handle_t *h, size_t n, size_t *retired) {
  size_t pending = 0;
  *retired = 0;
  for (size_t i = 0; i < n; i++) {
    if (h[i] == GASNET_INVALID_HANDLE) continue;
    gasneti_op_check_live(h[i], "gasnet_wait/try_syncnb_some/all");
    if (gasneti_op_done(h[i])) {
      gasneti_op_put(h[i]);
      h[i] = GASNET_INVALID_HANDLE;
      (*retired)++;
    } else {
      pending++;
    }
  }
  return pending;
}

void gasneti_wait_syncnb_all(const char *loc, gasnet_handle_t *h, size_t n) {
  double start = gasneti_trace_active ? gasneti_trace_now() : 0;
  for (size_t i = 0; i < n; i++) {
    if (h[i] != GASNET_INVALID_HANDLE) {
      gasneti_op_check_live(h[i], "gasnet_wait_syncnb_all");
      gasneti_op_wait(h[i]);
      gasneti_op_put(h[i]);
    }
    h[i] = GASNET_INVALID_HANDLE;
  }
  if (GASNETI_UNLIKELY(gasneti_trace_active))
    gasneti_trace_sync(loc, "WAIT_SYNCNB_ALL", start, -1);
}

/* Returns once at least one valid handle completed, or at once when none is pending. */
void gasnet_wait_syncnb_some(gasnet_handle_t *h, size_t n) {
  double start = gasneti_trace_active ? gasneti_trace_now() : 0;
  size_t retired;
  while (retire_completed(h, n, &retired) && !retired) gasneti_wait_step();
  if (GASNETI_UNLIKELY(gasneti_trace_active))
    gasneti_trace_sync(NULL, "WAIT_SYNCNB_SOME", start, -1);
}

int gasnet_try_syncnb_all_nopoll(gasnet_handle_t *h, size_t n) {
  size_t retired;
  return retire_completed(h, n, &retired) ? GASNET_ERR_NOT_READY : GASNET_OK;
}

int gasnet_try_syncnb_some_nopoll(gasnet_handle_t *h, size_t n) {
  size_t retired;
  size_t pending = retire_completed(h, n, &retired);
  return (retired || pending == 0) ? GASNET_OK : GASNET_ERR_NOT_READY;
}

static int traced_try(const char *name, double start, int rc) {
  if (GASNETI_UNLIKELY(gasneti_trace_active)) gasneti_trace_sync(NULL, name, start, rc == GASNET_OK);
  return rc;
}
#define TRACE_START (gasneti_trace_active ? gasneti_trace_now() : 0)

int gasnet_try_syncnb_all(gasnet_handle_t *h, size_t n) {
  double start = TRACE_START;
  try_poll();
  return traced_try("TRY_SYNCNB_ALL", start, gasnet_try_syncnb_all_nopoll(h, n));
}

int gasnet_try_syncnb_some(gasnet_handle_t *h, size_t n) {
  double start = TRACE_START;
  try_poll();
  return traced_try("TRY_SYNCNB_SOME", start, gasnet_try_syncnb_some_nopoll(h, n));
}

/* ---- implicit handles and access regions ------------------------------------------------ */
/* which: 'P', 'G', or 'A' (both counters; counter is NULL then). */
void gasneti_wait_nbi_counter(const char *loc, int which, int64_t *counter) {
  double start = TRACE_START;
  if (which == 'A') {
    gasneti_wait_counter(GASNETI_NBI_PUTS);
    gasneti_wait_counter(GASNETI_NBI_GETS);
  } else {
    gasneti_wait_counter((_Atomic int64_t *)counter);
  }
  if (GASNETI_UNLIKELY(gasneti_trace_active))
    gasneti_trace_sync(loc, which == 'P'   ? "WAIT_SYNCNBI_PUTS"
                            : which == 'G' ? "WAIT_SYNCNBI_GETS"
                                           : "WAIT_SYNCNBI_ALL",
                       start, -1);
}

int gasnet_try_syncnbi_puts(void) {
  double start = TRACE_START;
  try_poll();
  return traced_try("TRY_SYNCNBI_PUTS", start,
                    counter_done(GASNETI_NBI_PUTS) ? GASNET_OK : GASNET_ERR_NOT_READY);
}
int gasnet_try_syncnbi_gets(void) {
  double start = TRACE_START;
  try_poll();
  return traced_try("TRY_SYNCNBI_GETS", start,
                    counter_done(GASNETI_NBI_GETS) ? GASNET_OK : GASNET_ERR_NOT_READY);
}
int gasnet_try_syncnbi_all(void) {
  double start = TRACE_START;
  try_poll();
  return traced_try("TRY_SYNCNBI_ALL", start,
                    counter_done(GASNETI_NBI_PUTS) && counter_done(GASNETI_NBI_GETS)
                        ? GASNET_OK
                        : GASNET_ERR_NOT_READY);
}

void gasnet_begin_nbi_accessregion(void) {
  if (gasneti_rma_td.region)
    gasneti_fatalerror("gasnet_begin_nbi_accessregion: this thread already has an open region "
                       "(regions do not nest)");
  gasneti_rma_td.region = gasneti_op_get();
}

gasnet_handle_t gasnet_end_nbi_accessregion(void) {
  gasneti_op_t *region = gasneti_rma_td.region;
  if (!region) gasneti_fatalerror("gasnet_end_nbi_accessregion without a matching begin");
  gasneti_rma_td.region = NULL;
  if (gasneti_op_done(region)) {
    gasneti_op_put(region);
    return GASNET_INVALID_HANDLE;
  }
  return region;
}

/* ---- value gets ------------------------------------------------------------------------- */
/* What the inline part leaves: AM-path value gets (and direct ones it cannot encode). */
gasnet_valget_handle_t gasneti_get_nb_val(const char *loc, gasnet_node_t node, void *src,
                                          size_t nbytes) {
  GASNETI_RMA_CHECK("gasnet_get_nb_val", node, src, nbytes);
  gasneti_op_t *op = gasneti_op_get();
  if (GASNETI_UNLIKELY(gasneti_trace_active)) gasneti_trace_rma(loc, GASNETI_OP_GET_NB_VAL, node, nbytes, -1);
  /* Direct where the inline path would have been (a rank that traces keeps that apart). */
  uintptr_t direct = gasneti_trace_active || gasneti_wake_on ? gasneti_trace_direct[node]
                                                             : gasneti_pshm_direct[node];
  if (direct != GASNETI_PSHM_FAR) {
    op->value = gasneti_load_value(gasneti_direct_addr(direct, src), nbytes);
  } else {
    /* The value lands in op->value's low-order bytes; completion counts on op->pending. */
    gasneti_get_am_counted((void *)gasneti_value_bytes(&op->value, nbytes), node, src, nbytes,
                           &op->pending);
  }
  return (gasnet_valget_handle_t)op;
}

gasnet_register_value_t gasneti_wait_syncnb_valget(const char *loc, gasnet_valget_handle_t handle) {
  double start = TRACE_START;
  gasneti_op_t *op = &handle->op;
  gasneti_op_check_live(op, "gasnet_wait_syncnb_valget");
  gasneti_wait_counter(&op->pending);
  gasnet_register_value_t v = op->value;
  gasneti_op_put(op);
  if (GASNETI_UNLIKELY(gasneti_trace_active))
    gasneti_trace_sync(loc, "WAIT_SYNCNB_VALGET", start, -1);
  return v;
}
