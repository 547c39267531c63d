/* ex_test_util.h: what the GASNet-EX test programs share: they include gasnetex.h only (as an
 * EX client does), count failed checks, synchronise with gex_Coll_BarrierNB, and use
 * test_util.h's byte patterns. */
#ifndef EX_TEST_UTIL_H
#define EX_TEST_UTIL_H

#include <gasnetex.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int test_failures;
static gex_Client_t ex_client;
static gex_EP_t ex_ep;
static gex_TM_t ex_tm;
static gex_Segment_t ex_seg;

#define CHECK(cond, ...)                                                                  \
  do {                                                                                    \
    if (!(cond)) {                                                                        \
      if (test_failures++ < 20) {                                                         \
        fprintf(stderr, "rank %d: CHECK failed at %s:%d: %s: ",                           \
                (int)gex_System_QueryJobRank(), __FILE__, __LINE__, #cond);               \
        fprintf(stderr, __VA_ARGS__);                                                     \
        fputc('\n', stderr);                                                              \
      }                                                                                   \
    }                                                                                     \
  } while (0)

#define EX_SAFE(call)                                                                     \
  do {                                                                                    \
    int rc_ = (call);                                                                     \
    if (rc_ != GASNET_OK) {                                                               \
      fprintf(stderr, "rank %d: %s failed: %s\n", (int)gex_System_QueryJobRank(), #call, \
              gasnet_ErrorName(rc_));                                                     \
      gasnet_exit(1);                                                                     \
    }                                                                                     \
  } while (0)

static inline void ex_barrier(void) { gex_Event_Wait(gex_Coll_BarrierNB(ex_tm, 0)); }

/* gex_Client_Init and gex_Segment_Attach of segsize bytes. */
static inline void ex_start(int *argc, char ***argv, const char *name, uintptr_t segsize) {
  EX_SAFE(gex_Client_Init(&ex_client, &ex_ep, &ex_tm, name, argc, argv, 0));
  EX_SAFE(gex_Segment_Attach(&ex_seg, ex_tm, segsize));
}

static inline void *ex_seg_of(gex_Rank_t rank) {
  void *addr = NULL;
  EX_SAFE(gex_Segment_QueryBound(ex_tm, rank, &addr, NULL, NULL));
  return addr;
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
static inline void ex_finish(const char *name) {
  int mine = test_failures;
  fflush(stderr);
  ex_barrier();
  gex_Rank_t me = gex_System_QueryJobRank();
  if (mine) {
    printf("%s: rank %d FAILED %d checks\n", name, (int)me, mine);
    fflush(stdout);
    gasnet_exit(1);
  }
  printf("%s: rank %d OK\n", name, (int)me);
  fflush(stdout);
  ex_barrier();
  gasnet_exit(0);
}

#endif
