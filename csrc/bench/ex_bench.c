/* ex_bench.c: the GASNet-EX calls beside their GASNet-1 forms, between ranks 0 and 1, each pair
 * timed back to back in every repeat (so a drift of the machine moves both; the _vs_ figure is
 * the median of the repeats' ratios):
 *   ex_am_short_rtt     gex_AM_RequestShort0 / gex_AM_ReplyShort0 round trip (EX-registered
 *                       handlers) next to gasnet_AMRequestShort0's (am_short_rtt)
 *   ex_put_latency      gex_RMA_PutBlocking of 8 bytes next to gasnet_put's (put_latency)
 *   ex_np_medium_rtt    a Medium round trip whose payload the client writes where
 *                       gex_AM_PrepareRequestMedium put it (a runtime buffer), next to one whose
 *                       payload it writes into its own buffer and sends (gex_AM_RequestMedium0,
 *                       ex_fixed_medium_rtt), at 4 KiB and the largest Medium
 *   ex_imm_flood        rank 0 sends AMShorts with GEX_FLAG_IMMEDIATE, polling only after a
 *                       refusal: microseconds a message; ex_imm_refusals counts the refusals and
 *                       ex_imm_longest_call is the longest single call (it never waits)
 *   ad_fadd             remote atomics. Where ranks 0 and 1 share memory: both add 1 in turn to
 *                       a word of rank 1's segment (each waits for the other's add: a ping-pong
 *                       of fetch-adds), with gex_AD_OpNB_I64 (GEX_OP_FADD, and GEX_OP_GET to
 *                       wait), next to the same with __atomic_fetch_add and __atomic_load on the
 *                       mapped word (raw_fadd_pingpong): microseconds a round (two adds).
 *                       Across the network: rank 0's blocking fetch-add round trip to rank 1
 *                       (ad_fadd_rtt) next to its AMShort round trip (am_short_rtt).
 * Usage: ex_bench [--json] [--quick] [--only NAME[,NAME...]] */
#include <gasnet_ratomic.h>

#include "bench_util.h"

static const char *const names[] = {"ex_am_short_rtt", "ex_put_latency", "ex_np_medium_rtt",
                                    "ex_imm_flood", "ad_fadd", NULL};
static gex_TM_t tm;
static const char *path;
static volatile long replies, flooded, stop;
static gasnet_handler_t g1_ping, g1_pong;
static gex_AM_Index_t ex_ping, ex_pong, ex_mping, ex_mpong, ex_flood, ex_stop;

static void g1_ping_h(gasnet_token_t t) { gasnet_AMReplyShort0(t, g1_pong); }
static void g1_pong_h(gasnet_token_t t) { (void)t, replies++; }
static void ex_ping_h(gex_Token_t t) { gex_AM_ReplyShort0(t, ex_pong, 0); }
static void ex_pong_h(gex_Token_t t) { (void)t, replies++; }
/* A Medium ping answered by a Short; the handler reads the payload's last byte, as a client
 * that uses it would at least touch it. */
static volatile unsigned char sink;
static void ex_mping_h(gex_Token_t t, void *buf, size_t n) {
  sink = ((unsigned char *)buf)[n - 1];
  gex_AM_ReplyShort0(t, ex_mpong, 0);
}
static void ex_mpong_h(gex_Token_t t) { (void)t, replies++; }
static void ex_flood_h(gex_Token_t t) { (void)t, flooded++; }
static void ex_stop_h(gex_Token_t t) { (void)t, stop = 1; }

/* One timed loop of iters round trips of one form; microseconds each. */
typedef void (*once_fn)(long i, size_t size);
static double timed(once_fn fn, long iters, size_t size) {
  replies = 0;
  double t0 = now_us();
  for (long i = 0; i < iters; i++) {
    fn(i, size);
    GASNET_BLOCKUNTIL(replies == i + 1);
  }
  return (now_us() - t0) / (double)iters;
}

static void g1_short(long i, size_t size) { (void)i, (void)size, gasnet_AMRequestShort0(1, g1_ping); }
static void ex_short(long i, size_t size) { (void)i, (void)size, gex_AM_RequestShort0(tm, 1, ex_ping, 0); }

