/* ex_rma_test.c: GASNet-EX RMA checked byte for byte: every put and get form (blocking, NB with
 * each lc_opt, NBI with each lc_opt, access regions) of 0 bytes to 1 MiB, aligned and not, with
 * local buffers in and out of the segment, to the right neighbour and to itself; value forms of
 * 1, 2, 4 and 8 bytes; arrays of events completed with Test/Wait Some/All; gex_NBI_Test and
 * gex_NBI_Wait per event category; and a GASNet-1 handle synchronised as an event. */
#include <unistd.h>

#include "ex_test_util.h"

#define BIG (1u << 20)
#define AREA (BIG + 4096) /* room for an unaligned transfer of BIG */
#define PUT_AREA 0        /* written by one writer at a time, checked by the owner */
#define GET_AREA AREA     /* pattern(owner), filled before any get */
#define LOCAL_AREA (2 * AREA)
#define SEGSIZE (3 * AREA)
#define MANY 200

static gex_Rank_t me, nranks;
static void **segs;
static uint8_t *heap; /* local buffer outside the segment */

static uint8_t *seg_at(gex_Rank_t rank, size_t off) { return (uint8_t *)segs[rank] + off; }

static size_t sizes[] = {0, 1, 7, 8, 63, 4096, 65536, BIG};
#define NSIZES (sizeof sizes / sizeof sizes[0])

enum { PUT_BLOCKING, PUT_NB_NOW, PUT_NB_DEFER, PUT_NB_EVENT, PUT_NB_TEST, PUT_NBI_NOW,
       PUT_NBI_DEFER, PUT_NBI_GROUP, PUT_REGION, NPUTKINDS };
enum { GET_BLOCKING, GET_NB, GET_NB_TEST, GET_NBI, GET_REGION, NGETKINDS };

static uint32_t seed_of(gex_Rank_t writer, int kind, int size_i, int variant) {
  return (uint32_t)(writer * 7919 + kind * 101 + size_i * 13 + variant);
}

/* Polls until an event is complete: the Test never polls by itself. */
static void test_until_done(gex_Event_t e) {
  while (gex_Event_Test(e)) gasnet_AMPoll();
}

static void do_put(int kind, gex_Rank_t target, uint8_t *dst, uint8_t *src, size_t len) {
  gex_Event_t e, lc = GEX_EVENT_NO_OP;
  switch (kind) {
    case PUT_BLOCKING: EX_SAFE(gex_RMA_PutBlocking(ex_tm, target, dst, src, len, 0)); break;
    case PUT_NB_NOW:
      e = gex_RMA_PutNB(ex_tm, target, dst, src, len, GEX_EVENT_NOW, 0);
      memset(src, 0xEE, len); /* locally complete: the source is reusable at once */
      gex_Event_Wait(e);
      break;
    case PUT_NB_DEFER: gex_Event_Wait(gex_RMA_PutNB(ex_tm, target, dst, src, len, GEX_EVENT_DEFER, 0)); break;
    case PUT_NB_EVENT:
      e = gex_RMA_PutNB(ex_tm, target, dst, src, len, &lc, 0);
      gex_Event_Wait(lc); /* then the source may change */
      memset(src, 0xEE, len);
      gex_Event_Wait(e);
      break;
    case PUT_NB_TEST: test_until_done(gex_RMA_PutNB(ex_tm, target, dst, src, len, GEX_EVENT_DEFER, 0)); break;
    case PUT_NBI_NOW:
      EX_SAFE(gex_RMA_PutNBI(ex_tm, target, dst, src, len, GEX_EVENT_NOW, 0));
      memset(src, 0xEE, len);
      gex_NBI_Wait(GEX_EC_PUT, 0);
      break;
    case PUT_NBI_DEFER:
      EX_SAFE(gex_RMA_PutNBI(ex_tm, target, dst, src, len, GEX_EVENT_DEFER, 0));
      gex_NBI_Wait(GEX_EC_ALL, 0);
      break;
    case PUT_NBI_GROUP:
      EX_SAFE(gex_RMA_PutNBI(ex_tm, target, dst, src, len, GEX_EVENT_GROUP, 0));
      gex_NBI_Wait(GEX_EC_LC, 0);
      memset(src, 0xEE, len);
      while (gex_NBI_Test(GEX_EC_PUT, 0)) gasnet_AMPoll();
      break;
    default: /* PUT_REGION */
      gex_NBI_BeginAccessRegion(0);
      EX_SAFE(gex_RMA_PutNBI(ex_tm, target, dst, src, len, GEX_EVENT_DEFER, 0));
      gex_Event_Wait(gex_NBI_EndAccessRegion(0));
  }
}

