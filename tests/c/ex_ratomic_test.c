/* ex_ratomic_test.c [ITERS]: GASNet-EX remote atomics against a sequential model, then under
 * contention from every rank.
 *   - model: for each of the six datatypes, every operation the type has, ITERS times from a
 *     known value (SET first), on the next rank's segment (a neighbour's, a far rank's or this
 *     rank's own, depending on the job): the fetched old value and the value a GET then reads
 *     must be what plain C arithmetic gives (integers wrap as unsigned arithmetic does); NB and
 *     NBI forms alternate, NBI completed by gex_NBI_Wait with the operation's event category
 *     (and once inside an access region);
 *   - contention: every rank adds to rank 0's counters ITERS times (FADD and INC on an I64,
 *     FADD of 1.0 on a DBL, compare-and-swap increments on a U64, one bit each with FOR on a
 *     U32): each fetched value is below the total and rises, and the totals are exact;
 *   - flags: GEX_FLAG_AD_MY_RANK and GEX_FLAG_AD_MY_NBRHD on the caller's own location, and
 *     GEX_FLAG_RANK_IS_JOBRANK.
 * Prints "ex_ratomic_test: rank R OK" per rank. */
#include <gasnet_ratomic.h>

#include "ex_test_util.h"

static gex_Rank_t me, nranks;
static uint64_t rng_state;

static uint32_t rnd(void) { /* xorshift64*, seeded per rank */
  rng_state ^= rng_state >> 12, rng_state ^= rng_state << 25, rng_state ^= rng_state >> 27;
  return (uint32_t)((rng_state * 2685821657736338717ull) >> 32);
}

/* A small value of either sign (products of two stay exact in every type). */
static int32_t small(void) { return (int32_t)(rnd() % 2001) - 1000; }

#define INT_OPS                                                                              \
  (GEX_OP_ADD | GEX_OP_FADD | GEX_OP_SUB | GEX_OP_FSUB | GEX_OP_MULT | GEX_OP_FMULT |         \
   GEX_OP_MIN | GEX_OP_FMIN | GEX_OP_MAX | GEX_OP_FMAX | GEX_OP_INC | GEX_OP_FINC |           \
   GEX_OP_DEC | GEX_OP_FDEC | GEX_OP_AND | GEX_OP_FAND | GEX_OP_OR | GEX_OP_FOR | GEX_OP_XOR | \
   GEX_OP_FXOR | GEX_OP_SET | GEX_OP_SWAP | GEX_OP_CAS | GEX_OP_FCAS | GEX_OP_GET)
#define BITWISE (GEX_OP_AND | GEX_OP_FAND | GEX_OP_OR | GEX_OP_FOR | GEX_OP_XOR | GEX_OP_FXOR)
#define FETCHING                                                                            \
  (GEX_OP_FADD | GEX_OP_FSUB | GEX_OP_FMULT | GEX_OP_FMIN | GEX_OP_FMAX | GEX_OP_FINC |      \
   GEX_OP_FDEC | GEX_OP_FAND | GEX_OP_FOR | GEX_OP_FXOR | GEX_OP_SWAP | GEX_OP_FCAS | GEX_OP_GET)

/* What an operation leaves at the location, computed in the type W (unsigned for integers:
 * wrapping as the hardware does; the type itself for floating point). */
#define MODEL(W, op, old, a, b)                                                                  \
  ((op) & (GEX_OP_ADD | GEX_OP_FADD)     ? (W)(old) + (W)(a)                                     \
   : (op) & (GEX_OP_SUB | GEX_OP_FSUB)   ? (W)(old) - (W)(a)                                     \
   : (op) & (GEX_OP_MULT | GEX_OP_FMULT) ? (W)(old) * (W)(a)                                     \
   : (op) & (GEX_OP_MIN | GEX_OP_FMIN)   ? ((old) < (a) ? (W)(old) : (W)(a))                     \
   : (op) & (GEX_OP_MAX | GEX_OP_FMAX)   ? ((old) > (a) ? (W)(old) : (W)(a))                     \
   : (op) & (GEX_OP_INC | GEX_OP_FINC)   ? (W)(old) + (W)1                                       \
   : (op) & (GEX_OP_DEC | GEX_OP_FDEC)   ? (W)(old) - (W)1                                       \
   : (op) & (GEX_OP_SET | GEX_OP_SWAP)   ? (W)(a)                                                \
   : (op) & (GEX_OP_CAS | GEX_OP_FCAS)   ? ((old) == (a) ? (W)(b) : (W)(old))                    \
                                         : (W)(old))

