/* rma_am.c: the reference extended API over active messages, for peers outside the caller's
 * supernode (network conduits use it too; a conduit with RDMA, GASNETC_RDMA, takes puts and
 * gets itself and only memsets travel as AMs). Puts are Long requests, gets a Short request
 * answered by a Long (destination in our segment) or Medium reply; transfers larger than one
 * AM are split and all chunks are issued before waiting, so they pipeline. An aligned word
 * (1, 2, 4 or 8 bytes) travels in Short arguments both ways instead. */
#include "conduit.h"
#include "rma.h"

#define PTR_ARGS(p) (gasnet_handlerarg_t)(uint32_t)(uintptr_t)(p), \
                    (gasnet_handlerarg_t)(uint32_t)((uint64_t)(uintptr_t)(p) >> 32)
#define ARGS_PTR(lo, hi) ((void *)(uintptr_t)(((uint64_t)(uint32_t)(hi) << 32) | (uint32_t)(lo)))

static void complete(_Atomic int64_t *counter) {
  atomic_fetch_sub_explicit(counter, 1, memory_order_release);
}

static void done_handler(gasnet_token_t t, gasnet_handlerarg_t clo, gasnet_handlerarg_t chi) {
  (void)t;
  complete(ARGS_PTR(clo, chi));
}

static void put_handler(gasnet_token_t t, void *buf, size_t n, gasnet_handlerarg_t clo,
                        gasnet_handlerarg_t chi) {
  (void)buf, (void)n;
  gasneti_am_reply_internal(t, GASNETI_HANDLER_DONE, GASNETI_AM_SHORT, NULL, 0, NULL, 2,
                            (gasnet_handlerarg_t[]){clo, chi});
}

static void memset_handler(gasnet_token_t t, gasnet_handlerarg_t dlo, gasnet_handlerarg_t dhi,
                           gasnet_handlerarg_t val, gasnet_handlerarg_t nlo,
                           gasnet_handlerarg_t nhi, gasnet_handlerarg_t clo,
                           gasnet_handlerarg_t chi) {
  memset(ARGS_PTR(dlo, dhi), val, (size_t)(uintptr_t)ARGS_PTR(nlo, nhi));
  gasneti_am_reply_internal(t, GASNETI_HANDLER_DONE, GASNETI_AM_SHORT, NULL, 0, NULL, 2,
                            (gasnet_handlerarg_t[]){clo, chi});
}

/* Words (1, 2, 4 or 8 aligned bytes) travel in Short arguments and land with one store, so a
 * peer polling the word never sees it written in pieces (gasnet_extended.h). */
#define WORD_ARGS(w) (gasnet_handlerarg_t)(uint32_t)(w).u64, \
                     (gasnet_handlerarg_t)(uint32_t)((w).u64 >> 32)
static gasneti_word_t args_word(gasnet_handlerarg_t lo, gasnet_handlerarg_t hi) {
  return (gasneti_word_t){.u64 = ((uint64_t)(uint32_t)hi << 32) | (uint32_t)lo};
}

static void put_word_handler(gasnet_token_t t, gasnet_handlerarg_t dlo, gasnet_handlerarg_t dhi,
                             gasnet_handlerarg_t vlo, gasnet_handlerarg_t vhi,
                             gasnet_handlerarg_t n, gasnet_handlerarg_t clo,
                             gasnet_handlerarg_t chi) {
  gasneti_word_store(ARGS_PTR(dlo, dhi), args_word(vlo, vhi), (size_t)n);
  gasneti_am_reply_internal(t, GASNETI_HANDLER_DONE, GASNETI_AM_SHORT, NULL, 0, NULL, 2,
                            (gasnet_handlerarg_t[]){clo, chi});
}

static void get_word_handler(gasnet_token_t t, gasnet_handlerarg_t vlo, gasnet_handlerarg_t vhi,
                             gasnet_handlerarg_t n, gasnet_handlerarg_t dlo,
                             gasnet_handlerarg_t dhi, gasnet_handlerarg_t clo,
                             gasnet_handlerarg_t chi) {
  (void)t;
  gasneti_word_store(ARGS_PTR(dlo, dhi), args_word(vlo, vhi), (size_t)n);
  complete(ARGS_PTR(clo, chi));
}

enum { GET_MEDIUM = 0, GET_LONG = 1, GET_WORD = 2 }; /* how get_handler answers */

