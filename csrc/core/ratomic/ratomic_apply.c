/* ratomic_apply.c: the operations (ratomic_apply.h). Additions, subtractions and bitwise ones
 * on integers are single instructions (lock xadd, lock and...), the rest (multiplication,
 * minimum, maximum, and every arithmetic on floating-point values) a compare-and-swap loop.
 * Floating-point values are swapped and compared as the integers of the same width that hold
 * their bits (the spec allows it: a compare-and-swap of -0.0 against 0.0 does not match).
 * Sequentially consistent throughout: an operation on x86 is a locked instruction whatever
 * order it asks for, and GEX_FLAG_AD_ACQ/REL then cost nothing more. */
#include <stdbool.h>
#include <string.h>

#include "ratomic_apply.h"

#define SC __ATOMIC_SEQ_CST
#define RLX __ATOMIC_RELAXED

/* Integer types: T the type, U its unsigned twin (multiplication wraps, as the fetch-and-add
 * instructions do, instead of overflowing a signed type). */
#define INTEGER_APPLY(NAME, T, U)                                                             \
  static T NAME(gex_OP_t op, T *p, T a, T b) {                                                \
    switch (op) {                                                                             \
      case GEX_OP_ADD: case GEX_OP_FADD: return __atomic_fetch_add(p, a, SC);                 \
      case GEX_OP_SUB: case GEX_OP_FSUB: return __atomic_fetch_sub(p, a, SC);                 \
      case GEX_OP_INC: case GEX_OP_FINC: return __atomic_fetch_add(p, (T)1, SC);              \
      case GEX_OP_DEC: case GEX_OP_FDEC: return __atomic_fetch_sub(p, (T)1, SC);              \
      case GEX_OP_AND: case GEX_OP_FAND: return __atomic_fetch_and(p, a, SC);                 \
      case GEX_OP_OR: case GEX_OP_FOR: return __atomic_fetch_or(p, a, SC);                    \
      case GEX_OP_XOR: case GEX_OP_FXOR: return __atomic_fetch_xor(p, a, SC);                 \
      case GEX_OP_SET: __atomic_store_n(p, a, SC); return a;                                  \
      case GEX_OP_SWAP: return __atomic_exchange_n(p, a, SC);                                 \
      case GEX_OP_GET: return __atomic_load_n(p, SC);                                         \
      case GEX_OP_CAS: case GEX_OP_FCAS: {                                                    \
        T seen = a; /* a strong exchange: no spurious failure */                              \
        __atomic_compare_exchange_n(p, &seen, b, false, SC, SC);                              \
        return seen;                                                                          \
      }                                                                                       \
      default: { /* MULT, MIN, MAX and their fetching forms */                                \
        T old = __atomic_load_n(p, RLX), next;                                                \
        do {                                                                                  \
          if (op & (GEX_OP_MULT | GEX_OP_FMULT)) next = (T)((U)old * (U)a);                    \
          else if (op & (GEX_OP_MIN | GEX_OP_FMIN)) next = old < a ? old : a;                  \
          else next = old > a ? old : a;                                                      \
        } while (!__atomic_compare_exchange_n(p, &old, next, true, SC, RLX));                 \
        return old;                                                                           \
      }                                                                                       \
    }                                                                                         \
  }
INTEGER_APPLY(apply_i32, int32_t, uint32_t)
INTEGER_APPLY(apply_u32, uint32_t, uint32_t)
INTEGER_APPLY(apply_i64, int64_t, uint64_t)
INTEGER_APPLY(apply_u64, uint64_t, uint64_t)

/* Floating-point types: T the type, B the integer holding its bits. */
#define FLOAT_APPLY(NAME, T, B)                                                               \
  static B NAME##_bits(T v) { B b; memcpy(&b, &v, sizeof b); return b; }                       \
  static T NAME##_value(B b) { T v; memcpy(&v, &b, sizeof v); return v; }                      \
  static T NAME(gex_OP_t op, T *where, T a, T b) {                                            \
    B *p = (B *)(void *)where;                                                                \
    switch (op) {                                                                             \
      case GEX_OP_SET: __atomic_store_n(p, NAME##_bits(a), SC); return a;                     \
      case GEX_OP_SWAP: return NAME##_value(__atomic_exchange_n(p, NAME##_bits(a), SC));      \
      case GEX_OP_GET: return NAME##_value(__atomic_load_n(p, SC));                           \
      case GEX_OP_CAS: case GEX_OP_FCAS: {                                                    \
        B seen = NAME##_bits(a);                                                              \
        __atomic_compare_exchange_n(p, &seen, NAME##_bits(b), false, SC, SC);                 \
        return NAME##_value(seen);                                                            \
      }                                                                                       \
      default: {                                                                              \
        B oldbits = __atomic_load_n(p, RLX);                                                  \
        T old;                                                                                \
        do {                                                                                  \
          old = NAME##_value(oldbits);                                                        \
          T next;                                                                             \
          if (op & (GEX_OP_ADD | GEX_OP_FADD)) next = old + a;                                 \
          else if (op & (GEX_OP_SUB | GEX_OP_FSUB)) next = old - a;                            \
          else if (op & (GEX_OP_MULT | GEX_OP_FMULT)) next = old * a;                          \
          else if (op & (GEX_OP_INC | GEX_OP_FINC)) next = old + 1;                            \
          else if (op & (GEX_OP_DEC | GEX_OP_FDEC)) next = old - 1;                            \
          else if (op & (GEX_OP_MIN | GEX_OP_FMIN)) next = old < a ? old : a;                  \
          else next = old > a ? old : a;                                                      \
          if (NAME##_bits(next) == oldbits) break; /* nothing to write (a min already met) */  \
          if (__atomic_compare_exchange_n(p, &oldbits, NAME##_bits(next), true, SC, RLX))      \
            break;                                                                            \
        } while (1);                                                                          \
        return old;                                                                           \
      }                                                                                       \
    }                                                                                         \
  }
FLOAT_APPLY(apply_flt, float, uint32_t)
FLOAT_APPLY(apply_dbl, double, uint64_t)

gasneti_ad_val_t gasneti_ad_apply(gex_DT_t dt, gex_OP_t op, void *addr, gasneti_ad_val_t a,
                                  gasneti_ad_val_t b) {
  gasneti_ad_val_t old;
  memset(&old, 0, sizeof old);
  switch (dt) {
    case GEX_DT_I32: old.gasneti_i32 = apply_i32(op, addr, a.gasneti_i32, b.gasneti_i32); break;
    case GEX_DT_U32: old.gasneti_u32 = apply_u32(op, addr, a.gasneti_u32, b.gasneti_u32); break;
    case GEX_DT_I64: old.gasneti_i64 = apply_i64(op, addr, a.gasneti_i64, b.gasneti_i64); break;
    case GEX_DT_U64: old.gasneti_u64 = apply_u64(op, addr, a.gasneti_u64, b.gasneti_u64); break;
    case GEX_DT_FLT: old.gasneti_flt = apply_flt(op, addr, a.gasneti_flt, b.gasneti_flt); break;
    default: old.gasneti_dbl = apply_dbl(op, addr, a.gasneti_dbl, b.gasneti_dbl); break;
  }
  return old;
}
