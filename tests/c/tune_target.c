/* tune_target.c: a benchmark-shaped GASNet program whose figure is a known function of four
 * udp knobs, with no noise, for testing gasnet-tune's search itself (resume gives the same
 * answer, the known optimum is found). Takes the bundled benchmarks' command line
 * (--quick --json --only NAME) and prints one record in their schema. Optimum:
 * GASNET_AM_CREDITS_PP=16, GASNET_NETWORKDEPTH_PP=32, GASNET_UDP_DATAGRAM=8192,
 * GASNET_UDP_COALESCE=1, where the figure is 10 us.
 *
 * Its run time can be set, for testing the tuner's deadline: rank 0 sleeps
 * TUNE_TARGET_SLEEP seconds, and with TUNE_TARGET_SLOWDOWN=FILE:N:SECONDS it counts its runs
 * in FILE (one line each) and sleeps SECONDS instead in every run after the N-th: a machine
 * that becomes busy mid-sweep, without the timing of the test deciding when.
 *
 * Its runs can fail, for testing how the tuner takes a failed run (rank 0 exits with 1):
 * with TUNE_TARGET_FAIL=FILE:FIRST:COUNT it counts in FILE its runs without
 * GASNET_AM_CREDITS_PP (the tuner's baseline, when that knob is swept) and fails the FIRST-th
 * to the (FIRST+COUNT-1)-th of them; with TUNE_TARGET_FAIL_CREDITS=V every run with
 * GASNET_AM_CREDITS_PP=V fails (a point that does not work). Counted runs, not time, decide
 * which runs fail. */
#include <math.h>
#include <string.h>
#include <time.h>

#include "test_util.h"

static double knob(const char *name, double dflt) {
  const char *v = gasnet_getenv(name);
  return v && *v ? atof(v) : dflt;
}

/* For VAR=FILE:REST: counts this run in FILE (one line each) and returns how many runs it
 * counted before; *rest points at REST. */
static long count_run(const char *var, const char *spec, const char **rest) {
  char path[4096];
  const char *colon = strchr(spec, ':');
  if (!colon || (size_t)(colon - spec) >= sizeof path) {
    fprintf(stderr, "tune_target: %s='%s': expected FILE:...\n", var, spec);
    gasnet_exit(2);
  }
  memcpy(path, spec, (size_t)(colon - spec));
  path[colon - spec] = '\0';
  long runs = 0;
  FILE *f = fopen(path, "r");
  if (f) {
    for (int c; (c = fgetc(f)) != EOF;) runs += c == '\n';
    fclose(f);
  }
  f = fopen(path, "a");
  if (!f || fputs("run\n", f) == EOF || fclose(f) != 0) {
    fprintf(stderr, "tune_target: %s: cannot count the run\n", path);
    gasnet_exit(2);
  }
  *rest = colon + 1;
  return runs;
}

/* The seconds this run sleeps (see the top). */
static double pause_for(void) {
  const char *base = getenv("TUNE_TARGET_SLEEP");
  double seconds = base && *base ? atof(base) : 0;
  const char *slow = getenv("TUNE_TARGET_SLOWDOWN");
  if (!slow || !*slow) return seconds;
  const char *rest;
  long runs = count_run("TUNE_TARGET_SLOWDOWN", slow, &rest);
  long after;
  double slow_seconds;
  if (sscanf(rest, "%ld:%lf", &after, &slow_seconds) != 2) {
    fprintf(stderr, "tune_target: TUNE_TARGET_SLOWDOWN='%s': expected FILE:N:SECONDS\n", slow);
    gasnet_exit(2);
  }
  return runs >= after ? slow_seconds : seconds;
}

/* Whether this run fails (see the top). */
static int fails(void) {
  const char *credits = getenv("GASNET_AM_CREDITS_PP");
  const char *bad = getenv("TUNE_TARGET_FAIL_CREDITS");
  if (bad && *bad && credits && strcmp(credits, bad) == 0) return 1;
  const char *spec = getenv("TUNE_TARGET_FAIL");
  if (!spec || !*spec || (credits && *credits)) return 0;
  const char *rest;
  long runs = count_run("TUNE_TARGET_FAIL", spec, &rest), first, count;
  if (sscanf(rest, "%ld:%ld", &first, &count) != 2) {
    fprintf(stderr, "tune_target: TUNE_TARGET_FAIL='%s': expected FILE:FIRST:COUNT\n", spec);
    gasnet_exit(2);
  }
  return runs + 1 >= first && runs + 1 < first + count;
}

static void pace(void) {
  double s = pause_for();
  if (s <= 0) return;
  struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
  while (nanosleep(&ts, &ts) != 0) continue;
}

int main(int argc, char **argv) {
  GASNET_SAFE(gasnet_init(&argc, &argv));
  GASNET_SAFE(gasnet_attach(NULL, 0, GASNET_PAGESIZE, 0));
  const char *only = "tune_target";
  int json = 0;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--json") == 0) json = 1;
    else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc) only = argv[++i];
    else if (strcmp(argv[i], "--quick") != 0) {
      fprintf(stderr, "tune_target: unknown argument '%s'\n", argv[i]);
      gasnet_exit(2);
    }
  }
  if (strcmp(only, "tune_target") != 0) {
    fprintf(stderr, "tune_target: --only %s: no such benchmark (accepted: tune_target)\n", only);
    gasnet_exit(2);
  }
  double pp = log2(knob("GASNET_AM_CREDITS_PP", 12)) - 4;
  double depth = log2(knob("GASNET_NETWORKDEPTH_PP", 24)) - 5;
  double dgram = knob("GASNET_UDP_DATAGRAM", 65507);
  double coalesce = knob("GASNET_UDP_COALESCE", 1);
  double figure = 10 * (1 + 0.3 * pp * pp / 9 + 0.2 * depth * depth / 9 +
                        0.1 * (dgram != 8192) + 0.05 * (coalesce == 0));
  if (gasnet_mynode() == 0) {
    if (fails()) {
      fprintf(stderr, "tune_target: this run fails, as TUNE_TARGET_FAIL* asked\n");
      gasnet_exit(1);
    }
    pace();
    if (json)
      printf("{\"bench\": \"tune_target\", \"path\": \"synthetic\", \"conduit\": \"%s\", "
             "\"ranks\": %d, \"hosts\": 1, \"size\": 0, \"unit\": \"us\", \"better\": \"lower\", "
             "\"median\": %.6f, \"min\": %.6f, \"max\": %.6f, \"n\": 1, \"iters\": 1, "
             "\"env\": {}}\n",
             GASNET_CORE_NAME_STR, (int)gasnet_nodes(), figure, figure, figure);
    else
      printf("tune_target %.6f us\n", figure);
    fflush(stdout);
  }
  /* Every rank exits only after rank 0 printed: an exit ends the whole job at once. */
  test_barrier();
  gasnet_exit(0);
  return 0;
}