static unsigned char *own_buf;
/* The fixed-payload Medium: the client writes its payload into its own buffer, then sends it. */
static void fixed_medium(long i, size_t size) {
  memset(own_buf, (int)i, size);
  gex_AM_RequestMedium0(tm, 1, ex_mping, own_buf, size, GEX_EVENT_NOW, 0);
}
/* The negotiated one: it writes the payload where Prepare says, then commits. */
static void np_medium(long i, size_t size) {
  gex_AM_SrcDesc_t sd = gex_AM_PrepareRequestMedium(tm, 1, NULL, size, size, NULL, 0, 0);
  memset(gex_AM_SrcDescAddr(sd), (int)i, size);
  gex_AM_CommitRequestMedium0(sd, ex_mping, size);
}

/* Two forms, alternated within every repeat (which goes first alternates too); rank 0 reports
 * both and their ratio (b / a). */
static void paired(const char *name_a, const char *name_b, const char *ratio_name, once_fn a,
                   once_fn b, long iters, size_t size) {
  double sa[64], sb[64], ratio[64];
  for (int r = -1; r < repeats; r++) {
    double ta, tb;
    if (r & 1) tb = timed(b, iters, size), ta = timed(a, iters, size);
    else ta = timed(a, iters, size), tb = timed(b, iters, size);
    if (r < 0) continue;
    sa[r] = ta, sb[r] = tb, ratio[r] = tb / ta;
  }
  bench_report(name_a, path, size, "us", sa, iters);
  bench_report(name_b, path, size, "us", sb, iters);
  bench_report_ratio(ratio_name, path, size, ratio, iters, 0);
}

/* 8-byte blocking puts, GASNet-1's then EX's, repeat by repeat, each called through a pointer
 * as rma_bench calls its operations (so that neither loop is folded into its caller). */
typedef void (*put_fn)(void *dst, const uint64_t *src);
static void g1_put(void *dst, const uint64_t *src) { gasnet_put(1, dst, (void *)src, 8); }
static void ex_put(void *dst, const uint64_t *src) { gex_RMA_PutBlocking(tm, 1, dst, src, 8, 0); }
static put_fn volatile put_fns[2] = {g1_put, ex_put};

static double put_loop(put_fn fn, void *dst, long iters) {
  static uint64_t word = 1;
  double t0 = now_us();
  for (long i = 0; i < iters; i++) {
    word++;
    fn(dst, &word);
  }
  return (now_us() - t0) / (double)iters;
}

static void put_latency(void *dst, long iters) {
  double sa[64], sb[64], ratio[64];
  for (int r = -1; r < repeats; r++) {
    double ta, tb;
    if (r & 1) tb = put_loop(put_fns[1], dst, iters), ta = put_loop(put_fns[0], dst, iters);
    else ta = put_loop(put_fns[0], dst, iters), tb = put_loop(put_fns[1], dst, iters);
    if (r < 0) continue;
    sa[r] = ta, sb[r] = tb, ratio[r] = tb / ta;
  }
  bench_report("put_latency", path, 8, "us", sa, iters);
  bench_report("ex_put_latency", path, 8, "us", sb, iters);
  bench_report_ratio("ex_put_latency_vs_gasnet1", path, 8, ratio, iters, 0);
}

/* Immediate flood: rank 0 never waits in a send; rank 1 counts what arrived and answers once. */
static void imm_flood(long iters) {
  double samples[64], refusals[64], longest[64];
  for (int r = -1; r < repeats; r++) {
    gasnet_barrier(0, GASNET_BARRIERFLAG_ANONYMOUS);
    if (gasnet_mynode() > 1) continue;
    if (gasnet_mynode() == 1) {
      GASNET_BLOCKUNTIL(flooded >= iters);
      flooded -= iters;
      gasnet_AMRequestShort0(0, g1_pong);
      continue;
    }
    replies = 0;
    long refused = 0;
    double worst = 0, t0 = now_us();
    for (long i = 0; i < iters;) {
      double c0 = now_us();
      int rc = gex_AM_RequestShort0(tm, 1, ex_flood, GEX_FLAG_IMMEDIATE);
      double took = now_us() - c0;
      if (took > worst) worst = took;
      if (rc) {
        refused++;
        gasnet_AMPoll(); /* the credits come back with the peer's traffic */
      } else {
        i++;
      }
    }
    GASNET_BLOCKUNTIL(replies == 1);
    if (r < 0) continue;
    samples[r] = (now_us() - t0) / (double)iters;
    refusals[r] = (double)refused;
    longest[r] = worst;
  }
  if (gasnet_mynode() != 0) return;
  bench_report("ex_imm_flood", path, 0, "us", samples, iters);
  bench_stats_t st = bench_stats(refusals);
  bench_emit("ex_imm_refusals", path, 0, "count", st.median, st.min, st.max, 0, iters);
  bench_report("ex_imm_longest_call", path, 0, "us", longest, iters);
}

