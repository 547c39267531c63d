/* gasnet_tools.h: the GASNet-1 portable tools (gasnett_* / GASNETT_*): timers, memory fences,
 * atomics, mutexes and condition variables, thread-local keys, environment and number
 * helpers, system queries, error exits, backtraces and debugger freezes.
 *
 * Usable on its own: link -lgasnet_tools-par (threaded clients; define GASNETT_THREAD_SAFE) or
 * -lgasnet_tools-seq (define GASNETT_THREAD_SINGLE, or nothing). A GASNet client gets the
 * tools from its conduit library instead (never link both): it includes gasnet.h first and the
 * threading model follows GASNET_SEQ / GASNET_PAR / GASNET_PARSYNC. A client compiled for one
 * threading model and linked with the other library fails to link, naming the model. */
#ifndef GASNET_TOOLS_H
#define GASNET_TOOLS_H

#if !defined(GASNET_H) && (defined(GASNET_SEQ) || defined(GASNET_PARSYNC) || defined(GASNET_PAR))
#error "a GASNet client includes gasnet.h before gasnet_tools.h"
#endif

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <time.h>

#include <gasnet_config.h>
#include <gasnet_portable.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- threading model ------------------------------------------------------------------ */
#if defined(GASNET_SEQ)
#define GASNETT_SEQ_BUILD 1
#elif defined(GASNET_PAR) || defined(GASNET_PARSYNC) || defined(GASNETT_THREAD_SAFE)
#elif defined(GASNETT_THREAD_SINGLE) || (!defined(_REENTRANT) && !defined(_THREAD_SAFE))
#define GASNETT_SEQ_BUILD 1
#endif
#ifdef GASNETT_SEQ_BUILD
#define GASNETT_THREAD_MODEL SEQ
#else
#define GASNETT_THREAD_MODEL PAR
#endif
#define GASNETT_THREAD_MODEL_STR _STRINGIFY(GASNETT_THREAD_MODEL)
#define GASNETT_LINKCONFIG_THREADMODEL _CONCAT(gasnett_linkconfig_threadmodel_, GASNETT_THREAD_MODEL)
/* The library defines the symbol of its own model: a mismatch is a link error naming it. */
extern int GASNETT_LINKCONFIG_THREADMODEL;
static int *const gasnett_linkconfig_check __attribute__((used)) = &GASNETT_LINKCONFIG_THREADMODEL;

/* ---- versions and configuration -------------------------------------------------------- */
#define GASNETT_SPEC_VERSION_MAJOR 1
#define GASNETT_SPEC_VERSION_MINOR 7
#define GASNETT_RELEASE_VERSION_MAJOR GASNET_RELEASE_VERSION_MAJOR
#define GASNETT_RELEASE_VERSION_MINOR GASNET_RELEASE_VERSION_MINOR
#define GASNETT_RELEASE_VERSION_PATCH GASNET_RELEASE_VERSION_PATCH
#define GASNETT_TIMER_CONFIG timer_clock_gettime
#define GASNETT_MEMBAR_CONFIG membar_c11
#define GASNETT_ATOMIC_CONFIG atomic_c11
#define GASNETT_CONFIG_STRING                                                             \
  "RELEASE=" _STRINGIFY(GASNET_RELEASE_VERSION_MAJOR) "." _STRINGIFY(                     \
      GASNET_RELEASE_VERSION_MINOR) "." _STRINGIFY(GASNET_RELEASE_VERSION_PATCH) ",SPEC=" \
      _STRINGIFY(GASNETT_SPEC_VERSION_MAJOR) "." _STRINGIFY(GASNETT_SPEC_VERSION_MINOR)  \
      ",PTR=" _STRINGIFY(__SIZEOF_POINTER__) "x8,nodebug," GASNETT_THREAD_MODEL_STR       \
      ",timer_clock_gettime,membar_c11,atomic_c11"
#define GASNETT_PAGESIZE 4096
#define GASNETT_PAGESHIFT 12
#define GASNETT_CACHE_LINE_BYTES 64
#define GASNETT_SYSTEM_TUPLE "linux"

/* ---- compiler hints beyond gasnet_portable.h ------------------------------------------- */
#ifndef if_pt
#define if_pt(e) if (GASNETT_PREDICT_TRUE(e))
#define if_pf(e) if (GASNETT_PREDICT_FALSE(e))
#endif
#define gasnett_current_loc __FILE__ ":" _STRINGIFY(__LINE__)
#if defined(__x86_64__) || defined(__i386__)
#define gasnett_spinloop_hint() __builtin_ia32_pause()
#else
#define gasnett_spinloop_hint() ((void)0)
#endif

