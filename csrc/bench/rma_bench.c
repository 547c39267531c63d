/* rma_bench.c: put/get latency (8 B..64 KiB, blocking and nbi) and bandwidth (4 KiB..4 MiB;
 * bulk, nb and nbi) from rank 0 to rank 1, reported as the median of repeats with the path
 * taken (direct PSHM or AM; GASNET_SUPERNODE_MAXSIZE=1 forces AM), beside a single-thread
 * memcpy of the same sizes and an AMShort round trip (the floor of an AM-path put or get)
 * measured in the same run.
 * Usage: rma_bench [--json] [--quick] [--only NAME] */
#include "raw_udp.h"

#define MAXSZ (4u << 20)
#define WINDOW 16 /* operations in flight in the nb/nbi bandwidth runs */

static volatile int stop;
static const char *path;
static void on_stop(gasnet_token_t t) { (void)t, stop = 1; }
static gasnet_handler_t h_pong;
static volatile long pongs;
static void on_ping(gasnet_token_t t) { gasnet_AMReplyShort0(t, h_pong); }
static void on_pong(gasnet_token_t t) { (void)t, pongs++; }

/* Keeps the compiler from merging or hoisting the repeated transfers of a latency loop. */
#define OPAQUE() __asm__ __volatile__("" ::: "memory")

static const char *const names[] = {"am_short_rtt", "put_latency", "get_latency", "put_nbi_latency",
                                    "get_nbi_latency", "memcpy_bw", "put_bulk_bw", "get_bulk_bw",
                                    "put_nb_bw", "get_nb_bw", "put_nbi_bw", "get_nbi_bw",
                                    "raw_udp_stream", NULL};

static void report(const char *name, size_t size, double *s, long iters, int bandwidth) {
  bench_report(name, strcmp(name, "memcpy_bw") == 0 ? "local" : path, size,
               bandwidth ? "GiB/s" : "us", s, iters);
}

typedef void (*op_fn)(void *remote, void *local, size_t size);
static gasnet_handler_t h_ping;
static void am_round_trip(void *r, void *l, size_t n) {
  (void)r, (void)l, (void)n;
  long want = pongs + 1;
  gasnet_AMRequestShort0(1, h_ping);
  GASNET_BLOCKUNTIL(pongs == want);
}
static void put_blocking(void *r, void *l, size_t n) { gasnet_put(1, r, l, n); }
static void get_blocking(void *r, void *l, size_t n) { gasnet_get(l, 1, r, n); }
static void put_nbi_one(void *r, void *l, size_t n) {
  gasnet_put_nbi(1, r, l, n);
  gasnet_wait_syncnbi_puts();
}
static void get_nbi_one(void *r, void *l, size_t n) {
  gasnet_get_nbi(l, 1, r, n);
  gasnet_wait_syncnbi_gets();
}
static void put_bulk(void *r, void *l, size_t n) { gasnet_put_bulk(1, r, l, n); }
/* The baseline: one thread copying within its own memory (remote is our own segment here). */
static void local_memcpy(void *r, void *l, size_t n) { memcpy(r, l, n); }
static void get_bulk(void *r, void *l, size_t n) { gasnet_get_bulk(l, 1, r, n); }
static void put_nb_window(void *r, void *l, size_t n) {
  gasnet_handle_t h[WINDOW];
  for (int i = 0; i < WINDOW; i++) h[i] = gasnet_put_nb_bulk(1, r, l, n);
  gasnet_wait_syncnb_all(h, WINDOW);
}
static void get_nb_window(void *r, void *l, size_t n) {
  gasnet_handle_t h[WINDOW];
  for (int i = 0; i < WINDOW; i++) h[i] = gasnet_get_nb_bulk(l, 1, r, n);
  gasnet_wait_syncnb_all(h, WINDOW);
}
static void put_nbi_window(void *r, void *l, size_t n) {
  for (int i = 0; i < WINDOW; i++) gasnet_put_nbi_bulk(1, r, l, n);
  gasnet_wait_syncnbi_puts();
}
static void get_nbi_window(void *r, void *l, size_t n) {
  for (int i = 0; i < WINDOW; i++) gasnet_get_nbi_bulk(l, 1, r, n);
  gasnet_wait_syncnbi_gets();
}

/* ops_per_call: transfers of size bytes each call performs (WINDOW for windowed runs). */
static void run(const char *name, op_fn fn, void *remote, void *local, size_t size, long iters,
                int bandwidth, int ops_per_call) {
  if (!bench_wanted(name)) return;
  double samples[64];
  for (int r = -1; r < repeats; r++) {
    double t0 = now_us();
    for (long i = 0; i < iters; i++) {
      fn(remote, local, size);
      OPAQUE();
    }
    if (r >= 0) samples[r] = (now_us() - t0) / (double)(iters * ops_per_call);
  }
  report(name, size, samples, iters, bandwidth);
}

