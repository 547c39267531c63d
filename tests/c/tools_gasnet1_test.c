/* tools_gasnet1_test: the GASNet-1 public surface GASNet's own test harness (test.h and its
 * programs) takes from gasnet.h and gasnet_tools.h, used the way it uses it: the EXTERNC
 * brackets, FORMAT_PRINTF, NORETURN(P), MALLOC(P), the TRACE and STATS macros (inert: this job does not trace),
 * GASNETT_MAX_THREADS, gasnett_performance_warning_str, PLATFORM_COMPILER_*, HAVE_PTHREAD_H,
 * reader-writer locks (two threads in PAR), gasnett_parse_int reading what
 * gasnett_format_number prints, the count0s family, the VIS formatters within their _bufsz,
 * and a collective through GASNET_TEAM_ALL with GASNET_COLL_LOCAL with only gasnet.h
 * included (as GASNet 1.x's gasnet.h brings gasnet_coll.h in). */
#include <gasnet.h>
#include <gasnet_tools.h>
#include <stdarg.h>

#if !HAVE_PTHREAD_H
#error "gasnet_config.h must say HAVE_PTHREAD_H"
#endif
#if defined(GASNET_PAR)
#include <pthread.h>
#endif

#ifndef GASNETT_MAX_THREADS
#error "GASNETT_MAX_THREADS is defined once gasnet.h is included"
#endif

static int failures;

GASNETT_BEGIN_EXTERNC
GASNETT_FORMAT_PRINTF(report, 2, 3, static void report(int ok, const char *fmt, ...));
GASNETT_FORMAT_PRINTF(report, 2, 3, static void report(int ok, const char *fmt, ...)) {
  if (ok) return;
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "rank %d: ", (int)gasnet_mynode());
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  failures++;
}
GASNETT_END_EXTERNC
GASNETT_EXTERNC int tools_gasnet1_helper(int x);
int tools_gasnet1_helper(int x) { return x + 1; }

GASNETT_NORETURN
static void give_up(const char *why) {
  fprintf(stderr, "tools_gasnet1_test: %s\n", why);
  gasnet_exit(1);
}
GASNETT_NORETURNP(give_up)

static void *make_buffer(size_t n) GASNETT_MALLOC;
GASNETT_MALLOCP(make_buffer)
static void *make_buffer(size_t n) { return calloc(1, n); }
GASNETT_INLINE(make_zeros) GASNETT_MALLOC void *make_zeros(size_t n) { return calloc(n, 1); }

static void tracing_and_stats(void) {
  const char *file = "x";
  unsigned int line = 7;
  GASNETT_TRACE_PRINTF("tracing is %s", "off");
  GASNETT_TRACE_PRINTF_FORCE("forced %d", 1);
  GASNETT_TRACE_SETMASK(GASNETT_TRACE_GETMASK());
  GASNETT_TRACE_SET_TRACELOCAL(GASNETT_TRACE_GET_TRACELOCAL());
  GASNETT_TRACE_SETSOURCELINE(__FILE__, __LINE__);
  GASNETT_TRACE_GETSOURCELINE(&file, &line);
  GASNETT_TRACE_FREEZESOURCELINE();
  GASNETT_TRACE_UNFREEZESOURCELINE();
  GASNETT_STATS_SETMASK(GASNETT_STATS_GETMASK());
  report(GASNETT_STATS_INIT(NULL) == 0, "GASNETT_STATS_INIT");
  report(!GASNETT_TRACE_ENABLED && strlen(GASNETT_TRACE_GETMASK()) == 0, "trace mask");
  report(line == 0 && file != NULL, "GASNETT_TRACE_GETSOURCELINE without tracing");
}

static void numbers(void) {
  static const int64_t values[] = {0, 1, 7, 1000, 1024, 3072, 4096, 1048576, 5368709120LL,
                                   (int64_t)1 << 40, (int64_t)3 << 50, (int64_t)1 << 60, -2048};
  char buf[64];
  for (size_t i = 0; i < sizeof values / sizeof values[0]; i++) {
    for (int mem = 0; mem < 2; mem++) {
      gasnett_format_number(values[i], buf, sizeof buf, mem);
      int64_t back = gasnett_parse_int(buf, mem ? 1 : 0);
      report(back == values[i], "format_number(%lld) = '%s' parses as %lld",
             (long long)values[i], buf, (long long)back);
    }
  }
  report(gasnett_parse_int("1 B", 1024) == 1, "'1 B' with a KiB multiplier");
  report(gasnett_parse_int("4 KB", 1) == 4096 && gasnett_parse_int("4kb", 1) == 4096, "4 KB");
  report(gasnett_parse_int("2", 1024) == 2048, "a bare number takes the multiplier");
}