/* ---- timers: ticks are nanoseconds of CLOCK_MONOTONIC (comparable across threads) ------ */
typedef uint64_t gasnett_tick_t;
#define GASNETT_TICK_MIN ((gasnett_tick_t)0)
#define GASNETT_TICK_MAX (~(gasnett_tick_t)0)
static inline gasnett_tick_t gasnett_ticks_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (gasnett_tick_t)ts.tv_sec * 1000000000u + (gasnett_tick_t)ts.tv_nsec;
}
#define gasnett_ticks_to_ns(t) ((uint64_t)(t))
#define gasnett_ticks_to_us(t) ((uint64_t)(t) / 1000u)
static inline uint64_t gasnett_gettimeofday_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}
/* Measured once per process: the smallest step the clock shows and the cost of reading it. */
double gasnett_tick_granularityus(void);
double gasnett_tick_overheadus(void);

/* ---- memory fences ---------------------------------------------------------------------- */
#define gasnett_compiler_fence() __atomic_signal_fence(__ATOMIC_SEQ_CST)
#define gasnett_local_wmb() __atomic_thread_fence(__ATOMIC_RELEASE)
#define gasnett_local_rmb() __atomic_thread_fence(__ATOMIC_ACQUIRE)
#define gasnett_local_mb() __atomic_thread_fence(__ATOMIC_SEQ_CST)
#ifdef GASNETT_SEQ_BUILD
/* One thread: the weak fences only keep the compiler from reordering. */
#define gasnett_weak_wmb() gasnett_compiler_fence()
#define gasnett_weak_rmb() gasnett_compiler_fence()
#define gasnett_weak_mb() gasnett_compiler_fence()
#else
#define gasnett_weak_wmb() gasnett_local_wmb()
#define gasnett_weak_rmb() gasnett_local_rmb()
#define gasnett_weak_mb() gasnett_local_mb()
#endif

/* ---- atomics: flags ask for fences before (PRE) and after (POST) the operation ---------- */
#define GASNETT_ATOMIC_NONE 0
#define GASNETT_ATOMIC_RMB_PRE 0x01
#define GASNETT_ATOMIC_WMB_PRE 0x02
#define GASNETT_ATOMIC_MB_PRE 0x03
#define GASNETT_ATOMIC_RMB_POST 0x04
#define GASNETT_ATOMIC_WMB_POST 0x08
#define GASNETT_ATOMIC_MB_POST 0x0c
#define GASNETT_ATOMIC_RMB_POST_IF_TRUE 0x10
#define GASNETT_ATOMIC_RMB_POST_IF_FALSE 0x20
#define GASNETT_ATOMIC_REL GASNETT_ATOMIC_WMB_PRE
#define GASNETT_ATOMIC_ACQ GASNETT_ATOMIC_RMB_POST
#define GASNETT_ATOMIC_ACQ_IF_TRUE GASNETT_ATOMIC_RMB_POST_IF_TRUE
#define GASNETT_ATOMIC_ACQ_IF_FALSE GASNETT_ATOMIC_RMB_POST_IF_FALSE
#define GASNETT_HAVE_ATOMIC_CAS 1
#define GASNETT_HAVE_ATOMIC_ADD_SUB 1
#define GASNETT_HAVE_STRONGATOMIC_CAS 1
#define GASNETT_HAVE_STRONGATOMIC_ADD_SUB 1

static inline void gasnett_atomic_pre_(int flags) {
  if ((flags & GASNETT_ATOMIC_MB_PRE) == GASNETT_ATOMIC_MB_PRE) gasnett_local_mb();
  else if (flags & GASNETT_ATOMIC_WMB_PRE) gasnett_local_wmb();
  else if (flags & GASNETT_ATOMIC_RMB_PRE) gasnett_local_mb(); /* loads before: a full fence */
}
static inline void gasnett_atomic_post_(int flags, int result) {
  if ((flags & GASNETT_ATOMIC_MB_POST) == GASNETT_ATOMIC_MB_POST) gasnett_local_mb();
  else if (flags & GASNETT_ATOMIC_RMB_POST) gasnett_local_rmb();
  else if (flags & GASNETT_ATOMIC_WMB_POST) gasnett_local_mb(); /* stores after: a full fence */
  else if ((flags & GASNETT_ATOMIC_RMB_POST_IF_TRUE) && result) gasnett_local_rmb();
  else if ((flags & GASNETT_ATOMIC_RMB_POST_IF_FALSE) && !result) gasnett_local_rmb();
}

