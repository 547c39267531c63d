/* vis_bench.c: the column of a 2-D halo exchange, moved from rank 0 to/from rank 1's grid
 * (rows of 4 KiB, one 8-byte element per row): as one strided transfer (gasnet_gets_bulk /
 * gasnet_puts_bulk) against the loop a client writes without VIS (one nbi get/put per row,
 * then one sync), and against gathering the column out of a local grid with memcpy (the
 * floor), all in the same run. Path: direct (PSHM) or am (GASNET_SUPERNODE_MAXSIZE=1).
 * Usage: vis_bench [--json] [--quick] [--only NAME] */
#include <gasnet_vis.h>

#include "bench_util.h"

#define PITCH 4096
#define MAXROWS 4096
#define ELEM 8

static volatile int stop;
static void on_stop(gasnet_token_t t) { (void)t, stop = 1; }

static const char *const names[] = {"column_memcpy", "column_get_strided", "column_get_loop",
                                    "column_put_strided", "column_put_loop", NULL};
static const char *path;
static uint8_t *grid, *local_grid, *column;

typedef void (*column_fn)(size_t rows);
static void column_memcpy(size_t rows) {
  for (size_t r = 0; r < rows; r++) memcpy(column + r * ELEM, local_grid + r * PITCH, ELEM);
  __asm__ __volatile__("" ::: "memory");
}
static const size_t remote_stride[] = {PITCH}, local_stride[] = {ELEM};
static void get_strided(size_t rows) {
  size_t count[] = {ELEM, rows};
  gasnet_gets_bulk(column, local_stride, 1, grid, remote_stride, count, 1);
}
static void get_loop(size_t rows) {
  for (size_t r = 0; r < rows; r++) gasnet_get_nbi_bulk(column + r * ELEM, 1, grid + r * PITCH, ELEM);
  gasnet_wait_syncnbi_gets();
}
static void put_strided(size_t rows) {
  size_t count[] = {ELEM, rows};
  gasnet_puts_bulk(1, grid, remote_stride, column, local_stride, count, 1);
}
static void put_loop(size_t rows) {
  for (size_t r = 0; r < rows; r++) gasnet_put_nbi_bulk(1, grid + r * PITCH, column + r * ELEM, ELEM);
  gasnet_wait_syncnbi_puts();
}

static void run(const char *name, column_fn fn, size_t rows, long iters) {
  if (!bench_wanted(name)) return;
  double samples[64];
  for (int r = -1; r < repeats; r++) {
    double t0 = now_us();
    for (long i = 0; i < iters; i++) fn(rows);
    if (r >= 0) samples[r] = (now_us() - t0) / (double)iters;
  }
  bench_report(name, strcmp(name, "column_memcpy") == 0 ? "local" : path, rows * ELEM, "us",
               samples, iters);
}

int main(int argc, char **argv) {
  gasnet_init(&argc, &argv);
  int quick = bench_args("vis_bench", argc, argv, names);
  gasnet_handlerentry_t table[] = {{0, (void (*)())on_stop}};
  if (gasnet_attach(table, 1, (size_t)MAXROWS * PITCH, 0) != GASNET_OK) gasnet_exit(1);
  if (gasnet_nodes() < 2) {
    fprintf(stderr, "vis_bench: needs at least 2 ranks (gasnetrun -n 2)\n");
    gasnet_exit(2);
  }
  gasnet_seginfo_t seg[2];
  gasnet_getSegmentInfo(seg, 2);
  grid = seg[1].addr;
  path = bench_same_supernode() ? "direct" : "am";
  local_grid = calloc(MAXROWS, PITCH);
  column = calloc(MAXROWS, ELEM);
  gasnet_barrier_notify(0, GASNET_BARRIERFLAG_ANONYMOUS);
  gasnet_barrier_wait(0, GASNET_BARRIERFLAG_ANONYMOUS);
  if (gasnet_mynode() == 0) {
    bench_header();
    long scale = quick ? 20 : 1;
    int direct = path[0] == 'd';
    const size_t rows[] = {64, 512, 4096};
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
      long iters = (long)((direct ? 2000000 : 100000) / rows[i]) / scale + 1;
      run("column_memcpy", column_memcpy, rows[i], iters);
      run("column_get_strided", get_strided, rows[i], iters);
      run("column_get_loop", get_loop, rows[i], iters);
      run("column_put_strided", put_strided, rows[i], iters);
      run("column_put_loop", put_loop, rows[i], iters);
    }
    gasnet_AMRequestShort0(1, table[0].index);
  } else if (gasnet_mynode() == 1) {
    GASNET_BLOCKUNTIL(stop); /* serves the AM path */
  }
  gasnet_barrier_notify(0, GASNET_BARRIERFLAG_ANONYMOUS);
  gasnet_barrier_wait(0, GASNET_BARRIERFLAG_ANONYMOUS);
  free(local_grid);
  free(column);
  gasnet_exit(0);
}
