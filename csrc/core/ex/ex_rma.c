/* ex_rma.c: GASNet-EX's RMA (the library half of gasnetex.h's inline calls), its events and its
 * implicit-event (NBI) completion. Events are GASNet-1 handles and NBI operations count on the
 * GASNet-1 counters and access regions (csrc/core/rma): a program may mix both APIs' calls.
 * Local completion: a put whose lc_opt is GEX_EVENT_DEFER keeps its source until it completes
 * (the bulk path: sent from where it lies); any other returns with its source reusable. */
#include "ex_internal.h"
#include "rma/rma.h"
#include "trace/trace.h"

static const char *const ex_names[GASNETI_OP_COUNT] = {
    [GASNETI_OP_PUT] = "gex_RMA_PutBlocking",     [GASNETI_OP_PUT_NB] = "gex_RMA_PutNB",
    [GASNETI_OP_PUT_NBI] = "gex_RMA_PutNBI",      [GASNETI_OP_PUT_VAL] = "gex_RMA_PutBlockingVal",
    [GASNETI_OP_PUT_NB_VAL] = "gex_RMA_PutNBVal", [GASNETI_OP_PUT_NBI_VAL] = "gex_RMA_PutNBIVal",
    [GASNETI_OP_GET] = "gex_RMA_GetBlocking",     [GASNETI_OP_GET_NB] = "gex_RMA_GetNB",
    [GASNETI_OP_GET_NBI] = "gex_RMA_GetNBI",      [GASNETI_OP_GET_VAL] = "gex_RMA_GetBlockingVal",
};

const char *gasneti_ex_op_name(int op) {
  return op >= 0 && op < GASNETI_OP_COUNT && ex_names[op] ? ex_names[op] : "gex_RMA";
}

static const char *lc_name(gex_Event_t *lc_opt) {
  return lc_opt == GEX_EVENT_DEFER ? "GEX_EVENT_DEFER" : lc_opt == GEX_EVENT_GROUP ? "GEX_EVENT_GROUP"
         : lc_opt == GEX_EVENT_NOW ? "GEX_EVENT_NOW" : "NULL";
}

/* An NB put takes NOW, DEFER or an event; an NBI put NOW, DEFER or GROUP. */
static void check_lc(int op, int kind, gex_Event_t *lc_opt) {
  bool ok = kind == GASNETI_RMA_BLOCKING || lc_opt == GEX_EVENT_NOW || lc_opt == GEX_EVENT_DEFER ||
            (kind == GASNETI_RMA_NB ? gasneti_ex_lc_is_event(lc_opt) : lc_opt == GEX_EVENT_GROUP);
  if (!ok)
    gasneti_fatalerror("%s: lc_opt %s: accepted GEX_EVENT_NOW, GEX_EVENT_DEFER or %s",
                       gasneti_ex_op_name(op), lc_name(lc_opt),
                       kind == GASNETI_RMA_NB ? "the address of a gex_Event_t" : "GEX_EVENT_GROUP");
}

gex_Event_t gasneti_ex_put(const char *loc, int op, gex_TM_t tm, gex_Rank_t rank, void *dest,
                           const void *src, size_t n, int kind, gex_Event_t *lc_opt,
                           gex_Flags_t flags) {
  (void)flags; /* GEX_FLAG_IMMEDIATE is a permission: RMA over AMs waits as it must */
  gasnet_node_t node = gasneti_ex_jobrank(gasneti_ex_op_name(op), tm, rank);
  check_lc(op, kind, lc_opt);
  gasnet_handle_t h = gasneti_put_at(loc, op, node, dest, src, n, kind, lc_opt == GEX_EVENT_DEFER);
  if (gasneti_ex_lc_is_event(lc_opt)) *lc_opt = GEX_EVENT_INVALID;
  return h;
}

gex_Event_t gasneti_ex_get(const char *loc, int op, void *dest, gex_TM_t tm, gex_Rank_t rank,
                           const void *src, size_t n, int kind, gex_Flags_t flags) {
  (void)flags;
  gasnet_node_t node = gasneti_ex_jobrank(gasneti_ex_op_name(op), tm, rank);
  return gasneti_get_at(loc, op, dest, node, src, n, kind);
}

/* ---- events -------------------------------------------------------------------------------- */
static void check_event(const char *what, gex_Event_t e) {
  if (e == GEX_EVENT_NO_OP)
    gasneti_fatalerror("%s: GEX_EVENT_NO_OP is not an event (an immediate call that did nothing "
                       "returned it)", what);
  if (gasneti_am_context != GASNETI_CTX_CLIENT)
    gasneti_fatalerror("%s called inside an AM handler (events may not be tested or waited for "
                       "there)", what);
}

int gasneti_ex_event_test(gex_Event_t e) {
  check_event("gex_Event_Test", e);
  gasneti_op_check_live(e, "gex_Event_Test");
  if (!gasneti_op_done(e)) return GASNET_ERR_NOT_READY;
  gasneti_op_put(e);
  return GASNET_OK;
}

