/* gasnet_ratomic.h: GASNet-EX remote atomics. An atomic domain (gex_AD_t) names a team, one
 * datatype and the set of operations its calls may use; gex_AD_OpNB_<T> and gex_AD_OpNBI_<T>
 * (T: I32, U32, I64, U64, FLT, DBL) apply one operation to a location in a team member's
 * bound segment, and fetching operations return the location's old value in *result_p once the
 * operation is synchronized (gex_Event_Wait for NB; gex_NBI_Wait with GEX_EC_RMW, or GEX_EC_PUT
 * for SET, GEX_EC_GET for GET, for NBI).
 *
 * Every operation is the processor's own atomic instruction on the target's memory: issued by
 * the caller where the target's segment is mapped into it (itself, a rank of its shared-memory
 * neighbourhood), by the target's process in an AM handler otherwise (one request and its
 * reply). So atomics on one location are atomic with each other whatever path each takes.
 * Clients include it after gasnetex.h (as with GASNet-EX). */
#ifndef GASNET_RATOMIC_H
#define GASNET_RATOMIC_H

#include <gasnetex.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gasneti_ad_s *gex_AD_t;
#define GEX_AD_INVALID ((gex_AD_t)0)

/* Collective over tm; dt, ops and flags the same on every caller. ops: an OR of GEX_OP_*
 * (bitwise operations on integer types only); flags: 0 or one GEX_FLAG_AD_FAVOR_* hint. */
void gex_AD_Create(gex_AD_t *ad_p, gex_TM_t tm, gex_DT_t dt, gex_OP_t ops, gex_Flags_t flags);
/* Collective; every operation on the domain must be complete first (it is not a barrier). */
void gex_AD_Destroy(gex_AD_t ad);

gex_Flags_t gex_AD_QueryFlags(gex_AD_t ad);
gex_TM_t gex_AD_QueryTM(gex_AD_t ad);
gex_DT_t gex_AD_QueryDT(gex_AD_t ad);
gex_OP_t gex_AD_QueryOps(gex_AD_t ad);
void gex_AD_SetCData(gex_AD_t ad, const void *val);
void *gex_AD_QueryCData(gex_AD_t ad);

/* ---- operations ------------------------------------------------------------------------------
 * One library call for every type: the operands travel in a union, and the datatype is checked
 * against the domain's. kind: GASNETI_RMA_NB or GASNETI_RMA_NBI (gasnet_extended.h). */
typedef union {
  int32_t gasneti_i32;
  uint32_t gasneti_u32;
  int64_t gasneti_i64;
  uint64_t gasneti_u64;
  float gasneti_flt;
  double gasneti_dbl;
} gasneti_ad_val_t;
gex_Event_t gasneti_ad_op(int kind, gex_AD_t ad, gex_DT_t dt, void *result_p, gex_Rank_t tgt_rank,
                          void *tgt_addr, gex_OP_t opcode, gasneti_ad_val_t operand1,
                          gasneti_ad_val_t operand2, gex_Flags_t flags);

#define GASNETI_AD_TYPED(NAME, TYPE, FIELD)                                                     \
  static inline gex_Event_t gasneti_ad_op_##NAME(int kind, gex_AD_t ad, TYPE *result_p,           \
                                                 gex_Rank_t tgt_rank, void *tgt_addr,             \
                                                 gex_OP_t opcode, TYPE operand1, TYPE operand2,   \
                                                 gex_Flags_t flags) {                             \
    gasneti_ad_val_t a, b;                                                                        \
    a.FIELD = operand1;                                                                           \
    b.FIELD = operand2;                                                                           \
    return gasneti_ad_op(kind, ad, GEX_DT_##NAME, result_p, tgt_rank, tgt_addr, opcode, a, b,     \
                         flags);                                                                  \
  }                                                                                               \
  static inline gex_Event_t gex_AD_OpNB_##NAME(gex_AD_t ad, TYPE *result_p, gex_Rank_t tgt_rank,  \
                                               void *tgt_addr, gex_OP_t opcode, TYPE operand1,     \
                                               TYPE operand2, gex_Flags_t flags) {                 \
    return gasneti_ad_op_##NAME(GASNETI_RMA_NB, ad, result_p, tgt_rank, tgt_addr, opcode,         \
                                operand1, operand2, flags);                                       \
  }                                                                                               \
  /* Non-zero only when GEX_FLAG_IMMEDIATE declined to start it (this runtime never does). */   \
  static inline int gex_AD_OpNBI_##NAME(gex_AD_t ad, TYPE *result_p, gex_Rank_t tgt_rank,         \
                                        void *tgt_addr, gex_OP_t opcode, TYPE operand1,            \
                                        TYPE operand2, gex_Flags_t flags) {                        \
    return gasneti_ad_op_##NAME(GASNETI_RMA_NBI, ad, result_p, tgt_rank, tgt_addr, opcode,        \
                                operand1, operand2, flags) != GEX_EVENT_INVALID;                  \
  }
GASNETI_AD_TYPED(I32, int32_t, gasneti_i32)
GASNETI_AD_TYPED(U32, uint32_t, gasneti_u32)
GASNETI_AD_TYPED(I64, int64_t, gasneti_i64)
GASNETI_AD_TYPED(U64, uint64_t, gasneti_u64)
GASNETI_AD_TYPED(FLT, float, gasneti_flt)
GASNETI_AD_TYPED(DBL, double, gasneti_dbl)
#undef GASNETI_AD_TYPED

#ifdef __cplusplus
}
#endif

#endif /* GASNET_RATOMIC_H */
