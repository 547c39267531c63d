/* am_send.c: GASNet-1's AM entry points and the runtime's own sends (their way is am_route.h's),
 * and the out-of-line parts of that way: loopback and a Long cut into pieces. */
#include "am_route.h"
#include "trace/trace.h"

#if GASNETI_THREADS
#include <pthread.h>
#endif

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

void gasneti_am_loopback(int reply, const gasneti_am_t *am) {
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
bool gasneti_am_to_conduit_long(gasnet_node_t dest, gasneti_token_t *reply_to, gasneti_am_t *am) {
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
/* ---- GASNet-1's names for its calls ---------------------------------------------------------- */
static const char *const request_names[] = {"gasnet_AMRequestShort", "gasnet_AMRequestMedium",
                                            "gasnet_AMRequestLong"};
static const char *const reply_names[] = {"gasnet_AMReplyShort", "gasnet_AMReplyMedium",
                                          "gasnet_AMReplyLong"};
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