void gasneti_ex_event_wait(const char *loc, gex_Event_t e) {
  if (e != GEX_EVENT_INVALID) check_event("gex_Event_Wait", e);
  gasneti_wait_syncnb(loc, e);
}

static void check_events(const char *what, gex_Event_t *pevent, size_t n, gex_Flags_t flags) {
  if (n && !pevent) gasneti_fatalerror("%s: pevent is NULL with %zu events", what, n);
  if (flags) gasneti_fatalerror("%s: flags 0x%x: must be 0", what, (unsigned)flags);
  for (size_t i = 0; i < n; i++) check_event(what, pevent[i]);
}

int gex_Event_TestSome(gex_Event_t *pevent, size_t numevents, gex_Flags_t flags) {
  check_events("gex_Event_TestSome", pevent, numevents, flags);
  return gasnet_try_syncnb_some_nopoll(pevent, numevents);
}
void gex_Event_WaitSome(gex_Event_t *pevent, size_t numevents, gex_Flags_t flags) {
  check_events("gex_Event_WaitSome", pevent, numevents, flags);
  gasnet_wait_syncnb_some(pevent, numevents);
}
int gex_Event_TestAll(gex_Event_t *pevent, size_t numevents, gex_Flags_t flags) {
  check_events("gex_Event_TestAll", pevent, numevents, flags);
  return gasnet_try_syncnb_all_nopoll(pevent, numevents);
}
void gex_Event_WaitAll(gex_Event_t *pevent, size_t numevents, gex_Flags_t flags) {
  check_events("gex_Event_WaitAll", pevent, numevents, flags);
  gasneti_wait_syncnb_all(NULL, pevent, numevents);
}

gex_Event_t gex_Event_QueryLeaf(gex_Event_t root, gex_EC_t event_category) {
  if (root == GEX_EVENT_NO_OP)
    gasneti_fatalerror("gex_Event_QueryLeaf: GEX_EVENT_NO_OP is not an event");
  if (event_category != GEX_EC_LC && event_category != GEX_EC_GET &&
      event_category != GEX_EC_PUT && event_category != GEX_EC_AM && event_category != GEX_EC_RMW)
    gasneti_fatalerror("gex_Event_QueryLeaf: event_category 0x%x: one GEX_EC_* value (not an OR "
                       "of several, nor GEX_EC_ALL)", (unsigned)event_category);
  return GEX_EVENT_INVALID; /* local completion happens when an operation is issued */
}

/* ---- implicit events ----------------------------------------------------------------------- */
static void check_mask(const char *what, gex_EC_t mask, gex_Flags_t flags) {
  if (mask & ~GEX_EC_ALL)
    gasneti_fatalerror("%s: event_mask 0x%x: an OR of GEX_EC_* values", what, (unsigned)mask);
  if (flags) gasneti_fatalerror("%s: flags 0x%x: must be 0", what, (unsigned)flags);
  if (gasneti_am_context != GASNETI_CTX_CLIENT)
    gasneti_fatalerror("%s called inside an AM handler", what);
}

int gex_NBI_Test(gex_EC_t event_mask, gex_Flags_t flags) {
  check_mask("gex_NBI_Test", event_mask, flags);
  if ((event_mask & GEX_EC_GET) && atomic_load_explicit(GASNETI_NBI_GETS, memory_order_acquire))
    return GASNET_ERR_NOT_READY;
  if ((event_mask & GEX_EC_PUT) && atomic_load_explicit(GASNETI_NBI_PUTS, memory_order_acquire))
    return GASNET_ERR_NOT_READY;
  if ((event_mask & GEX_EC_RMW) && atomic_load_explicit(GASNETI_NBI_RMWS, memory_order_acquire))
    return GASNET_ERR_NOT_READY;
  return GASNET_OK; /* AMs and local completion: done when issued */
}

void gex_NBI_Wait(gex_EC_t event_mask, gex_Flags_t flags) {
  check_mask("gex_NBI_Wait", event_mask, flags);
  if (event_mask & GEX_EC_PUT) gasneti_wait_counter(GASNETI_NBI_PUTS);
  if (event_mask & GEX_EC_GET) gasneti_wait_counter(GASNETI_NBI_GETS);
  if (event_mask & GEX_EC_RMW) gasneti_wait_counter(GASNETI_NBI_RMWS);
}

void gex_NBI_BeginAccessRegion(gex_Flags_t flags) {
  if (flags) gasneti_fatalerror("gex_NBI_BeginAccessRegion: flags 0x%x: must be 0", (unsigned)flags);
  gasnet_begin_nbi_accessregion();
}

gex_Event_t gex_NBI_EndAccessRegion(gex_Flags_t flags) {
  if (flags) gasneti_fatalerror("gex_NBI_EndAccessRegion: flags 0x%x: must be 0", (unsigned)flags);
  return gasnet_end_nbi_accessregion();
}