static void get_handler(gasnet_token_t t, gasnet_handlerarg_t slo, gasnet_handlerarg_t shi,
                        gasnet_handlerarg_t n, gasnet_handlerarg_t dlo, gasnet_handlerarg_t dhi,
                        gasnet_handlerarg_t clo, gasnet_handlerarg_t chi,
                        gasnet_handlerarg_t how) {
  void *src = ARGS_PTR(slo, shi);
  if (how == GET_WORD) {
    gasneti_word_t w = gasneti_word_load(src, (size_t)n);
    gasneti_am_reply_internal(t, GASNETI_HANDLER_GET_WORD, GASNETI_AM_SHORT, NULL, 0, NULL, 7,
                              (gasnet_handlerarg_t[]){WORD_ARGS(w), n, dlo, dhi, clo, chi});
  } else if (how == GET_LONG) { /* from our segment: it stays there for a retransmission */
    gasneti_am_reply_stable(t, GASNETI_HANDLER_GET_LONG, GASNETI_AM_LONG, src,
                            (size_t)(uint32_t)n, ARGS_PTR(dlo, dhi), 2,
                            (gasnet_handlerarg_t[]){clo, chi});
  } else {
    gasneti_am_reply_stable(t, GASNETI_HANDLER_GET_MEDIUM, GASNETI_AM_MEDIUM, src,
                            (size_t)(uint32_t)n, NULL, 4,
                            (gasnet_handlerarg_t[]){dlo, dhi, clo, chi});
  }
}

static void get_medium_handler(gasnet_token_t t, void *buf, size_t n, gasnet_handlerarg_t dlo,
                               gasnet_handlerarg_t dhi, gasnet_handlerarg_t clo,
                               gasnet_handlerarg_t chi) {
  (void)t;
  memcpy(ARGS_PTR(dlo, dhi), buf, n);
  complete(ARGS_PTR(clo, chi));
}

static void get_long_handler(gasnet_token_t t, void *buf, size_t n, gasnet_handlerarg_t clo,
                             gasnet_handlerarg_t chi) {
  (void)t, (void)buf, (void)n;
  complete(ARGS_PTR(clo, chi));
}

void gasneti_rma_am_init(void) {
  gasneti_register_internal_handler(GASNETI_HANDLER_PUT, (gasneti_handler_fn)put_handler);
  gasneti_register_internal_handler(GASNETI_HANDLER_DONE, (gasneti_handler_fn)done_handler);
  gasneti_register_internal_handler(GASNETI_HANDLER_GET, (gasneti_handler_fn)get_handler);
  gasneti_register_internal_handler(GASNETI_HANDLER_GET_MEDIUM,
                                    (gasneti_handler_fn)get_medium_handler);
  gasneti_register_internal_handler(GASNETI_HANDLER_GET_LONG, (gasneti_handler_fn)get_long_handler);
  gasneti_register_internal_handler(GASNETI_HANDLER_MEMSET, (gasneti_handler_fn)memset_handler);
  gasneti_register_internal_handler(GASNETI_HANDLER_PUT_WORD, (gasneti_handler_fn)put_word_handler);
  gasneti_register_internal_handler(GASNETI_HANDLER_GET_WORD, (gasneti_handler_fn)get_word_handler);
}

void gasneti_target_open(gasneti_target_t *t, int kind, bool is_put) {
  t->op = NULL;
  atomic_store_explicit(&t->local, 0, memory_order_relaxed);
  if (kind == GASNETI_RMA_BLOCKING) {
    t->counter = &t->local;
  } else if (kind == GASNETI_RMA_NB) {
    t->op = gasneti_op_get();
    t->counter = &t->op->pending;
  } else {
    gasneti_rma_thread_t *td = &gasneti_rma_td;
    t->counter = td->region ? &td->region->pending : is_put ? GASNETI_NBI_PUTS : GASNETI_NBI_GETS;
  }
}

gasnet_handle_t gasneti_target_close(gasneti_target_t *t, int kind) {
  if (kind == GASNETI_RMA_BLOCKING) {
    gasneti_wait_counter(&t->local);
    return GASNET_INVALID_HANDLE;
  }
  if (kind == GASNETI_RMA_NB) {
    if (atomic_load_explicit(&t->op->pending, memory_order_acquire) == 0) {
      gasneti_op_put(t->op);
      return GASNET_INVALID_HANDLE;
    }
    return t->op;
  }
  return GASNET_INVALID_HANDLE;
}

