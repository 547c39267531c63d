/* ex_barrier.c: gex_Coll_BarrierNB over the primordial team, on the GASNet-1 barrier's
 * algorithm (barrier.c): notify at the call, and an event that completes when the barrier
 * does. The specification forbids a GASNet-1 barrier beside it on that team; here one BarrierNB
 * at a time per rank is under way (a second before the first completed is refused). */
#include "ex_internal.h"
#include "rma/rma.h"
#include "trace/trace.h"

static gasneti_op_t *under_way; /* the event of the barrier this rank notified */

static void advance(gasneti_op_t *op) {
  if (!gasneti_barrier_advance()) return;
  op->advance = NULL;
  under_way = NULL;
  atomic_store_explicit(&op->pending, 0, memory_order_release);
}

gex_Event_t gasneti_ex_barrier_nb(const char *loc, gex_TM_t tm, gex_Flags_t flags) {
  gasneti_ex_tm("gex_Coll_BarrierNB", tm);
  if (tm != &gasneti_ex_tm0)
    gasneti_fatalerror("gex_Coll_BarrierNB: teams other than the primordial one are not "
                       "supported yet (docs/api.md)");
  if (flags) gasneti_fatalerror("gex_Coll_BarrierNB: flags 0x%x: must be 0", (unsigned)flags);
  if (under_way && !gasneti_op_done(under_way))
    gasneti_fatalerror("gex_Coll_BarrierNB: this rank's previous gex_Coll_BarrierNB on the "
                       "primordial team has not completed: one at a time here (docs/api.md)");
  gasneti_barrier_notify_at(loc, 0, GASNET_BARRIERFLAG_UNNAMED);
  gasneti_op_t *op = gasneti_op_get();
  atomic_store_explicit(&op->pending, 1, memory_order_relaxed);
  op->advance = advance;
  under_way = op;
  advance(op);
  return op;
}