static void do_get(int kind, gex_Rank_t target, uint8_t *dst, uint8_t *src, size_t len) {
  switch (kind) {
    case GET_BLOCKING: EX_SAFE(gex_RMA_GetBlocking(ex_tm, dst, target, src, len, 0)); break;
    case GET_NB: gex_Event_Wait(gex_RMA_GetNB(ex_tm, dst, target, src, len, 0)); break;
    case GET_NB_TEST: test_until_done(gex_RMA_GetNB(ex_tm, dst, target, src, len, 0)); break;
    case GET_NBI:
      EX_SAFE(gex_RMA_GetNBI(ex_tm, dst, target, src, len, 0));
      gex_NBI_Wait(GEX_EC_GET, 0);
      break;
    default: /* GET_REGION */
      gex_NBI_BeginAccessRegion(0);
      EX_SAFE(gex_RMA_GetNBI(ex_tm, dst, target, src, len, 0));
      gex_Event_Wait(gex_NBI_EndAccessRegion(0));
  }
}

static void puts_to(gex_Rank_t target, bool aligned) {
  gex_Rank_t writer = (me + nranks - (target == me ? 0 : 1)) % nranks; /* who writes to me */
  size_t off = aligned ? 0 : 3;
  for (int kind = 0; kind < NPUTKINDS; kind++)
    for (size_t si = 0; si < NSIZES; si++) {
      size_t len = sizes[si];
      uint8_t *src = (kind & 1) ? heap + off : seg_at(me, LOCAL_AREA + off);
      fill_pattern(src, len, seed_of(me, kind, (int)si, aligned));
      do_put(kind, target, seg_at(target, PUT_AREA + off), src, len);
      ex_barrier();
      size_t bad = check_pattern(seg_at(me, PUT_AREA + off), len,
                                 seed_of(writer, kind, (int)si, aligned));
      CHECK(bad == len, "put kind %d of %zu bytes%s from rank %u: byte %zu wrong", kind, len,
            aligned ? "" : " (unaligned)", (unsigned)writer, bad);
      ex_barrier();
    }
}

static void gets_from(gex_Rank_t target, bool aligned) {
  size_t off = aligned ? 0 : 5;
  for (int kind = 0; kind < NGETKINDS; kind++)
    for (size_t si = 0; si < NSIZES; si++) {
      size_t len = sizes[si];
      uint8_t *dst = (kind & 1) ? heap + off : seg_at(me, LOCAL_AREA + off);
      memset(dst, 0xAA, len);
      do_get(kind, target, dst, seg_at(target, GET_AREA + off), len);
      size_t bad = len;
      for (size_t j = 0; j < len && bad == len; j++)
        if (dst[j] != pattern_byte(1000 + target, off + j)) bad = j;
      CHECK(bad == len, "get kind %d of %zu bytes%s from rank %u: byte %zu wrong", kind, len,
            aligned ? "" : " (unaligned)", (unsigned)target, bad);
    }
}

static void values_with(gex_Rank_t target) {
  static const size_t widths[] = {1, 2, 4, 8};
  for (int w = 0; w < 4; w++) {
    size_t n = widths[w];
    uint8_t *slot = seg_at(target, PUT_AREA + 64 * w); /* my slot at the target: aligned */
    gex_RMA_Value_t v = (0x0102030405060708ull ^ (me * 0x1111ull)) & (n == 8 ? ~0ull : (1ull << (8 * n)) - 1);
    EX_SAFE(gex_RMA_PutBlockingVal(ex_tm, target, slot, v, n, 0));
    CHECK(gex_RMA_GetBlockingVal(ex_tm, target, slot, n, 0) == v, "value of %zu bytes", n);
    EX_SAFE(gex_RMA_PutNBIVal(ex_tm, target, slot, v ^ 1, n, 0));
    gex_NBI_Wait(GEX_EC_PUT, 0);
    CHECK(gex_RMA_GetBlockingVal(ex_tm, target, slot, n, 0) == (v ^ 1), "NBI value of %zu", n);
    gex_Event_Wait(gex_RMA_PutNBVal(ex_tm, target, slot, v ^ 2, n, 0));
    CHECK(gex_RMA_GetBlockingVal(ex_tm, target, slot, n, 0) == (v ^ 2), "NB value of %zu", n);
  }
}

