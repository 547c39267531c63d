/* vis_api.c: the public VIS calls (gasnet_vis.h): each describes its two sides to the walker
 * and hands the pair to the transport with the completion kind of its form. */
#include "vis.h"

static void vector_pair(gasneti_vis_pair_t *p, size_t dstcount, const gasnet_memvec_t *dstlist,
                        size_t srccount, const gasnet_memvec_t *srclist) {
  gasneti_vis_side_vector(&p->dst, dstcount, dstlist);
  gasneti_vis_side_vector(&p->src, srccount, srclist);
}

static void indexed_pair(gasneti_vis_pair_t *p, size_t dstcount, void *const *dstlist,
                         size_t dstlen, size_t srccount, void *const *srclist, size_t srclen) {
  gasneti_vis_side_indexed(&p->dst, dstcount, dstlist, dstlen);
  gasneti_vis_side_indexed(&p->src, srccount, srclist, srclen);
}

static void strided_pair(gasneti_vis_pair_t *p, void *dstaddr, const size_t *dststrides,
                         void *srcaddr, const size_t *srcstrides, const size_t *count,
                         size_t levels) {
  gasneti_vis_side_strided(&p->dst, dstaddr, dststrides, count, levels);
  gasneti_vis_side_strided(&p->src, srcaddr, srcstrides, count, levels);
}

/* Strided transfers inside the supernode skip the walker: a bounds check per side (debug
 * builds) and the nested copy loops. */
static bool strided_direct(const char *what, bool is_put, gasnet_node_t node, void *dstaddr,
                           const size_t *dststrides, void *srcaddr, const size_t *srcstrides,
                           const size_t *count, size_t levels) {
  if (!gasneti_attach_done || node >= gasneti_nodes || !gasneti_pshm_reach[node]) return false;
  uint8_t *remote = is_put ? dstaddr : srcaddr;
#ifdef GASNETI_DEBUG
  const size_t *rstrides = is_put ? dststrides : srcstrides;
  size_t extent = count[0];
  bool empty = false;
  for (size_t l = 0; l <= levels; l++) empty |= count[l] == 0;
  for (size_t l = 0; l < levels; l++) extent += (count[l + 1] - 1) * rstrides[l];
  if (!empty) gasneti_rma_check(what, node, remote, extent);
#else
  (void)what;
#endif
  uint8_t *mapped = gasneti_pshm_addr(node, remote);
  if (is_put) {
    gasneti_vis_strided_direct(mapped, dststrides, srcaddr, srcstrides, count, levels);
    if (node != gasneti_mynode) gasneti_wake_peer(gasneti_host_local[node]); /* wake.h */
  } else gasneti_vis_strided_direct(dstaddr, dststrides, mapped, srcstrides, count, levels);
  return true;
}

/* One definition per shape and direction for the three forms. */
#define VIS_FORMS(name, Ret, ret, kind, PARAMS, node, PAIR_ARGS, pair, xfer) \
  Ret gasnet_##name PARAMS {                                                \
    DIRECT_##pair(name, xfer, node, DONE_##Ret)                                      \
    gasneti_vis_pair_t p;                                                   \
    pair PAIR_ARGS;                                                         \
    ret xfer("gasnet_" #name, node, &p, kind);                              \
  }

#define DONE_gasnet_handle_t return GASNET_INVALID_HANDLE
#define DONE_void return
#define DIRECT_vector_pair(name, xfer, node, done)
#define DIRECT_indexed_pair(name, xfer, node, done)
#define IS_PUT_gasneti_vis_put true
#define IS_PUT_gasneti_vis_get false
#define DIRECT_strided_pair(name, xfer, node, done)                                        \
  if (strided_direct("gasnet_" #name, IS_PUT_##xfer, node, dstaddr, dststrides, srcaddr,  \
                     srcstrides, count, stridelevels))                                    \
    done;

#define VECTOR_PUT_PARAMS (gasnet_node_t dstnode, size_t dstcount, gasnet_memvec_t const dstlist[], \
                           size_t srccount, gasnet_memvec_t const srclist[])
#define VECTOR_GET_PARAMS (size_t dstcount, gasnet_memvec_t const dstlist[], gasnet_node_t srcnode, \
                           size_t srccount, gasnet_memvec_t const srclist[])
#define VECTOR_ARGS (&p, dstcount, dstlist, srccount, srclist)
VIS_FORMS(putv_nb_bulk, gasnet_handle_t, return, GASNETI_RMA_NB, VECTOR_PUT_PARAMS, dstnode,
          VECTOR_ARGS, vector_pair, gasneti_vis_put)
VIS_FORMS(putv_nbi_bulk, void, (void), GASNETI_RMA_NBI, VECTOR_PUT_PARAMS, dstnode, VECTOR_ARGS,
          vector_pair, gasneti_vis_put)
