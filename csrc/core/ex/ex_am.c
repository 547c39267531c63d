/* ex_am.c: GASNet-EX's fixed-payload AMs, their limits, handler registration and token
 * queries. They go the GASNet-1 calls' way (am_send.c): the same checks, flow control and
 * routes, with the team's rank turned into a job rank and GEX_FLAG_IMMEDIATE turned into the
 * core's GASNETI_AM_IMMEDIATE. */
#include "am/am_route.h"
#include "ex_internal.h"
#include "trace/trace.h"

#define TRACE_AM(loc, request, kind, peer, handler, nargs, n)                              \
  do {                                                                                     \
    if (GASNETI_UNLIKELY(gasneti_trace_active))                                            \
      gasneti_trace_am(loc, request, kind, peer, handler, nargs, n, false);                 \
  } while (0)

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


/* lc_opt of a Medium or Long, checked before it is sent: the payload is copied or sent before the
 * call returns, so local completion has happened; an event asked for is GEX_EVENT_INVALID. */
static void local_completion(const char *what, gex_Event_t *lc_opt, bool reply) {
  if (GASNETI_LIKELY(lc_opt == GEX_EVENT_NOW)) return;
  if (lc_opt == GEX_EVENT_GROUP && !reply) return;
  if (gasneti_ex_lc_is_event(lc_opt)) {
    *lc_opt = GEX_EVENT_INVALID;
    return;
  }
  gasneti_fatalerror("%s: lc_opt %s: accepted GEX_EVENT_NOW%s or the address of a gex_Event_t",
                     what, lc_opt == GEX_EVENT_DEFER ? "GEX_EVENT_DEFER" :
                           lc_opt == GEX_EVENT_GROUP ? "GEX_EVENT_GROUP" : "NULL",
                     reply ? "" : ", GEX_EVENT_GROUP");
}

static inline gasnet_node_t reply_peer(gex_Token_t token) { /* (NULL: check_reply names it) */
  return token ? ((gasneti_token_t *)token)->src : 0;
}

/* ---- requests and replies ------------------------------------------------------------------
 * Their way is GASNet-1's (am_route.h); an immediate one takes a way of its own, out of line,
 * so that the common one pays a test of the flags and nothing else. */
static __attribute__((noinline)) int immediate_request(const char *what, gasnet_node_t dest,
                                                       gasnet_handler_t handler, int category,
                                                       const void *src, size_t nbytes, void *dst,
                                                       int nargs, const gex_AM_Arg_t *args) {
  return !request_as(what, dest, handler, category, src, nbytes, dst, nargs, args,
                     GASNETI_AM_IMMEDIATE);
}

static __attribute__((noinline)) int immediate_reply(const char *what, gex_Token_t token,
                                                     gasnet_handler_t handler, int category,
                                                     const void *src, size_t nbytes, void *dst,
                                                     int nargs, const gex_AM_Arg_t *args) {
  return !reply_as(what, token, handler, category, src, nbytes, dst, nargs, args,
                   GASNETI_AM_IMMEDIATE);
}

int gasneti_ex_AMRequestShort(const char *loc, gasnet_node_t dest, gex_AM_Index_t handler,
                              gex_Flags_t flags, int nargs, const gex_AM_Arg_t *args) {
  check_client_handler("gex_AM_RequestShort", handler);
  TRACE_AM(loc, true, GASNETI_AM_SHORT, dest, handler, nargs, 0);
  if (GASNETI_UNLIKELY(flags & GEX_FLAG_IMMEDIATE))
    return immediate_request("gex_AM_RequestShort", dest, handler, GASNETI_AM_SHORT, NULL, 0, NULL,
                             nargs, args);
  request_as("gex_AM_RequestShort", dest, handler, GASNETI_AM_SHORT, NULL, 0, NULL, nargs, args, 0);
  return 0;
}

int gasneti_ex_AMRequestMedium(const char *loc, gasnet_node_t dest, gex_AM_Index_t handler,
                               const void *source_addr, size_t nbytes, gex_Event_t *lc_opt,
                               gex_Flags_t flags, int nargs, const gex_AM_Arg_t *args) {
  check_client_handler("gex_AM_RequestMedium", handler);
  TRACE_AM(loc, true, GASNETI_AM_MEDIUM, dest, handler, nargs, nbytes);
  local_completion("gex_AM_RequestMedium", lc_opt, false); /* (undefined when refused) */
  if (GASNETI_UNLIKELY(flags & GEX_FLAG_IMMEDIATE))
    return immediate_request("gex_AM_RequestMedium", dest, handler, GASNETI_AM_MEDIUM, source_addr,
                             nbytes, NULL, nargs, args);
  request_as("gex_AM_RequestMedium", dest, handler, GASNETI_AM_MEDIUM, source_addr, nbytes, NULL,
             nargs, args, 0);
  return 0;
}

