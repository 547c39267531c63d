/* gasnet_vis.h: GASNet-1 non-contiguous transfers (VIS): vector (lists of address/length
 * pairs), indexed (lists of addresses, one length per side) and strided (a base address,
 * per-level strides and counts). Each has a blocking, an explicit-handle (nb) and an
 * implicit-handle (nbi) form; all are bulk (the source must not change until the transfer
 * completes). Clients include it after gasnet.h.
 *
 * The two sides of a transfer may have different shapes but must describe the same number of
 * bytes; the bytes are moved in order (the n-th byte of the source walk lands on the n-th byte
 * of the destination walk). Remote pieces must lie in the remote rank's segment. gasnet.h does
 * not include this header: clients that use VIS include it (as with GASNet). */
#ifndef GASNET_VIS_H
#define GASNET_VIS_H

#include <gasnetex.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- vector: dstcount/srccount pieces of any lengths ------------------------------------ */
gasnet_handle_t gasnet_putv_nb_bulk(gasnet_node_t dstnode, size_t dstcount,
                                    gasnet_memvec_t const dstlist[], size_t srccount,
                                    gasnet_memvec_t const srclist[]);
gasnet_handle_t gasnet_getv_nb_bulk(size_t dstcount, gasnet_memvec_t const dstlist[],
                                    gasnet_node_t srcnode, size_t srccount,
                                    gasnet_memvec_t const srclist[]);
void gasnet_putv_nbi_bulk(gasnet_node_t dstnode, size_t dstcount, gasnet_memvec_t const dstlist[],
                          size_t srccount, gasnet_memvec_t const srclist[]);
void gasnet_getv_nbi_bulk(size_t dstcount, gasnet_memvec_t const dstlist[], gasnet_node_t srcnode,
                          size_t srccount, gasnet_memvec_t const srclist[]);
void gasnet_putv_bulk(gasnet_node_t dstnode, size_t dstcount, gasnet_memvec_t const dstlist[],
                      size_t srccount, gasnet_memvec_t const srclist[]);
void gasnet_getv_bulk(size_t dstcount, gasnet_memvec_t const dstlist[], gasnet_node_t srcnode,
                      size_t srccount, gasnet_memvec_t const srclist[]);

/* ---- indexed: count addresses per side, each the start of a piece of that side's length -- */
gasnet_handle_t gasnet_puti_nb_bulk(gasnet_node_t dstnode, size_t dstcount, void *const dstlist[],
                                    size_t dstlen, size_t srccount, void *const srclist[],
                                    size_t srclen);
gasnet_handle_t gasnet_geti_nb_bulk(size_t dstcount, void *const dstlist[], size_t dstlen,
                                    gasnet_node_t srcnode, size_t srccount, void *const srclist[],
                                    size_t srclen);
void gasnet_puti_nbi_bulk(gasnet_node_t dstnode, size_t dstcount, void *const dstlist[],
                          size_t dstlen, size_t srccount, void *const srclist[], size_t srclen);
void gasnet_geti_nbi_bulk(size_t dstcount, void *const dstlist[], size_t dstlen,
                          gasnet_node_t srcnode, size_t srccount, void *const srclist[],
                          size_t srclen);
void gasnet_puti_bulk(gasnet_node_t dstnode, size_t dstcount, void *const dstlist[], size_t dstlen,
                      size_t srccount, void *const srclist[], size_t srclen);
void gasnet_geti_bulk(size_t dstcount, void *const dstlist[], size_t dstlen, gasnet_node_t srcnode,
                      size_t srccount, void *const srclist[], size_t srclen);

/* ---- strided: count[0] contiguous bytes, then count[1..stridelevels] repetitions, level k
 * stepping by strides[k-1] bytes on each side (strides have stridelevels entries, count has
 * stridelevels + 1) ------------------------------------------------------------------------ */
gasnet_handle_t gasnet_puts_nb_bulk(gasnet_node_t dstnode, void *dstaddr,
                                    const size_t dststrides[], void *srcaddr,
                                    const size_t srcstrides[], const size_t count[],
                                    size_t stridelevels);
gasnet_handle_t gasnet_gets_nb_bulk(void *dstaddr, const size_t dststrides[],
                                    gasnet_node_t srcnode, void *srcaddr,
                                    const size_t srcstrides[], const size_t count[],
                                    size_t stridelevels);
void gasnet_puts_nbi_bulk(gasnet_node_t dstnode, void *dstaddr, const size_t dststrides[],
                          void *srcaddr, const size_t srcstrides[], const size_t count[],
                          size_t stridelevels);
void gasnet_gets_nbi_bulk(void *dstaddr, const size_t dststrides[], gasnet_node_t srcnode,
                          void *srcaddr, const size_t srcstrides[], const size_t count[],
                          size_t stridelevels);
void gasnet_puts_bulk(gasnet_node_t dstnode, void *dstaddr, const size_t dststrides[],
                      void *srcaddr, const size_t srcstrides[], const size_t count[],
                      size_t stridelevels);
void gasnet_gets_bulk(void *dstaddr, const size_t dststrides[], gasnet_node_t srcnode,
                      void *srcaddr, const size_t srcstrides[], const size_t count[],
                      size_t stridelevels);

#ifdef __cplusplus
}
#endif

#endif