/* One family per width: NAME (type gasnett_NAME_t), value type VT, signed type ST. Every
 * operation is a real atomic (the strong family is the same), so they are also safe between
 * processes sharing memory and in signal handlers. */
#define GASNETT_ATOMIC_FAMILY_(NAME, VT)                                                     \
  typedef struct { VT ctr; } gasnett_##NAME##_t;                                             \
  static inline VT gasnett_##NAME##_read(gasnett_##NAME##_t *p, int f) {                     \
    gasnett_atomic_pre_(f);                                                                  \
    VT v = __atomic_load_n(&p->ctr, __ATOMIC_RELAXED);                                       \
    gasnett_atomic_post_(f, 1);                                                              \
    return v;                                                                                \
  }                                                                                          \
  static inline void gasnett_##NAME##_set(gasnett_##NAME##_t *p, VT v, int f) {              \
    gasnett_atomic_pre_(f);                                                                  \
    __atomic_store_n(&p->ctr, v, __ATOMIC_RELAXED);                                          \
    gasnett_atomic_post_(f, 1);                                                              \
  }                                                                                          \
  static inline VT gasnett_##NAME##_add(gasnett_##NAME##_t *p, VT v, int f) {                \
    gasnett_atomic_pre_(f);                                                                  \
    VT r = __atomic_add_fetch(&p->ctr, v, __ATOMIC_SEQ_CST);                                 \
    gasnett_atomic_post_(f, 1);                                                              \
    return r;                                                                                \
  }                                                                                          \
  static inline VT gasnett_##NAME##_subtract(gasnett_##NAME##_t *p, VT v, int f) {           \
    gasnett_atomic_pre_(f);                                                                  \
    VT r = __atomic_sub_fetch(&p->ctr, v, __ATOMIC_SEQ_CST);                                 \
    gasnett_atomic_post_(f, 1);                                                              \
    return r;                                                                                \
  }                                                                                          \
  static inline void gasnett_##NAME##_increment(gasnett_##NAME##_t *p, int f) {              \
    (void)gasnett_##NAME##_add(p, 1, f);                                                     \
  }                                                                                          \
  static inline void gasnett_##NAME##_decrement(gasnett_##NAME##_t *p, int f) {              \
    (void)gasnett_##NAME##_subtract(p, 1, f);                                                \
  }                                                                                          \
  static inline int gasnett_##NAME##_decrement_and_test(gasnett_##NAME##_t *p, int f) {      \
    gasnett_atomic_pre_(f);                                                                  \
    int r = __atomic_sub_fetch(&p->ctr, 1, __ATOMIC_SEQ_CST) == 0;                           \
    gasnett_atomic_post_(f, r);                                                              \
    return r;                                                                                \
  }                                                                                          \
  static inline int gasnett_##NAME##_compare_and_swap(gasnett_##NAME##_t *p, VT oldval,      \
                                                      VT newval, int f) {                    \
    gasnett_atomic_pre_(f);                                                                  \
    int r = __atomic_compare_exchange_n(&p->ctr, &oldval, newval, 0, __ATOMIC_SEQ_CST,       \
                                        __ATOMIC_SEQ_CST);                                   \
    gasnett_atomic_post_(f, r);                                                              \
    return r;                                                                                \
  }                                                                                          \
  static inline VT gasnett_##NAME##_swap(gasnett_##NAME##_t *p, VT v, int f) {               \
    gasnett_atomic_pre_(f);                                                                  \
    VT r = __atomic_exchange_n(&p->ctr, v, __ATOMIC_SEQ_CST);                                \
    gasnett_atomic_post_(f, 1);                                                              \
    return r;                                                                                \
  }

