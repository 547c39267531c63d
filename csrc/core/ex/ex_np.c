/* ex_np.c: negotiated-payload AMs (gex_AM_Prepare* / gex_AM_Commit*). Prepare settles where the
 * payload goes and reserves what the message needs; Commit sends it. Where the payload goes:
 *   - the client's buffer (client_buf): Commit sends it as a fixed-payload AM would;
 *   - to a neighbourhood peer, a Medium's own place in shared memory (its slot or this rank's
 *     outbox, pshm/queue_np.c), and a Long's destination in the peer's segment when Prepare names
 *     it: the client's writes are the only copy;
 *   - a Medium to a rank on the network, where the conduit can (GASNETC_NATIVE_NP_ALLOC_MEDIUM),
 *     the conduit's own send buffer (conduit.h: gasnetc_np_prepare);
 *   - otherwise a buffer of the thread's, which Commit sends as a fixed-payload AM.
 * A descriptor is the thread's own (one Prepare at a time per thread), one for requests and one
 * for replies, each with its buffer: a request being committed keeps sending from its buffer
 * while the handlers it runs meanwhile (waiting for room) prepare their replies. */
#include <string.h>

#include "am/am.h"
#include "conduit.h"
#include "ex_internal.h"
#include "pshm/queue.h"
#include "trace/trace.h"

enum { SD_FREE, SD_PREPARED };
enum { SD_CLIENT, SD_RUNTIME, SD_PSHM_MEDIUM, SD_PSHM_LONG, SD_CONDUIT };

struct gasneti_srcdesc_s {
  void *addr;
  size_t size;
  uint8_t state, kind, category, is_reply, nargs;
  gex_Flags_t flags;
  gasnet_node_t dest;
  gasneti_token_t *token;
  void *dest_addr; /* a Long's, as Prepare named it (NULL: Commit names it) */
  gex_Event_t *lc_opt;
  gasneti_pshm_np_t np;
};

static GASNETI_TLS struct gasneti_srcdesc_s sd_mine[2]; /* [is_reply] */
static GASNETI_TLS uint8_t *thread_buf[2]; /* grown to the largest runtime payload asked for */
static GASNETI_TLS size_t thread_cap[2];

static const char *const prepare_names[2][3] = {
    {"", "gex_AM_PrepareRequestMedium", "gex_AM_PrepareRequestLong"},
    {"", "gex_AM_PrepareReplyMedium", "gex_AM_PrepareReplyLong"}};
static const char *const commit_names[2][3] = {
    {"", "gex_AM_CommitRequestMedium", "gex_AM_CommitRequestLong"},
    {"", "gex_AM_CommitReplyMedium", "gex_AM_CommitReplyLong"}};

static void *buffer_of(bool reply, size_t n) {
  if (GASNETI_UNLIKELY(n > thread_cap[reply])) {
    free(thread_buf[reply]); /* (a thread's buffers outlive it: a few, at most 4 MiB each) */
    thread_buf[reply] = gasneti_malloc(n);
    thread_cap[reply] = n;
  }
  return thread_buf[reply];
}

