/* am_bench.c: AM round-trip latency (Short, Medium, Long; 0..MaxMedium bytes), one-way AMShort
 * flood throughput, and barrier latency between ranks 0 and 1. Reports the median of repeats
 * as a table, or with --json one JSON object per result. Usage: am_bench [--json] [--quick] */
#include "bench_util.h"

static volatile int replies, stop;
static volatile long flooded;
static gasnet_handler_t h_ping_s, h_pong_s, h_ping_m, h_pong_m, h_ping_l, h_pong_l, h_flood,
    h_flood_ack, h_stop;
static gasnet_seginfo_t seg[2];
static char *payload;

static void ping_s(gasnet_token_t t) { gasnet_AMReplyShort0(t, h_pong_s); }
static void pong_s(gasnet_token_t t) { (void)t, replies++; }
static void ping_m(gasnet_token_t t, void *b, size_t n) { gasnet_AMReplyMedium0(t, h_pong_m, b, n); }
static void pong_m(gasnet_token_t t, void *b, size_t n) { (void)t, (void)b, (void)n, replies++; }
static void ping_l(gasnet_token_t t, void *b, size_t n) {
  gasnet_AMReplyLong0(t, h_pong_l, b, n, seg[0].addr);
}
static void pong_l(gasnet_token_t t, void *b, size_t n) { (void)t, (void)b, (void)n, replies++; }
static void flood(gasnet_token_t t) { (void)t, flooded++; }
static void flood_ack(gasnet_token_t t) { (void)t, replies++; }
static void on_stop(gasnet_token_t t) { (void)t, stop = 1; }

static void report(const char *name, size_t size, double *samples, long iters) {
  bench_stats_t st = bench_stats(samples);
  if (json)
    printf("{\"bench\": \"%s\", \"size\": %zu, \"unit\": \"us\", \"median\": %.4f, \"min\": %.4f, "
           "\"max\": %.4f, \"repeats\": %d, \"iters\": %ld, \"ranks\": %d}\n",
           name, size, st.median, st.min, st.max, repeats, iters, (int)gasnet_nodes());
  else
    printf("%-18s %9zu %12.4f %12.4f %12.4f\n", name, size, st.median, st.min, st.max);
  fflush(stdout);
}

/* One ping-pong category: iters round trips per repeat; returns microseconds per round trip. */
static void roundtrip(const char *name, int cat, size_t size, long iters) {
  double samples[64];
  for (int r = -1; r < repeats; r++) { /* repeat -1 warms up */
    replies = 0;
    double t0 = now_us();
    for (long i = 0; i < iters; i++) {
      if (cat == 0) gasnet_AMRequestShort0(1, h_ping_s);
      else if (cat == 1) gasnet_AMRequestMedium0(1, h_ping_m, payload, size);
      else gasnet_AMRequestLong0(1, h_ping_l, payload, size, seg[1].addr);
      GASNET_BLOCKUNTIL(replies == i + 1);
    }
    if (r >= 0) samples[r] = (now_us() - t0) / (double)iters;
  }
  report(name, size, samples, iters);
}

/* The physical limit: a cache-line round trip between ranks 0 and 1 through rank 1's segment,
 * reached by rank 0 via its PSHM mapping. Printed so AM latency can be read as a ratio. */
static void line_rtt_bench(long iters) {
  gasnet_nodeinfo_t info[2];
  gasnet_getNodeInfo(info, 2);
  if (info[0].supernode != info[1].supernode) return; /* no shared memory between them */
  uintptr_t base = (uintptr_t)seg[1].addr + (gasnet_mynode() == 0 ? info[1].offset : 0);
  volatile long *ping = (volatile long *)(base + gasnet_AMMaxMedium());
  volatile long *pong = (volatile long *)(base + gasnet_AMMaxMedium() + 128);
  double samples[64];
  for (int r = -1; r < repeats; r++) {
    long start = (r + 1) * iters;
    double t0 = now_us();
    for (long i = start + 1; i <= start + iters; i++) {
      if (gasnet_mynode() == 0) {
        __atomic_store_n(ping, i, __ATOMIC_RELEASE);
        while (__atomic_load_n(pong, __ATOMIC_ACQUIRE) != i) {}
      } else {
        while (__atomic_load_n(ping, __ATOMIC_ACQUIRE) != i) {}
        __atomic_store_n(pong, i, __ATOMIC_RELEASE);
      }
    }
    if (r >= 0) samples[r] = (now_us() - t0) / (double)iters;
  }
  if (gasnet_mynode() == 0) report("pshm_line_rtt", 0, samples, iters);
}

