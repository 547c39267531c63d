/* trace_rma.c: the library half of the extended API's transfers (what the inline paths of
 * gasnet_extended.h hand over). A rank that neither traces nor counts, and whose host peers
 * never sleep, goes straight to the network path. One that traces or counts sees every
 * transfer here, since its inline paths find every peer far: it records the transfer, then
 * copies directly to a supernode peer (as the inline path would have) or takes the network
 * path. One whose host peers may sleep (pshm/wake.h) sees its supernode transfers here too, and
 * wakes the peer it put to. */
#include <string.h>

#include "pshm/wake.h"
#include "rma/rma.h"
#include "trace.h"

static bool via_library(void) { return gasneti_trace_active || gasneti_wake_on; }

/* After a direct store into a supernode peer's segment. */
static void wake(gasnet_node_t node) {
  if (node != gasneti_mynode) gasneti_wake_peer(gasneti_host_local[node]);
}

/* A blocking transfer's record carries the time it took. */
static double start_of(int kind) {
  return gasneti_trace_active && kind == GASNETI_RMA_BLOCKING ? gasneti_trace_now() : -1.0;
}

gasnet_handle_t gasneti_put_at(const char *loc, int op, gasnet_node_t node, void *dest,
                               const void *src, size_t n, int kind, int bulk) {
  if (GASNETI_LIKELY(!via_library())) return gasneti_put_am(node, dest, src, n, kind, bulk);
  double start = start_of(kind);
  gasnet_handle_t h = GASNET_INVALID_HANDLE;
  uintptr_t direct = gasneti_trace_direct[node];
  if (direct != GASNETI_PSHM_FAR) {
    if (bulk) memcpy(gasneti_direct_addr(direct, dest), src, n);
    else gasneti_copy(gasneti_direct_addr(direct, dest), src, n);
    wake(node);
  } else {
    h = gasneti_put_am(node, dest, src, n, kind, bulk);
  }
  if (gasneti_trace_active) gasneti_trace_rma(loc, op, node, n, start);
  return h;
}

gasnet_handle_t gasneti_get_at(const char *loc, int op, void *dest, gasnet_node_t node,
                               const void *src, size_t n, int kind) {
  if (GASNETI_LIKELY(!via_library())) return gasneti_get_am(dest, node, src, n, kind);
  double start = start_of(kind);
  gasnet_handle_t h = GASNET_INVALID_HANDLE;
  uintptr_t direct = gasneti_trace_direct[node];
  bool bulk = op == GASNETI_OP_GET_BULK || op == GASNETI_OP_GET_NB_BULK ||
              op == GASNETI_OP_GET_NBI_BULK;
  if (direct != GASNETI_PSHM_FAR) {
    if (bulk) memcpy(dest, gasneti_direct_addr(direct, src), n);
    else gasneti_copy(dest, gasneti_direct_addr(direct, src), n);
  } else {
    h = gasneti_get_am(dest, node, src, n, kind);
  }
  if (gasneti_trace_active) gasneti_trace_rma(loc, op, node, n, start);
  return h;
}

gasnet_handle_t gasneti_memset_at(const char *loc, int op, gasnet_node_t node, void *dest, int val,
                                  size_t n, int kind) {
  if (GASNETI_LIKELY(!via_library())) return gasneti_memset_am(node, dest, val, n, kind);
  double start = start_of(kind);
  gasnet_handle_t h = GASNET_INVALID_HANDLE;
  uintptr_t direct = gasneti_trace_direct[node];
  if (direct != GASNETI_PSHM_FAR) {
    memset(gasneti_direct_addr(direct, dest), val, n);
    wake(node);
  } else {
    h = gasneti_memset_am(node, dest, val, n, kind);
  }
  if (gasneti_trace_active) gasneti_trace_rma(loc, op, node, n, start);
  return h;
}