typedef uint32_t gasnett_atomic_val_t;
typedef int32_t gasnett_atomic_sval_t;
#define GASNETT_ATOMIC_MAX ((gasnett_atomic_val_t)0xFFFFFFFFu)
#define GASNETT_ATOMIC_SIGNED_MIN ((gasnett_atomic_sval_t)INT32_MIN)
#define GASNETT_ATOMIC_SIGNED_MAX ((gasnett_atomic_sval_t)INT32_MAX)
#define gasnett_atomic_signed(v) ((gasnett_atomic_sval_t)(v))
GASNETT_ATOMIC_FAMILY_(atomic, gasnett_atomic_val_t)
GASNETT_ATOMIC_FAMILY_(atomic32, uint32_t)
GASNETT_ATOMIC_FAMILY_(atomic64, uint64_t)
GASNETT_ATOMIC_FAMILY_(strongatomic, gasnett_atomic_val_t)
GASNETT_ATOMIC_FAMILY_(strongatomic32, uint32_t)
GASNETT_ATOMIC_FAMILY_(strongatomic64, uint64_t)
#define gasnett_atomic_init(v) {(v)}
#define gasnett_atomic32_init(v) {(v)}
#define gasnett_atomic64_init(v) {(v)}
#define gasnett_strongatomic_init(v) {(v)}
#define gasnett_strongatomic32_init(v) {(v)}
#define gasnett_strongatomic64_init(v) {(v)}

/* ---- mutexes and condition variables (no-ops in a SEQ build unless asked for) ---------- */
#if defined(GASNETT_SEQ_BUILD) && defined(GASNETT_USE_TRUE_MUTEXES)
#if GASNETT_USE_TRUE_MUTEXES
#undef GASNETT_SEQ_BUILD_NOOP_MUTEXES
#else
#define GASNETT_SEQ_BUILD_NOOP_MUTEXES 1
#endif
#elif defined(GASNETT_SEQ_BUILD)
#define GASNETT_SEQ_BUILD_NOOP_MUTEXES 1
#endif
#ifdef GASNETT_SEQ_BUILD_NOOP_MUTEXES
typedef struct { char unused; } gasnett_mutex_t;
typedef struct { char unused; } gasnett_cond_t;
#define GASNETT_MUTEX_INITIALIZER {0}
#define GASNETT_COND_INITIALIZER {0}
#define gasnett_mutex_init(m) ((void)(m))
#define gasnett_mutex_destroy(m) ((void)(m))
#define gasnett_mutex_destroy_ignoreerr(m) ((void)(m), 0)
#define gasnett_mutex_lock(m) ((void)(m))
#define gasnett_mutex_trylock(m) ((void)(m), 0)
#define gasnett_mutex_unlock(m) ((void)(m))
#define gasnett_cond_init(c) ((void)(c))
#define gasnett_cond_destroy(c) ((void)(c))
#define gasnett_cond_signal(c) ((void)(c))
#define gasnett_cond_broadcast(c) ((void)(c))
#define gasnett_cond_wait(c, m) ((void)(c), (void)(m))
#else
typedef pthread_mutex_t gasnett_mutex_t;
typedef pthread_cond_t gasnett_cond_t;
#define GASNETT_MUTEX_INITIALIZER PTHREAD_MUTEX_INITIALIZER
#define GASNETT_COND_INITIALIZER PTHREAD_COND_INITIALIZER
void gasnett_pthread_failed_(const char *what, int rc) GASNETT_NORETURN;
#define GASNETT_PTHREAD_CHECK_(what, call)           \
  do {                                               \
    int rc_ = (call);                                \
    if (rc_) gasnett_pthread_failed_((what), rc_);   \
  } while (0)
#define gasnett_mutex_init(m) GASNETT_PTHREAD_CHECK_("gasnett_mutex_init", pthread_mutex_init((m), NULL))
#define gasnett_mutex_destroy(m) GASNETT_PTHREAD_CHECK_("gasnett_mutex_destroy", pthread_mutex_destroy(m))
#define gasnett_mutex_destroy_ignoreerr(m) pthread_mutex_destroy(m)
#define gasnett_mutex_lock(m) GASNETT_PTHREAD_CHECK_("gasnett_mutex_lock", pthread_mutex_lock(m))
#define gasnett_mutex_trylock(m) pthread_mutex_trylock(m)
#define gasnett_mutex_unlock(m) GASNETT_PTHREAD_CHECK_("gasnett_mutex_unlock", pthread_mutex_unlock(m))
#define gasnett_cond_init(c) GASNETT_PTHREAD_CHECK_("gasnett_cond_init", pthread_cond_init((c), NULL))
#define gasnett_cond_destroy(c) GASNETT_PTHREAD_CHECK_("gasnett_cond_destroy", pthread_cond_destroy(c))
#define gasnett_cond_signal(c) GASNETT_PTHREAD_CHECK_("gasnett_cond_signal", pthread_cond_signal(c))
#define gasnett_cond_broadcast(c) GASNETT_PTHREAD_CHECK_("gasnett_cond_broadcast", pthread_cond_broadcast(c))
#define gasnett_cond_wait(c, m) GASNETT_PTHREAD_CHECK_("gasnett_cond_wait", pthread_cond_wait((c), (m)))
#endif
#define gasnett_mutex_assertlocked(m) ((void)(m))
#define gasnett_mutex_assertunlocked(m) ((void)(m))

