/* tools_test: the GASNet tools library on its own (no gasnet.h, no conduit): every group of
 * gasnett_* calls, with threads in the PAR build.
 *   tools_test                 run the checks; prints "tools_test: OK (<model>)"
 *   tools_test parse STRING    gasnett_parse_int(STRING, 1) (a malformed one is fatal)
 *   tools_test fatal           gasnett_fatalerror (must print the message and abort)
 *   tools_test backtrace       gasnett_print_backtrace to stdout */
#include <gasnet_tools.h>
#include <signal.h>
#include <unistd.h>

static int failures;
#define CHECK(cond)                                                            \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "tools_test: CHECK failed at line %d: %s\n", __LINE__, #cond); \
      failures++;                                                              \
    }                                                                          \
  } while (0)

GASNETT_THREADKEY_DEFINE(mykey);
static gasnett_atomic_t counter = gasnett_atomic_init(0);
static gasnett_atomic64_t big = gasnett_atomic64_init(0);
static gasnett_mutex_t lock = GASNETT_MUTEX_INITIALIZER;
static gasnett_cond_t cond = GASNETT_COND_INITIALIZER;
static long under_lock;
static int arrived;
enum { THREADS = 4, ROUNDS = 100000 };

#ifndef GASNETT_SEQ_BUILD
static void *worker(void *arg) {
  gasnett_threadkey_set(mykey, arg);
  for (int i = 0; i < ROUNDS; i++) {
    gasnett_atomic_increment(&counter, 0);
    gasnett_atomic64_add(&big, 3, GASNETT_ATOMIC_NONE);
    gasnett_mutex_lock(&lock);
    under_lock++;
    gasnett_mutex_unlock(&lock);
  }
  gasnett_mutex_lock(&lock);
  arrived++;
  gasnett_cond_broadcast(&cond);
  while (arrived < THREADS) gasnett_cond_wait(&cond, &lock);
  gasnett_mutex_unlock(&lock);
  return gasnett_threadkey_get(mykey) == arg ? arg : NULL;
}
#endif

static volatile sig_atomic_t got;
static void on_usr1(int sig) { got = sig; }

