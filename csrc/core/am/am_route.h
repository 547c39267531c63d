/* am_route.h: an AM's way from a client's call to its destination, inline so that each entry
 * point (am_send.c's GASNet-1 calls, ex/ex_am.c's GASNet-EX ones) is one function deep: the
 * argument checks (their failures out of line), the client-index rule, and routing: a message to
 * this rank runs before the call returns (a request polls first); to a supernode peer it goes
 * through PSHM; to anyone else through the conduit, with Long payloads split to what it carries.
 * Each returns whether the message went: only one with GASNETI_AM_IMMEDIATE may be refused, and
 * only before any of it went. */
#ifndef GASNETI_AM_ROUTE_H
#define GASNETI_AM_ROUTE_H

#include <string.h>

#include "conduit.h"
#include "pshm/queue.h"
#include "am.h"

#define ALWAYS_INLINE static inline __attribute__((always_inline))

/* ---- argument checks (the failures are out of line: the fast path stays small) ----------- */
ALWAYS_INLINE void check_common(const char *what, int nargs) {
  if (GASNETI_UNLIKELY(!gasneti_attach_done))
    gasneti_fatalerror("%s called before gasnet_attach (or gex_Segment_Attach)", what);
  if (GASNETI_UNLIKELY(nargs < 0 || nargs > 16))
    gasneti_fatalerror("%s with %d arguments: accepted 0..16", what, nargs);
}

ALWAYS_INLINE void check_client_handler(const char *what, gasnet_handler_t handler) {
  if (GASNETI_UNLIKELY(handler < GASNETI_HANDLER_FIRST_CLIENT))
    gasneti_fatalerror("%s to handler %d: indices 0..127 belong to the runtime; a client sends "
                       "only to the handlers it registered (128..255)", what, (int)handler);
}

ALWAYS_INLINE void check_request(const char *what, gasnet_node_t dest, int nargs) {
  check_common(what, nargs);
  if (GASNETI_UNLIKELY(gasneti_am_context != GASNETI_CTX_CLIENT))
    gasneti_fatalerror("%s called inside an AM handler: handlers may only reply", what);
  if (GASNETI_UNLIKELY(dest >= gasneti_nodes))
    gasneti_fatalerror("%s to rank %d: the job has ranks 0..%d", what, (int)dest,
                       (int)gasneti_nodes - 1);
}

ALWAYS_INLINE gasneti_token_t *check_reply(const char *what, gasnet_token_t token, int nargs) {
  check_common(what, nargs);
  gasneti_token_t *tok = (gasneti_token_t *)token;
  if (GASNETI_UNLIKELY(gasneti_am_context != GASNETI_CTX_REQUEST || !tok || !tok->is_request))
    gasneti_fatalerror("%s called outside a request handler", what);
  if (GASNETI_UNLIKELY(tok->replied))
    gasneti_fatalerror("%s: this request handler already sent its one reply", what);
  tok->replied = 1;
  return tok;
}

ALWAYS_INLINE void check_payload(const char *what, int category, gasnet_node_t dest, size_t nbytes,
                          void *dst) {
  if (category == GASNETI_AM_MEDIUM && GASNETI_UNLIKELY(nbytes > GASNETC_MAX_MEDIUM))
    gasneti_fatalerror("%s of %zu bytes: the limit is gasnet_AMMaxMedium() = %d", what, nbytes,
                       GASNETC_MAX_MEDIUM);
  if (category != GASNETI_AM_LONG) return;
  if (GASNETI_UNLIKELY(nbytes > GASNETC_MAX_LONG))
    gasneti_fatalerror("%s of %zu bytes: the limit is %u", what, nbytes, GASNETC_MAX_LONG);
  if (GASNETI_UNLIKELY(!gasneti_in_segment(dest, dst, nbytes)))
    gasneti_fatalerror("%s of %zu bytes to %p on rank %d: outside its segment [%p, %p)", what,
                       nbytes, dst, (int)dest, gasneti_seginfo[dest].addr,
                       (void *)((uintptr_t)gasneti_seginfo[dest].addr + gasneti_seginfo[dest].size));
}