/* The checks both kinds share, and what Prepare settles. */
static gex_AM_SrcDesc_t prepare(const char *what, int category, bool reply, gasnet_node_t dest,
                                gasneti_token_t *token, const void *client_buf,
                                size_t least_payload, size_t most_payload, void *dest_addr,
                                gex_Event_t *lc_opt, gex_Flags_t flags, unsigned int numargs) {
  struct gasneti_srcdesc_s *sd = &sd_mine[reply];
  if (sd->state != SD_FREE)
    gasneti_fatalerror("%s while this thread's %s has not been committed (prepare/commit pairs do "
                       "not nest)", what, prepare_names[sd->is_reply][sd->category]);
  if (numargs > 16) gasneti_fatalerror("%s: numargs %u: accepted 0..16", what, numargs);
  size_t limit = category == GASNETI_AM_LONG ? GASNETC_MAX_LONG : GASNETC_MAX_MEDIUM;
  if (least_payload > most_payload || least_payload > limit)
    gasneti_fatalerror("%s: least_payload %zu, most_payload %zu: expected least <= most and least "
                       "<= %zu (gex_AM_Max%s%s)", what, least_payload, most_payload, limit,
                       reply ? "Reply" : "Request", category == GASNETI_AM_LONG ? "Long" : "Medium");
  if (!client_buf && lc_opt)
    gasneti_fatalerror("%s: lc_opt must be NULL with a runtime buffer (client_buf NULL)", what);
  if (client_buf && lc_opt != GEX_EVENT_NOW && !gasneti_ex_lc_is_event(lc_opt) &&
      !(lc_opt == GEX_EVENT_GROUP && !reply))
    gasneti_fatalerror("%s: lc_opt %s: accepted GEX_EVENT_NOW%s or the address of a gex_Event_t",
                       what, lc_opt == GEX_EVENT_DEFER ? "GEX_EVENT_DEFER" :
                             lc_opt == GEX_EVENT_GROUP ? "GEX_EVENT_GROUP" : "NULL",
                       reply ? "" : ", GEX_EVENT_GROUP");
  size_t size = most_payload < limit ? most_payload : limit;
  if (category == GASNETI_AM_LONG && dest_addr) {
    if (!gasneti_in_segment(dest, dest_addr, least_payload))
      gasneti_fatalerror("%s of at least %zu bytes to %p on rank %d: outside its segment [%p, %p)",
                         what, least_payload, dest_addr, (int)dest, gasneti_seginfo[dest].addr,
                         (void *)((uintptr_t)gasneti_seginfo[dest].addr +
                                  gasneti_seginfo[dest].size));
    uintptr_t end = (uintptr_t)gasneti_seginfo[dest].addr + gasneti_seginfo[dest].size;
    if ((uintptr_t)dest_addr + size > end) size = end - (uintptr_t)dest_addr;
  }
  *sd = (struct gasneti_srcdesc_s){.size = size, .category = (uint8_t)category,
                                   .is_reply = reply, .nargs = (uint8_t)numargs, .flags = flags,
                                   .dest = dest, .token = token, .dest_addr = dest_addr,
                                   .lc_opt = lc_opt};
  bool pshm = dest != gasneti_mynode && gasneti_pshm_reach[dest];
  if (client_buf) {
    sd->kind = SD_CLIENT;
    sd->addr = (void *)(uintptr_t)client_buf;
  } else if (pshm && category == GASNETI_AM_MEDIUM) {
    sd->kind = SD_PSHM_MEDIUM;
    if (!gasneti_pshm_np_reserve(&sd->np, gasneti_host_local[dest], reply, (int)numargs, size,
                                 &sd->addr, flags & GEX_FLAG_IMMEDIATE))
      return GEX_AM_SRCDESC_NO_OP;
  } else if (pshm && dest_addr) {
    sd->kind = SD_PSHM_LONG; /* the slot now; the payload straight into the peer's segment */
    void *unused;
    if (!gasneti_pshm_np_reserve(&sd->np, gasneti_host_local[dest], reply, (int)numargs, 0,
                                 &unused, flags & GEX_FLAG_IMMEDIATE))
      return GEX_AM_SRCDESC_NO_OP;
    sd->addr = gasneti_pshm_addr(dest, dest_addr);
  } else {
    sd->kind = SD_RUNTIME;
#ifdef GASNETC_NATIVE_NP_ALLOC_MEDIUM
    if (category == GASNETI_AM_MEDIUM && dest != gasneti_mynode) {
      switch (gasnetc_np_prepare(dest, token, (int)numargs, least_payload, size,
                                 flags & GEX_FLAG_IMMEDIATE, &sd->addr, &sd->size)) {
        case GASNETC_NP_OK: sd->kind = SD_CONDUIT; break;
        case GASNETC_NP_REFUSED: return GEX_AM_SRCDESC_NO_OP;
        default: break;
      }
    }
#endif
    if (sd->kind == SD_RUNTIME) sd->addr = buffer_of(reply, size ? size : 1);
  }
  if (reply) token->replied = 1; /* its one reply is this one */
  sd->state = SD_PREPARED;
  return sd;
}

gex_AM_SrcDesc_t gasneti_ex_AMPrepareRequest(const char *loc, int category, gex_TM_t tm,
                                             gex_Rank_t rank, const void *client_buf,
                                             size_t least_payload, size_t most_payload,
                                             void *dest_addr, gex_Event_t *lc_opt,
                                             gex_Flags_t flags, unsigned int numargs) {
  (void)loc;
  const char *what = prepare_names[0][category];
  gasnet_node_t dest = gasneti_ex_jobrank(what, tm, rank);
  if (!gasneti_attach_done)
    gasneti_fatalerror("%s called before gasnet_attach (or gex_Segment_Attach)", what);
  if (gasneti_am_context != GASNETI_CTX_CLIENT)
    gasneti_fatalerror("%s called inside an AM handler: handlers may only reply", what);
  return prepare(what, category, false, dest, NULL, client_buf, least_payload, most_payload,
                 dest_addr, lc_opt, flags, numargs);
}

gex_AM_SrcDesc_t gasneti_ex_AMPrepareReply(const char *loc, int category, gex_Token_t token,
                                           const void *client_buf, size_t least_payload,
                                           size_t most_payload, void *dest_addr,
                                           gex_Event_t *lc_opt, gex_Flags_t flags,
                                           unsigned int numargs) {
  (void)loc;
  const char *what = prepare_names[1][category];
  gasneti_token_t *tok = token;
  if (gasneti_am_context != GASNETI_CTX_REQUEST || !tok || !tok->is_request)
    gasneti_fatalerror("%s called outside a request handler", what);
  if (tok->replied)
    gasneti_fatalerror("%s: this request handler already sent its one reply", what);
  return prepare(what, category, true, tok->src, tok, client_buf, least_payload, most_payload,
                 dest_addr, lc_opt, flags, numargs);
}