int gasneti_ex_AMRequestLong(const char *loc, gasnet_node_t dest, gex_AM_Index_t handler,
                             const void *source_addr, size_t nbytes, void *dest_addr,
                             gex_Event_t *lc_opt, gex_Flags_t flags, int nargs,
                             const gex_AM_Arg_t *args) {
  check_client_handler("gex_AM_RequestLong", handler);
  TRACE_AM(loc, true, GASNETI_AM_LONG, dest, handler, nargs, nbytes);
  local_completion("gex_AM_RequestLong", lc_opt, false);
  if (GASNETI_UNLIKELY(flags & GEX_FLAG_IMMEDIATE))
    return immediate_request("gex_AM_RequestLong", dest, handler, GASNETI_AM_LONG, source_addr,
                             nbytes, dest_addr, nargs, args);
  request_as("gex_AM_RequestLong", dest, handler, GASNETI_AM_LONG, source_addr, nbytes, dest_addr,
             nargs, args, 0);
  return 0;
}

int gasneti_ex_AMReplyShort(const char *loc, gex_Token_t token, gex_AM_Index_t handler,
                            gex_Flags_t flags, int nargs, const gex_AM_Arg_t *args) {
  check_client_handler("gex_AM_ReplyShort", handler);
  TRACE_AM(loc, false, GASNETI_AM_SHORT, reply_peer(token), handler, nargs, 0);
  if (GASNETI_UNLIKELY(flags & GEX_FLAG_IMMEDIATE))
    return immediate_reply("gex_AM_ReplyShort", token, handler, GASNETI_AM_SHORT, NULL, 0, NULL,
                           nargs, args);
  reply_as("gex_AM_ReplyShort", token, handler, GASNETI_AM_SHORT, NULL, 0, NULL, nargs, args, 0);
  return 0;
}

int gasneti_ex_AMReplyMedium(const char *loc, gex_Token_t token, gex_AM_Index_t handler,
                             const void *source_addr, size_t nbytes, gex_Event_t *lc_opt,
                             gex_Flags_t flags, int nargs, const gex_AM_Arg_t *args) {
  check_client_handler("gex_AM_ReplyMedium", handler);
  TRACE_AM(loc, false, GASNETI_AM_MEDIUM, reply_peer(token), handler, nargs, nbytes);
  local_completion("gex_AM_ReplyMedium", lc_opt, true);
  if (GASNETI_UNLIKELY(flags & GEX_FLAG_IMMEDIATE))
    return immediate_reply("gex_AM_ReplyMedium", token, handler, GASNETI_AM_MEDIUM, source_addr,
                           nbytes, NULL, nargs, args);
  reply_as("gex_AM_ReplyMedium", token, handler, GASNETI_AM_MEDIUM, source_addr, nbytes, NULL,
           nargs, args, 0);
  return 0;
}

int gasneti_ex_AMReplyLong(const char *loc, gex_Token_t token, gex_AM_Index_t handler,
                           const void *source_addr, size_t nbytes, void *dest_addr,
                           gex_Event_t *lc_opt, gex_Flags_t flags, int nargs,
                           const gex_AM_Arg_t *args) {
  check_client_handler("gex_AM_ReplyLong", handler);
  TRACE_AM(loc, false, GASNETI_AM_LONG, reply_peer(token), handler, nargs, nbytes);
  local_completion("gex_AM_ReplyLong", lc_opt, true);
  if (GASNETI_UNLIKELY(flags & GEX_FLAG_IMMEDIATE))
    return immediate_reply("gex_AM_ReplyLong", token, handler, GASNETI_AM_LONG, source_addr,
                           nbytes, dest_addr, nargs, args);
  reply_as("gex_AM_ReplyLong", token, handler, GASNETI_AM_LONG, source_addr, nbytes, dest_addr,
           nargs, args, 0);
  return 0;
}

