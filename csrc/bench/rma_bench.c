/* rma_bench.c: put/get latency (8 B..64 KiB: blocking, nb, nbi, and the value forms at 8 B),
 * small-transfer rates (8 B..4 KiB, a window of 16 in flight: blocking, nb, nbi) and bandwidth
 * (4 KiB..4 MiB; bulk, nb and nbi) from rank 0 to rank 1, reported as the median of repeats
 * with the path taken (direct PSHM or AM; GASNET_SUPERNODE_MAXSIZE=1 forces AM). Beside them,
 * measured in the same run: a cache-line round trip through shared memory (the floor of a
 * direct get), a single-thread memcpy of the same sizes (the floor of a direct put) and an
 * AMShort round trip (the floor of an AM-path put or get) and, on the AM path between ranks
 * of one host, a two-core copy pipeline (copy_pipe.h: the floor of AM-path bandwidth), and on
 * mpi a 1 MiB MPI_Isend stream of the same MPI (raw_mpi.h) timed repeat by repeat next to the
 * 1 MiB nbi put stream, so that a regression of any form shows as a ratio in one run.
 * Usage: rma_bench [--json] [--quick] [--only NAME] */
#include "copy_pipe.h"
#include "raw_mpi.h"
#include "raw_udp.h"
#ifdef GASNET_CONDUIT_OFI
#include "raw_ofi.h"
#endif

#define MAXSZ (4u << 20)
#define WINDOW 16 /* operations in flight in the nb/nbi bandwidth runs */

static volatile int stop;
static const char *path;
static void on_stop(gasnet_token_t t) { (void)t, stop = 1; }
static gasnet_handler_t h_pong;
static volatile long pongs;
static void on_ping(gasnet_token_t t) { gasnet_AMReplyShort0(t, h_pong); }
static void on_pong(gasnet_token_t t) { (void)t, pongs++; }
static volatile long repeats_done; /* paired_mpi_stream's repeats rank 0 has finished */
static void on_repeat(gasnet_token_t t) { (void)t, repeats_done++; }
static void on_pipe(gasnet_token_t t, gasnet_handlerarg_t pid, gasnet_handlerarg_t fd) {
  (void)t, copy_pipe_pid = pid, copy_pipe_fd = fd;
}

/* Keeps the compiler from merging or hoisting the repeated transfers of a latency loop. */
#define OPAQUE() __asm__ __volatile__("" ::: "memory")

static const char *const names[] = {
    "pshm_line_rtt", "am_short_rtt", "put_latency", "get_latency", "put_nb_latency",
    "get_nb_latency", "put_nbi_latency", "get_nbi_latency", "put_val_latency", "get_val_latency",
    "put_nb_val_latency", "get_nb_val_latency", "memcpy_rate", "put_rate", "get_rate",
    "put_nb_rate", "get_nb_rate", "put_nbi_rate", "get_nbi_rate", "memcpy_bw", "put_bulk_bw",
    "get_bulk_bw", "put_nb_bw", "get_nb_bw", "put_nbi_bw", "get_nbi_bw", "copy_pipe_bw",
    "raw_udp_stream", "raw_ofi_write_stream", "raw_mpi_stream", "put_nb_latency_vs_put", "get_nb_latency_vs_get", "put_nbi_latency_vs_put",
    "get_nbi_latency_vs_get", "put_nb_rate_vs_put", "get_nb_rate_vs_get", "put_nbi_rate_vs_put",
    "get_nbi_rate_vs_get", "put_nb_val_latency_vs_put_val", "get_nb_val_latency_vs_get_val",
    "put_latency_vs_am_short", "get_latency_vs_am_short",
    "put_bulk_bw_vs_memcpy", "get_bulk_bw_vs_memcpy", NULL};