/* ---- reader-writer locks (no-ops where mutexes are) ------------------------------------- */
#ifdef GASNETT_SEQ_BUILD_NOOP_MUTEXES
typedef struct { char unused; } gasnett_rwlock_t;
#define GASNETT_RWLOCK_INITIALIZER {0}
#define gasnett_rwlock_init(l) ((void)(l))
#define gasnett_rwlock_destroy(l) ((void)(l))
#define gasnett_rwlock_rdlock(l) ((void)(l))
#define gasnett_rwlock_wrlock(l) ((void)(l))
#define gasnett_rwlock_unlock(l) ((void)(l))
#define gasnett_rwlock_tryrdlock(l) ((void)(l), 0)
#define gasnett_rwlock_trywrlock(l) ((void)(l), 0)
#else
typedef pthread_rwlock_t gasnett_rwlock_t;
#define GASNETT_RWLOCK_INITIALIZER PTHREAD_RWLOCK_INITIALIZER
#define gasnett_rwlock_init(l) \
  GASNETT_PTHREAD_CHECK_("gasnett_rwlock_init", pthread_rwlock_init((l), NULL))
#define gasnett_rwlock_destroy(l) \
  GASNETT_PTHREAD_CHECK_("gasnett_rwlock_destroy", pthread_rwlock_destroy(l))
#define gasnett_rwlock_rdlock(l) \
  GASNETT_PTHREAD_CHECK_("gasnett_rwlock_rdlock", pthread_rwlock_rdlock(l))
#define gasnett_rwlock_wrlock(l) \
  GASNETT_PTHREAD_CHECK_("gasnett_rwlock_wrlock", pthread_rwlock_wrlock(l))
#define gasnett_rwlock_unlock(l) \
  GASNETT_PTHREAD_CHECK_("gasnett_rwlock_unlock", pthread_rwlock_unlock(l))
/* 0 when taken, EBUSY (or EAGAIN) when not, as GASNet's. */
#define gasnett_rwlock_tryrdlock(l) pthread_rwlock_tryrdlock(l)
#define gasnett_rwlock_trywrlock(l) pthread_rwlock_trywrlock(l)
#endif
#define gasnett_rwlock_assertlocked(l) ((void)(l))
#define gasnett_rwlock_assertrdlocked(l) ((void)(l))
#define gasnett_rwlock_assertwrlocked(l) ((void)(l))
#define gasnett_rwlock_assertunlocked(l) ((void)(l))

/* ---- thread-local keys: a thread-local pointer per key (no initialization needed) ------ */
#ifdef __cplusplus
#define GASNETT_THREAD_LOCAL_ thread_local
#else
#define GASNETT_THREAD_LOCAL_ _Thread_local
#endif
#define GASNETT_THREADKEY_DECLARE(key) extern GASNETT_THREAD_LOCAL_ void *gasnett_threadkey_##key
#define GASNETT_THREADKEY_DEFINE(key) GASNETT_THREAD_LOCAL_ void *gasnett_threadkey_##key
/* A thread_local needs no creation: GASNet 1.x created a pthread key here on first use. The
 * function keeps GASNet 1.x's name, as clients take its address (Realm's activemsg.h). */
static inline void _gasneti_threadkey_init(void **key) { (void)key; }
#define gasnett_threadkey_init(key) _gasneti_threadkey_init(&gasnett_threadkey_##key)
#define gasnett_threadkey_get(key) (gasnett_threadkey_##key)
#define gasnett_threadkey_set(key, val) ((void)(gasnett_threadkey_##key = (void *)(val)))
#define gasnett_threadkey_get_noinit(key) gasnett_threadkey_get(key)
#define gasnett_threadkey_set_noinit(key, val) gasnett_threadkey_set(key, val)

