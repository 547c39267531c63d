/* halo: a small GASNet-1 client of the kind our users write. Rank 0 broadcasts the problem
 * size; every rank fills a grid in its segment, sends its last column to the next rank's
 * ghost column with one strided put, and the ranks check what arrived; a reduce and a
 * gather_all combine per-rank checksums; the tools time it and count AMs. */
#include <gasnet.h>
#include <gasnet_coll.h>
#include <gasnet_tools.h>
#include <gasnet_vis.h>

#define COLS 16
static gasnett_atomic_t hellos = gasnett_atomic_init(0);
static void on_hello(gasnet_token_t t) { (void)t, gasnett_atomic_increment(&hellos, 0); }

static void sum(void *res, size_t n, const void *l, size_t lc, const void *r, size_t es, int f,
                int a) {
  (void)lc, (void)es, (void)f, (void)a;
  for (size_t i = 0; i < n; i++) ((double *)res)[i] = ((const double *)l)[i] + ((const double *)r)[i];
}

static double value(int rank, size_t row, size_t col) { return rank * 1e6 + row * 100.0 + col; }

int main(int argc, char **argv) {
  gasnet_handlerentry_t table[] = {{0, (void (*)())on_hello}};
  if (gasnet_init(&argc, &argv) != GASNET_OK) return 1;
  if (gasnet_attach(table, 1, 1 << 20, 0) != GASNET_OK) return 1;
  gasnet_coll_fn_entry_t fns[] = {{sum, 0}};
  gasnet_coll_init(NULL, 0, fns, 1, 0);
  int me = (int)gasnet_mynode(), n = (int)gasnet_nodes(), next = (me + 1) % n;
  gasnet_seginfo_t *seg = malloc(sizeof *seg * (size_t)n);
  gasnet_getSegmentInfo(seg, n);
  gasnett_tick_t start = gasnett_ticks_now();

  size_t rows = 0;
  if (me == 0) rows = 1000;
  gasnet_coll_broadcast(GASNET_TEAM_ALL, &rows, 0, &rows, sizeof rows,
                        GASNET_COLL_IN_MYSYNC | GASNET_COLL_OUT_MYSYNC | GASNET_COLL_LOCAL);
  /* grid: rows x (COLS + 1) doubles, the last column is the ghost filled by the previous rank */
  double *grid = seg[me].addr, local_sum = 0;
  size_t pitch = (COLS + 1) * sizeof(double);
  for (size_t r = 0; r < rows; r++)
    for (size_t c = 0; c < COLS; c++) local_sum += grid[r * (COLS + 1) + c] = value(me, r, c);
  gasnet_barrier_notify(0, GASNET_BARRIERFLAG_ANONYMOUS);
  gasnet_barrier_wait(0, GASNET_BARRIERFLAG_ANONYMOUS);
  size_t strides[] = {pitch}, count[] = {sizeof(double), rows};
  gasnet_puts_bulk((gasnet_node_t)next, (double *)seg[next].addr + COLS, strides,
                   grid + COLS - 1, strides, count, 1);
  gasnet_AMRequestShort0((gasnet_node_t)next, table[0].index);
  gasnet_barrier_notify(0, GASNET_BARRIERFLAG_ANONYMOUS);
  gasnet_barrier_wait(0, GASNET_BARRIERFLAG_ANONYMOUS);
  GASNET_BLOCKUNTIL(gasnett_atomic_read(&hellos, 0) == 1);
  int prev = (me + n - 1) % n, bad = 0;
  for (size_t r = 0; r < rows; r++) bad += grid[r * (COLS + 1) + COLS] != value(prev, r, COLS - 1);

  double total = 0, expected = 0;
  gasnet_coll_reduce(GASNET_TEAM_ALL, 0, &total, &local_sum, 0, 0, sizeof(double), 1, 0, 0,
                     GASNET_COLL_IN_MYSYNC | GASNET_COLL_OUT_MYSYNC | GASNET_COLL_LOCAL);
  int *ranks = malloc(sizeof(int) * (size_t)n);
  gasnet_coll_gather_all(GASNET_TEAM_ALL, ranks, &me, sizeof me,
                         GASNET_COLL_IN_ALLSYNC | GASNET_COLL_OUT_ALLSYNC | GASNET_COLL_LOCAL);
  for (int r = 0; r < n; r++) {
    bad += ranks[r] != r;
    for (size_t row = 0; row < rows; row++)
      for (size_t c = 0; c < COLS; c++) expected += value(r, row, c);
  }
  if (me == 0) bad += total != expected;
  printf("halo: rank %d %s (%s conduit, release %d.%d, tools %s, %.0f us)\n", me,
         bad ? "FAILED" : "OK", GASNET_CORE_NAME_STR, GASNET_RELEASE_VERSION_MAJOR,
         GASNET_RELEASE_VERSION_MINOR, GASNETT_THREAD_MODEL_STR,
         (double)gasnett_ticks_to_us(gasnett_ticks_now() - start));
  gasnet_barrier_notify(0, GASNET_BARRIERFLAG_ANONYMOUS);
  gasnet_barrier_wait(0, GASNET_BARRIERFLAG_ANONYMOUS);
  gasnet_exit(bad ? 1 : 0);
  return 0;
}
