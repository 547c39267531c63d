/* am_send.c: the AM entry points: argument checks, the client-index rule, and routing. A
 * message to this rank runs before the call returns (a request polls first); to a supernode
 * peer it goes through PSHM; to anyone else through the conduit, with Long payloads split to
 * what it carries. */
#include <string.h>

#include "conduit.h"
#include "pshm/queue.h"
#include "am.h"
#include "trace/trace.h"

#if GASNETI_THREADS
#include <pthread.h>
#endif

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

/* ---- loopback --------------------------------------------------------------------------- */
/* A handler may write into its Medium buffer, so a loopback Medium runs on a copy: one buffer
 * per thread for requests and one for the reply a request handler may send. */
#if GASNETI_THREADS
static pthread_key_t loop_key;
static pthread_once_t loop_once = PTHREAD_ONCE_INIT;
static void loop_key_init(void) { pthread_key_create(&loop_key, free); }
#endif
static GASNETI_TLS uint8_t *loop_buf;

static void *loopback_buffer(int reply) {
  if (GASNETI_UNLIKELY(!loop_buf)) {
    loop_buf = gasneti_malloc(2 * (size_t)GASNETC_MAX_MEDIUM);
#if GASNETI_THREADS
    pthread_once(&loop_once, loop_key_init);
    pthread_setspecific(loop_key, loop_buf); /* freed when the thread ends */
#endif
  }
  return loop_buf + (size_t)reply * GASNETC_MAX_MEDIUM;
}

static void deliver_loopback(int reply, const gasneti_am_t *am) {
  gasneti_am_t local = *am;
  if (am->category == GASNETI_AM_MEDIUM && am->nbytes) {
    local.payload = memcpy(loopback_buffer(reply), am->payload, am->nbytes);
  } else if (am->category == GASNETI_AM_LONG) {
    if (am->nbytes) memmove((void *)(uintptr_t)am->dst, am->payload, am->nbytes);
    local.chunk = 0;
    local.flags = 0;
  }
  gasneti_token_t tok = {.src = gasneti_mynode, .is_request = (uint8_t)!reply};
  gasneti_am_deliver(&tok, &local);
}

/* ---- routing ----------------------------------------------------------------------------
 * Each returns whether the message went: only one with GASNETI_AM_IMMEDIATE may be refused, and
 * only before any of it went. */
ALWAYS_INLINE bool to_conduit(gasnet_node_t dest, gasneti_token_t *reply_to,
                              const gasneti_am_t *am) {
  if (reply_to) return gasnetc_am_reply(reply_to, am);
  return gasnetc_am_request(dest, am);
}

/* A Long larger than one conduit message: leading pieces first, then the header with the
 * last piece; conduits deliver in order per peer, so the handler sees the whole payload. */
static bool to_conduit_long(gasnet_node_t dest, gasneti_token_t *reply_to, gasneti_am_t *am) {
  const uint8_t *src = am->payload;
  uint8_t stable = am->flags & GASNETI_AM_STABLE;
  uint8_t immediate = am->flags & GASNETI_AM_IMMEDIATE; /* the first piece's only */
#ifdef GASNETC_LONG_CHUNK_STABLE
  size_t max = stable ? (size_t)GASNETC_LONG_CHUNK_STABLE : gasnetc_long_chunk, off = 0;
#else
  size_t max = gasnetc_long_chunk, off = 0;
#endif
  while (am->nbytes - off > max) {
    gasneti_am_t frag = {.category = GASNETI_AM_LONG, .flags = GASNETI_AM_FRAG | stable | immediate,
                         .nbytes = am->nbytes, .chunk = (uint32_t)max, .payload = src + off,
                         .dst = am->dst + off};
    if (!to_conduit(dest, reply_to, &frag)) return false; /* (only ever the first) */
    immediate = 0;
    off += max;
  }
  am->chunk = (uint32_t)(am->nbytes - off);
  am->payload = src + off;
  am->flags = (uint8_t)((am->chunk ? GASNETI_AM_TAIL : 0) | stable | immediate);
  return to_conduit(dest, reply_to, am);
}