#define BITWISE_MODEL(W, op, old, a)                           \
  ((op) & (GEX_OP_AND | GEX_OP_FAND)  ? (W)(old) & (W)(a)      \
   : (op) & (GEX_OP_OR | GEX_OP_FOR)  ? (W)(old) | (W)(a)      \
                                      : (W)(old) ^ (W)(a))

/* Applies op through the NB or NBI form, waiting for it. */
#define DEFINE_DO(NAME, T)                                                                    \
  static T do_##NAME(gex_AD_t ad, int nbi, gex_Rank_t rank, T *target, gex_OP_t op, T a, T b, \
                     gex_Flags_t flags) {                                                     \
    T result = 0;                                                                             \
    T *rp = (op & FETCHING) ? &result : NULL;                                                 \
    if (nbi) {                                                                                \
      CHECK(gex_AD_OpNBI_##NAME(ad, rp, rank, target, op, a, b, flags) == 0, "NBI refused");  \
      gex_NBI_Wait(op == GEX_OP_SET ? GEX_EC_PUT : op == GEX_OP_GET ? GEX_EC_GET : GEX_EC_RMW, \
                   0);                                                                        \
    } else {                                                                                  \
      gex_Event_Wait(gex_AD_OpNB_##NAME(ad, rp, rank, target, op, a, b, flags));              \
    }                                                                                         \
    return result;                                                                            \
  }
DEFINE_DO(I32, int32_t)
DEFINE_DO(U32, uint32_t)
DEFINE_DO(I64, int64_t)
DEFINE_DO(U64, uint64_t)
DEFINE_DO(FLT, float)
DEFINE_DO(DBL, double)

/* What a bitwise operation leaves (integer types; floating-point types have none). */
#define DEFINE_BITS(NAME, T)                                                                    \
  static T bits_##NAME(gex_OP_t op, T old, T a) { return (T)BITWISE_MODEL(T, op, old, a); }
DEFINE_BITS(I32, uint32_t)
DEFINE_BITS(U32, uint32_t)
DEFINE_BITS(I64, uint64_t)
DEFINE_BITS(U64, uint64_t)
#define NO_BITS(op, old, a) (old)

/* The model test of one type: T the type, W its arithmetic type, F nonzero for floating point,
 * BITS its bitwise model. */
#define DEFINE_MODEL_TEST(NAME, T, W, F, BITS)                                                  \
  static void model_##NAME(gex_Rank_t peer, T *target, int iters) {                            \
    gex_OP_t all = (gex_OP_t)(F ? INT_OPS & ~BITWISE : INT_OPS);                               \
    gex_AD_t ad;                                                                                \
    gex_AD_Create(&ad, ex_tm, GEX_DT_##NAME, all, 0);                                           \
    CHECK(gex_AD_QueryDT(ad) == GEX_DT_##NAME && gex_AD_QueryOps(ad) == all &&                  \
              gex_AD_QueryTM(ad) == ex_tm && gex_AD_QueryFlags(ad) == 0,                        \
          "gex_AD_Query* of " #NAME);                                                           \
    for (int i = 0; i < iters; i++)                                                             \
      for (unsigned bit = 0; bit < 25; bit++) {                                                 \
        gex_OP_t op = (gex_OP_t)1 << bit;                                                       \
        if (!(op & all)) continue;                                                              \
        T start = (T)small(), a = (T)small(), b = (T)small();                                   \
        if ((op & (GEX_OP_CAS | GEX_OP_FCAS)) && rnd() % 2) a = start; /* a matching compare */ \
        int nbi = (int)(rnd() % 2);                                                             \
        do_##NAME(ad, nbi, peer, target, GEX_OP_SET, start, 0, 0);                              \
        T old = do_##NAME(ad, !nbi, peer, target, op, a, b, 0);                                 \
        T want;                                                                                 \
        if (op & BITWISE) want = BITS(op, start, a);                                            \
        else want = (T)MODEL(W, op, start, a, b);                                               \
        T now = do_##NAME(ad, nbi, peer, target, GEX_OP_GET, 0, 0, 0);                          \
        if (op & FETCHING)                                                                      \
          CHECK(old == start, #NAME " op bit %u fetched %g, not %g", bit, (double)old,           \
                (double)start);                                                                 \
        CHECK(now == want, #NAME " op bit %u from %g with %g, %g left %g, not %g", bit,          \
              (double)start, (double)a, (double)b, (double)now, (double)want);                  \
      }                                                                                         \
    /* A few operations in one access region, completed by its event. */                       \
    do_##NAME(ad, 0, peer, target, GEX_OP_SET, (T)5, 0, 0);                                     \
    T fetched[3] = {0, 0, 0};                                                                   \
    gex_NBI_BeginAccessRegion(0);                                                               \
    CHECK(gex_AD_OpNBI_##NAME(ad, &fetched[0], peer, target, GEX_OP_FADD, (T)2, 0, 0) == 0,     \
          "NBI");                                                                               \
    gex_Event_t region = gex_NBI_EndAccessRegion(0);                                            \
    gex_Event_Wait(region);                                                                     \
    CHECK(fetched[0] == (T)5, #NAME " in an access region fetched %g", (double)fetched[0]);     \
    CHECK(do_##NAME(ad, 0, peer, target, GEX_OP_GET, 0, 0, 0) == (T)7, #NAME " region's add"); \
    ex_barrier(); /* every rank is done with the domain */                                      \
    gex_AD_Destroy(ad);                                                                         \
  }
DEFINE_MODEL_TEST(I32, int32_t, uint32_t, 0, (int32_t)bits_I32)
DEFINE_MODEL_TEST(U32, uint32_t, uint32_t, 0, bits_U32)
DEFINE_MODEL_TEST(I64, int64_t, uint64_t, 0, (int64_t)bits_I64)
DEFINE_MODEL_TEST(U64, uint64_t, uint64_t, 0, bits_U64)
DEFINE_MODEL_TEST(FLT, float, float, 1, NO_BITS)
DEFINE_MODEL_TEST(DBL, double, double, 1, NO_BITS)

/* Every rank at rank 0's counters at once. */
static void contention(uint8_t *seg0, int iters) {
  int64_t *add = (int64_t *)(void *)(seg0 + 1024);
  double *dsum = (double *)(void *)(seg0 + 1032);
  uint64_t *cas = (uint64_t *)(void *)(seg0 + 1040);
  uint32_t *bits = (uint32_t *)(void *)(seg0 + 1048);
  gex_AD_t a64, adbl, acas, abits;
  gex_AD_Create(&a64, ex_tm, GEX_DT_I64, GEX_OP_FADD | GEX_OP_INC | GEX_OP_SET | GEX_OP_GET, 0);
  gex_AD_Create(&adbl, ex_tm, GEX_DT_DBL, GEX_OP_FADD | GEX_OP_SET | GEX_OP_GET, 0);
  gex_AD_Create(&acas, ex_tm, GEX_DT_U64, GEX_OP_FCAS | GEX_OP_SET | GEX_OP_GET, 0);
  gex_AD_Create(&abits, ex_tm, GEX_DT_U32, GEX_OP_FOR | GEX_OP_SET | GEX_OP_GET, 0);
  if (me == 0) {
    do_I64(a64, 0, 0, add, GEX_OP_SET, 0, 0, 0);
    do_DBL(adbl, 0, 0, dsum, GEX_OP_SET, 0, 0, 0);
    do_U64(acas, 0, 0, cas, GEX_OP_SET, 0, 0, 0);
    do_U32(abits, 0, 0, bits, GEX_OP_SET, 0, 0, 0);
  }
  ex_barrier();
  int64_t total = (int64_t)nranks * iters * 2, last = -1;
  for (int i = 0; i < iters; i++) {
    int64_t got = do_I64(a64, i % 2, 0, add, GEX_OP_FADD, 1, 0, 0);
    CHECK(got > last && got < total, "FADD fetched %lld after %lld (total %lld)", (long long)got,
          (long long)last, (long long)total);
    last = got;
    do_I64(a64, i % 2, 0, add, GEX_OP_INC, 0, 0, 0);
    double d = do_DBL(adbl, i % 2, 0, dsum, GEX_OP_FADD, 1.0, 0, 0);
    CHECK(d >= 0 && d < (double)nranks * iters, "DBL FADD fetched %g", d);
    for (uint64_t seen = do_U64(acas, 0, 0, cas, GEX_OP_GET, 0, 0, 0);;) {
      uint64_t was = do_U64(acas, i % 2, 0, cas, GEX_OP_FCAS, seen, seen + 1, 0);
      if (was == seen) break;
      seen = was; /* someone else's increment came first: try from theirs */
    }
  }
  do_U32(abits, 0, 0, bits, GEX_OP_FOR, 1u << (me % 32), 0, 0);
  ex_barrier();
  if (me == 0) {
    int64_t sum = do_I64(a64, 0, 0, add, GEX_OP_GET, 0, 0, 0);
    CHECK(sum == total, "the I64 counter ends at %lld, not %lld", (long long)sum, (long long)total);
    double dsumv = do_DBL(adbl, 0, 0, dsum, GEX_OP_GET, 0, 0, 0);
    CHECK(dsumv == (double)nranks * iters, "the DBL sum ends at %g", dsumv);
    uint64_t casv = do_U64(acas, 0, 0, cas, GEX_OP_GET, 0, 0, 0);
    CHECK(casv == (uint64_t)nranks * (uint64_t)iters, "the CAS counter ends at %llu",
          (unsigned long long)casv);
    uint32_t want = 0;
    for (gex_Rank_t r = 0; r < nranks; r++) want |= 1u << (r % 32);
    uint32_t bitsv = do_U32(abits, 0, 0, bits, GEX_OP_GET, 0, 0, 0);
    CHECK(bitsv == want, "the FOR bits are 0x%x, not 0x%x", bitsv, want);
  }
  ex_barrier();
  gex_AD_Destroy(a64);
  gex_AD_Destroy(adbl);
  gex_AD_Destroy(acas);
  gex_AD_Destroy(abits);
}

static void flags(uint8_t *mine) {
  int64_t *x = (int64_t *)(void *)(mine + 2048);
  gex_AD_t ad;
  gex_AD_Create(&ad, ex_tm, GEX_DT_I64, GEX_OP_SET | GEX_OP_FADD, GEX_FLAG_AD_FAVOR_MY_RANK);
  CHECK(gex_AD_QueryFlags(ad) == GEX_FLAG_AD_FAVOR_MY_RANK, "QueryFlags");
  int marker;
  gex_AD_SetCData(ad, &marker);
  CHECK(gex_AD_QueryCData(ad) == &marker, "QueryCData");
  do_I64(ad, 0, me, x, GEX_OP_SET, 40, 0, GEX_FLAG_AD_MY_RANK | GEX_FLAG_AD_REL);
  int64_t v = do_I64(ad, 1, me, x, GEX_OP_FADD, 1, 0, GEX_FLAG_AD_MY_NBRHD | GEX_FLAG_AD_ACQ);
  CHECK(v == 40, "FADD with MY_NBRHD fetched %lld", (long long)v);
  v = do_I64(ad, 0, gex_TM_TranslateRankToJobrank(ex_tm, me), x, GEX_OP_FADD, 1, 0,
             GEX_FLAG_RANK_IS_JOBRANK);
  CHECK(v == 41, "FADD with RANK_IS_JOBRANK fetched %lld", (long long)v);
  ex_barrier();
  gex_AD_Destroy(ad);
}

int main(int argc, char **argv) {
  ex_start(&argc, &argv, "EX_RATOMIC", 1 << 16);
  int iters = argc > 1 ? atoi(argv[1]) : 200;
  me = gex_TM_QueryRank(ex_tm), nranks = gex_TM_QuerySize(ex_tm);
  rng_state = 0x9E3779B97F4A7C15ull * (me + 1);
  gex_Rank_t peer = (me + 1) % nranks;
  uint8_t *peer_seg = ex_seg_of(peer);
  model_I32(peer, (int32_t *)(void *)(peer_seg + 0), iters);
  model_U32(peer, (uint32_t *)(void *)(peer_seg + 64), iters);
  model_I64(peer, (int64_t *)(void *)(peer_seg + 128), iters);
  model_U64(peer, (uint64_t *)(void *)(peer_seg + 192), iters);
  model_FLT(peer, (float *)(void *)(peer_seg + 256), iters);
  model_DBL(peer, (double *)(void *)(peer_seg + 320), iters);
  contention(ex_seg_of(0), iters * 5);
  flags(ex_seg_of(me));
  ex_barrier();
  if (test_failures) {
    fprintf(stderr, "ex_ratomic_test: rank %u: %d failure(s)\n", (unsigned)me, test_failures);
    gasnet_exit(1);
  }
  printf("ex_ratomic_test: rank %u OK\n", (unsigned)me);
  gasnet_exit(0);
}
