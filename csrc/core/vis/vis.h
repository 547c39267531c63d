/* vis.h: the VIS transport (vis.c) under the public calls (vis_api.c). */
#ifndef GASNETI_VIS_H
#define GASNETI_VIS_H

#include "gasnet_internal.h"
#include "pshm/wake.h"
#include "vis_walk.h"

void gasneti_vis_am_init(void);
/* p: destination and source sides set, not started. kind: GASNETI_RMA_*. The pair is ended. */
gasnet_handle_t gasneti_vis_put(const char *what, gasnet_node_t node, gasneti_vis_pair_t *p,
                                int kind);
gasnet_handle_t gasneti_vis_get(const char *what, gasnet_node_t node, gasneti_vis_pair_t *p,
                                int kind);
/* A strided copy between two mapped addresses (the remote side already translated). */
void gasneti_vis_strided_direct(uint8_t *d, const size_t *dststrides, const uint8_t *s,
                                const size_t *srcstrides, const size_t *count, size_t levels);

#endif