ALWAYS_INLINE bool route(gasnet_node_t dest, gasneti_token_t *reply_to, gasneti_am_t *am) {
  if (dest == gasneti_mynode) {
    deliver_loopback(reply_to != NULL, am);
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
  if (am->category == GASNETI_AM_LONG) return to_conduit_long(dest, reply_to, am);
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

/* ---- requests and replies: one inline body, specialised per category by its callers ------ */
static const char *const request_names[] = {"gasnet_AMRequestShort", "gasnet_AMRequestMedium",
                                            "gasnet_AMRequestLong"};
static const char *const reply_names[] = {"gasnet_AMReplyShort", "gasnet_AMReplyMedium",
                                          "gasnet_AMReplyLong"};

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

ALWAYS_INLINE void request_flags(gasnet_node_t dest, gasnet_handler_t handler, int category,
                                 const void *src, size_t nbytes, void *dst, int nargs,
                                 const gasnet_handlerarg_t *args, uint8_t flags) {
  request_as(request_names[category], dest, handler, category, src, nbytes, dst, nargs, args,
             flags);
}

ALWAYS_INLINE void request(gasnet_node_t dest, gasnet_handler_t handler, int category,
                           const void *src, size_t nbytes, void *dst, int nargs,
                           const gasnet_handlerarg_t *args) {
  request_flags(dest, handler, category, src, nbytes, dst, nargs, args, 0);
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

ALWAYS_INLINE void reply_flags(gasnet_token_t token, gasnet_handler_t handler, int category,
                               const void *src, size_t nbytes, void *dst, int nargs,
                               const gasnet_handlerarg_t *args, uint8_t flags) {
  reply_as(reply_names[category], token, handler, category, src, nbytes, dst, nargs, args, flags);
}

ALWAYS_INLINE void reply(gasnet_token_t token, gasnet_handler_t handler, int category,
                         const void *src, size_t nbytes, void *dst, int nargs,
                         const gasnet_handlerarg_t *args) {
  reply_flags(token, handler, category, src, nbytes, dst, nargs, args, 0);
}

void gasneti_am_request_internal(gasnet_node_t dest, gasnet_handler_t handler, int category,
                                 const void *src, size_t nbytes, void *dst, int nargs,
                                 const gasnet_handlerarg_t *args) {
  switch (category) {
    case GASNETI_AM_SHORT: request(dest, handler, GASNETI_AM_SHORT, NULL, 0, NULL, nargs, args); break;
    case GASNETI_AM_MEDIUM: request(dest, handler, GASNETI_AM_MEDIUM, src, nbytes, NULL, nargs, args); break;
    default: request(dest, handler, GASNETI_AM_LONG, src, nbytes, dst, nargs, args);
  }
}

void gasneti_am_reply_internal(gasnet_token_t token, gasnet_handler_t handler, int category,
                               const void *src, size_t nbytes, void *dst, int nargs,
                               const gasnet_handlerarg_t *args) {
  switch (category) {
    case GASNETI_AM_SHORT: reply(token, handler, GASNETI_AM_SHORT, NULL, 0, NULL, nargs, args); break;
    case GASNETI_AM_MEDIUM: reply(token, handler, GASNETI_AM_MEDIUM, src, nbytes, NULL, nargs, args); break;
    default: reply(token, handler, GASNETI_AM_LONG, src, nbytes, dst, nargs, args);
  }
}

void gasneti_am_request_stable(gasnet_node_t dest, gasnet_handler_t handler, int category,
                               const void *src, size_t nbytes, void *dst, int nargs,
                               const gasnet_handlerarg_t *args) {
  if (category == GASNETI_AM_MEDIUM)
    request_flags(dest, handler, GASNETI_AM_MEDIUM, src, nbytes, NULL, nargs, args,
                  GASNETI_AM_STABLE);
  else
    request_flags(dest, handler, GASNETI_AM_LONG, src, nbytes, dst, nargs, args, GASNETI_AM_STABLE);
}

void gasneti_am_reply_stable(gasnet_token_t token, gasnet_handler_t handler, int category,
                             const void *src, size_t nbytes, void *dst, int nargs,
                             const gasnet_handlerarg_t *args) {
  if (category == GASNETI_AM_MEDIUM)
    reply_flags(token, handler, GASNETI_AM_MEDIUM, src, nbytes, NULL, nargs, args,
                GASNETI_AM_STABLE);
  else
    reply_flags(token, handler, GASNETI_AM_LONG, src, nbytes, dst, nargs, args, GASNETI_AM_STABLE);
}

/* GASNet-EX's entry points (ex/ex_am.c) name themselves; their flags may hold
 * GASNETI_AM_IMMEDIATE. */
static const char *const ex_request_names[] = {"gex_AM_RequestShort", "gex_AM_RequestMedium",
                                               "gex_AM_RequestLong"};
static const char *const ex_reply_names[] = {"gex_AM_ReplyShort", "gex_AM_ReplyMedium",
                                             "gex_AM_ReplyLong"};

bool gasneti_am_request_client(gasnet_node_t dest, gasnet_handler_t handler, int category,
                               const void *src, size_t nbytes, void *dst, int nargs,
                               const gasnet_handlerarg_t *args, uint8_t flags) {
  const char *what = ex_request_names[category];
  check_client_handler(what, handler);
  switch (category) {
    case GASNETI_AM_SHORT:
      return request_as(what, dest, handler, GASNETI_AM_SHORT, NULL, 0, NULL, nargs, args, flags);
    case GASNETI_AM_MEDIUM:
      return request_as(what, dest, handler, GASNETI_AM_MEDIUM, src, nbytes, NULL, nargs, args,
                        flags);
    default:
      return request_as(what, dest, handler, GASNETI_AM_LONG, src, nbytes, dst, nargs, args, flags);
  }
}

bool gasneti_am_reply_client(gasnet_token_t token, gasnet_handler_t handler, int category,
                             const void *src, size_t nbytes, void *dst, int nargs,
                             const gasnet_handlerarg_t *args, uint8_t flags) {
  const char *what = ex_reply_names[category];
  check_client_handler(what, handler);
  switch (category) {
    case GASNETI_AM_SHORT:
      return reply_as(what, token, handler, GASNETI_AM_SHORT, NULL, 0, NULL, nargs, args, flags);
    case GASNETI_AM_MEDIUM:
      return reply_as(what, token, handler, GASNETI_AM_MEDIUM, src, nbytes, NULL, nargs, args,
                      flags);
    default:
      return reply_as(what, token, handler, GASNETI_AM_LONG, src, nbytes, dst, nargs, args, flags);
  }
}

/* ---- the client's entry points (gasnet_am_macros.h) ---------------------------------------- */
/* loc: the client's "file:line" (the macros pass it) or NULL; recorded when the rank traces. */
static inline gasnet_node_t reply_peer(gasnet_token_t token) {
  return ((gasneti_token_t *)token)->src;
}
#define TRACE_AM(loc, request, kind, peer, handler, nargs, n)                                 \
  do {                                                                                        \
    if (GASNETI_UNLIKELY(gasneti_trace_active))                                               \
      gasneti_trace_am(loc, request, kind, peer, handler, nargs, n, false);                    \
  } while (0)

int gasneti_AMRequestShort_at(const char *loc, gasnet_node_t dest, gasnet_handler_t handler,
                              int numargs, const gasnet_handlerarg_t *args) {
  check_client_handler("gasnet_AMRequestShort", handler);
  TRACE_AM(loc, true, GASNETI_AM_SHORT, dest, handler, numargs, 0);
  request(dest, handler, GASNETI_AM_SHORT, NULL, 0, NULL, numargs, args);
  return GASNET_OK;
}

int gasneti_AMRequestMedium_at(const char *loc, gasnet_node_t dest, gasnet_handler_t handler,
                               void *source_addr, size_t nbytes, int numargs,
                               const gasnet_handlerarg_t *args) {
  check_client_handler("gasnet_AMRequestMedium", handler);
  TRACE_AM(loc, true, GASNETI_AM_MEDIUM, dest, handler, numargs, nbytes);
  request(dest, handler, GASNETI_AM_MEDIUM, source_addr, nbytes, NULL, numargs, args);
  return GASNET_OK;
}

int gasneti_AMRequestLong_at(const char *loc, gasnet_node_t dest, gasnet_handler_t handler,
                             void *source_addr, size_t nbytes, void *dest_addr, int numargs,
                             const gasnet_handlerarg_t *args) {
  check_client_handler("gasnet_AMRequestLong", handler);
  TRACE_AM(loc, true, GASNETI_AM_LONG, dest, handler, numargs, nbytes);
  request(dest, handler, GASNETI_AM_LONG, source_addr, nbytes, dest_addr, numargs, args);
  return GASNET_OK;
}

int gasneti_AMReplyShort_at(const char *loc, gasnet_token_t token, gasnet_handler_t handler,
                            int numargs, const gasnet_handlerarg_t *args) {
  check_client_handler("gasnet_AMReplyShort", handler);
  TRACE_AM(loc, false, GASNETI_AM_SHORT, reply_peer(token), handler, numargs, 0);
  reply(token, handler, GASNETI_AM_SHORT, NULL, 0, NULL, numargs, args);
  return GASNET_OK;
}

int gasneti_AMReplyMedium_at(const char *loc, gasnet_token_t token, gasnet_handler_t handler,
                             void *source_addr, size_t nbytes, int numargs,
                             const gasnet_handlerarg_t *args) {
  check_client_handler("gasnet_AMReplyMedium", handler);
  TRACE_AM(loc, false, GASNETI_AM_MEDIUM, reply_peer(token), handler, numargs, nbytes);
  reply(token, handler, GASNETI_AM_MEDIUM, source_addr, nbytes, NULL, numargs, args);
  return GASNET_OK;
}

int gasneti_AMReplyLong_at(const char *loc, gasnet_token_t token, gasnet_handler_t handler,
                           void *source_addr, size_t nbytes, void *dest_addr, int numargs,
                           const gasnet_handlerarg_t *args) {
  check_client_handler("gasnet_AMReplyLong", handler);
  TRACE_AM(loc, false, GASNETI_AM_LONG, reply_peer(token), handler, numargs, nbytes);
  reply(token, handler, GASNETI_AM_LONG, source_addr, nbytes, dest_addr, numargs, args);
  return GASNET_OK;
}

/* The forms without a source line (programs that call them directly). */
int gasneti_AMRequestShort(gasnet_node_t dest, gasnet_handler_t handler, int numargs,
                           const gasnet_handlerarg_t *args) {
  return gasneti_AMRequestShort_at(NULL, dest, handler, numargs, args);
}
int gasneti_AMRequestMedium(gasnet_node_t dest, gasnet_handler_t handler, void *source_addr,
                            size_t nbytes, int numargs, const gasnet_handlerarg_t *args) {
  return gasneti_AMRequestMedium_at(NULL, dest, handler, source_addr, nbytes, numargs, args);
}
int gasneti_AMRequestLong(gasnet_node_t dest, gasnet_handler_t handler, void *source_addr,
                          size_t nbytes, void *dest_addr, int numargs,
                          const gasnet_handlerarg_t *args) {
  return gasneti_AMRequestLong_at(NULL, dest, handler, source_addr, nbytes, dest_addr, numargs,
                                  args);
}
int gasneti_AMReplyShort(gasnet_token_t token, gasnet_handler_t handler, int numargs,
                         const gasnet_handlerarg_t *args) {
  return gasneti_AMReplyShort_at(NULL, token, handler, numargs, args);
}
int gasneti_AMReplyMedium(gasnet_token_t token, gasnet_handler_t handler, void *source_addr,
                          size_t nbytes, int numargs, const gasnet_handlerarg_t *args) {
  return gasneti_AMReplyMedium_at(NULL, token, handler, source_addr, nbytes, numargs, args);
}
int gasneti_AMReplyLong(gasnet_token_t token, gasnet_handler_t handler, void *source_addr,
                        size_t nbytes, void *dest_addr, int numargs,
                        const gasnet_handlerarg_t *args) {
  return gasneti_AMReplyLong_at(NULL, token, handler, source_addr, nbytes, dest_addr, numargs,
                                args);
}

/* The variadic forms' debug check (gasnet_am_macros.h): a count that disagrees with the
 * arguments written after it would send the wrong arguments. Defined in every build, so that
 * a debug client links with either library. */
void gasneti_am_nargs_mismatch(const char *call, int numargs, int given) {
  gasneti_fatalerror("%s(..., numargs = %d, ...) was given %d handler argument%s after numargs: "
                     "numargs must be their count (0..16)", call, numargs, given,
                     given == 1 ? "" : "s");
}

int gasnet_AMGetMsgSource(gasnet_token_t token, gasnet_node_t *srcindex) {
  if (!token || !srcindex) return GASNET_ERR_BAD_ARG;
  *srcindex = ((gasneti_token_t *)token)->src;
  return GASNET_OK;
}

int gasnet_AMPoll(void) {
  if (GASNETI_UNLIKELY(!gasneti_attach_done)) return GASNET_ERR_NOT_INIT;
  /* A client polling in a loop is waiting: when its host is oversubscribed (or
   * GASNET_WAIT_MODE=block), an idle poll gives the core to the rank it waits for; it never
   * sleeps (gasnet_AMPoll does not block). */
  if (!gasneti_poll(gasneti_am_context == GASNETI_CTX_CLIENT ? GASNETI_POLL_ALL : 0))
    gasneti_wait_yield();
  return GASNET_OK;
}