int main(int argc, char **argv) {
  gasnett_backtrace_init(argv[0]);
  if (argc > 2 && strcmp(argv[1], "parse") == 0) {
    printf("%" PRId64 "\n", gasnett_parse_int(argv[2], 1));
    return 0;
  }
  if (argc > 1 && strcmp(argv[1], "fatal") == 0) gasnett_fatalerror("tools_test says %d", 42);
  if (argc > 1 && strcmp(argv[1], "backtrace") == 0) return gasnett_print_backtrace(STDOUT_FILENO);

  /* versions */
  CHECK(GASNETT_RELEASE_VERSION_MAJOR >= 1 && GASNETT_SPEC_VERSION_MAJOR == 1);
  CHECK(strstr(GASNETT_CONFIG_STRING, GASNETT_THREAD_MODEL_STR) != NULL);
  /* timers */
  gasnett_tick_t t0 = gasnett_ticks_now();
  usleep(2000);
  gasnett_tick_t t1 = gasnett_ticks_now();
  CHECK(t1 > t0 && gasnett_ticks_to_us(t1 - t0) >= 2000 && gasnett_ticks_to_us(t1 - t0) < 2000000);
  CHECK(gasnett_ticks_to_ns(t1 - t0) >= 1000 * gasnett_ticks_to_us(t1 - t0));
  CHECK(gasnett_tick_granularityus() > 0 && gasnett_tick_granularityus() < 100);
  CHECK(gasnett_tick_overheadus() > 0 && gasnett_tick_overheadus() < 100);
  CHECK(gasnett_gettimeofday_us() > 1600000000ull * 1000000ull);
  /* fences and atomics */
  gasnett_local_mb(), gasnett_local_wmb(), gasnett_local_rmb(), gasnett_compiler_fence();
  gasnett_weak_mb(), gasnett_weak_wmb(), gasnett_weak_rmb();
  gasnett_atomic_t a = gasnett_atomic_init(5);
  CHECK(gasnett_atomic_read(&a, 0) == 5);
  gasnett_atomic_set(&a, 1, GASNETT_ATOMIC_REL);
  CHECK(gasnett_atomic_decrement_and_test(&a, GASNETT_ATOMIC_ACQ_IF_TRUE));
  CHECK(gasnett_atomic_compare_and_swap(&a, 0, 7, 0) && !gasnett_atomic_compare_and_swap(&a, 0, 8, 0));
  CHECK(gasnett_atomic_add(&a, 3, 0) == 10 && gasnett_atomic_subtract(&a, 4, 0) == 6);
  CHECK(gasnett_atomic_swap(&a, 9, 0) == 6 && gasnett_atomic_read(&a, 0) == 9);
  gasnett_atomic_set(&a, 0, 0);
  gasnett_atomic_decrement(&a, 0);
  CHECK(gasnett_atomic_read(&a, 0) == GASNETT_ATOMIC_MAX && gasnett_atomic_signed(gasnett_atomic_read(&a, 0)) == -1);
  gasnett_atomic64_t w = gasnett_atomic64_init(1ull << 40);
  CHECK(gasnett_atomic64_compare_and_swap(&w, 1ull << 40, 1ull << 41, GASNETT_ATOMIC_MB_PRE | GASNETT_ATOMIC_MB_POST));
  CHECK(gasnett_atomic64_read(&w, 0) == 1ull << 41);
  gasnett_strongatomic32_t s32 = gasnett_strongatomic32_init(0);
  gasnett_strongatomic32_increment(&s32, 0);
  CHECK(gasnett_strongatomic32_read(&s32, 0) == 1);
  /* threads: atomics, mutex, condition variable and keys under contention */
  gasnett_threadkey_init(mykey);
  gasnett_threadkey_set(mykey, &a);
  CHECK(gasnett_threadkey_get(mykey) == &a);
#ifndef GASNETT_SEQ_BUILD
  pthread_t th[THREADS];
  for (long i = 0; i < THREADS; i++) pthread_create(&th[i], NULL, worker, (void *)(i + 1));
  for (long i = 0; i < THREADS; i++) {
    void *r;
    pthread_join(th[i], &r);
    CHECK(r == (void *)(i + 1));
  }
  CHECK(gasnett_atomic_read(&counter, 0) == THREADS * ROUNDS);
  CHECK(gasnett_atomic64_read(&big, 0) == 3ull * THREADS * ROUNDS);
  CHECK(under_lock == (long)THREADS * ROUNDS);
  CHECK(gasnett_threadkey_get(mykey) == &a); /* the other threads' values were their own */
#else
  gasnett_mutex_lock(&lock); /* no-ops in a SEQ build, but they compile and run */
  gasnett_mutex_unlock(&lock);
  (void)cond, (void)under_lock, (void)arrived, (void)counter, (void)big;
#endif
  CHECK(gasnett_mutex_trylock(&lock) == 0);
  gasnett_mutex_unlock(&lock);
  /* system */
  CHECK(gasnett_cpu_count() >= 1);
  CHECK(gasnett_getPhysMemSz(1) > (64ull << 20));
  CHECK(strlen(gasnett_gethostname()) > 0);
  CHECK(gasnett_isLittleEndian() == (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__));
  CHECK(gasnett_set_affinity(0) == 0);
  gasnett_sched_yield();
  gasnett_spinloop_hint();
  CHECK(gasnett_checksum("abc", 3) != gasnett_checksum("abd", 3));
  /* environment and numbers */
  gasnett_setenv("TOOLS_TEST_SIZE", "2M");
  CHECK(gasnett_getenv_int_withdefault("TOOLS_TEST_SIZE", 5, 1) == 2 << 20);
  CHECK(gasnett_getenv_int_withdefault("TOOLS_TEST_UNSET", 5, 0) == 5);
  gasnett_setenv("TOOLS_TEST_MB", "3");
  CHECK(gasnett_getenv_int_withdefault("TOOLS_TEST_MB", 0, 1u << 20) == 3 << 20);
  gasnett_setenv("TOOLS_TEST_YES", "yes");
  CHECK(gasnett_getenv_yesno_withdefault("TOOLS_TEST_YES", 0) == 1);
  CHECK(gasnett_getenv_yesno_withdefault("TOOLS_TEST_UNSET", 1) == 1);
  gasnett_setenv("TOOLS_TEST_DBL", "2.5");
  CHECK(gasnett_getenv_dbl_withdefault("TOOLS_TEST_DBL", 0) == 2.5);
  CHECK(strcmp(gasnett_getenv_withdefault("TOOLS_TEST_UNSET", "dflt"), "dflt") == 0);
  gasnett_unsetenv("TOOLS_TEST_DBL");
  CHECK(gasnett_getenv("TOOLS_TEST_DBL") == NULL);
  CHECK(gasnett_parse_int("0x10", 0) == 16 && gasnett_parse_int("-4k", 0) == -4096);
  CHECK(gasnett_parse_int("1.5G", 0) == 3ll << 29);
  char buf[64];
  CHECK(strcmp(gasnett_format_number(4096, buf, sizeof buf, 1), "4 KB") == 0);
  CHECK(strcmp(gasnett_format_number(1000, buf, sizeof buf, 0), "1000") == 0);
  /* signals */
  gasnett_sighandlerfn_t before = gasnett_reghandler(SIGUSR1, on_usr1);
  CHECK(before == SIG_DFL);
  raise(SIGUSR1);
  CHECK(got == SIGUSR1);
  CHECK(gasnett_reghandler(SIGUSR1, SIG_DFL) == on_usr1);
  gasnett_flush_streams();
  if (failures) {
    printf("tools_test: %d checks FAILED\n", failures);
    return 1;
  }
  printf("tools_test: OK (%s)\n", GASNETT_THREAD_MODEL_STR);
  return 0;
}
