/* am_dispatch.c: the handler table, its registration at attach, and running a received
 * message's handler with 0..16 arguments in the right handler context. */
#include <string.h>

#include "am.h"
#include "trace/trace.h"

static gasneti_handler_fn handlers[256];
GASNETI_TLS int gasneti_am_context;

void gasneti_register_internal_handler(gasnet_handler_t index, gasneti_handler_fn fn) {
  handlers[index] = fn;
}

/* Fixed indices first, then "don't care" entries get the lowest free client index, so the same
 * table gives the same assignment on every rank. */
int gasneti_register_client_handlers(gasnet_handlerentry_t *table, int n) {
  bool used[256] = {false};
  for (int i = 0; i < n; i++) {
    int idx = table[i].index;
    if (!table[i].fnptr) {
      gasneti_warning("gasnet_attach: handler table entry %d has a NULL function", i);
      return GASNET_ERR_BAD_ARG;
    }
    if (idx == 0) continue;
    if (idx < GASNETI_HANDLER_FIRST_CLIENT) {
      gasneti_warning("gasnet_attach: handler index %d is reserved: client indices are "
                      "128..255, or 0 to have one assigned", idx);
      return GASNET_ERR_BAD_ARG;
    }
    if (used[idx]) {
      gasneti_warning("gasnet_attach: handler index %d appears twice in the table", idx);
      return GASNET_ERR_BAD_ARG;
    }
    used[idx] = true;
  }
  int next = GASNETI_HANDLER_FIRST_CLIENT;
  for (int i = 0; i < n; i++) {
    if (table[i].index != 0) continue;
    while (next < 256 && used[next]) next++;
    if (next == 256) {
      gasneti_warning("gasnet_attach: more than 128 client handlers");
      return GASNET_ERR_BAD_ARG;
    }
    used[next] = true;
    table[i].index = (gasnet_handler_t)next;
  }
  for (int i = 0; i < n; i++) handlers[table[i].index] = (gasneti_handler_fn)table[i].fnptr;
  return GASNET_OK;
}

/* ---- calling a handler with its argument count ------------------------------------------ */
#define T gasnet_handlerarg_t
#define TS1 T
#define TS2 TS1, T
#define TS3 TS2, T
#define TS4 TS3, T
#define TS5 TS4, T
#define TS6 TS5, T
#define TS7 TS6, T
#define TS8 TS7, T
#define TS9 TS8, T
#define TS10 TS9, T
#define TS11 TS10, T
#define TS12 TS11, T
#define TS13 TS12, T
#define TS14 TS13, T
#define TS15 TS14, T
#define TS16 TS15, T
#define AS1 a[0]
#define AS2 AS1, a[1]
#define AS3 AS2, a[2]
#define AS4 AS3, a[3]
#define AS5 AS4, a[4]
#define AS6 AS5, a[5]
#define AS7 AS6, a[6]
#define AS8 AS7, a[7]
#define AS9 AS8, a[8]
#define AS10 AS9, a[9]
#define AS11 AS10, a[10]
#define AS12 AS11, a[11]
#define AS13 AS12, a[12]
#define AS14 AS13, a[13]
#define AS15 AS14, a[14]
#define AS16 AS15, a[15]
#define SHORT_CASE(n) \
  case n: ((void (*)(gasnet_token_t, TS##n))fn)(tok, AS##n); break;
#define BULK_CASE(n) \
  case n: ((void (*)(gasnet_token_t, void *, size_t, TS##n))fn)(tok, buf, nbytes, AS##n); break;

static void call_handler(gasneti_handler_fn fn, gasnet_token_t tok, int category, void *buf,
                         size_t nbytes, int nargs, const T *a) {
  if (category == GASNETI_AM_SHORT) {
    switch (nargs) {
      case 0: ((void (*)(gasnet_token_t))fn)(tok); break;
      SHORT_CASE(1) SHORT_CASE(2) SHORT_CASE(3) SHORT_CASE(4) SHORT_CASE(5) SHORT_CASE(6)
      SHORT_CASE(7) SHORT_CASE(8) SHORT_CASE(9) SHORT_CASE(10) SHORT_CASE(11) SHORT_CASE(12)
      SHORT_CASE(13) SHORT_CASE(14) SHORT_CASE(15) SHORT_CASE(16)
    }
  } else {
    switch (nargs) {
      case 0: ((void (*)(gasnet_token_t, void *, size_t))fn)(tok, buf, nbytes); break;
      BULK_CASE(1) BULK_CASE(2) BULK_CASE(3) BULK_CASE(4) BULK_CASE(5) BULK_CASE(6)
      BULK_CASE(7) BULK_CASE(8) BULK_CASE(9) BULK_CASE(10) BULK_CASE(11) BULK_CASE(12)
      BULK_CASE(13) BULK_CASE(14) BULK_CASE(15) BULK_CASE(16)
    }
  }
}

/* A received message's handler, in its handler context. */
static inline __attribute__((always_inline)) void run_handler(
    gasneti_token_t *token, int category, gasnet_handler_t handler, void *buf, size_t nbytes,
    int nargs, const T *args) {
  gasneti_handler_fn fn = handlers[handler];
  if (GASNETI_UNLIKELY(!fn))
    gasneti_fatalerror("AM %s from rank %d names handler %d, which is not registered",
                       token->is_request ? "request" : "reply", (int)token->src, (int)handler);
  if (GASNETI_UNLIKELY(nargs > 16))
    gasneti_fatalerror("AM from rank %d carries %d arguments (at most 16)", (int)token->src,
                       nargs);
  if (GASNETI_UNLIKELY(gasneti_trace_active) && handler >= GASNETI_HANDLER_FIRST_CLIENT)
    gasneti_trace_am(NULL, token->is_request, category, token->src, handler, nargs, nbytes,
                     true);
  int saved = gasneti_am_context;
  gasneti_am_context = token->is_request ? GASNETI_CTX_REQUEST : GASNETI_CTX_REPLY;
  call_handler(fn, (gasnet_token_t)token, category, buf, nbytes, nargs, args);
  gasneti_am_context = saved;
}

void gasneti_am_deliver(gasneti_token_t *token, const gasneti_am_t *am) {
  void *buf = (void *)am->payload;
  if (am->category == GASNETI_AM_LONG) {
    buf = (void *)(uintptr_t)am->dst;
    if (am->flags & GASNETI_AM_FRAG) {
      memcpy(buf, am->payload, am->chunk);
      return;
    }
    if (am->flags & GASNETI_AM_TAIL)
      memcpy((uint8_t *)buf + (am->nbytes - am->chunk), am->payload, am->chunk);
  }
  run_handler(token, am->category, am->handler, buf, am->nbytes, am->nargs, am->args);
}

void gasneti_am_deliver_short(gasneti_token_t *token, gasnet_handler_t handler, int nargs,
                              const gasnet_handlerarg_t *args) {
  run_handler(token, GASNETI_AM_SHORT, handler, NULL, 0, nargs, args);
}