enum { LATENCY, BANDWIDTH, RATE };
static void report(const char *name, size_t size, double *s, long iters, int kind) {
  /* Baselines run no runtime code: their path is "local". */
  int baseline = strncmp(name, "memcpy_", 7) == 0 || strcmp(name, "copy_pipe_bw") == 0;
  bench_report(name, baseline ? "local" : path, size,
               kind == BANDWIDTH ? "GiB/s" : kind == RATE ? "Mops/s" : "us", s, iters);
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
static void put_nb_one(void *r, void *l, size_t n) { gasnet_wait_syncnb(gasnet_put_nb(1, r, l, n)); }
static void get_nb_one(void *r, void *l, size_t n) { gasnet_wait_syncnb(gasnet_get_nb(l, 1, r, n)); }
static void put_val_one(void *r, void *l, size_t n) {
  gasnet_put_val(1, r, *(volatile uint64_t *)l, n);
}
static void get_val_one(void *r, void *l, size_t n) { *(volatile uint64_t *)l = gasnet_get_val(1, r, n); }
static void put_nb_val_one(void *r, void *l, size_t n) {
  gasnet_wait_syncnb(gasnet_put_nb_val(1, r, *(volatile uint64_t *)l, n));
}
static void get_nb_val_one(void *r, void *l, size_t n) {
  *(volatile uint64_t *)l = gasnet_wait_syncnb_valget(gasnet_get_nb_val(1, r, n));
}

/* Rates: WINDOW small transfers to distinct places, then their synchronization (none for the
 * blocking form), as one-sided libraries issue them in loops. A client moving a word passes
 * its size as a constant (sizeof x), which lets the inline path drop its size tests, so the
 * 8-byte rows are compiled that way; other sizes pass the size as a variable. */
#define WINDOW_FN(name, body)                                                                \
  static inline __attribute__((always_inline)) void name##_of(char *r, char *l, size_t n) {   \
    body                                                                                     \
  }                                                                                          \
  static void name(void *r, void *l, size_t n) {                                             \
    if (n == 8) name##_of(r, l, 8);                                                          \
    else name##_of(r, l, n);                                                                 \
  }
WINDOW_FN(memcpy_window, for (int i = 0; i < WINDOW; i++) {
  memcpy(r + i * n, l + i * n, n);
  OPAQUE();
})
WINDOW_FN(put_window, for (int i = 0; i < WINDOW; i++) gasnet_put(1, r + i * n, l + i * n, n);)
WINDOW_FN(get_window, for (int i = 0; i < WINDOW; i++) gasnet_get(l + i * n, 1, r + i * n, n);)
WINDOW_FN(put_nb_small_window, gasnet_handle_t h[WINDOW];
  for (int i = 0; i < WINDOW; i++) h[i] = gasnet_put_nb(1, r + i * n, l + i * n, n);
  gasnet_wait_syncnb_all(h, WINDOW);)
WINDOW_FN(get_nb_small_window, gasnet_handle_t h[WINDOW];
  for (int i = 0; i < WINDOW; i++) h[i] = gasnet_get_nb(l + i * n, 1, r + i * n, n);
  gasnet_wait_syncnb_all(h, WINDOW);)
WINDOW_FN(put_nbi_small_window,
  for (int i = 0; i < WINDOW; i++) gasnet_put_nbi(1, r + i * n, l + i * n, n);
  gasnet_wait_syncnbi_puts();)
WINDOW_FN(get_nbi_small_window,
  for (int i = 0; i < WINDOW; i++) gasnet_get_nbi(l + i * n, 1, r + i * n, n);
  gasnet_wait_syncnbi_gets();)

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

#ifdef GASNET_CONDUIT_MPI
/* mpi: iters windows of WINDOW 1 MiB MPI_Isend messages next to as many 1 MiB nbi puts, repeat
 * by repeat (MPI, then the puts), between ranks 0 and 1; put_nbi_bw_vs_raw is the median of
 * the repeats' speed ratios. Rank 1 receives the stream into buf (WINDOW MiB), then serves the
 * puts until rank 0 says the repeat is over. */
static gasnet_handler_t h_repeat;
static void paired_mpi_stream(const gasneti_mpi_ops_t *mpi, char *buf, void *remote, long iters) {
  const int size = 1 << 20;
  double raw[64], put[64], ratio[64];
  for (int r = -1; r < repeats; r++) {
    double t0 = now_us();
    raw_mpi_stream(mpi, buf, size, WINDOW, iters);
    double t1 = now_us();
    if (gasnet_mynode() == 1) {
      GASNET_BLOCKUNTIL(repeats_done == r + 2);
      continue;
    }
    for (long i = 0; i < iters; i++) put_nbi_window(remote, buf, (size_t)size);
    double t2 = now_us();
    gasnet_AMRequestShort0(1, h_repeat);
    if (r < 0) continue;
    raw[r] = (t1 - t0) / (double)(iters * WINDOW);
    put[r] = (t2 - t1) / (double)(iters * WINDOW);
    ratio[r] = raw[r] / put[r];
  }
  if (gasnet_mynode() != 0) return;
  bench_report("raw_mpi_stream", "raw", (size_t)size, "GiB/s", raw, iters * WINDOW);
  report("put_nbi_bw", (size_t)size, put, iters * WINDOW, BANDWIDTH);
  bench_report_ratio("put_nbi_bw_vs_raw", path, (size_t)size, ratio, iters * WINDOW, 1);
}
#endif