/* ---- registration ---------------------------------------------------------------------------- */
int gex_EP_RegisterHandlers(gex_EP_t ep, gex_AM_Entry_t *table, size_t numentries) {
  gasneti_ex_check_ep("gex_EP_RegisterHandlers", ep);
  if (numentries && !table) {
    gasneti_ex_error("gex_EP_RegisterHandlers: table is NULL with %zu entries", numentries);
    return GASNET_ERR_BAD_ARG;
  }
  int rc = gasneti_register_ex_handlers(table, numentries);
  if (rc == GASNET_OK && GASNETI_UNLIKELY(gasneti_trace_active))
    for (size_t i = 0; i < numentries; i++)
      gasneti_trace_printf('O', NULL, "REGISTER_HANDLER index %d%s%s flags=0x%x nargs=%u",
                           (int)table[i].gex_index, table[i].gex_name ? " name=" : "",
                           table[i].gex_name ? table[i].gex_name : "",
                           (unsigned)table[i].gex_flags, table[i].gex_nargs);
  return rc;
}

/* ---- limits: a conduit's, whoever the peer, whatever the argument count ----------------------- */
static void limit_check(const char *what, gex_TM_t tm, gex_Rank_t other_rank, unsigned numargs) {
  if (other_rank != GEX_RANK_INVALID) (void)gasneti_ex_jobrank(what, tm, other_rank);
  else gasneti_ex_tm(what, tm);
  if (numargs > 16) gasneti_fatalerror("%s: numargs %u: accepted 0..16", what, numargs);
}

size_t gex_AM_MaxRequestLong(gex_TM_t tm, gex_Rank_t other_rank, const gex_Event_t *lc_opt,
                             gex_Flags_t flags, unsigned int numargs) {
  (void)lc_opt, (void)flags;
  limit_check("gex_AM_MaxRequestLong", tm, other_rank, numargs);
  return GASNETC_MAX_LONG;
}
size_t gex_AM_MaxReplyLong(gex_TM_t tm, gex_Rank_t other_rank, const gex_Event_t *lc_opt,
                           gex_Flags_t flags, unsigned int numargs) {
  (void)lc_opt, (void)flags;
  limit_check("gex_AM_MaxReplyLong", tm, other_rank, numargs);
  return GASNETC_MAX_LONG;
}
size_t gex_AM_MaxRequestMedium(gex_TM_t tm, gex_Rank_t other_rank, const gex_Event_t *lc_opt,
                               gex_Flags_t flags, unsigned int numargs) {
  (void)lc_opt, (void)flags;
  limit_check("gex_AM_MaxRequestMedium", tm, other_rank, numargs);
  return GASNETC_MAX_MEDIUM;
}
size_t gex_AM_MaxReplyMedium(gex_TM_t tm, gex_Rank_t other_rank, const gex_Event_t *lc_opt,
                             gex_Flags_t flags, unsigned int numargs) {
  (void)lc_opt, (void)flags;
  limit_check("gex_AM_MaxReplyMedium", tm, other_rank, numargs);
  return GASNETC_MAX_MEDIUM;
}

static void token_check(const char *what, gex_Token_t token, unsigned numargs) {
  const gasneti_token_t *tok = token;
  if (!tok || !tok->is_request || gasneti_am_context != GASNETI_CTX_REQUEST)
    gasneti_fatalerror("%s: only inside a request handler, with its token", what);
  if (numargs > 16) gasneti_fatalerror("%s: numargs %u: accepted 0..16", what, numargs);
}
size_t gex_Token_MaxReplyLong(gex_Token_t token, const gex_Event_t *lc_opt, gex_Flags_t flags,
                              unsigned int numargs) {
  (void)lc_opt, (void)flags;
  token_check("gex_Token_MaxReplyLong", token, numargs);
  return GASNETC_MAX_LONG;
}
size_t gex_Token_MaxReplyMedium(gex_Token_t token, const gex_Event_t *lc_opt, gex_Flags_t flags,
                                unsigned int numargs) {
  (void)lc_opt, (void)flags;
  token_check("gex_Token_MaxReplyMedium", token, numargs);
  return GASNETC_MAX_MEDIUM;
}

/* ---- what a handler may learn of its message ------------------------------------------------- */
gex_TI_t gex_Token_Info(gex_Token_t token, gex_Token_Info_t *info, gex_TI_t mask) {
  const gasneti_token_t *tok = token;
  if (!tok || !info)
    gasneti_fatalerror("gex_Token_Info: token and info must not be NULL (a handler's token)");
  (void)mask; /* every field is filled: the returned mask says which are valid */
  info->gex_srcrank = tok->src;
  info->gex_ep = &gasneti_ex_ep;
  info->gex_is_req = tok->is_request;
  info->gex_is_long = tok->category == GASNETI_AM_LONG;
  info->gex_entry = gasneti_handler_entry(tok->handler);
  return GEX_TI_SRCRANK | GEX_TI_EP | GEX_TI_IS_REQ | GEX_TI_IS_LONG |
         (info->gex_entry ? GEX_TI_ENTRY : 0);
}