static void zeros(void) {
  char src[100], dst[100];
  for (int i = 0; i < 100; i++) src[i] = (char)(i % 4 ? i : 0);
  report(gasnett_count0s(src, sizeof src) == 25, "count0s %zu", gasnett_count0s(src, sizeof src));
  report(gasnett_count0s_copy(dst, src, sizeof src) == 25 && memcmp(dst, src, sizeof src) == 0,
         "count0s_copy");
  report(gasnett_count0s_uint32_t(0x00ff0000u) == 3, "count0s_uint32_t");
  report(gasnett_count0s_uint64_t(UINT64_C(0x1100000000000022)) == 6, "count0s_uint64_t");
  report(gasnett_count0s_uintptr_t((uintptr_t)0) == (int)sizeof(uintptr_t), "count0s_uintptr_t");
  /* gasnett_mmap: fresh zeroed pages, page-aligned, writable (GASNet's testlegacy.c checks). */
  unsigned char *mapped = gasnett_mmap(3 * GASNETT_PAGESIZE);
  report(mapped && (uintptr_t)mapped % GASNETT_PAGESIZE == 0 && mapped[0] == 0 &&
         mapped[3 * GASNETT_PAGESIZE - 1] == 0, "gasnett_mmap %p", (void *)mapped);
  mapped[GASNETT_PAGESIZE] = 7;
}

/* Each formatter writes within its _bufsz (a guard after it must survive) and says what GASNet
 * says: counts, totals, extents. */
static char *guarded(size_t size) {
  char *buf = make_buffer(size + 16);
  if (!buf) give_up("out of memory");
  memset(buf + size, 0x5a, 16);
  return buf;
}
static int guard_intact(const char *buf, size_t size) {
  for (int i = 0; i < 16; i++)
    if (buf[size + i] != 0x5a) return 0;
  return strlen(buf) < size;
}

static void vis_formats(void) {
  char a[64], b[64];
  gasnet_memvec_t mv[3] = {{a, 10}, {b, 20}, {a + 30, 5}};
  size_t sz = gasnett_format_memveclist_bufsz(3);
  char *buf = guarded(sz);
  gasneti_memveclist_stats_t st = gasnett_format_memveclist(buf, 3, mv);
  report(st.totalsz == 35 && st.minsz == 5 && st.maxsz == 20, "memveclist stats");
  report(strstr(buf, "3 entries, totalsz=35") != NULL && guard_intact(buf, sz), "memveclist: %s", buf);
  free(buf);
  sz = gasnett_format_putvgetv_bufsz(3, 1);
  buf = guarded(sz);
  gasnet_memvec_t one[1] = {{b, 35}};
  report(gasnett_format_putvgetv(buf, 1, 3, mv, 1, one) == 35 && guard_intact(buf, sz),
         "putvgetv: %s", buf);
  free(buf);
  void *al[2] = {a, b};
  sz = gasnett_format_addrlist_bufsz(2);
  buf = guarded(sz);
  gasneti_addrlist_stats_t as = gasnett_format_addrlist(buf, 2, al, 8);
  void *lowest = (uintptr_t)a < (uintptr_t)b ? (void *)a : (void *)b;
  report(as.minaddr == lowest && guard_intact(buf, sz), "addrlist: %s", buf);
  free(buf);
  sz = gasnett_format_putigeti_bufsz(2, 2);
  buf = guarded(sz);
  report(gasnett_format_putigeti(buf, 0, 2, al, 8, 2, al, 8) == 16 && guard_intact(buf, sz),
         "putigeti: %s", buf);
  free(buf);
  size_t strides[2] = {64, 4096}, count[3] = {8, 4, 2};
  sz = gasnett_format_strides_bufsz(2);
  buf = guarded(sz);
  gasnett_format_strides(buf, 2, strides);
  report(strcmp(buf, "[64, 4096]") == 0 && guard_intact(buf, sz), "strides: %s", buf);
  free(buf);
  sz = gasnett_format_putsgets_bufsz(2);
  buf = guarded(sz);
  report(gasnett_format_putsgets(buf, NULL, 0, a, strides, b, strides, count, 2) == 64 &&
             guard_intact(buf, sz) && strstr(buf, "count=[8, 4, 2]") != NULL,
         "putsgets: %s", buf);
  free(buf);
}

