/* am.c: the handler table, handler dispatch with 0..16 arguments, and the AM entry points.
 * Peers in this supernode are reached through PSHM rings; others through the conduit. */
#include <string.h>

#include "conduit.h"
#include "gasnet_internal.h"
#include "pshm/pshm.h"

gasneti_handler_fn gasneti_handlers[256];
GASNETI_TLS int gasneti_am_context;

void gasneti_register_internal_handler(gasnet_handler_t index, gasneti_handler_fn fn) {
  gasneti_handlers[index] = fn;
}

/* ---- dispatch ------------------------------------------------------------------------ */
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

void gasneti_run_handler(gasneti_token_t *token, gasnet_handler_t handler, int category,
                         void *buf, size_t nbytes, int nargs, const gasnet_handlerarg_t *args) {
  gasneti_handler_fn fn = gasneti_handlers[handler];
  if (GASNETI_UNLIKELY(!fn))
    gasneti_fatalerror("AM %s from rank %d names handler %d, which is not registered",
                       token->is_request ? "request" : "reply", (int)token->src, (int)handler);
  int saved = gasneti_am_context;
  gasneti_am_context = token->is_request ? GASNETI_CTX_REQUEST : GASNETI_CTX_REPLY;
  call_handler(fn, (gasnet_token_t)token, category, buf, nbytes, nargs, args);
  gasneti_am_context = saved;
}

/* ---- argument checks ------------------------------------------------------------------ */
static void check_common(const char *what, int nargs) {
  if (GASNETI_UNLIKELY(!gasneti_attach_done))
    gasneti_fatalerror("%s called before gasnet_attach", what);
  if (GASNETI_UNLIKELY(nargs < 0 || nargs > 16))
    gasneti_fatalerror("%s with %d arguments: accepted 0..16", what, nargs);
}

static void check_request(const char *what, gasnet_node_t dest, int nargs) {
  check_common(what, nargs);
  if (GASNETI_UNLIKELY(gasneti_am_context != GASNETI_CTX_CLIENT))
    gasneti_fatalerror("%s called inside an AM handler: handlers may only reply", what);
  if (GASNETI_UNLIKELY(dest >= gasneti_nodes))
    gasneti_fatalerror("%s to rank %d: the job has ranks 0..%d", what, (int)dest,
                       (int)gasneti_nodes - 1);
}

static gasneti_token_t *check_reply(const char *what, gasnet_token_t token, int nargs) {
  check_common(what, nargs);
  gasneti_token_t *tok = (gasneti_token_t *)token;
  if (GASNETI_UNLIKELY(gasneti_am_context != GASNETI_CTX_REQUEST || !tok->is_request))
    gasneti_fatalerror("%s called outside a request handler", what);
  if (GASNETI_UNLIKELY(tok->replied))
    gasneti_fatalerror("%s: this request handler already sent its one reply", what);
  tok->replied = 1;
  return tok;
}

static void check_medium(const char *what, size_t nbytes) {
  if (GASNETI_UNLIKELY(nbytes > GASNETC_MAX_MEDIUM))
    gasneti_fatalerror("%s of %zu bytes: the limit is gasnet_AMMaxMedium() = %d", what, nbytes,
                       GASNETC_MAX_MEDIUM);
}

static void check_long(const char *what, gasnet_node_t dest, size_t nbytes, void *dst) {
  if (GASNETI_UNLIKELY(nbytes > GASNETC_MAX_LONG))
    gasneti_fatalerror("%s of %zu bytes: the limit is %u", what, nbytes, GASNETC_MAX_LONG);
  if (GASNETI_UNLIKELY(!gasneti_in_segment(dest, dst, nbytes)))
    gasneti_fatalerror("%s of %zu bytes to %p on rank %d: outside its segment [%p, %p)", what,
                       nbytes, dst, (int)dest, gasneti_seginfo[dest].addr,
                       (void *)((uintptr_t)gasneti_seginfo[dest].addr + gasneti_seginfo[dest].size));
}

