/* bench_util.h: what the bundled benchmarks share: the clock, the command line (--json,
 * --quick), and the median/min/max of a set of repeats. */
#ifndef BENCH_UTIL_H
#define BENCH_UTIL_H

#include <gasnet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int json, repeats = 11;

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

/* Sets json and repeats (3 with --quick); returns whether --quick was given. */
static int bench_args(const char *name, int argc, char **argv) {
  int quick = 0;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--json") == 0) json = 1;
    else if (strcmp(argv[i], "--quick") == 0) quick = 1;
    else {
      fprintf(stderr, "%s: unknown argument '%s' (accepted: --json, --quick)\n", name, argv[i]);
      gasnet_exit(2);
    }
  }
  if (quick) repeats = 3;
  return quick;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

typedef struct {
  double median, min, max;
} bench_stats_t;

static bench_stats_t bench_stats(double *samples) {
  qsort(samples, (size_t)repeats, sizeof(double), cmp_double);
  return (bench_stats_t){samples[repeats / 2], samples[0], samples[repeats - 1]};
}

#endif