int main(int argc, char **argv) {
  gasnet_init(&argc, &argv);
  int quick = bench_args("rma_bench", argc, argv, names);
  gasnet_handlerentry_t table[] = {
      {0, (void (*)())on_stop}, {0, (void (*)())on_ping}, {0, (void (*)())on_pong}};
  if (gasnet_attach(table, 3, MAXSZ + GASNET_PAGESIZE, 0) != GASNET_OK) gasnet_exit(1);
  h_ping = table[1].index, h_pong = table[2].index;
  if (gasnet_nodes() < 2) {
    fprintf(stderr, "rma_bench: needs at least 2 ranks (gasnetrun -n 2)\n");
    gasnet_exit(2);
  }
  gasnet_seginfo_t seg[2];
  gasnet_getSegmentInfo(seg, 2);
  path = bench_same_supernode() ? "direct" : "am";
  char *local = malloc(MAXSZ);
  memset(local, 1, MAXSZ);
  if (gasnet_mynode() < 2) memset(seg[gasnet_mynode()].addr, 2, MAXSZ);
  long scale = quick ? 50 : 1;
  gasnet_barrier_notify(0, GASNET_BARRIERFLAG_ANONYMOUS);
  gasnet_barrier_wait(0, GASNET_BARRIERFLAG_ANONYMOUS);
  if (gasnet_mynode() == 0) bench_header();
  /* On udp, the physical baseline is a plain UDP stream between the same two processes. */
  raw_udp_t raw;
  if (strcmp(GASNET_CONDUIT_NAME_STR, "udp") == 0 && bench_wanted("raw_udp_stream") &&
      raw_udp_open(&raw, seg, MAXSZ)) {
    raw_udp_stream_bench(&raw, gasnet_mynode() == 0 ? local : seg[1].addr, 1u << 20,
                         2000 / scale + 1);
    raw_udp_close(&raw);
  }
  if (gasnet_mynode() == 0) {
    int direct = path[0] == 'd';
    void *remote = seg[1].addr;
    run("am_short_rtt", am_round_trip, remote, local, 0, (direct ? 200000 : 50000) / scale, 0, 1);
    const size_t lat_sizes[] = {8, 64, 512, 4096, 32768, 65536};
    for (size_t i = 0; i < sizeof lat_sizes / sizeof lat_sizes[0]; i++) {
      size_t n = lat_sizes[i];
      long iters = (direct ? (n <= 512 ? 2000000 : 100000) : (n <= 512 ? 50000 : 5000)) / scale;
      run("put_latency", put_blocking, remote, local, n, iters, 0, 1);
      run("get_latency", get_blocking, remote, local, n, iters, 0, 1);
      run("put_nbi_latency", put_nbi_one, remote, local, n, iters, 0, 1);
      run("get_nbi_latency", get_nbi_one, remote, local, n, iters, 0, 1);
    }
    const size_t bw_sizes[] = {4096, 65536, 1u << 20, 4u << 20};
    for (size_t i = 0; i < sizeof bw_sizes / sizeof bw_sizes[0]; i++) {
      size_t n = bw_sizes[i];
      long iters = ((64L << 20) / (long)n + 1) / scale + 1;
      run("memcpy_bw", local_memcpy, seg[0].addr, local, n, iters, 1, 1);
      run("put_bulk_bw", put_bulk, remote, local, n, iters, 1, 1);
      run("get_bulk_bw", get_bulk, remote, local, n, iters, 1, 1);
      run("put_nb_bw", put_nb_window, remote, local, n, iters / WINDOW + 1, 1, WINDOW);
      run("get_nb_bw", get_nb_window, remote, local, n, iters / WINDOW + 1, 1, WINDOW);
      run("put_nbi_bw", put_nbi_window, remote, local, n, iters / WINDOW + 1, 1, WINDOW);
      run("get_nbi_bw", get_nbi_window, remote, local, n, iters / WINDOW + 1, 1, WINDOW);
    }
    gasnet_AMRequestShort0(1, table[0].index);
  } else if (gasnet_mynode() == 1) {
    GASNET_BLOCKUNTIL(stop); /* serves the AM path */
  }
  gasnet_barrier_notify(0, GASNET_BARRIERFLAG_ANONYMOUS);
  gasnet_barrier_wait(0, GASNET_BARRIERFLAG_ANONYMOUS);
  free(local);
  gasnet_exit(0);
}