/* ---- sending ------------------------------------------------------------------------- */
static void send_am(gasnet_node_t dest, int reply, int cat, gasnet_handler_t handler,
                    const void *src, size_t nbytes, void *dst, int nargs,
                    const gasnet_handlerarg_t *args) {
  if (!gasneti_pshm_reachable(dest)) {
    gasnetc_am_send(dest, reply, cat, handler, src, nbytes, dst, nargs, args);
    return;
  }
  gasneti_msg_t msg = {.handler = handler,
                       .flags = (uint8_t)cat,
                       .nargs = (uint8_t)nargs,
                       .args = args,
                       .nbytes = (uint32_t)nbytes};
  if (cat == GASNETI_AM_LONG) {
    /* The payload lands in the target segment through our mapping before the header goes. */
    if (nbytes) memcpy((void *)((uintptr_t)dst + gasneti_pshm_offset[dest]), src, nbytes);
    msg.addr = (uint64_t)(uintptr_t)dst;
  } else if (cat == GASNETI_AM_MEDIUM) {
    msg.payload = src;
    msg.chunk = (uint32_t)nbytes;
  }
  gasneti_pshm_send(gasneti_host_local[dest], reply, &msg);
}

int gasneti_AMRequestShort(gasnet_node_t dest, gasnet_handler_t handler, int numargs,
                           const gasnet_handlerarg_t *args) {
  check_request("gasnet_AMRequestShort", dest, numargs);
  send_am(dest, 0, GASNETI_AM_SHORT, handler, NULL, 0, NULL, numargs, args);
  return GASNET_OK;
}

int gasneti_AMRequestMedium(gasnet_node_t dest, gasnet_handler_t handler, void *source_addr,
                            size_t nbytes, int numargs, const gasnet_handlerarg_t *args) {
  check_request("gasnet_AMRequestMedium", dest, numargs);
  check_medium("gasnet_AMRequestMedium", nbytes);
  send_am(dest, 0, GASNETI_AM_MEDIUM, handler, source_addr, nbytes, NULL, numargs, args);
  return GASNET_OK;
}

int gasneti_AMRequestLong(gasnet_node_t dest, gasnet_handler_t handler, void *source_addr,
                          size_t nbytes, void *dest_addr, int numargs,
                          const gasnet_handlerarg_t *args) {
  check_request("gasnet_AMRequestLong", dest, numargs);
  check_long("gasnet_AMRequestLong", dest, nbytes, dest_addr);
  send_am(dest, 0, GASNETI_AM_LONG, handler, source_addr, nbytes, dest_addr, numargs, args);
  return GASNET_OK;
}

int gasneti_AMReplyShort(gasnet_token_t token, gasnet_handler_t handler, int numargs,
                         const gasnet_handlerarg_t *args) {
  gasneti_token_t *tok = check_reply("gasnet_AMReplyShort", token, numargs);
  send_am(tok->src, 1, GASNETI_AM_SHORT, handler, NULL, 0, NULL, numargs, args);
  return GASNET_OK;
}

int gasneti_AMReplyMedium(gasnet_token_t token, gasnet_handler_t handler, void *source_addr,
                          size_t nbytes, int numargs, const gasnet_handlerarg_t *args) {
  gasneti_token_t *tok = check_reply("gasnet_AMReplyMedium", token, numargs);
  check_medium("gasnet_AMReplyMedium", nbytes);
  send_am(tok->src, 1, GASNETI_AM_MEDIUM, handler, source_addr, nbytes, NULL, numargs, args);
  return GASNET_OK;
}

int gasneti_AMReplyLong(gasnet_token_t token, gasnet_handler_t handler, void *source_addr,
                        size_t nbytes, void *dest_addr, int numargs,
                        const gasnet_handlerarg_t *args) {
  gasneti_token_t *tok = check_reply("gasnet_AMReplyLong", token, numargs);
  check_long("gasnet_AMReplyLong", tok->src, nbytes, dest_addr);
  send_am(tok->src, 1, GASNETI_AM_LONG, handler, source_addr, nbytes, dest_addr, numargs, args);
  return GASNET_OK;
}

int gasnet_AMGetMsgSource(gasnet_token_t token, gasnet_node_t *srcindex) {
  if (!token || !srcindex) return GASNET_ERR_BAD_ARG;
  *srcindex = ((gasneti_token_t *)token)->src;
  return GASNET_OK;
}

int gasnet_AMPoll(void) {
  if (GASNETI_UNLIKELY(!gasneti_attach_done)) return GASNET_ERR_NOT_INIT;
  gasneti_poll(gasneti_am_context == GASNETI_CTX_CLIENT ? GASNETI_POLL_ALL : 0);
  return GASNET_OK;
}