/* MANY small puts and gets at once, completed through event arrays. */
static void event_arrays(gex_Rank_t target) {
  static gex_Event_t ev[MANY];
  uint8_t *src = heap, *got = heap + 8 * MANY;
  for (int round = 0; round < 4; round++) {
    for (int i = 0; i < MANY; i++) {
      uint64_t v = ((uint64_t)me << 40) | ((uint64_t)round << 32) | (uint64_t)i;
      memcpy(src + 8 * i, &v, 8);
      ev[i] = gex_RMA_PutNB(ex_tm, target, seg_at(target, PUT_AREA + 8 * i), src + 8 * i, 8,
                            GEX_EVENT_DEFER, 0);
    }
    switch (round) {
      case 0: gex_Event_WaitAll(ev, MANY, 0); break;
      case 1:
        while (gex_Event_TestAll(ev, MANY, 0)) gasnet_AMPoll();
        break;
      case 2: {
        int left = MANY;
        while (left) {
          gex_Event_WaitSome(ev, MANY, 0);
          left = 0;
          for (int i = 0; i < MANY; i++) left += ev[i] != GEX_EVENT_INVALID;
        }
        break;
      }
      default: {
        int left = MANY;
        while (left) {
          if (gex_Event_TestSome(ev, MANY, 0)) gasnet_AMPoll();
          left = 0;
          for (int i = 0; i < MANY; i++) left += ev[i] != GEX_EVENT_INVALID;
        }
      }
    }
    for (int i = 0; i < MANY; i++) CHECK(ev[i] == GEX_EVENT_INVALID, "event %d not cleared", i);
    for (int i = 0; i < MANY; i++)
      ev[i] = gex_RMA_GetNB(ex_tm, got + 8 * i, target, seg_at(target, PUT_AREA + 8 * i), 8, 0);
    gex_Event_WaitAll(ev, MANY, 0);
    for (int i = 0; i < MANY; i++) {
      uint64_t v, want = ((uint64_t)me << 40) | ((uint64_t)round << 32) | (uint64_t)i;
      memcpy(&v, got + 8 * i, 8);
      CHECK(v == want, "round %d: word %d reads %llx, expected %llx", round, i,
            (unsigned long long)v, (unsigned long long)want);
    }
  }
  CHECK(gex_NBI_Test(GEX_EC_ALL, 0) == 0, "no NBI operation is outstanding, yet NBI_Test fails");
  CHECK(gex_Event_QueryLeaf(GEX_EVENT_INVALID, GEX_EC_LC) == GEX_EVENT_INVALID, "leaf of INVALID");
}

int main(int argc, char **argv) {
  ex_start(&argc, &argv, "EX_RMA_TEST", SEGSIZE);
  me = gex_TM_QueryRank(ex_tm);
  nranks = gex_TM_QuerySize(ex_tm);
  segs = malloc(nranks * sizeof *segs);
  for (gex_Rank_t r = 0; r < nranks; r++) segs[r] = ex_seg_of(r);
  heap = malloc(AREA + 64);
  fill_pattern(seg_at(me, GET_AREA), AREA, 1000 + me); /* gets read it at an offset */
  ex_barrier();
  gex_Rank_t targets[2] = {(gex_Rank_t)((me + 1) % nranks), me};
  for (int t = 0; t < 2; t++) {
    gex_Rank_t target = targets[t];
    for (int aligned = 1; aligned >= 0; aligned--) {
      puts_to(target, aligned);
      gets_from(target, aligned);
      ex_barrier();
    }
    values_with(target);
    ex_barrier();
    event_arrays(target);
    ex_barrier();
  }
  /* A GASNet-1 handle is an event, and access regions are shared between the APIs. */
  gex_Rank_t right = (me + 1) % nranks;
  gex_NBI_BeginAccessRegion(0);
  EX_SAFE(gex_RMA_PutNBI(ex_tm, right, seg_at(right, PUT_AREA), heap, 64, GEX_EVENT_NOW, 0));
  gasnet_handle_t h = gasnet_end_nbi_accessregion();
  gex_Event_Wait(h);
  ex_finish("ex_rma_test");
}
