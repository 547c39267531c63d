/* coll_bench.c: GASNet-1 collectives against the loop of puts a client writes without them,
 * both complete everywhere when an iteration ends: broadcast from rank 0 (OUT_ALLSYNC) against
 * rank 0 putting to every rank then a barrier; exchange (OUT_ALLSYNC) against every rank
 * putting its blocks to every rank then a barrier. Times per operation, measured on rank 0,
 * all sizes in one run. Usage: coll_bench [--json] [--quick] [--only NAME] */
#include <gasnet_coll.h>

#include "bench_util.h"

#define MAXSZ (1u << 20)
static const char *const names[] = {"coll_broadcast", "loop_broadcast", "coll_exchange",
                                    "loop_exchange", NULL};
static gasnet_seginfo_t *seg;
static uint8_t *src;
static int n, me;
static const char *path; /* how the puts travel: direct (PSHM) or am; collectives use AMs */

static void barrier(void) {
  gasnet_barrier_notify(0, GASNET_BARRIERFLAG_ANONYMOUS);
  gasnet_barrier_wait(0, GASNET_BARRIERFLAG_ANONYMOUS);
}

enum { FLAGS = GASNET_COLL_IN_NOSYNC | GASNET_COLL_OUT_ALLSYNC | GASNET_COLL_LOCAL };
typedef void (*op_fn)(size_t nb);
static void coll_broadcast(size_t nb) {
  gasnet_coll_broadcast(GASNET_TEAM_ALL, seg[me].addr, 0, src, nb, FLAGS);
}
static void loop_broadcast(size_t nb) {
  if (me == 0)
    for (int r = 1; r < n; r++) gasnet_put_nbi_bulk((gasnet_node_t)r, seg[r].addr, src, nb);
  gasnet_wait_syncnbi_puts();
  barrier();
}
static void coll_exchange(size_t nb) {
  gasnet_coll_exchange(GASNET_TEAM_ALL, seg[me].addr, src, nb, FLAGS);
}
static void loop_exchange(size_t nb) {
  for (int k = 1; k < n; k++) {
    int r = (me + k) % n;
    gasnet_put_nbi_bulk((gasnet_node_t)r, (uint8_t *)seg[r].addr + (size_t)me * nb,
                        src + (size_t)r * nb, nb);
  }
  memcpy((uint8_t *)seg[me].addr + (size_t)me * nb, src + (size_t)me * nb, nb);
  gasnet_wait_syncnbi_puts();
  barrier();
}

static void run(const char *name, op_fn fn, size_t nb, long iters) {
  if (!bench_wanted(name)) return;
  double samples[64];
  for (int r = -1; r < repeats; r++) {
    barrier();
    double t0 = now_us();
    for (long i = 0; i < iters; i++) fn(nb);
    if (r >= 0) samples[r] = (now_us() - t0) / (double)iters;
  }
  if (me == 0) bench_report(name, path, nb, "us", samples, iters);
}

int main(int argc, char **argv) {
  gasnet_init(&argc, &argv);
  int quick = bench_args("coll_bench", argc, argv, names);
  n = (int)gasnet_nodes(), me = (int)gasnet_mynode();
  /* exchange needs n blocks per rank */
  if (gasnet_attach(NULL, 0, (uintptr_t)MAXSZ * (uintptr_t)n, 0) != GASNET_OK) gasnet_exit(1);
  gasnet_coll_init(NULL, 0, NULL, 0, 0);
  seg = calloc((size_t)n, sizeof *seg);
  gasnet_getSegmentInfo(seg, n);
  src = calloc((size_t)n, MAXSZ);
  path = n > 1 && bench_same_supernode() ? "direct" : "am";
  barrier();
  if (me == 0) bench_header();
  long scale = quick ? 20 : 1;
  const size_t sizes[] = {8, 4096, 65536, MAXSZ};
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    size_t nb = sizes[i];
    long iters = (nb <= 4096 ? 2000 : nb <= 65536 ? 300 : 30) / scale + 1;
    run("coll_broadcast", coll_broadcast, nb, iters);
    run("loop_broadcast", loop_broadcast, nb, iters);
    run("coll_exchange", coll_exchange, nb, iters);
    run("loop_exchange", loop_exchange, nb, iters);
  }
  barrier();
  free(src);
  gasnet_exit(0);
}