/* ops_per_call: transfers of size bytes each call performs (WINDOW for windowed runs). */
static void run(const char *name, op_fn fn, void *remote, void *local, size_t size, long iters,
                int kind, int ops_per_call) {
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
  report(name, size, samples, iters, kind);
}

static double time_calls(op_fn fn, void *remote, void *local, size_t size, long iters) {
  double t0 = now_us();
  for (long i = 0; i < iters; i++) {
    fn(remote, local, size);
    OPAQUE();
  }
  return now_us() - t0;
}

/* A subject next to its baseline, timed back to back within each repeat (which one goes first
 * alternates), so that the VM changing speed between repeats, or between two benchmarks of
 * one run, moves both; the result is the median of the repeats' ratios. Latency: subject
 * time / baseline time (lower is better); rate and bandwidth: subject speed / baseline speed
 * (higher is better). Both make the same number of calls of the same size. */
static void run_paired(const char *name, op_fn fn, void *remote, op_fn base, void *base_remote,
                       void *local, size_t size, long iters, int kind) {
  if (!bench_wanted(name)) return;
  double ratios[64];
  for (int r = -1; r < repeats; r++) {
    double t_base, t_fn;
    if (r & 1) {
      t_fn = time_calls(fn, remote, local, size, iters);
      t_base = time_calls(base, base_remote, local, size, iters);
    } else {
      t_base = time_calls(base, base_remote, local, size, iters);
      t_fn = time_calls(fn, remote, local, size, iters);
    }
    if (r >= 0) ratios[r] = kind == LATENCY ? t_fn / t_base : t_base / t_fn;
  }
  bench_report_ratio(name, path, size, ratios, iters, kind != LATENCY);
}

