/* gasnett_run_diagnostics: GASNet 1.x's entry point for a runtime's self-test (its testinternal
 * calls it), here a test of this runtime's own internals run by every rank of a job: each
 * section exercises one part from this rank and from several threads in a PAR build, and every
 * check that fails is said naming the section and what broke. */
#include "diag.h"
#include "gasnet_internal.h" /* GASNETI_THREADS */

#include <ctype.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

gasneti_diag_t gasneti_diag;

enum { SAID_PER_SECTION = 8 };

typedef struct {
  char letter;
  const char *what;
  void (*threaded)(int thread); /* run on every thread, or */
  void (*once)(void);           /* run by the caller alone */
  bool needs_handlers;
} section_t;

static const section_t sections[] = {
    {'A', "atomics, locks and condition variables", gasneti_diag_atomics, NULL, false},
    {'B', "timers", gasneti_diag_timers, NULL, false},
    {'C', "active messages (Short, Medium, Long)", gasneti_diag_ams, NULL, true},
    {'D', "puts, gets and memsets (blocking, handles, implicit, values)", gasneti_diag_rma, NULL,
     false},
    {'E', "barriers (named, anonymous, mismatched)", NULL, gasneti_diag_barriers, false},
};
enum { NSECTIONS = sizeof sections / sizeof sections[0] };

static gasnett_atomic_t said[NSECTIONS];