/* ---- remote atomics ------------------------------------------------------------------------ */
static gex_AD_t ad;

/* One ping-pong of fetch-adds on the word: this rank adds when the count has its parity. */
static double fadd_pingpong(int use_ad, int64_t *target, int64_t *mapped, long iters) {
  int64_t parity = gasnet_mynode(), v;
  long rounds = 0;
  double t0 = now_us();
  while (rounds < iters) {
    if (use_ad) {
      gex_Event_Wait(gex_AD_OpNB_I64(ad, &v, 1, target, GEX_OP_GET, 0, 0, 0));
      if ((v & 1) != parity) continue;
      gex_Event_Wait(gex_AD_OpNB_I64(ad, &v, 1, target, GEX_OP_FADD, 1, 0, 0));
    } else {
      if ((__atomic_load_n(mapped, __ATOMIC_ACQUIRE) & 1) != parity) continue;
      __atomic_fetch_add(mapped, 1, __ATOMIC_SEQ_CST);
    }
    rounds++;
  }
  return (now_us() - t0) / (double)iters;
}

static void ad_pshm(const gasnet_seginfo_t *seg, long iters) {
  gasnet_nodeinfo_t info[2];
  gasnet_getNodeInfo(info, 2);
  int64_t *target = (int64_t *)((uintptr_t)seg[1].addr + 4096); /* rank 1's address */
  int64_t *mapped = (int64_t *)((uintptr_t)target + (gasnet_mynode() == 0 ? info[1].offset : 0));
  double sa[64], sb[64], ratio[64], ta = 0, tb = 0;
  for (int r = -1; r < repeats; r++) {
    for (int k = 0; k < 2; k++) { /* which goes first alternates */
      int use_ad = (k + r) & 1;
      if (gasnet_mynode() == 1) *mapped = 0;
      gasnet_barrier(0, GASNET_BARRIERFLAG_ANONYMOUS);
      double t = gasnet_mynode() < 2 ? fadd_pingpong(use_ad, target, mapped, iters) : 0;
      gasnet_barrier(0, GASNET_BARRIERFLAG_ANONYMOUS);
      if (use_ad) tb = t;
      else ta = t;
    }
    if (r < 0) continue;
    sa[r] = ta, sb[r] = tb, ratio[r] = tb / ta;
  }
  if (gasnet_mynode() != 0) return;
  bench_report("raw_fadd_pingpong", "pshm", 8, "us", sa, iters);
  bench_report("ad_fadd_pingpong", "pshm", 8, "us", sb, iters);
  bench_report_ratio("ad_fadd_pingpong_vs_raw", "pshm", 8, ratio, iters, 0);
}

static int64_t *ad_word; /* rank 1's word */
static void ad_fadd_rtt_once(long i, size_t size) {
  (void)i, (void)size;
  static int64_t old;
  gex_Event_Wait(gex_AD_OpNB_I64(ad, &old, 1, ad_word, GEX_OP_FADD, 1, 0, 0));
  replies++; /* timed() counts completed round trips */
}

