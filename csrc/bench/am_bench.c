/* am_bench.c: AM round-trip latency (Short, Medium, Long; 0..MaxMedium bytes), one-way AMShort
 * flood throughput, barrier latency, and the cost of an idle poll, between ranks 0 and 1 (the
 * barrier and idle poll with every rank); am_short_rtt_pairs, the same round trip with every
 * rank in a pair (0-1, 2-3, ...) ping-ponging at once, timed until the slowest pair is through
 * (where ranks outnumber cores, how they wait decides it: --waitmode); am_mix, every rank sending a mix of requests to the
 * next one while serving its predecessor's (what a core-API stress program does: it is where a
 * PAR library's locks show against SEQ). Beside them, the physical baseline of the same run:
 * a cache-line round trip through shared memory (when ranks 0 and 1 share it), and on udp a
 * plain UDP ping-pong, on mpi an 8-byte MPI_Send/MPI_Recv one and the same with receives
 * posted ahead and tested, as a polling rank must (raw_mpi.h), on ofi the same
 * provider's own ping-pong and inject flood (raw_ofi.h); on udp and mpi the raw round trip is
 * timed repeat by repeat next to the AMShort one, on ofi the raw inject flood next to the
 * AMShort flood.
 * Usage: am_bench [--json] [--quick] [--only NAME] [--waitmode spin|block|spinblock] */
#include "raw_mpi.h"
#include "raw_udp.h"
#ifdef GASNET_CONDUIT_OFI
#include "raw_ofi.h"
#endif

static volatile int replies, stop;
static volatile long pings; /* AMShort pings served (rank 1) */
static volatile long flooded;
static gasnet_handler_t h_ping_s, h_pong_s, h_ping_m, h_pong_m, h_ping_l, h_pong_l, h_flood,
    h_flood_ack, h_stop;
static gasnet_seginfo_t seg[2];
static char *payload;

static void ping_s(gasnet_token_t t) { pings++, gasnet_AMReplyShort0(t, h_pong_s); }
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
static volatile int pair_done;
static gasnet_handler_t h_pair_done;
static void on_pair_done(gasnet_token_t t) { (void)t, pair_done++; }

/* am_mix: requests of three kinds, each answered by a Short reply carrying one argument. */
static volatile long mix_replies;
static gasnet_handler_t h_mix_s, h_mix_m, h_mix_l, h_mix_ack;
static void mix_ack(gasnet_token_t t, gasnet_handlerarg_t a) { (void)t, (void)a, mix_replies++; }
static void mix_s(gasnet_token_t t, gasnet_handlerarg_t a, gasnet_handlerarg_t b,
                  gasnet_handlerarg_t c, gasnet_handlerarg_t d) {
  gasnet_AMReplyShort1(t, h_mix_ack, a + b + c + d);
}
static void mix_m(gasnet_token_t t, void *buf, size_t n, gasnet_handlerarg_t a) {
  gasnet_AMReplyShort1(t, h_mix_ack, a + ((unsigned char *)buf)[n - 1]);
}
static void mix_l(gasnet_token_t t, void *buf, size_t n, gasnet_handlerarg_t a) {
  gasnet_AMReplyShort1(t, h_mix_ack, a + ((unsigned char *)buf)[n - 1]);
}

static const char *const names[] = {"pshm_line_rtt", "am_short_rtt", "am_medium_rtt",
                                    "am_long_rtt", "am_short_flood", "am_short_rtt_pairs",
                                    "am_mix", "barrier", "idle_poll", "raw_udp_rtt",
                                    "raw_ofi_rtt", "raw_mpi_rtt", "raw_mpi_poll_rtt", NULL};
static const char *path; /* how rank 0 reaches rank 1: pshm, or the conduit */