/* Rank 0 floods rank 1, which acknowledges once it has counted every message of a repeat
 * (no reliance on message order). */
static void flood_bench(long iters) {
  double samples[64];
  for (int r = -1; r < repeats; r++) {
    if (gasnet_mynode() == 1) {
      GASNET_BLOCKUNTIL(flooded >= iters);
      flooded -= iters;
      gasnet_AMRequestShort0(0, h_flood_ack);
      continue;
    }
    replies = 0;
    double t0 = now_us();
    for (long i = 0; i < iters; i++) gasnet_AMRequestShort0(1, h_flood);
    GASNET_BLOCKUNTIL(replies == 1);
    if (r >= 0) samples[r] = (now_us() - t0) / (double)iters;
  }
  if (gasnet_mynode() == 0) report("am_short_flood", 0, samples, iters);
}

static void barrier_bench(long iters) {
  double samples[64];
  for (int r = -1; r < repeats; r++) {
    double t0 = now_us();
    for (long i = 0; i < iters; i++) {
      gasnet_barrier_notify(0, GASNET_BARRIERFLAG_ANONYMOUS);
      gasnet_barrier_wait(0, GASNET_BARRIERFLAG_ANONYMOUS);
    }
    if (r >= 0) samples[r] = (now_us() - t0) / (double)iters;
  }
  if (gasnet_mynode() == 0) report("barrier", 0, samples, iters);
}

int main(int argc, char **argv) {
  gasnet_init(&argc, &argv);
  int quick = bench_args("am_bench", argc, argv);
  gasnet_handlerentry_t table[] = {
      {0, (void (*)())ping_s}, {0, (void (*)())pong_s}, {0, (void (*)())ping_m},
      {0, (void (*)())pong_m}, {0, (void (*)())ping_l}, {0, (void (*)())pong_l},
      {0, (void (*)())flood},  {0, (void (*)())flood_ack}, {0, (void (*)())on_stop}};
  size_t maxmed = gasnet_AMMaxMedium();
  /* Segment: MaxMedium bytes of Long payload, then a page for the line ping-pong. */
  if (gasnet_attach(table, 9, 2 * GASNET_PAGESIZE + maxmed, 0) != GASNET_OK) gasnet_exit(1);
  h_ping_s = table[0].index, h_pong_s = table[1].index, h_ping_m = table[2].index;
  h_pong_m = table[3].index, h_ping_l = table[4].index, h_pong_l = table[5].index;
  h_flood = table[6].index, h_flood_ack = table[7].index, h_stop = table[8].index;
  if (gasnet_nodes() < 2) {
    fprintf(stderr, "am_bench: needs at least 2 ranks (gasnetrun -n 2)\n");
    gasnet_exit(2);
  }
  gasnet_getSegmentInfo(seg, 2);
  payload = calloc(1, maxmed);
  long scale = quick ? 100 : 1;
  if (gasnet_mynode() == 0 && !json)
    printf("%-18s %9s %12s %12s %12s   (microseconds, median of %d repeats, %d ranks)\n",
           "benchmark", "bytes", "median", "min", "max", repeats, (int)gasnet_nodes());
  gasnet_barrier_notify(0, GASNET_BARRIERFLAG_ANONYMOUS);
  gasnet_barrier_wait(0, GASNET_BARRIERFLAG_ANONYMOUS);
  if (gasnet_mynode() < 2) line_rtt_bench(1000000 / scale);
  if (gasnet_mynode() == 0) {
    roundtrip("am_short_rtt", 0, 0, 200000 / scale);
    const size_t sizes[] = {0, 8, 64, 512, 4096, 32768, maxmed};
    for (int cat = 1; cat <= 2; cat++)
      for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        roundtrip(cat == 1 ? "am_medium_rtt" : "am_long_rtt", cat, sizes[i],
                  (sizes[i] >= 4096 ? 20000 : 100000) / scale);
    gasnet_AMRequestShort0(1, h_stop);
  } else if (gasnet_mynode() == 1) {
    GASNET_BLOCKUNTIL(stop);
  }
  if (gasnet_mynode() < 2) flood_bench(2000000 / scale);
  gasnet_barrier_notify(0, GASNET_BARRIERFLAG_ANONYMOUS);
  gasnet_barrier_wait(0, GASNET_BARRIERFLAG_ANONYMOUS);
  barrier_bench(500000 / scale);
  gasnet_exit(0);
}