int main(int argc, char **argv) {
  gasnet_init(&argc, &argv);
  int quick = bench_args("ex_bench", argc, argv, names);
  gasnet_handlerentry_t g1_table[] = {{0, (void (*)())g1_ping_h}, {0, (void (*)())g1_pong_h}};
  size_t maxmed = gasnet_AMMaxMedium();
  if (gasnet_attach(g1_table, 2, 16 * GASNET_PAGESIZE, 0) != GASNET_OK) gasnet_exit(1);
  g1_ping = g1_table[0].index, g1_pong = g1_table[1].index;
  gex_EP_t ep;
  gasnet_QueryGexObjects(NULL, &ep, &tm, NULL);
  gex_AM_Entry_t ex_table[] = {
      {0, (gex_AM_Fn_t)ex_ping_h, GEX_FLAG_AM_SHORT | GEX_FLAG_AM_REQUEST, 0, NULL, "ping"},
      {0, (gex_AM_Fn_t)ex_pong_h, GEX_FLAG_AM_SHORT | GEX_FLAG_AM_REPLY, 0, NULL, "pong"},
      {0, (gex_AM_Fn_t)ex_mping_h, GEX_FLAG_AM_MEDIUM | GEX_FLAG_AM_REQUEST, 0, NULL, "mping"},
      {0, (gex_AM_Fn_t)ex_mpong_h, GEX_FLAG_AM_SHORT | GEX_FLAG_AM_REPLY, 0, NULL, "mpong"},
      {0, (gex_AM_Fn_t)ex_flood_h, GEX_FLAG_AM_SHORT | GEX_FLAG_AM_REQUEST, 0, NULL, "flood"},
      {0, (gex_AM_Fn_t)ex_stop_h, GEX_FLAG_AM_SHORT | GEX_FLAG_AM_REQUEST, 0, NULL, "stop"}};
  if (gex_EP_RegisterHandlers(ep, ex_table, 6) != GASNET_OK) gasnet_exit(1);
  gex_AD_Create(&ad, tm, GEX_DT_I64, GEX_OP_FADD | GEX_OP_GET, 0);
  ex_ping = ex_table[0].gex_index, ex_pong = ex_table[1].gex_index;
  ex_mping = ex_table[2].gex_index, ex_mpong = ex_table[3].gex_index;
  ex_flood = ex_table[4].gex_index, ex_stop = ex_table[5].gex_index;
  if (gasnet_nodes() < 2) {
    fprintf(stderr, "ex_bench: needs at least 2 ranks (gasnetrun -n 2)\n");
    gasnet_exit(2);
  }
  gasnet_seginfo_t seg[2];
  gasnet_getSegmentInfo(seg, 2);
  own_buf = malloc(maxmed);
  long scale = quick ? 100 : 1;
  path = bench_same_supernode() ? "pshm" : GASNET_CONDUIT_NAME_STR;
  if (gasnet_mynode() == 0) bench_header();
  gasnet_barrier(0, GASNET_BARRIERFLAG_ANONYMOUS);
  if (gasnet_mynode() == 0) {
    if (bench_wanted("ex_am_short_rtt"))
      paired("am_short_rtt", "ex_am_short_rtt", "ex_am_short_rtt_vs_gasnet1", g1_short,
             ex_short, 100000 / scale, 0);
    /* A put to a neighbourhood peer is a store of a few ns; across the network a round trip. */
    long put_iters = bench_same_supernode() ? 10000000 : 100000;
    if (bench_wanted("ex_put_latency")) put_latency(seg[1].addr, put_iters / scale);
    if (bench_wanted("ex_np_medium_rtt")) {
      size_t sizes[] = {4096, maxmed};
      for (int s = 0; s < 2; s++)
        paired("ex_fixed_medium_rtt", "ex_np_medium_rtt", "ex_np_medium_rtt_vs_fixed",
               fixed_medium, np_medium, 20000 / scale, sizes[s]);
    }
    if (bench_wanted("ad_fadd") && !bench_same_supernode()) {
      ad_word = (int64_t *)((uintptr_t)seg[1].addr + 4096);
      paired("am_short_rtt", "ad_fadd_rtt", "ad_fadd_rtt_vs_am_short", g1_short,
             ad_fadd_rtt_once, 100000 / scale, 8);
    }
    gex_AM_RequestShort0(tm, 1, ex_stop, 0);
  } else if (gasnet_mynode() == 1) {
    GASNET_BLOCKUNTIL(stop);
  }
  if (bench_wanted("ad_fadd") && bench_same_supernode()) ad_pshm(seg, 200000 / scale);
  if (bench_wanted("ex_imm_flood")) imm_flood(1000000 / scale);
  gasnet_barrier(0, GASNET_BARRIERFLAG_ANONYMOUS);
  gasnet_exit(0);
}