/* ---- system ----------------------------------------------------------------------------- */
static inline void gasnett_sched_yield(void) { (void)sched_yield(); }
/* Sleep at least ns nanoseconds (a signal cuts it short, as GASNet's). */
static inline void gasnett_nsleep(uint64_t ns) {
  struct timespec ts = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
  (void)nanosleep(&ts, NULL);
}
static inline int gasnett_isLittleEndian(void) {
  const union { uint32_t i; unsigned char c[4]; } probe = {1};
  return probe.c[0] == 1;
}
/* Online CPUs (0 if unknown). */
int gasnett_cpu_count(void);
/* Physical memory in bytes; 0 when unknown, or a fatal error if failureIsFatal. */
uint64_t gasnett_getPhysMemSz(int failureIsFatal);
const char *gasnett_gethostname(void);
/* Binds the calling thread to CPU (rank modulo the CPUs this process may use): 0, or the
 * errno of the failure (GASNet 1.x returned nothing; a caller that ignores it is unchanged). */
#define GASNETT_SET_AFFINITY_SUPPORT 1
int gasnett_set_affinity(int rank);
/* size bytes of fresh zeroed memory, page-aligned, from an anonymous mapping (a fatal error
 * naming the size when the system refuses). */
void *gasnett_mmap(uintptr_t size);
int gasnett_maximize_rlimit(int res, const char *lim_desc);
int gasnett_maximize_rlimits(void);
uint64_t gasnett_checksum(const void *p, int numbytes);
/* Zero bytes: in a buffer, in a buffer while copying it, in one word. */
size_t gasnett_count0s(const void *src, size_t len);
size_t gasnett_count0s_copy(void *GASNETT_RESTRICT dst, const void *GASNETT_RESTRICT src,
                            size_t len);
static inline int gasnett_count0s_uint64_t(uint64_t x) {
  int zeros = 0;
  for (int i = 0; i < 8; i++, x >>= 8) zeros += (x & 0xff) == 0;
  return zeros;
}
static inline int gasnett_count0s_uint32_t(uint32_t x) {
  return gasnett_count0s_uint64_t((uint64_t)x | UINT64_C(0xffffffff00000000));
}
#if UINTPTR_MAX == UINT32_MAX
#define gasnett_count0s_uintptr_t(x) gasnett_count0s_uint32_t((uint32_t)(x))
#else
#define gasnett_count0s_uintptr_t(x) gasnett_count0s_uint64_t((uint64_t)(x))
#endif
/* What a build of the library costs in speed ("" for an optimized one; the debug build names
 * its checks), for clients that print it beside their results. */
const char *gasnett_performance_warning_str(void);

/* ---- environment and numbers ----------------------------------------------------------- */
char *gasnett_getenv(const char *key);
void gasnett_setenv(const char *key, const char *value);
void gasnett_unsetenv(const char *key);
int gasnett_verboseenv(void);
char *gasnett_getenv_withdefault(const char *key, const char *defaultval);
int gasnett_getenv_yesno_withdefault(const char *key, int defaultval);
int64_t gasnett_getenv_int_withdefault(const char *key, int64_t defaultval,
                                       uint64_t mem_size_multiplier);
double gasnett_getenv_dbl_withdefault(const char *key, double defaultval);
void gasnett_envstr_display(const char *key, const char *val, int is_dflt);
void gasnett_envint_display(const char *key, int64_t val, int is_dflt, int is_mem_size);
void gasnett_envdbl_display(const char *key, double val, int is_dflt);
/* "4 KB"-style when is_mem_size; returns buf. */
char *gasnett_format_number(int64_t val, char *buf, size_t bufsz, int is_mem_size);
/* Integers with optional K/M/G/T suffixes (memory sizes: a bare number is multiplied by
 * mem_size_multiplier when it is not 0); a malformed string is a fatal error naming it. */
int64_t gasnett_parse_int(const char *str, uint64_t mem_size_multiplier);

/* ---- errors, signals, debugging --------------------------------------------------------- */
void gasnett_fatalerror(const char *fmt, ...) GASNETT_NORETURN __attribute__((format(printf, 1, 2)));
void gasnett_killmyprocess(int exitcode) GASNETT_NORETURN;
void gasnett_flush_streams(void);
void gasnett_close_streams(void);
typedef void (*gasnett_sighandlerfn_t)(int);
/* Installs fp for sig (SA_RESTART) and returns the previous handler. */
gasnett_sighandlerfn_t gasnett_reghandler(int sig, gasnett_sighandlerfn_t fp);

