/* ratomic_apply.h: one remote-atomic operation applied to memory, with the processor's atomic
 * instructions: by the initiator on a target it maps (itself, its shared-memory neighbours), by
 * the target's process in the AM handler otherwise. Both paths run this code on the same
 * memory, so operations on one location are atomic with each other whichever path they took. */
#ifndef GASNETI_RATOMIC_APPLY_H
#define GASNETI_RATOMIC_APPLY_H

#include <gasnet_ratomic.h>

/* The location's old value (what a fetching operation returns; GET: its value). dt is one of
 * the six atomic datatypes and op a single operation the datatype has (the caller checked);
 * addr is aligned for the type. */
gasneti_ad_val_t gasneti_ad_apply(gex_DT_t dt, gex_OP_t op, void *addr, gasneti_ad_val_t a,
                                  gasneti_ad_val_t b);

/* Bytes of a datatype's value (0: not an atomic datatype). */
static inline size_t gasneti_ad_dt_size(gex_DT_t dt) {
  return dt == GEX_DT_I32 || dt == GEX_DT_U32 || dt == GEX_DT_FLT   ? 4
         : dt == GEX_DT_I64 || dt == GEX_DT_U64 || dt == GEX_DT_DBL ? 8
                                                                     : 0;
}

#endif