VIS_FORMS(putv_bulk, void, (void), GASNETI_RMA_BLOCKING, VECTOR_PUT_PARAMS, dstnode, VECTOR_ARGS,
          vector_pair, gasneti_vis_put)
VIS_FORMS(getv_nb_bulk, gasnet_handle_t, return, GASNETI_RMA_NB, VECTOR_GET_PARAMS, srcnode,
          VECTOR_ARGS, vector_pair, gasneti_vis_get)
VIS_FORMS(getv_nbi_bulk, void, (void), GASNETI_RMA_NBI, VECTOR_GET_PARAMS, srcnode, VECTOR_ARGS,
          vector_pair, gasneti_vis_get)
VIS_FORMS(getv_bulk, void, (void), GASNETI_RMA_BLOCKING, VECTOR_GET_PARAMS, srcnode, VECTOR_ARGS,
          vector_pair, gasneti_vis_get)

#define INDEXED_PUT_PARAMS (gasnet_node_t dstnode, size_t dstcount, void *const dstlist[], \
                            size_t dstlen, size_t srccount, void *const srclist[], size_t srclen)
#define INDEXED_GET_PARAMS (size_t dstcount, void *const dstlist[], size_t dstlen, \
                            gasnet_node_t srcnode, size_t srccount, void *const srclist[], \
                            size_t srclen)
#define INDEXED_ARGS (&p, dstcount, dstlist, dstlen, srccount, srclist, srclen)
VIS_FORMS(puti_nb_bulk, gasnet_handle_t, return, GASNETI_RMA_NB, INDEXED_PUT_PARAMS, dstnode,
          INDEXED_ARGS, indexed_pair, gasneti_vis_put)
VIS_FORMS(puti_nbi_bulk, void, (void), GASNETI_RMA_NBI, INDEXED_PUT_PARAMS, dstnode, INDEXED_ARGS,
          indexed_pair, gasneti_vis_put)
VIS_FORMS(puti_bulk, void, (void), GASNETI_RMA_BLOCKING, INDEXED_PUT_PARAMS, dstnode,
          INDEXED_ARGS, indexed_pair, gasneti_vis_put)
VIS_FORMS(geti_nb_bulk, gasnet_handle_t, return, GASNETI_RMA_NB, INDEXED_GET_PARAMS, srcnode,
          INDEXED_ARGS, indexed_pair, gasneti_vis_get)
VIS_FORMS(geti_nbi_bulk, void, (void), GASNETI_RMA_NBI, INDEXED_GET_PARAMS, srcnode, INDEXED_ARGS,
          indexed_pair, gasneti_vis_get)
VIS_FORMS(geti_bulk, void, (void), GASNETI_RMA_BLOCKING, INDEXED_GET_PARAMS, srcnode,
          INDEXED_ARGS, indexed_pair, gasneti_vis_get)

#define STRIDED_PUT_PARAMS (gasnet_node_t dstnode, void *dstaddr, const size_t dststrides[], \
                            void *srcaddr, const size_t srcstrides[], const size_t count[], \
                            size_t stridelevels)
#define STRIDED_GET_PARAMS (void *dstaddr, const size_t dststrides[], gasnet_node_t srcnode, \
                            void *srcaddr, const size_t srcstrides[], const size_t count[], \
                            size_t stridelevels)
#define STRIDED_ARGS (&p, dstaddr, dststrides, srcaddr, srcstrides, count, stridelevels)
VIS_FORMS(puts_nb_bulk, gasnet_handle_t, return, GASNETI_RMA_NB, STRIDED_PUT_PARAMS, dstnode,
          STRIDED_ARGS, strided_pair, gasneti_vis_put)
VIS_FORMS(puts_nbi_bulk, void, (void), GASNETI_RMA_NBI, STRIDED_PUT_PARAMS, dstnode, STRIDED_ARGS,
          strided_pair, gasneti_vis_put)
VIS_FORMS(puts_bulk, void, (void), GASNETI_RMA_BLOCKING, STRIDED_PUT_PARAMS, dstnode,
          STRIDED_ARGS, strided_pair, gasneti_vis_put)
VIS_FORMS(gets_nb_bulk, gasnet_handle_t, return, GASNETI_RMA_NB, STRIDED_GET_PARAMS, srcnode,
          STRIDED_ARGS, strided_pair, gasneti_vis_get)
VIS_FORMS(gets_nbi_bulk, void, (void), GASNETI_RMA_NBI, STRIDED_GET_PARAMS, srcnode, STRIDED_ARGS,
          strided_pair, gasneti_vis_get)
VIS_FORMS(gets_bulk, void, (void), GASNETI_RMA_BLOCKING, STRIDED_GET_PARAMS, srcnode,
          STRIDED_ARGS, strided_pair, gasneti_vis_get)