static void report(const char *name, size_t size, double *samples, long iters) {
  bench_report(name, path, size, "us", samples, iters);
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

/* One raw round trip of the conduit's own network, rank 0 asking and rank 1 answering. */
typedef void (*raw_rtt_fn)(void *ctx);
static void udp_rtt_one(void *ctx) {
  raw_udp_t *u = ctx;
  char buf[64] = {0};
  if (gasnet_mynode() == 0) {
    raw_udp_send(u, buf, 32);
    raw_udp_recv(u, buf, sizeof buf);
  } else {
    raw_udp_recv(u, buf, sizeof buf);
    raw_udp_send(u, buf, 32);
  }
}
#ifdef GASNET_CONDUIT_MPI
static void mpi_rtt_one(void *ctx) {
  char buf[8] = {0};
  raw_mpi_round_trip(ctx, buf, 8);
}
static void mpi_poll_rtt_one(void *ctx) {
  char buf[8] = {0};
  raw_mpi_poll_round_trip(ctx, buf, 8);
}
#endif

/* udp and mpi: the AMShort round trip next to the raw one (a UDP ping-pong; an 8-byte
 * MPI_Send/MPI_Recv one), repeat by repeat (raw, then AM), so that a drift of the VM between
 * repeats moves both; am_short_vs_raw is the median of the repeats' ratios. On mpi, poll_one
 * (when given) is MPI's own ping-pong with receives posted ahead and tested, timed in the same
 * repeats: am_short_vs_poll says what the AM layer adds to what MPI charges a receiver that
 * polls. Ranks 0 and 1. */
static void paired_rtt(const char *raw_name, size_t raw_size, raw_rtt_fn raw_one,
                       raw_rtt_fn poll_one, void *ctx, long raw_iters, long am_iters) {
  double raw[64], am[64], ratio[64], poll[64], poll_ratio[64];
  for (int r = -1; r < repeats; r++) {
    double t0 = now_us();
    for (long i = 0; i < raw_iters; i++) raw_one(ctx);
    double t1 = now_us();
    if (poll_one)
      for (long i = 0; i < raw_iters; i++) poll_one(ctx);
    double tp = now_us();
    if (gasnet_mynode() == 1) {
      GASNET_BLOCKUNTIL(pings == (r + 2) * am_iters);
      continue;
    }
    replies = 0;
    for (long i = 0; i < am_iters; i++) {
      gasnet_AMRequestShort0(1, h_ping_s);
      GASNET_BLOCKUNTIL(replies == i + 1);
    }
    double t2 = now_us();
    if (r < 0) continue;
    raw[r] = (t1 - t0) / (double)raw_iters;
    poll[r] = (tp - t1) / (double)raw_iters;
    am[r] = (t2 - tp) / (double)am_iters;
    ratio[r] = am[r] / raw[r];
    poll_ratio[r] = am[r] / poll[r];
  }
  if (gasnet_mynode() != 0) return;
  bench_report(raw_name, "raw", raw_size, "us", raw, raw_iters);
  if (poll_one) bench_report("raw_mpi_poll_rtt", "raw", raw_size, "us", poll, raw_iters);
  report("am_short_rtt", 0, am, am_iters);
  bench_report_ratio("am_short_vs_raw", GASNET_CONDUIT_NAME_STR, 0, ratio, am_iters, 0);
  if (poll_one)
    bench_report_ratio("am_short_vs_poll", GASNET_CONDUIT_NAME_STR, 0, poll_ratio, am_iters, 0);
}

/* Every even rank ping-pongs with the next rank, all pairs at once; a repeat lasts until the
 * slowest pair is through (a barrier on each side), so no pair that got the cores to itself
 * decides the figure. */
static void pairs_rtt(long iters) {
  gasnet_node_t me = gasnet_mynode(), partner = (gasnet_node_t)(me ^ 1);
  int active = partner < gasnet_nodes(); /* an odd rank count leaves the last one out */
  double samples[64];
  for (int r = -1; r < repeats; r++) {
    gasnet_barrier_notify(0, GASNET_BARRIERFLAG_ANONYMOUS);
    gasnet_barrier_wait(0, GASNET_BARRIERFLAG_ANONYMOUS);
    double t0 = now_us();
    if (active && !(me & 1)) {
      replies = 0;
      for (long i = 0; i < iters; i++) {
        gasnet_AMRequestShort0(partner, h_ping_s);
        GASNET_BLOCKUNTIL(replies == i + 1);
      }
      gasnet_AMRequestShort0(partner, h_pair_done);
    } else if (active) {
      GASNET_BLOCKUNTIL(pair_done == r + 2); /* serving the partner's pings meanwhile */
    }
    gasnet_barrier_notify(0, GASNET_BARRIERFLAG_ANONYMOUS);
    gasnet_barrier_wait(0, GASNET_BARRIERFLAG_ANONYMOUS);
    if (r >= 0) samples[r] = (now_us() - t0) / (double)iters;
  }
  if (me == 0) report("am_short_rtt_pairs", 0, samples, iters);
}

/* One repeat of the flood: rank 0 sends iters AMShorts to rank 1, which acknowledges once it
 * has counted them all (no reliance on message order). Returns microseconds per message on
 * rank 0. */
static double flood_once(long iters) {
  if (gasnet_mynode() == 1) {
    GASNET_BLOCKUNTIL(flooded >= iters);
    flooded -= iters;
    gasnet_AMRequestShort0(0, h_flood_ack);
    return 0;
  }
  replies = 0;
  double t0 = now_us();
  for (long i = 0; i < iters; i++) gasnet_AMRequestShort0(1, h_flood);
  GASNET_BLOCKUNTIL(replies == 1);
  return (now_us() - t0) / (double)iters;
}

static void flood_bench(long iters) {
  double samples[64];
  for (int r = -1; r < repeats; r++) {
    double us = flood_once(iters);
    if (r >= 0) samples[r] = us;
  }
  if (gasnet_mynode() == 0) report("am_short_flood", 0, samples, iters);
}

#ifdef GASNET_CONDUIT_OFI
/* The AMShort flood next to the provider's raw inject flood, repeat by repeat (raw, then AM), as
 * paired_rtt: the VM's state moves both, and am_short_flood_vs_raw is the median of the
 * repeats' ratios. Ranks 0 and 1. */
static void paired_flood(raw_ofi_t *o, long iters) {
  double raw[64], am[64], ratio[64];
  for (int r = -1; r < repeats; r++) {
    double raw_us = raw_ofi_flood_once(o, iters);
    double am_us = flood_once(iters);
    if (r < 0) continue;
    raw[r] = raw_us;
    am[r] = am_us;
    ratio[r] = am_us / raw_us;
  }
  if (gasnet_mynode() != 0) return;
  bench_report("raw_ofi_inject_flood", "raw", 8, "us", raw, iters);
  report("am_short_flood", 0, am, iters);
  bench_report_ratio("am_short_flood_vs_raw", GASNET_CONDUIT_NAME_STR, 0, ratio, iters, 0);
}
#endif

/* What a poll costs when nothing arrives: rank 0 polls while every other rank sleeps (so that
 * the figure does not depend on how many ranks share the cores). */
static void idle_poll_bench(long iters) {
  double samples[64];
  if (gasnet_mynode() == 0) { /* the barrier completes only once rank 0 has measured */
    for (int r = -1; r < repeats; r++) {
      double t0 = now_us();
      for (long i = 0; i < iters; i++) gasnet_AMPoll();
      if (r >= 0) samples[r] = (now_us() - t0) / (double)iters;
    }
    report("idle_poll", 0, samples, iters);
    gasnet_barrier_notify(0, GASNET_BARRIERFLAG_ANONYMOUS);
    gasnet_barrier_wait(0, GASNET_BARRIERFLAG_ANONYMOUS);
  } else {
    gasnet_barrier_notify(0, GASNET_BARRIERFLAG_ANONYMOUS);
    struct timespec nap = {0, 50000000}; /* rarely: the sleepers must not disturb rank 0 */
    while (gasnet_barrier_try(0, GASNET_BARRIERFLAG_ANONYMOUS) != GASNET_OK) nanosleep(&nap, NULL);
  }
}

/* Every rank at once sends iters requests to the next rank (Short with 4 arguments, Medium of
 * 256 bytes, Long of 2 KiB, in turn), at most MIX_WINDOW unanswered, while its predecessor's
 * arrive: microseconds per request, on rank 0. */
enum { MIX_WINDOW = 32, MIX_MEDIUM = 256, MIX_LONG = 2048 };
static void mix_bench(long iters) {
  double samples[64];
  gasnet_node_t next = (gasnet_node_t)((gasnet_mynode() + 1) % gasnet_nodes());
  gasnet_seginfo_t *all = calloc(gasnet_nodes(), sizeof *all);
  gasnet_getSegmentInfo(all, gasnet_nodes());
  void *long_dst = all[next].addr; /* the Long payloads overwrite one another: only timed */
  free(all);
  for (int r = -1; r < repeats; r++) {
    gasnet_barrier_notify(0, GASNET_BARRIERFLAG_ANONYMOUS);
    gasnet_barrier_wait(0, GASNET_BARRIERFLAG_ANONYMOUS);
    mix_replies = 0;
    double t0 = now_us();
    for (long i = 0; i < iters; i++) {
      while (i - mix_replies >= MIX_WINDOW) gasnet_AMPoll();
      switch (i % 3) {
        case 0: gasnet_AMRequestShort4(next, h_mix_s, (int)i, 1, 2, 3); break;
        case 1: gasnet_AMRequestMedium1(next, h_mix_m, payload, MIX_MEDIUM, (int)i); break;
        default: gasnet_AMRequestLong1(next, h_mix_l, payload, MIX_LONG, long_dst, (int)i);
      }
    }
    GASNET_BLOCKUNTIL(mix_replies == iters);
    if (r >= 0) samples[r] = (now_us() - t0) / (double)iters;
  }
  if (gasnet_mynode() == 0) report("am_mix", 0, samples, iters);
  /* Nobody leaves (and may end the job) before rank 0 has reported. */
  gasnet_barrier_notify(0, GASNET_BARRIERFLAG_ANONYMOUS);
  gasnet_barrier_wait(0, GASNET_BARRIERFLAG_ANONYMOUS);
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
  int quick = bench_args("am_bench", argc, argv, names);
  gasnet_handlerentry_t table[] = {
      {0, (void (*)())ping_s}, {0, (void (*)())pong_s}, {0, (void (*)())ping_m},
      {0, (void (*)())pong_m}, {0, (void (*)())ping_l}, {0, (void (*)())pong_l},
      {0, (void (*)())flood},  {0, (void (*)())flood_ack}, {0, (void (*)())on_stop},
      {0, (void (*)())mix_s},  {0, (void (*)())mix_m},     {0, (void (*)())mix_l},
      {0, (void (*)())mix_ack}, {0, (void (*)())on_pair_done}};
  size_t maxmed = gasnet_AMMaxMedium();
  /* Segment: MaxMedium bytes of Long payload, then a page for the line ping-pong. */
  size_t pages = (maxmed + GASNET_PAGESIZE - 1) / GASNET_PAGESIZE; /* udp's is not whole pages */
  if (gasnet_attach(table, 14, (2 + pages) * GASNET_PAGESIZE, 0) != GASNET_OK) gasnet_exit(1);
  h_ping_s = table[0].index, h_pong_s = table[1].index, h_ping_m = table[2].index;
  h_pong_m = table[3].index, h_ping_l = table[4].index, h_pong_l = table[5].index;
  h_flood = table[6].index, h_flood_ack = table[7].index, h_stop = table[8].index;
  h_mix_s = table[9].index, h_mix_m = table[10].index, h_mix_l = table[11].index;
  h_mix_ack = table[12].index, h_pair_done = table[13].index;
  if (gasnet_nodes() < 2) {
    fprintf(stderr, "am_bench: needs at least 2 ranks (gasnetrun -n 2)\n");
    gasnet_exit(2);
  }
  gasnet_getSegmentInfo(seg, 2);
  payload = calloc(1, maxmed);
  long scale = quick ? 100 : 1;
  path = bench_same_supernode() ? "pshm" : GASNET_CONDUIT_NAME_STR;
  if (gasnet_mynode() == 0) bench_header();
  gasnet_barrier_notify(0, GASNET_BARRIERFLAG_ANONYMOUS);
  gasnet_barrier_wait(0, GASNET_BARRIERFLAG_ANONYMOUS);
  if (gasnet_mynode() < 2 && bench_wanted("pshm_line_rtt"))
    bench_line_rtt(seg, gasnet_AMMaxMedium(), 1000000 / scale);
  /* On udp, the physical baseline is a plain UDP ping-pong between the same two processes. */
  raw_udp_t raw;
  int paired = 0, flood_paired = 0;
  if (strcmp(GASNET_CONDUIT_NAME_STR, "udp") == 0 && bench_wanted("raw_udp_rtt") &&
      raw_udp_open(&raw, seg, maxmed + 256)) {
    paired = bench_wanted("am_short_rtt");
    if (paired) paired_rtt("raw_udp_rtt", 32, udp_rtt_one, NULL, &raw, 100000 / scale, 100000 / scale);
    else raw_udp_rtt_bench(&raw, 32, 100000 / scale);
    raw_udp_close(&raw);
  }
#ifdef GASNET_CONDUIT_OFI
  /* On ofi, the baselines are the same provider's own ping-pong and inject flood, on an
   * endpoint of their own between the same two processes. */
  static raw_ofi_t ofi_raw;
  if (bench_wanted("raw_ofi_rtt") && raw_ofi_open(&ofi_raw, seg, maxmed + 256)) {
    raw_ofi_rtt_bench(&ofi_raw, 100000 / scale);
    if (gasnet_mynode() < 2 && bench_wanted("am_short_flood")) {
      paired_flood(&ofi_raw, 1000000 / scale);
      flood_paired = 1;
    } else {
      raw_ofi_flood_bench(&ofi_raw, 1000000 / scale);
    }
    raw_ofi_close(&ofi_raw);
  }
#endif
#ifdef GASNET_CONDUIT_MPI
  /* On mpi, an 8-byte MPI ping-pong of the same MPI (collective: every rank opens it). */
  const gasneti_mpi_ops_t *mpi =
      bench_wanted("raw_mpi_rtt") || bench_wanted("raw_mpi_poll_rtt") ? raw_mpi_open() : NULL;
  if (mpi) {
    paired = bench_wanted("am_short_rtt");
    if (paired) {
      paired_rtt("raw_mpi_rtt", 8, mpi_rtt_one,
                 bench_wanted("raw_mpi_poll_rtt") ? mpi_poll_rtt_one : NULL, (void *)mpi,
                 100000 / scale, 100000 / scale);
    } else {
      /* Without the AM round trip to pair them with: each raw one asked for, on its own. */
      const char *raw_names[] = {"raw_mpi_rtt", "raw_mpi_poll_rtt"};
      raw_rtt_fn raw_fns[] = {mpi_rtt_one, mpi_poll_rtt_one};
      for (int k = 0; k < 2; k++) {
        if (!bench_wanted(raw_names[k])) continue;
        double samples[64];
        for (int r = -1; r < repeats; r++) {
          double t0 = now_us();
          for (long i = 0; i < 100000 / scale; i++) raw_fns[k]((void *)mpi);
          if (r >= 0) samples[r] = (now_us() - t0) / (double)(100000 / scale);
        }
        if (gasnet_mynode() == 0)
          bench_report(raw_names[k], "raw", 8, "us", samples, 100000 / scale);
      }
    }
  }
#endif
  if (gasnet_mynode() == 0) {
    if (bench_wanted("am_short_rtt") && !paired) roundtrip("am_short_rtt", 0, 0, 200000 / scale);
    const size_t sizes[] = {0, 8, 64, 512, 4096, 32768, maxmed};
    for (int cat = 1; cat <= 2; cat++) {
      const char *name = cat == 1 ? "am_medium_rtt" : "am_long_rtt";
      if (!bench_wanted(name)) continue;
      for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        /* Sizes past the conduit's largest Medium are left out (ibv's is 4 KiB); the last
         * size is that largest one. */
        if (sizes[i] > maxmed || (i + 1 < sizeof sizes / sizeof sizes[0] && sizes[i] == maxmed))
          continue;
        roundtrip(name, cat, sizes[i], (sizes[i] >= 4096 ? 20000 : 100000) / scale);
      }
    }
    gasnet_AMRequestShort0(1, h_stop);
  } else if (gasnet_mynode() == 1) {
    GASNET_BLOCKUNTIL(stop);
  }
  if (gasnet_mynode() < 2 && bench_wanted("am_short_flood") && !flood_paired)
    flood_bench(2000000 / scale);
  gasnet_barrier_notify(0, GASNET_BARRIERFLAG_ANONYMOUS);
  gasnet_barrier_wait(0, GASNET_BARRIERFLAG_ANONYMOUS);
  if (bench_wanted("am_short_rtt_pairs")) pairs_rtt(100000 / scale);
  if (bench_wanted("am_mix")) mix_bench(300000 / scale);
  if (bench_wanted("barrier")) barrier_bench(500000 / scale);
  if (bench_wanted("idle_poll")) idle_poll_bench(2000000 / scale);
  gasnet_exit(0);
}