gasnet_handle_t gasneti_put_am(gasnet_node_t node, void *dest, const void *src, size_t n,
                               int kind, int bulk) {
  gasneti_target_t t;
  gasneti_target_open(&t, kind, true);
#ifdef GASNETC_RDMA
  if (n) gasnetc_rdma_put(node, dest, src, n, t.counter, !bulk);
  return gasneti_target_close(&t, kind);
#else
  (void)bulk;
#endif
  if (gasneti_is_word_size(n) && gasneti_word_aligned(dest, n)) {
    gasneti_word_t w = gasneti_word_load(src, n);
    gasneti_target_add(&t);
    gasneti_am_request_internal(node, GASNETI_HANDLER_PUT_WORD, GASNETI_AM_SHORT, NULL, 0, NULL,
                                7, (gasnet_handlerarg_t[]){PTR_ARGS(dest), WORD_ARGS(w),
                                                           (gasnet_handlerarg_t)n,
                                                           PTR_ARGS(t.counter)});
    return gasneti_target_close(&t, kind);
  }
  /* A blocking put waits for its completion, which comes after the data was acknowledged; a
   * bulk put's source must stay unchanged until then. Only a non-bulk nb/nbi put's source may
   * change once the call returns. */
  gasneti_put_am_counted(node, dest, src, n, t.counter, kind == GASNETI_RMA_BLOCKING || bulk);
  return gasneti_target_close(&t, kind);
}

void gasneti_put_am_counted(gasnet_node_t node, void *dest, const void *src, size_t n,
                            _Atomic int64_t *counter, bool stable) {
#ifdef GASNETC_RDMA
  if (n) gasnetc_rdma_put(node, dest, src, n, counter, 1);
  return;
#endif
  const size_t chunk = gasnet_AMMaxLongRequest();
  for (size_t off = 0; off < n; off += chunk) {
    size_t len = n - off < chunk ? n - off : chunk;
    atomic_fetch_add_explicit(counter, 1, memory_order_relaxed);
    /* A Long request copies its source before returning (non-bulk puts may reuse it at
     * once), unless the source stays as it is until the data arrived. */
    const gasnet_handlerarg_t args[] = {PTR_ARGS(counter)};
    if (stable)
      gasneti_am_request_stable(node, GASNETI_HANDLER_PUT, GASNETI_AM_LONG,
                                (const uint8_t *)src + off, len, (uint8_t *)dest + off, 2, args);
    else
      gasneti_am_request_internal(node, GASNETI_HANDLER_PUT, GASNETI_AM_LONG,
                                  (const uint8_t *)src + off, len, (uint8_t *)dest + off, 2, args);
  }
}

void gasneti_get_am_counted(void *dest, gasnet_node_t node, const void *src, size_t n,
                            _Atomic int64_t *counter) {
#ifdef GASNETC_RDMA
  if (n) gasnetc_rdma_get(dest, node, src, n, counter);
  return;
#endif
  if (gasneti_is_word_size(n) && gasneti_word_aligned(src, n)) {
    atomic_fetch_add_explicit(counter, 1, memory_order_relaxed);
    gasneti_am_request_internal(node, GASNETI_HANDLER_GET, GASNETI_AM_SHORT, NULL, 0, NULL, 8,
                                (gasnet_handlerarg_t[]){PTR_ARGS(src), (gasnet_handlerarg_t)n,
                                                        PTR_ARGS(dest), PTR_ARGS(counter),
                                                        GET_WORD});
    return;
  }
  /* A destination inside our segment can take Long replies; anywhere else, Medium ones. */
  bool as_long = gasneti_in_segment(gasneti_mynode, dest, n);
  const size_t chunk = as_long ? gasnet_AMMaxLongReply() : gasnet_AMMaxMedium();
  for (size_t off = 0; off < n; off += chunk) {
    size_t len = n - off < chunk ? n - off : chunk;
    atomic_fetch_add_explicit(counter, 1, memory_order_relaxed);
    gasneti_am_request_internal(node, GASNETI_HANDLER_GET, GASNETI_AM_SHORT, NULL, 0, NULL, 8,
                           (gasnet_handlerarg_t[]){PTR_ARGS((const uint8_t *)src + off),
                                                   (gasnet_handlerarg_t)len,
                                                   PTR_ARGS((uint8_t *)dest + off),
                                                   PTR_ARGS(counter),
                                                   as_long ? GET_LONG : GET_MEDIUM});
  }
}

gasnet_handle_t gasneti_get_am(void *dest, gasnet_node_t node, const void *src, size_t n,
                               int kind) {
  gasneti_target_t t;
  gasneti_target_open(&t, kind, false);
  gasneti_get_am_counted(dest, node, src, n, t.counter);
  return gasneti_target_close(&t, kind);
}

gasnet_handle_t gasneti_memset_am(gasnet_node_t node, void *dest, int val, size_t n, int kind) {
  gasneti_target_t t;
  gasneti_target_open(&t, kind, true);
  if (n) {
    gasneti_target_add(&t);
    gasneti_am_request_internal(node, GASNETI_HANDLER_MEMSET, GASNETI_AM_SHORT, NULL, 0, NULL, 7,
                           (gasnet_handlerarg_t[]){PTR_ARGS(dest), val, PTR_ARGS((uintptr_t)n),
                                                   PTR_ARGS(t.counter)});
  }
  return gasneti_target_close(&t, kind);
}