int main(int argc, char **argv) {
  gasnet_init(&argc, &argv);
  int quick = bench_args("rma_bench", argc, argv, names);
  gasnet_handlerentry_t table[] = {
      {0, (void (*)())on_stop}, {0, (void (*)())on_ping}, {0, (void (*)())on_pong},
      {0, (void (*)())on_pipe}, {0, (void (*)())on_repeat}};
  /* Segment: MAXSZ bytes of transfers, then a page for the cache-line ping-pong. */
  if (gasnet_attach(table, 5, MAXSZ + GASNET_PAGESIZE, 0) != GASNET_OK) gasnet_exit(1);
  h_ping = table[1].index, h_pong = table[2].index;
#ifdef GASNET_CONDUIT_MPI
  h_repeat = table[4].index;
#endif
  if (gasnet_nodes() < 2) {
    fprintf(stderr, "rma_bench: needs at least 2 ranks (gasnetrun -n 2)\n");
    gasnet_exit(2);
  }
  gasnet_seginfo_t seg[2];
  gasnet_getSegmentInfo(seg, 2);
#ifdef GASNETC_RDMA
  path = bench_same_supernode() ? "direct" : "rdma"; /* the conduit's RDMA (ibv) */
#else
  path = bench_same_supernode() ? "direct" : "am";
#endif
  char *local = malloc(MAXSZ);
  memset(local, 1, MAXSZ);
  if (gasnet_mynode() < 2) memset(seg[gasnet_mynode()].addr, 2, MAXSZ);
  long scale = quick ? 50 : 1;
  gasnet_barrier_notify(0, GASNET_BARRIERFLAG_ANONYMOUS);
  gasnet_barrier_wait(0, GASNET_BARRIERFLAG_ANONYMOUS);
  if (gasnet_mynode() == 0) bench_header();
  if (gasnet_mynode() < 2 && bench_wanted("pshm_line_rtt")) bench_line_rtt(seg, MAXSZ, 1000000 / scale);
  /* On udp, the physical baseline is a plain UDP stream between the same two processes. */
  raw_udp_t raw;
  if (strcmp(GASNET_CONDUIT_NAME_STR, "udp") == 0 && bench_wanted("raw_udp_stream") &&
      raw_udp_open(&raw, seg, MAXSZ)) {
    raw_udp_stream_bench(&raw, gasnet_mynode() == 0 ? local : seg[1].addr, 1u << 20,
                         2000 / scale + 1);
    raw_udp_close(&raw);
  }
#ifdef GASNET_CONDUIT_OFI
  /* On ofi, the baseline is the same provider's RMA write stream, on an endpoint of its own. */
  static raw_ofi_t ofi_raw;
  if (bench_wanted("raw_ofi_write_stream") && raw_ofi_open(&ofi_raw, seg, MAXSZ)) {
    raw_ofi_write_bench(&ofi_raw, local, 1u << 20, 2000 / scale + 1);
    raw_ofi_close(&ofi_raw);
  }
#endif
#ifdef GASNET_CONDUIT_MPI
  /* On mpi, a 1 MiB MPI_Isend stream of the same MPI (collective: every rank opens it). */
  const gasneti_mpi_ops_t *mpi = bench_wanted("raw_mpi_stream") ? raw_mpi_open() : NULL;
  if (mpi) {
    char *buf = gasnet_mynode() == 0 ? local : malloc((size_t)WINDOW << 20);
    paired_mpi_stream(mpi, buf, seg[1].addr, (256 / WINDOW) / scale + 1);
    if (buf != local) free(buf);
  }
#endif
  if (gasnet_mynode() == 0) {
    int direct = path[0] == 'd';
    void *remote = seg[1].addr;
    run("am_short_rtt", am_round_trip, remote, local, 0, (direct ? 200000 : 50000) / scale, LATENCY, 1);
    const size_t lat_sizes[] = {8, 64, 512, 4096, 32768, 65536};
    for (size_t i = 0; i < sizeof lat_sizes / sizeof lat_sizes[0]; i++) {
      size_t n = lat_sizes[i];
      long iters = (direct ? (n <= 512 ? 2000000 : 100000) : (n <= 512 ? 50000 : 5000)) / scale;
      run("put_latency", put_blocking, remote, local, n, iters, LATENCY, 1);
      run("get_latency", get_blocking, remote, local, n, iters, LATENCY, 1);
      run("put_nb_latency", put_nb_one, remote, local, n, iters, LATENCY, 1);
      run("get_nb_latency", get_nb_one, remote, local, n, iters, LATENCY, 1);
      run("put_nbi_latency", put_nbi_one, remote, local, n, iters, LATENCY, 1);
      run("get_nbi_latency", get_nbi_one, remote, local, n, iters, LATENCY, 1);
      if (n == 8) {
        run("put_val_latency", put_val_one, remote, local, n, iters, LATENCY, 1);
        run("get_val_latency", get_val_one, remote, local, n, iters, LATENCY, 1);
        run("put_nb_val_latency", put_nb_val_one, remote, local, n, iters, LATENCY, 1);
        run("get_nb_val_latency", get_nb_val_one, remote, local, n, iters, LATENCY, 1);
      }
    }
    /* The targets as paired ratios at 8 B: nb and nbi against the blocking form, and on the
     * AM path the blocking form against the AMShort round trip. */
    {
      long iters = (direct ? 2000000 : 50000) / scale;
      run_paired("put_nb_latency_vs_put", put_nb_one, remote, put_blocking, remote, local, 8,
                 iters, LATENCY);
      run_paired("get_nb_latency_vs_get", get_nb_one, remote, get_blocking, remote, local, 8,
                 iters, LATENCY);
      run_paired("put_nbi_latency_vs_put", put_nbi_one, remote, put_blocking, remote, local, 8,
                 iters, LATENCY);
      run_paired("get_nbi_latency_vs_get", get_nbi_one, remote, get_blocking, remote, local, 8,
                 iters, LATENCY);
      run_paired("put_nb_val_latency_vs_put_val", put_nb_val_one, remote, put_val_one, remote,
                 local, 8, iters, LATENCY);
      run_paired("get_nb_val_latency_vs_get_val", get_nb_val_one, remote, get_val_one, remote,
                 local, 8, iters, LATENCY);
      if (!direct) {
        run_paired("put_latency_vs_am_short", put_blocking, remote, am_round_trip, remote, local,
                   8, iters, LATENCY);
        run_paired("get_latency_vs_am_short", get_blocking, remote, am_round_trip, remote, local,
                   8, iters, LATENCY);
      }
      iters = (direct ? 200000 : 3000) / scale + 1;
      run_paired("put_nb_rate_vs_put", put_nb_small_window, remote, put_window, remote, local, 8,
                 iters, RATE);
      run_paired("get_nb_rate_vs_get", get_nb_small_window, remote, get_window, remote, local, 8,
                 iters, RATE);
      run_paired("put_nbi_rate_vs_put", put_nbi_small_window, remote, put_window, remote, local,
                 8, iters, RATE);
      run_paired("get_nbi_rate_vs_get", get_nbi_small_window, remote, get_window, remote, local,
                 8, iters, RATE);
    }
    const size_t rate_sizes[] = {8, 64, 512, 4096};
    for (size_t i = 0; i < sizeof rate_sizes / sizeof rate_sizes[0]; i++) {
      size_t n = rate_sizes[i];
      long iters = (direct ? (n <= 512 ? 200000 : 10000) : (n <= 512 ? 3000 : 300)) / scale + 1;
      run("memcpy_rate", memcpy_window, seg[0].addr, local, n, iters, RATE, WINDOW);
      run("put_rate", put_window, remote, local, n, iters, RATE, WINDOW);
      run("get_rate", get_window, remote, local, n, iters, RATE, WINDOW);
      run("put_nb_rate", put_nb_small_window, remote, local, n, iters, RATE, WINDOW);
      run("get_nb_rate", get_nb_small_window, remote, local, n, iters, RATE, WINDOW);
      run("put_nbi_rate", put_nbi_small_window, remote, local, n, iters, RATE, WINDOW);
      run("get_nbi_rate", get_nbi_small_window, remote, local, n, iters, RATE, WINDOW);
    }
    /* The copy pipeline: the floor of smp's AM path, which copies twice through shared memory. */
    int pipe_fd = -1;
    if (strcmp(GASNET_CONDUIT_NAME_STR, "smp") == 0 && strcmp(path, "am") == 0 &&
        bench_same_host() && bench_wanted("copy_pipe_bw"))
      pipe_fd = copy_pipe_create();
    if (pipe_fd >= 0) gasnet_AMRequestShort2(1, table[3].index, (int)getpid(), pipe_fd);
    const size_t bw_sizes[] = {4096, 65536, 1u << 20, 4u << 20};
    for (size_t i = 0; i < sizeof bw_sizes / sizeof bw_sizes[0]; i++) {
      size_t n = bw_sizes[i];
      long iters = ((64L << 20) / (long)n + 1) / scale + 1;
      run("memcpy_bw", local_memcpy, seg[0].addr, local, n, iters, BANDWIDTH, 1);
      run("put_bulk_bw", put_bulk, remote, local, n, iters, BANDWIDTH, 1);
      run("get_bulk_bw", get_bulk, remote, local, n, iters, BANDWIDTH, 1);
      run("put_nb_bw", put_nb_window, remote, local, n, iters / WINDOW + 1, BANDWIDTH, WINDOW);
      run("get_nb_bw", get_nb_window, remote, local, n, iters / WINDOW + 1, BANDWIDTH, WINDOW);
      run("put_nbi_bw", put_nbi_window, remote, local, n, iters / WINDOW + 1, BANDWIDTH, WINDOW);
      run("get_nbi_bw", get_nbi_window, remote, local, n, iters / WINDOW + 1, BANDWIDTH, WINDOW);
      if (pipe_fd >= 0)
        run("copy_pipe_bw", copy_pipe_transfer, remote, local, n, iters, BANDWIDTH, 1);
    }
    {
      size_t n = 4u << 20;
      long iters = ((64L << 20) / (long)n + 1) / scale + 1;
      run_paired("put_bulk_bw_vs_memcpy", put_bulk, remote, local_memcpy, seg[0].addr, local, n,
                 iters, BANDWIDTH);
      run_paired("get_bulk_bw_vs_memcpy", get_bulk, remote, local_memcpy, seg[0].addr, local, n,
                 iters, BANDWIDTH);
    }
    if (pipe_fd >= 0) atomic_store(&copy_pipe->quit, 1);
    gasnet_AMRequestShort0(1, table[0].index);
  } else if (gasnet_mynode() == 1) {
    while (!stop) { /* serves the AM path, and the copy pipeline when rank 0 offers it */
      gasnet_AMPoll();
      if (copy_pipe_pid) copy_pipe_serve(seg[1].addr), copy_pipe_pid = 0;
    }
  }
  gasnet_barrier_notify(0, GASNET_BARRIERFLAG_ANONYMOUS);
  gasnet_barrier_wait(0, GASNET_BARRIERFLAG_ANONYMOUS);
  free(local);
  gasnet_exit(0);
}
