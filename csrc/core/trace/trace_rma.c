/* trace_rma.c: the library half of the extended API's transfers (what the inline paths of
 * gasnet_extended.h hand over). A rank that neither traces nor counts goes straight to the
 * network path. One that does sees every transfer here, since its inline paths find every peer
 * far: it records the transfer, then copies directly to a supernode peer (as the inline path
 * would have) or takes the network path. */
#include <string.h>

#include "rma/rma.h"
#include "trace.h"

/* A blocking transfer's record carries the time it took. */
static double start_of(int kind) {
  return kind == GASNETI_RMA_BLOCKING ? gasneti_trace_now() : -1.0;
}

gasnet_handle_t gasneti_put_at(const char *loc, int op, gasnet_node_t node, void *dest,
                               const void *src, size_t n, int kind, int bulk) {
  if (GASNETI_LIKELY(!gasneti_trace_active)) return gasneti_put_am(node, dest, src, n, kind, bulk);
  double start = start_of(kind);
  gasnet_handle_t h = GASNET_INVALID_HANDLE;
  uintptr_t direct = gasneti_trace_direct[node];
  if (direct != GASNETI_PSHM_FAR) {
    if (bulk) memcpy(gasneti_direct_addr(direct, dest), src, n);
    else gasneti_copy(gasneti_direct_addr(direct, dest), src, n);
  } else {
    h = gasneti_put_am(node, dest, src, n, kind, bulk);
  }
  gasneti_trace_rma(loc, op, node, n, start);
  return h;
}

gasnet_handle_t gasneti_get_at(const char *loc, int op, void *dest, gasnet_node_t node,
                               const void *src, size_t n, int kind) {
  if (GASNETI_LIKELY(!gasneti_trace_active)) return gasneti_get_am(dest, node, src, n, kind);
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
  gasneti_trace_rma(loc, op, node, n, start);
  return h;
}

gasnet_handle_t gasneti_memset_at(const char *loc, int op, gasnet_node_t node, void *dest, int val,
                                  size_t n, int kind) {
  if (GASNETI_LIKELY(!gasneti_trace_active)) return gasneti_memset_am(node, dest, val, n, kind);
  double start = start_of(kind);
  gasnet_handle_t h = GASNET_INVALID_HANDLE;
  uintptr_t direct = gasneti_trace_direct[node];
  if (direct != GASNETI_PSHM_FAR) memset(gasneti_direct_addr(direct, dest), val, n);
  else h = gasneti_memset_am(node, dest, val, n, kind);
  gasneti_trace_rma(loc, op, node, n, start);
  return h;
}