static gasnett_rwlock_t rw = GASNETT_RWLOCK_INITIALIZER;
#if defined(GASNET_PAR)
static int shared_value;
static void *writer(void *arg) {
  (void)arg;
  for (int i = 0; i < 1000; i++) {
    gasnett_rwlock_wrlock(&rw);
    shared_value++;
    gasnett_rwlock_unlock(&rw);
  }
  return NULL;
}
#endif
static void rwlocks(void) {
#if defined(GASNET_PAR)
  pthread_t th;
  pthread_create(&th, NULL, writer, NULL);
  for (int i = 0; i < 1000; i++) {
    gasnett_rwlock_rdlock(&rw);
    int seen = shared_value;
    gasnett_rwlock_unlock(&rw);
    (void)seen;
  }
  pthread_join(th, NULL);
  report(shared_value == 1000, "rwlock-protected count %d", shared_value);
  gasnett_rwlock_wrlock(&rw);
  report(gasnett_rwlock_tryrdlock(&rw) != 0, "tryrdlock while write-locked succeeded");
  gasnett_rwlock_unlock(&rw);
#endif
  report(gasnett_rwlock_trywrlock(&rw) == 0, "trywrlock of a free lock");
  gasnett_rwlock_assertlocked(&rw);
  gasnett_rwlock_unlock(&rw);
  gasnett_rwlock_t dyn;
  gasnett_rwlock_init(&dyn);
  report(gasnett_rwlock_tryrdlock(&dyn) == 0, "tryrdlock of a free lock");
  gasnett_rwlock_unlock(&dyn);
  gasnett_rwlock_destroy(&dyn);
}

int main(int argc, char **argv) {
  if (gasnet_init(&argc, &argv) != GASNET_OK) give_up("gasnet_init");
  if (gasnet_attach(NULL, 0, GASNET_PAGESIZE, 0) != GASNET_OK) give_up("gasnet_attach");
  report(tools_gasnet1_helper(1) == 2, "GASNETT_EXTERNC helper");
  void *z = make_zeros(32);
  report(z && gasnett_count0s(z, 32) == 32, "GASNETT_MALLOC inline function");
  free(z);
  tracing_and_stats();
  numbers();
  zeros();
  vis_formats();
  rwlocks();
#if defined(GASNET_SEQ)
  report(GASNETT_MAX_THREADS == 1, "SEQ: GASNETT_MAX_THREADS %d", GASNETT_MAX_THREADS);
#else
  report(GASNETT_MAX_THREADS >= 2, "PAR: GASNETT_MAX_THREADS %d", GASNETT_MAX_THREADS);
#endif
  const char *family = _STRINGIFY(PLATFORM_COMPILER_FAMILYNAME);
  report((strcmp(family, "GNU") == 0 || strcmp(family, "CLANG") == 0) &&
             strlen(PLATFORM_COMPILER_VERSION_STR) > 0 && PLATFORM_COMPILER_VERSION_GE(3, 0, 0),
         "compiler %s %s", family, PLATFORM_COMPILER_VERSION_STR);
  /* test.h's TEST_COLL_INIT and TEST_BCAST, with gasnet_coll.h never named here. */
  gasnet_coll_init(0, 0, 0, 0, 0);
  static int value;
  int mine = 42 + (int)gasnet_mynode();
  gasnet_coll_broadcast(GASNET_TEAM_ALL, &value, 0, &mine, sizeof mine,
                        GASNET_COLL_LOCAL | GASNET_COLL_IN_ALLSYNC | GASNET_COLL_OUT_ALLSYNC);
  report(value == 42, "broadcast through gasnet.h alone: %d", value);
  if (gasnet_mynode() == 0)
    printf("tools_gasnet1_test: performance warnings: '%s'\n", gasnett_performance_warning_str());
  gasnet_barrier_notify(0, GASNET_BARRIERFLAG_ANONYMOUS);
  gasnet_barrier_wait(0, GASNET_BARRIERFLAG_ANONYMOUS);
  printf("tools_gasnet1_test: rank %d %s\n", (int)gasnet_mynode(), failures ? "FAILED" : "OK");
  fflush(stdout);
  gasnet_exit(failures ? 1 : 0);
}