/* Out of line (am_send.c): a message to this rank, and a Long cut into the conduit's pieces. */
void gasneti_am_loopback(int reply, const gasneti_am_t *am);
bool gasneti_am_to_conduit_long(gasnet_node_t dest, gasneti_token_t *reply_to, gasneti_am_t *am);

/* ---- routing ------------------------------------------------------------------------------- */
ALWAYS_INLINE bool to_conduit(gasnet_node_t dest, gasneti_token_t *reply_to,
                              const gasneti_am_t *am) {
  if (reply_to) return gasnetc_am_reply(reply_to, am);
  return gasnetc_am_request(dest, am);
}

/* A Long larger than one conduit message: leading pieces first, then the header with the
 * last piece; conduits deliver in order per peer, so the handler sees the whole payload. */ALWAYS_INLINE bool route(gasnet_node_t dest, gasneti_token_t *reply_to, gasneti_am_t *am) {
  if (dest == gasneti_mynode) {
    gasneti_am_loopback(reply_to != NULL, am);
    return true;
  }
  if (gasneti_pshm_reach[dest]) {
    /* A Long's payload lands in the target segment through our mapping as the header goes. */
    void *long_dst = NULL;
    if (am->category == GASNETI_AM_LONG) {
      long_dst = (void *)((uintptr_t)am->dst + gasneti_pshm_offset[dest]);
      am->chunk = 0;
    }
    int idx = gasneti_host_local[dest], reply = reply_to != NULL;
    if (GASNETI_UNLIKELY(am->flags & GASNETI_AM_IMMEDIATE))
      return gasneti_pshm_try_send(&gasneti_queues.tx[reply][idx], reply, am, long_dst);
    gasneti_pshm_send(idx, reply, am, long_dst);
    return true;
  }
  if (am->category == GASNETI_AM_LONG) return gasneti_am_to_conduit_long(dest, reply_to, am);
  return to_conduit(dest, reply_to, am);
}

ALWAYS_INLINE bool send_am(gasnet_node_t dest, gasneti_token_t *reply_to, int category,
                           gasnet_handler_t handler, const void *src, size_t nbytes, void *dst,
                           int nargs, const gasnet_handlerarg_t *args, uint8_t flags) {
  gasneti_am_t am = {.category = (uint8_t)category, .handler = handler, .nargs = (uint8_t)nargs,
                     .flags = flags, .nbytes = (uint32_t)nbytes, .args = args, .payload = src,
                     .dst = (uint64_t)(uintptr_t)dst};
  if (category == GASNETI_AM_MEDIUM) am.chunk = (uint32_t)nbytes;
  return route(dest, reply_to, &am);
}
/* ---- requests and replies: one inline body, named after the call (what), specialised per
 * category by its callers ---------------------------------------------------------------- */
ALWAYS_INLINE bool request_as(const char *what, gasnet_node_t dest, gasnet_handler_t handler,
                              int category, const void *src, size_t nbytes, void *dst, int nargs,
                              const gasnet_handlerarg_t *args, uint8_t flags) {
  check_request(what, dest, nargs);
  check_payload(what, category, dest, nbytes, dst);
  /* GASNet polls on every request. Requests to peers poll whenever a queue or the credits run
   * out, but one to this rank never does: a rank spinning on requests to itself until a peer's
   * AM sets a flag (a lock test) would never run that AM. An immediate request never polls. */
  if (dest == gasneti_mynode && !(flags & GASNETI_AM_IMMEDIATE)) gasneti_poll(GASNETI_POLL_ALL);
  return send_am(dest, NULL, category, handler, src, nbytes, dst, nargs, args, flags);
}
ALWAYS_INLINE bool reply_as(const char *what, gasnet_token_t token, gasnet_handler_t handler,
                            int category, const void *src, size_t nbytes, void *dst, int nargs,
                            const gasnet_handlerarg_t *args, uint8_t flags) {
  gasneti_token_t *tok = check_reply(what, token, nargs);
  check_payload(what, category, tok->src, nbytes, dst);
  if (send_am(tok->src, tok, category, handler, src, nbytes, dst, nargs, args, flags)) return true;
  tok->replied = 0; /* an immediate reply that did not go: the handler may reply again */
  return false;
}
#endif
