/* bench_util.h: what the bundled benchmarks share: the clock, the command line (--json,
 * --quick, --only NAME, --waitmode MODE: gasnet_set_waitmode as a client calls it), medians of repeats, and one record per result, the same for every
 * benchmark (the tuner and the tests read it):
 *   bench, path, conduit, ranks, hosts, size, unit, better (higher|lower), median, min, max,
 *   n (repeats), iters, env (every GASNET_* variable the rank saw). */
#ifndef BENCH_UTIL_H
#define BENCH_UTIL_H

#include <gasnet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

extern char **environ;

static int json, repeats = 11;
static const char *only; /* --only NAME[,NAME...]: run just these benchmarks */

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

/* Whether name is one of the comma-separated names of list. */
static int bench_listed(const char *list, const char *name) {
  size_t n = strlen(name);
  for (const char *p = list; *p;) {
    const char *end = strchr(p, ',');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    if (len == n && strncmp(p, name, n) == 0) return 1;
    p += len + (end != NULL);
  }
  return 0;
}

/* Whether benchmark name runs (every one does without --only). */
static int bench_wanted(const char *name) { return !only || bench_listed(only, name); }

/* Sets json, repeats (3 with --quick) and only; names lists the benchmark's results, NULL
 * ended, so that --only with a wrong name is refused with the accepted ones. Returns whether
 * --quick was given. */
static int bench_args(const char *prog, int argc, char **argv, const char *const *names) {
  int quick = 0;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--json") == 0) json = 1;
    else if (strcmp(argv[i], "--quick") == 0) quick = 1;
    else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc) only = argv[++i];
    else if (strcmp(argv[i], "--waitmode") == 0 && i + 1 < argc) {
      const char *m = argv[++i];
      int mode = strcmp(m, "spin") == 0    ? GASNET_WAIT_SPIN
                 : strcmp(m, "block") == 0 ? GASNET_WAIT_BLOCK
                 : strcmp(m, "spinblock") == 0 ? GASNET_WAIT_SPINBLOCK : -1;
      if (mode < 0) {
        if (gasnet_mynode() == 0)
          fprintf(stderr, "%s: --waitmode %s: expected spin, block or spinblock\n", prog, m);
        gasnet_exit(2);
      }
      gasnet_set_waitmode(mode);
    } else {
      if (gasnet_mynode() == 0)
        fprintf(stderr,
                "%s: unknown argument '%s' (accepted: --json, --quick, --only NAME[,NAME...], "
                "--waitmode spin|block|spinblock)\n",
                prog, argv[i]);
      gasnet_exit(2);
    }
  }
  if (only) {
    int known = 1; /* every listed name must be one of names */
    for (const char *p = only; *p && known;) {
      const char *end = strchr(p, ',');
      size_t len = end ? (size_t)(end - p) : strlen(p);
      int this_one = 0;
      for (const char *const *n = names; *n; n++)
        this_one |= strlen(*n) == len && strncmp(*n, p, len) == 0;
      known = this_one && len > 0;
      p += len + (end != NULL);
    }
    if (!known && gasnet_mynode() == 0) {
      fprintf(stderr, "%s: --only %s: no such benchmark (accepted:", prog, only);
      for (const char *const *n = names; *n; n++) fprintf(stderr, " %s", *n);
      fprintf(stderr, ")\n");
    }
    if (!known) gasnet_exit(2);
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

static void json_string(const char *s) {
  putchar('"');
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\') printf("\\%c", c);
    else if (c < 0x20) printf("\\u%04x", c);
    else putchar(c);
  }
  putchar('"');
}

static int bench_hosts(void) {
  int n = gasnet_nodes(), hosts = 0;
  gasnet_nodeinfo_t *info = calloc((size_t)n, sizeof *info);
  gasnet_getNodeInfo(info, n);
  for (int i = 0; i < n; i++)
    if ((int)info[i].host + 1 > hosts) hosts = (int)info[i].host + 1;
  free(info);
  return hosts;
}

/* Whether ranks 0 and 1 share memory (the path their traffic takes). */
static __attribute__((unused)) int bench_same_supernode(void) {
  gasnet_nodeinfo_t info[2];
  gasnet_getNodeInfo(info, 2);
  return info[0].supernode == info[1].supernode;
}

/* Whether ranks 0 and 1 run on one host. */
static __attribute__((unused)) int bench_same_host(void) {
  gasnet_nodeinfo_t info[2];
  gasnet_getNodeInfo(info, 2);
  return info[0].host == info[1].host;
}