void gasneti_diag_fail(const char *section, const char *fmt, ...) {
  gasnett_atomic_increment(&gasneti_diag.errors, 0);
  int i = section[0] - 'A';
  if (i >= 0 && i < NSECTIONS && gasnett_atomic_add(&said[i], 1, 0) > SAID_PER_SECTION) return;
  char what[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  fprintf(stderr, "gasnett_run_diagnostics: rank %u: section %s: %s\n", (unsigned)gasnet_mynode(),
          section, what);
  fflush(stderr);
}

typedef struct {
  void (*fn)(int);
  int index;
} thread_arg_t;

static void *thread_main(void *p) {
  thread_arg_t *a = p;
  a->fn(a->index);
  return NULL;
}

void gasneti_diag_threads(void (*fn)(int thread)) {
  int n = gasneti_diag.nthreads;
  pthread_t tid[n > 1 ? n : 1];
  thread_arg_t arg[n > 1 ? n : 1];
  int started = 1;
  for (int t = 1; t < n; t++) {
    arg[t] = (thread_arg_t){fn, t};
    if (pthread_create(&tid[t], NULL, thread_main, &arg[t]) != 0) {
      gasneti_diag_fail("-", "pthread_create of thread %d failed: ran with %d threads", t, t);
      break;
    }
    started++;
  }
  fn(0);
  for (int t = 1; t < started; t++) pthread_join(tid[t], NULL);
}

static bool wanted(const char *sections_arg, char letter) {
  if (!sections_arg || !*sections_arg) return true;
  for (const char *c = sections_arg; *c; c++)
    if (toupper((unsigned char)*c) == letter) return true;
  return false;
}

int gasnett_run_diagnostics(int iters, int threadcnt, const char *testsections,
                            const gasnet_seginfo_t *seginfo) {
  gasnet_node_t me = gasnet_mynode(), n = gasnet_nodes();
  gasneti_diag.iters = iters > 0 ? iters : 1;
#if GASNETI_THREADS
  gasneti_diag.nthreads = threadcnt > 0 ? threadcnt : 1;
#else
  (void)threadcnt;
  gasneti_diag.nthreads = 1;
#endif
  gasneti_diag.seg = seginfo;
  gasneti_diag.peer = (me ^ 1) < n ? (me ^ 1) : me;
  gasnett_atomic_set(&gasneti_diag.errors, 0, 0);
  for (int i = 0; i < NSECTIONS; i++) gasnett_atomic_set(&said[i], 0, 0);
  if (!seginfo) gasneti_diag_fail("-", "no segment table given (the fourth argument is NULL)");
  if (testsections)
    for (const char *c = testsections; *c; c++)
      if (toupper((unsigned char)*c) < 'A' || toupper((unsigned char)*c) >= 'A' + NSECTIONS)
        gasneti_diag_fail("-", "test section '%c' is not one of A-%c", *c, 'A' + NSECTIONS - 1);
  gasnet_barrier(0, GASNET_BARRIERFLAG_ANONYMOUS);
  for (int i = 0; i < NSECTIONS && seginfo; i++) {
    const section_t *s = &sections[i];
    if (!wanted(testsections, s->letter)) continue;
    if (s->needs_handlers && !gasneti_diag.have_handlers) {
      if (me == 0)
        printf("gasnett_run_diagnostics: %c: %s: skipped (the table of "
               "gasnett_diagnostic_gethandlers was not asked for)\n", s->letter, s->what);
      continue;
    }
    if (me == 0) {
      printf("gasnett_run_diagnostics: %c: %s, %d iterations, %d thread%s\n", s->letter, s->what,
             gasneti_diag.iters, s->once ? 1 : gasneti_diag.nthreads,
             (s->once ? 1 : gasneti_diag.nthreads) == 1 ? "" : "s");
      fflush(stdout);
    }
    if (s->once) s->once();
    else gasneti_diag_threads(s->threaded);
    gasnet_barrier(0, GASNET_BARRIERFLAG_ANONYMOUS);
  }
  return (int)gasnett_atomic_read(&gasneti_diag.errors, 0);
}

void gasnett_diagnostic_gethandlers(gasnet_handlerentry_t **htable, int *htable_cnt) {
  if (!htable || !htable_cnt)
    gasnett_fatalerror("gasnett_diagnostic_gethandlers(%p, %p): both pointers are needed",
                       (void *)htable, (void *)htable_cnt);
  *htable = gasneti_diag_handlers;
  *htable_cnt = gasneti_diag_handler_count;
  gasneti_diag.have_handlers = true;
}

/* ---- A: atomics, locks and condition variables ------------------------------------------ */
static gasnett_atomic_t a_count;
static gasnett_atomic64_t a_count64;
static gasnett_atomic32_t a_cas;
static gasnet_hsl_t a_hsl = GASNET_HSL_INITIALIZER;
static gasnett_mutex_t a_mutex = GASNETT_MUTEX_INITIALIZER;
static gasnett_cond_t a_cond = GASNETT_COND_INITIALIZER;
static long a_under_hsl, a_under_mutex;
static int a_arrived, a_generation;

/* Every thread meets the others here (a barrier made of the mutex and condition variable
 * under test: a lost wake-up hangs the test, a spurious pass shows in the counts after it). */
static void a_meet(void) {
  gasnett_mutex_lock(&a_mutex);
  int gen = a_generation;
  if (++a_arrived == gasneti_diag.nthreads) {
    a_arrived = 0;
    a_generation++;
    gasnett_cond_broadcast(&a_cond);
  } else {
    while (gen == a_generation) gasnett_cond_wait(&a_cond, &a_mutex);
  }
  gasnett_mutex_unlock(&a_mutex);
}

void gasneti_diag_atomics(int thread) {
  int n = gasneti_diag.nthreads, iters = gasneti_diag.iters;
  if (thread == 0) {
    gasnett_atomic_set(&a_count, 0, 0);
    gasnett_atomic64_set(&a_count64, (uint64_t)1 << 40, 0);
    gasnett_atomic32_set(&a_cas, 0, 0);
    a_under_hsl = a_under_mutex = 0;
    gasnet_hsl_lock(&a_hsl);
    if (gasnet_hsl_trylock(&a_hsl) != GASNET_ERR_NOT_READY)
      gasneti_diag_fail("A", "gasnet_hsl_trylock of a lock this thread holds did not answer "
                             "GASNET_ERR_NOT_READY");
    gasnet_hsl_unlock(&a_hsl);
  }
  a_meet();
  for (int i = 0; i < iters; i++) {
    gasnett_atomic_increment(&a_count, 0);
    gasnett_atomic64_add(&a_count64, 3, 0);
    uint32_t seen;
    do seen = gasnett_atomic32_read(&a_cas, 0);
    while (!gasnett_atomic32_compare_and_swap(&a_cas, seen, seen + 1, 0));
    gasnet_hsl_lock(&a_hsl);
    a_under_hsl++;
    gasnet_hsl_unlock(&a_hsl);
    gasnett_mutex_lock(&a_mutex);
    a_under_mutex++;
    gasnett_mutex_unlock(&a_mutex);
  }
  a_meet();
  if (thread != 0) return;
  long want = (long)n * iters;
  if ((long)gasnett_atomic_read(&a_count, 0) != want)
    gasneti_diag_fail("A", "gasnett_atomic_increment: %ld, expected %ld",
                      (long)gasnett_atomic_read(&a_count, 0), want);
  if (gasnett_atomic64_read(&a_count64, 0) != ((uint64_t)1 << 40) + 3 * (uint64_t)want)
    gasneti_diag_fail("A", "gasnett_atomic64_add above 2^32: %llu, expected %llu",
                      (unsigned long long)gasnett_atomic64_read(&a_count64, 0),
                      (unsigned long long)(((uint64_t)1 << 40) + 3 * (uint64_t)want));
  if ((long)gasnett_atomic32_read(&a_cas, 0) != want)
    gasneti_diag_fail("A", "gasnett_atomic32_compare_and_swap loops: %ld, expected %ld",
                      (long)gasnett_atomic32_read(&a_cas, 0), want);
  if (a_under_hsl != want)
    gasneti_diag_fail("A", "a count kept under gasnet_hsl_lock: %ld, expected %ld", a_under_hsl,
                      want);
  if (a_under_mutex != want)
    gasneti_diag_fail("A", "a count kept under gasnett_mutex_lock: %ld, expected %ld",
                      a_under_mutex, want);
}

/* ---- B: timers --------------------------------------------------------------------------- */
void gasneti_diag_timers(int thread) {
  gasnett_tick_t last = gasnett_ticks_now();
  for (int i = 0; i < gasneti_diag.iters; i++) {
    gasnett_tick_t now = gasnett_ticks_now();
    if (now < last) {
      gasneti_diag_fail("B", "gasnett_ticks_now went back in thread %d: %llu after %llu", thread,
                        (unsigned long long)now, (unsigned long long)last);
      return;
    }
    last = now;
  }
  /* A sleep of 1 ms lasts at least 1 ms by the system's clock: the ticks must say so too. */
  struct timespec t0, t1, d = {0, 1000000};
  clock_gettime(CLOCK_MONOTONIC, &t0);
  gasnett_tick_t before = gasnett_ticks_now();
  nanosleep(&d, NULL);
  gasnett_tick_t after = gasnett_ticks_now();
  clock_gettime(CLOCK_MONOTONIC, &t1);
  double sys_ns = (t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec);
  double ticks_ns = (double)gasnett_ticks_to_ns(after - before);
  if (ticks_ns < 1e6 || ticks_ns > sys_ns * 1.01 + 1000)
    gasneti_diag_fail("B", "gasnett_ticks_to_ns measured a 1 ms sleep as %.0f ns (the system "
                           "clock: %.0f ns)", ticks_ns, sys_ns);
}