static struct gasneti_srcdesc_s *prepared(const char *what, gex_AM_SrcDesc_t sd) {
  if (sd == GEX_AM_SRCDESC_NO_OP)
    gasneti_fatalerror("%s: the descriptor is GEX_AM_SRCDESC_NO_OP (its Prepare was refused)",
                       what);
  if ((sd != &sd_mine[0] && sd != &sd_mine[1]) || sd->state != SD_PREPARED)
    gasneti_fatalerror("%s: %p is not a descriptor this thread's Prepare returned and no Commit "
                       "has consumed", what, (void *)sd);
  return sd;
}

void *gex_AM_SrcDescAddr(gex_AM_SrcDesc_t sd) { return prepared("gex_AM_SrcDescAddr", sd)->addr; }
size_t gex_AM_SrcDescSize(gex_AM_SrcDesc_t sd) { return prepared("gex_AM_SrcDescSize", sd)->size; }

int gasneti_ex_AMCommit(const char *loc, gex_AM_SrcDesc_t desc, int category, int is_reply,
                        gex_AM_Index_t handler, size_t nbytes, void *dest_addr, int nargs,
                        const gex_AM_Arg_t *args) {
  const char *what = commit_names[is_reply][category];
  struct gasneti_srcdesc_s *sd = prepared(what, desc);
  if (sd->category != category || sd->is_reply != is_reply)
    gasneti_fatalerror("%s of a descriptor %s prepared", what,
                       prepare_names[sd->is_reply][sd->category]);
  if (nargs != sd->nargs)
    gasneti_fatalerror("%s with %d arguments: its Prepare said numargs %d", what, nargs,
                       (int)sd->nargs);
  if (nbytes > sd->size)
    gasneti_fatalerror("%s of %zu bytes: larger than its Prepare's %zu (gex_AM_SrcDescSize)",
                       what, nbytes, sd->size);
  if (category == GASNETI_AM_LONG && sd->dest_addr && dest_addr != sd->dest_addr)
    gasneti_fatalerror("%s to %p: its Prepare named dest_addr %p, which Commit must repeat", what,
                       dest_addr, sd->dest_addr);
  if (handler < GEX_AM_INDEX_BASE)
    gasneti_fatalerror("%s to handler %d: indices 0..127 belong to the runtime; a client sends "
                       "only to the handlers it registered (128..255)", what, (int)handler);
  if (GASNETI_UNLIKELY(gasneti_trace_active))
    gasneti_trace_am(loc, !is_reply, category, sd->dest, handler, nargs, nbytes, false);
  sd->state = SD_FREE;
  if (sd->kind == SD_PSHM_MEDIUM || sd->kind == SD_PSHM_LONG) {
    if (category == GASNETI_AM_LONG && !gasneti_in_segment(sd->dest, dest_addr, nbytes))
      gasneti_fatalerror("%s of %zu bytes to %p on rank %d: outside its segment", what, nbytes,
                         dest_addr, (int)sd->dest);
    gasneti_am_t am = {.category = (uint8_t)category, .handler = handler, .nargs = (uint8_t)nargs,
                       .nbytes = (uint32_t)nbytes, .args = args,
                       .dst = (uint64_t)(uintptr_t)dest_addr};
    if (category == GASNETI_AM_MEDIUM) am.chunk = (uint32_t)nbytes;
    gasneti_pshm_np_commit(&sd->np, &am);
    return 0; /* its room was reserved by Prepare */
  }
#ifdef GASNETC_NATIVE_NP_ALLOC_MEDIUM
  if (sd->kind == SD_CONDUIT) {
    gasneti_am_t am = {.category = GASNETI_AM_MEDIUM, .handler = handler, .nargs = (uint8_t)nargs,
                       .nbytes = (uint32_t)nbytes, .chunk = (uint32_t)nbytes, .args = args};
    gasnetc_np_commit(sd->dest, is_reply ? sd->token : NULL, &am);
    return 0;
  }
#endif
  /* A buffer (the client's or the thread's) sent as a fixed-payload AM. The descriptor is free
   * from here: a request to this rank runs its handler now, which may prepare its reply. */
  gex_Event_t *lc = sd->kind == SD_CLIENT && gasneti_ex_lc_is_event(sd->lc_opt) ? sd->lc_opt : NULL;
  uint8_t immediate = sd->flags & GEX_FLAG_IMMEDIATE_COMMIT ? GASNETI_AM_IMMEDIATE : 0;
  bool sent;
  if (is_reply) {
    sd->token->replied = 0; /* the fixed-payload reply's check takes it again */
    sent = gasneti_am_reply_client(sd->token, handler, category, sd->addr, nbytes, dest_addr,
                                   nargs, args, immediate);
  } else {
    sent = gasneti_am_request_client(sd->dest, handler, category, sd->addr, nbytes, dest_addr,
                                     nargs, args, immediate);
  }
  if (!sent) return 1; /* refused, nothing sent; a reply's token may reply again */
  if (lc) *lc = GEX_EVENT_INVALID;
  return 0;
}