typedef struct {
  const char *name;
  int (*fnp)(int fd);
  int threadsupport;
} gasnett_backtrace_type_t;
/* A client may define gasnett_backtrace_user to add its own backtrace mechanism. */
extern gasnett_backtrace_type_t gasnett_backtrace_user __attribute__((weak));
void gasnett_backtrace_init(const char *exename);
/* Writes the calling thread's stack to fd; 0 on success. */
int gasnett_print_backtrace(int fd);
/* gasnett_print_backtrace when GASNET_BACKTRACE is set, else nothing (returns 1). */
extern int (*gasnett_print_backtrace_ifenabled)(int fd);
/* Spins until a debugger clears *flag (printing how to attach and what to set). */
void gasnett_freezeForDebuggerNow(volatile int *flag, const char *flagsymname);
/* Freezes (on gasnet_frozen) when GASNET_FREEZE_ON_ERROR is set; else returns at once. */
void gasnett_freezeForDebuggerErr(void);

/* The trace printf of a build that traces nothing (the tools alone, below). A function, so that
 * clients may take it as a designator; GASNet 1.x's name, whose address clients take (Realm's
 * activemsg.h) with or without the library. */
static inline void _gasnett_trace_printf_noop(const char *fmt, ...) { (void)fmt; }

#ifdef GASNET_H
/* A GASNet client's own trace and statistics lines (GASNet-1's GASNETT_TRACE_* and
 * GASNETT_STATS_*; docs/tracing.md): messages under category H in the rank's trace and
 * statistics files, the masks read and changed at run time, and the source line trace lines
 * name, which a client may set and freeze so that the GASNet calls its library makes are
 * traced at its user's line. Tracing is switched on at run time (GASNET_TRACEFILE), so
 * GASNETT_TRACE_ENABLED is whether this rank now traces category H. The lower-case printf forms
 * are this implementation's names for the same calls. */
