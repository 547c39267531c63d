/* test_util.h: helpers shared by the C test programs: checks that count and report failures,
 * a blocking barrier, and the byte pattern used for payload content checks. */
#ifndef TEST_UTIL_H
#define TEST_UTIL_H

#include <gasnet.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static int test_failures;

#define CHECK(cond, ...)                                                              \
  do {                                                                                \
    if (!(cond)) {                                                                    \
      if (test_failures++ < 20) {                                                     \
        fprintf(stderr, "rank %d: CHECK failed at %s:%d: %s: ", (int)gasnet_mynode(), \
                __FILE__, __LINE__, #cond);                                           \
        fprintf(stderr, __VA_ARGS__);                                                 \
        fputc('\n', stderr);                                                          \
      }                                                                               \
    }                                                                                 \
  } while (0)

#define GASNET_SAFE(call)                                                                     \
  do {                                                                                        \
    int rc_ = (call);                                                                         \
    if (rc_ != GASNET_OK) {                                                                   \
      fprintf(stderr, "rank %d: %s failed: %s\n", (int)gasnet_mynode(), #call,               \
              gasnet_ErrorName(rc_));                                                         \
      gasnet_exit(1);                                                                         \
    }                                                                                         \
  } while (0)

static inline void test_barrier(void) {
  gasnet_barrier_notify(0, GASNET_BARRIERFLAG_ANONYMOUS);
  GASNET_SAFE(gasnet_barrier_wait(0, GASNET_BARRIERFLAG_ANONYMOUS));
}

static inline uint8_t pattern_byte(uint32_t seed, size_t k) {
  return (uint8_t)(seed * 13u + k * 7u + (k >> 8));
}

static inline void fill_pattern(void *buf, size_t n, uint32_t seed) {
  uint8_t *p = buf;
  for (size_t k = 0; k < n; k++) p[k] = pattern_byte(seed, k);
}

/* Index of the first wrong byte, or n when all match. */
static inline size_t check_pattern(const void *buf, size_t n, uint32_t seed) {
  const uint8_t *p = buf;
  for (size_t k = 0; k < n; k++)
    if (p[k] != pattern_byte(seed, k)) return k;
  return n;
}

/* Every rank reports; the job fails (code 1) if any check failed anywhere. */
static inline void test_finish(const char *name) {
  int mine = test_failures;
  fflush(stderr);
  test_barrier();
  if (mine) {
    printf("%s: rank %d FAILED %d checks\n", name, (int)gasnet_mynode(), mine);
    fflush(stdout);
    gasnet_exit(1);
  }
  printf("%s: rank %d OK\n", name, (int)gasnet_mynode());
  fflush(stdout);
  test_barrier();
  gasnet_exit(0);
}

#endif