/* One result: samples are per-operation times in microseconds; a bandwidth result (unit
 * "GiB/s") converts them with size, a rate ("Mops/s") to operations per microsecond. Prints a table row, or the JSON record with --json. */
static void bench_emit(const char *bench, const char *path, size_t size, const char *unit,
                       double med, double lo, double hi, int higher_is_better, long iters);

static void bench_report(const char *bench, const char *path, size_t size, const char *unit,
                         double *samples, long iters) {
  bench_stats_t st = bench_stats(samples);
  double med = st.median, lo = st.min, hi = st.max;
  int bandwidth = strcmp(unit, "GiB/s") == 0, rate = strcmp(unit, "Mops/s") == 0;
  int higher_is_better = bandwidth || rate;
  if (higher_is_better) { /* microseconds per operation -> GiB/s or Mops/s; the slowest is the min */
    double scale = bandwidth ? (double)size / (1024.0 * 1024.0 * 1024.0) * 1e6 : 1.0;
    med = scale / st.median, lo = scale / st.max, hi = scale / st.min;
  }
  bench_emit(bench, path, size, unit, med, lo, hi, higher_is_better, iters);
}

/* A ratio of two figures measured back to back in each repeat (unit "x"): samples are the
 * repeats' ratios, reported as they are. */
static __attribute__((unused)) void bench_report_ratio(const char *bench, const char *path,
                                                       size_t size, double *ratios, long iters,
                                                       int higher_is_better) {
  bench_stats_t st = bench_stats(ratios);
  bench_emit(bench, path, size, "x", st.median, st.min, st.max, higher_is_better, iters);
}

static void bench_emit(const char *bench, const char *path, size_t size, const char *unit,
                       double med, double lo, double hi, int higher_is_better, long iters) {
  if (!json) {
    printf("%-18s %-7s %9zu %12.4f %12.4f %12.4f  %s\n", bench, path, size, med, lo, hi, unit);
    fflush(stdout);
    return;
  }
  printf("{\"bench\": \"%s\", \"path\": \"%s\", \"conduit\": \"%s\", \"ranks\": %d, "
         "\"hosts\": %d, \"size\": %zu, \"unit\": \"%s\", \"better\": \"%s\", "
         "\"median\": %.6g, \"min\": %.6g, \"max\": %.6g, \"n\": %d, \"iters\": %ld, \"env\": {",
         bench, path, GASNET_CONDUIT_NAME_STR, (int)gasnet_nodes(), bench_hosts(), size, unit,
         higher_is_better ? "higher" : "lower", med, lo, hi, repeats, iters);
  int first = 1;
  for (char **e = environ; *e; e++) {
    if (strncmp(*e, "GASNET_", 7) != 0) continue;
    const char *eq = strchr(*e, '=');
    char name[256];
    snprintf(name, sizeof name, "%.*s", (int)(eq - *e), *e);
    printf("%s", first ? "" : ", ");
    json_string(name);
    printf(": ");
    json_string(eq + 1);
    first = 0;
  }
  printf("}}\n");
  fflush(stdout);
}

/* The physical limit of the PSHM path: a cache-line round trip between ranks 0 and 1 through
 * rank 1's segment at offset (two lines there are used), reached by rank 0 via its PSHM
 * mapping. Reported as pshm_line_rtt so latencies can be read as a ratio to it; nothing when
 * ranks 0 and 1 share no memory. Both ranks call it. */
static __attribute__((unused)) void bench_line_rtt(const gasnet_seginfo_t *seg, uintptr_t offset, long iters) {
  gasnet_nodeinfo_t info[2];
  gasnet_getNodeInfo(info, 2);
  if (info[0].supernode != info[1].supernode) return;
  uintptr_t base = (uintptr_t)seg[1].addr + (gasnet_mynode() == 0 ? info[1].offset : 0);
  volatile long *ping = (volatile long *)(base + offset);
  volatile long *pong = (volatile long *)(base + offset + 128);
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
  if (gasnet_mynode() == 0) bench_report("pshm_line_rtt", "pshm", 0, "us", samples, iters);
}

static void bench_header(void) {
  if (!json)
    printf("%-18s %-7s %9s %12s %12s %12s  (median, min, max of %d repeats, %d ranks)\n",
           "benchmark", "path", "bytes", "median", "min", "max", repeats, (int)gasnet_nodes());
}

#endif