int gasneti_trace_enabled(char category);
int gasneti_stats_enabled(char category);
void gasneti_trace_client_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void gasneti_trace_client_printf_force(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void gasneti_stats_client_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void gasneti_stats_client_printf_force(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
const char *gasneti_trace_getmask(void);
void gasneti_trace_setmask(const char *mask);
const char *gasneti_stats_getmask(void);
void gasneti_stats_setmask(const char *mask);
int gasneti_trace_get_tracelocal(void);
void gasneti_trace_set_tracelocal(int on);
void gasneti_trace_setsourceline(const char *file, unsigned line);
void gasneti_trace_getsourceline(const char **pfile, unsigned *pline);
void gasneti_trace_freezesourceline(void);
void gasneti_trace_unfreezesourceline(void);
/* Called with a printf-like function when the statistics are written, if category H is
 * counted (GASNETT_STATS_INIT sets it). */
extern void (*gasnett_stats_callback)(void (*format)(const char *, ...));
#define GASNETT_TRACE_ENABLED gasneti_trace_enabled('H')
#define GASNETT_STATS_ENABLED gasneti_stats_enabled('H')
#define GASNETT_TRACE_PRINTF gasneti_trace_client_printf
#define GASNETT_TRACE_PRINTF_FORCE gasneti_trace_client_printf_force
#define GASNETT_TRACE_GETMASK() gasneti_trace_getmask()
#define GASNETT_TRACE_SETMASK(mask) gasneti_trace_setmask(mask)
#define GASNETT_TRACE_GET_TRACELOCAL() gasneti_trace_get_tracelocal()
#define GASNETT_TRACE_SET_TRACELOCAL(val) gasneti_trace_set_tracelocal(val)
/* Kept only while the rank traces or counts: one branch for a client that sets it per call. */
#define GASNETT_TRACE_SETSOURCELINE(file, line)                                                \
  (gasneti_trace_active ? gasneti_trace_setsourceline((file), (unsigned)(line)) : (void)0)
#define GASNETT_TRACE_GETSOURCELINE(pfile, pline) gasneti_trace_getsourceline((pfile), (pline))
#define GASNETT_TRACE_FREEZESOURCELINE() gasneti_trace_freezesourceline()
#define GASNETT_TRACE_UNFREEZESOURCELINE() gasneti_trace_unfreezesourceline()
#define GASNETT_STATS_INIT(callback) (gasnett_stats_callback = (callback), gasneti_stats_enabled('H'))
#define GASNETT_STATS_GETMASK() gasneti_stats_getmask()
#define GASNETT_STATS_SETMASK(mask) gasneti_stats_setmask(mask)
#define gasnett_trace_printf gasneti_trace_client_printf
#define gasnett_trace_printf_force gasneti_trace_client_printf_force
#define gasnett_stats_printf gasneti_stats_client_printf
#define gasnett_stats_printf_force gasneti_stats_client_printf_force
#else
/* Tools alone (no GASNet library) have no trace or statistics files: these do nothing, as in
 * GASNet-1's tools-only distribution. The printf forms are functions, so that clients may also
 * take them as function designators. */
#define GASNETT_TRACE_ENABLED 0
#define GASNETT_STATS_ENABLED 0
#define GASNETT_TRACE_PRINTF _gasnett_trace_printf_noop
#define GASNETT_TRACE_PRINTF_FORCE _gasnett_trace_printf_noop
#define GASNETT_TRACE_GETMASK() ""
#define GASNETT_TRACE_SETMASK(mask) ((void)(mask))
#define GASNETT_TRACE_GET_TRACELOCAL() 0
#define GASNETT_TRACE_SET_TRACELOCAL(val) ((void)(val))
#define GASNETT_TRACE_SETSOURCELINE(file, line) ((void)(file), (void)(line))
#define GASNETT_TRACE_GETSOURCELINE(pfile, pline) ((void)(*(pfile) = ""), (void)(*(pline) = 0))
#define GASNETT_TRACE_FREEZESOURCELINE() ((void)0)
#define GASNETT_TRACE_UNFREEZESOURCELINE() ((void)0)
#define GASNETT_STATS_INIT(callback) ((void)(callback), 0)
#define GASNETT_STATS_GETMASK() ""
#define GASNETT_STATS_SETMASK(mask) ((void)(mask))
#define gasnett_trace_printf(...) ((void)0)
#define gasnett_trace_printf_force(...) ((void)0)
#define gasnett_stats_printf(...) ((void)0)
#define gasnett_stats_printf_force(...) ((void)0)
#endif

/* ---- what the tools add for a GASNet client (gasnet.h included first) -------------------- */
#ifdef GASNET_H
/* How many client threads a rank may have: one in SEQ; PAR has no limit of its own beyond
 * what the system allows, and says 256, GASNet's default, for clients that size arrays by it. */
#if defined(GASNET_SEQ)
#define GASNETT_MAX_THREADS 1
#else
#define GASNETT_MAX_THREADS 256
#endif
/* The runtime's self-test, GASNet 1.x's interface (its testinternal): collective, called by one
 * thread of every rank after gasnet_attach registered the table gasnett_diagnostic_gethandlers
 * gives (the active-message section is skipped without it). Sections A-E (atomics and locks,
 * timers, AMs, RMA, barriers), all when testsections is NULL or empty, else the letters named;
 * a PAR build runs A-D on threadcnt threads. Every failed check is said on stderr naming the
 * section and what broke; the result is their count on this rank (0: all passed). */
int gasnett_run_diagnostics(int iters, int threadcnt, const char *testsections,
                            const gasnet_seginfo_t *seginfo);
void gasnett_diagnostic_gethandlers(gasnet_handlerentry_t **htable, int *htable_cnt);
/* VIS operands as text (for tracing and test failures): each _bufsz says how large a buffer
 * the matching formatter needs. The lists' extents come back as statistics. */
size_t gasnett_format_memveclist_bufsz(size_t count);
gasneti_memveclist_stats_t gasnett_format_memveclist(char *buf, size_t count,
                                                     gasnet_memvec_t const *list);
size_t gasnett_format_putvgetv_bufsz(size_t dstcount, size_t srccount);
size_t gasnett_format_putvgetv(char *buf, gasnet_node_t node, size_t dstcount,
                               gasnet_memvec_t const dstlist[], size_t srccount,
                               gasnet_memvec_t const srclist[]);
size_t gasnett_format_addrlist_bufsz(size_t count);
gasneti_addrlist_stats_t gasnett_format_addrlist(char *buf, size_t count, void *const *list,
                                                 size_t len);
size_t gasnett_format_putigeti_bufsz(size_t dstcount, size_t srccount);
size_t gasnett_format_putigeti(char *buf, gasnet_node_t node, size_t dstcount,
                               void *const dstlist[], size_t dstlen, size_t srccount,
                               void *const srclist[], size_t srclen);
size_t gasnett_format_strides_bufsz(size_t count);
void gasnett_format_strides(char *buf, size_t count, const size_t *list);
size_t gasnett_format_putsgets_bufsz(size_t stridelevels);
size_t gasnett_format_putsgets(char *buf, void *pstats, gasnet_node_t node, void *dstaddr,
                               const size_t dststrides[], void *srcaddr,
                               const size_t srcstrides[], const size_t count[],
                               size_t stridelevels);
#endif

#ifdef __cplusplus
}
#endif

#endif
