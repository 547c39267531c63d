/* rma_test.c: every extended-API call with sizes 0..4 MiB, aligned and unaligned, local buffers
 * in and out of the segment, to the right neighbour and to itself; 10,000 outstanding nb/nbi
 * operations synced in every order; value forms of 1, 2, 4 and 8 bytes; access regions opened
 * concurrently by 4 threads, and handles synced by another thread than their issuer's (PAR).
 * "rma_test bad-put" puts outside a segment (debug check); "rma_test largest BYTES" makes BYTES
 * (at most 4 MiB) the largest size, for jobs of many ranks on few cores, where checking every
 * byte of 4 MiB transfers is most of the run. */
#include <string.h>

#include "test_util.h"

#define BIG (4u << 20)
#define AREA (BIG + 4096) /* room for an unaligned 4 MiB transfer */
#define PUT_AREA 0        /* written by the rank's writer, checked by the rank itself */
#define GET_AREA AREA     /* filled by the owner with pattern(owner) before any get */
#define LOCAL_AREA (2 * AREA)
#define SEGSIZE (3 * AREA)
#define MANY 10000

static gasnet_seginfo_t *seg;
static int me, n;
static uint8_t *heap; /* local buffer outside the segment */

static uint8_t *seg_at(int rank, size_t off) { return (uint8_t *)seg[rank].addr + off; }

static size_t sizes[] = {0, 1, 7, 8, 63, 4096, 65536, BIG}; /* the last: "largest" */
#define NSIZES (sizeof sizes / sizeof sizes[0])

enum { PUT, PUT_BULK, PUT_NB, PUT_NB_BULK, PUT_NBI, PUT_NBI_BULK, PUT_REGION, MEMSET, MEMSET_NB,
       MEMSET_NBI, NPUTKINDS };
enum { GET, GET_BULK, GET_NB, GET_NB_BULK, GET_NBI, GET_NBI_BULK, GET_REGION, NGETKINDS };

static uint32_t seed_of(int writer, int kind, int size_i, int variant) {
  return (uint32_t)(writer * 7919 + kind * 101 + size_i * 13 + variant);
}

/* Issue one put-like operation and complete it the way its kind requires. */
static void do_put(int kind, int target, uint8_t *dst, uint8_t *src, size_t len, int val) {
  gasnet_handle_t h;
  switch (kind) {
    case PUT: gasnet_put(target, dst, src, len); break;
    case PUT_BULK: gasnet_put_bulk(target, dst, src, len); break;
    case PUT_NB:
      h = gasnet_put_nb(target, dst, src, len);
      memset(src, 0xEE, len); /* non-bulk: the source is reusable at once */
      gasnet_wait_syncnb(h);
      break;
    case PUT_NB_BULK: gasnet_wait_syncnb(gasnet_put_nb_bulk(target, dst, src, len)); break;
    case PUT_NBI:
      gasnet_put_nbi(target, dst, src, len);
      memset(src, 0xEE, len);
      gasnet_wait_syncnbi_puts();
      break;
    case PUT_NBI_BULK:
      gasnet_put_nbi_bulk(target, dst, src, len);
      while (gasnet_try_syncnbi_puts() != GASNET_OK) {}
      break;
    case PUT_REGION:
      gasnet_begin_nbi_accessregion();
      gasnet_put_nbi_bulk(target, dst, src, len);
      gasnet_wait_syncnb(gasnet_end_nbi_accessregion());
      break;
    case MEMSET: gasnet_memset(target, dst, val, len); break;
    case MEMSET_NB: gasnet_wait_syncnb(gasnet_memset_nb(target, dst, val, len)); break;
    case MEMSET_NBI:
      gasnet_memset_nbi(target, dst, val, len);
      gasnet_wait_syncnbi_all();
      break;
  }
}

static void do_get(int kind, int target, uint8_t *dst, uint8_t *src, size_t len) {
  gasnet_handle_t h;
  switch (kind) {
    case GET: gasnet_get(dst, target, src, len); break;
    case GET_BULK: gasnet_get_bulk(dst, target, src, len); break;
    case GET_NB:
      h = gasnet_get_nb(dst, target, src, len);
      while (gasnet_try_syncnb(h) != GASNET_OK) {}
      break;
    case GET_NB_BULK: gasnet_wait_syncnb(gasnet_get_nb_bulk(dst, target, src, len)); break;
    case GET_NBI: gasnet_get_nbi(dst, target, src, len), gasnet_wait_syncnbi_gets(); break;
    case GET_NBI_BULK:
      gasnet_get_nbi_bulk(dst, target, src, len);
      while (gasnet_try_syncnbi_all() != GASNET_OK) {}
      break;
    case GET_REGION:
      gasnet_begin_nbi_accessregion();
      gasnet_get_nbi(dst, target, src, len);
      gasnet_wait_syncnb(gasnet_end_nbi_accessregion());
      break;
  }
}

/* All ranks run the same cases in lockstep; after each, the target checks its segment. */
static void put_cases(int target, int writer) {
  for (int kind = 0; kind < NPUTKINDS; kind++)
    for (size_t si = 0; si < NSIZES; si++)
      for (int variant = 0; variant < 4; variant++) {
        int unaligned = variant & 1, local_in_seg = variant & 2;
        size_t len = sizes[si];
        if (si == NSIZES - 1 && kind >= MEMSET_NB) continue; /* keeps the sanitizer run short */
        size_t roff = unaligned ? 3 : 0;
        uint8_t *local = (local_in_seg ? seg_at(me, LOCAL_AREA) : heap) + (unaligned ? 5 : 0);
        uint32_t seed = seed_of(me, kind, (int)si, variant);
        int val = (int)(seed & 0xff);
        fill_pattern(local, len, seed);
        memset(seg_at(me, PUT_AREA), 0, roff + len + 64); /* our own area, for our writer */
        test_barrier();
        do_put(kind, target, seg_at(target, PUT_AREA) + roff, local, len, val);
        test_barrier();
        uint32_t wseed = seed_of(writer, kind, (int)si, variant);
        uint8_t *mine = seg_at(me, PUT_AREA) + roff;
        size_t bad = len;
        if (kind >= MEMSET) {
          for (size_t k = 0; k < len; k++)
            if (mine[k] != (uint8_t)(wseed & 0xff)) {
              bad = k;
              break;
            }
        } else {
          bad = check_pattern(mine, len, wseed);
        }
        CHECK(bad == len, "put kind %d size %zu variant %d from %d: byte %zu wrong", kind, len,
              variant, writer, bad);
        CHECK(mine[len] == 0 && (!roff || mine[-1] == 0),
              "put kind %d size %zu variant %d wrote outside its range", kind, len, variant);
      }
}

static void get_cases(int target) {
  for (int kind = 0; kind < NGETKINDS; kind++)
    for (size_t si = 0; si < NSIZES; si++)
      for (int variant = 0; variant < 4; variant++) {
        int unaligned = variant & 1, local_in_seg = variant & 2;
        size_t len = sizes[si];
        size_t roff = unaligned ? 3 : 0;
        uint8_t *local = (local_in_seg ? seg_at(me, LOCAL_AREA) : heap) + (unaligned ? 5 : 0);
        memset(local, 0, len + 1);
        do_get(kind, target, local, seg_at(target, GET_AREA) + roff, len);
        /* pattern(owner) of the bytes starting at roff */
        size_t bad = len;
        for (size_t k = 0; k < len; k++)
          if (local[k] != pattern_byte((uint32_t)target, k + roff)) {
            bad = k;
            break;
          }
        CHECK(bad == len, "get kind %d size %zu variant %d from %d: byte %zu wrong", kind, len,
              variant, target, bad);
        CHECK(local[len] == 0, "get kind %d size %zu wrote past its end", kind, len);
      }
}

static void value_cases(int target, int writer) {
  const size_t widths[] = {1, 2, 4, 8};
  for (int w = 0; w < 4; w++)
    for (int unaligned = 0; unaligned < 2; unaligned++)
      for (int form = 0; form < 3; form++) {
        size_t nb = widths[w], off = 64 + (unaligned ? 1 : 0);
        gasnet_register_value_t v = 0x8877665544332211ull ^ (uint64_t)(me * 0x1111 + form);
        gasnet_register_value_t mask = nb == 8 ? ~0ull : ((1ull << (8 * nb)) - 1);
        memset(seg_at(me, PUT_AREA), 0, 256);
        test_barrier();
        uint8_t *dst = seg_at(target, PUT_AREA) + off;
        if (form == 0) gasnet_put_val(target, dst, v, nb);
        else if (form == 1) gasnet_wait_syncnb(gasnet_put_nb_val(target, dst, v, nb));
        else gasnet_put_nbi_val(target, dst, v, nb), gasnet_wait_syncnbi_puts();
        test_barrier();
        gasnet_register_value_t wv = 0x8877665544332211ull ^ (uint64_t)(writer * 0x1111 + form);
        gasnet_register_value_t got = 0;
        memcpy(&got, seg_at(me, PUT_AREA) + off, nb); /* little-endian hosts */
        CHECK(got == (wv & mask), "put_val form %d width %zu: %llx, expected %llx", form, nb,
              (unsigned long long)got, (unsigned long long)(wv & mask));
        /* value gets read the owner's pattern as an nb-byte integer, zero-extended */
        uint8_t *src = seg_at(target, GET_AREA) + off;
        gasnet_register_value_t expect = 0;
        for (size_t k = nb; k-- > 0;) expect = (expect << 8) | pattern_byte((uint32_t)target, off + k);
        gasnet_register_value_t a = gasnet_get_val(target, src, nb);
        gasnet_register_value_t b = gasnet_wait_syncnb_valget(gasnet_get_nb_val(target, src, nb));
        CHECK(a == expect && b == expect, "get_val width %zu: %llx/%llx, expected %llx", nb,
              (unsigned long long)a, (unsigned long long)b, (unsigned long long)expect);
      }
}

/* 10,000 outstanding operations, synced in every order the API offers. */
static void many_outstanding(int target) {
  gasnet_handle_t *h = calloc(MANY, sizeof *h);
  uint64_t *got = calloc(MANY, sizeof *got);
  uint8_t *remote = seg_at(target, GET_AREA);
  for (int order = 0; order < 7; order++) {
    memset(got, 0, MANY * sizeof *got);
    for (int i = 0; i < MANY; i++) h[i] = gasnet_get_nb_bulk(&got[i], target, remote + 8 * (size_t)i, 8);
    switch (order) {
      case 0: for (int i = 0; i < MANY; i++) gasnet_wait_syncnb(h[i]); break;
      case 1: for (int i = MANY - 1; i >= 0; i--) gasnet_wait_syncnb(h[i]); break;
      case 2: /* a stride that visits every index once, in scrambled order */
        for (int i = 0; i < MANY; i++) gasnet_wait_syncnb(h[(i * 7919L) % MANY]);
        break;
      case 3: gasnet_wait_syncnb_all(h, MANY); break;
      case 4: {
        int left = MANY;
        while (left) {
          gasnet_wait_syncnb_some(h, MANY);
          left = 0;
          for (int i = 0; i < MANY; i++) left += h[i] != GASNET_INVALID_HANDLE;
        }
        break;
      }
      case 5: while (gasnet_try_syncnb_all(h, MANY) != GASNET_OK) {} break;
      case 6: {
        int left = MANY;
        while (left) {
          if (gasnet_try_syncnb_some(h, MANY) != GASNET_OK) continue;
          left = 0;
          for (int i = 0; i < MANY; i++) left += h[i] != GASNET_INVALID_HANDLE;
        }
        break;
      }
    }
    int bad = -1;
    for (int i = 0; i < MANY && bad < 0; i++) {
      uint8_t *b = (uint8_t *)&got[i];
      for (int k = 0; k < 8; k++)
        if (b[k] != pattern_byte((uint32_t)target, 8 * (size_t)i + (size_t)k)) bad = i;
    }
    CHECK(bad < 0, "outstanding gets, sync order %d: element %d wrong", order, bad);
  }
  /* implicit: 10,000 puts then 10,000 gets, and again inside an access region */
  for (int region = 0; region < 2; region++) {
    memset(seg_at(me, PUT_AREA), 0, 8 * MANY);
    test_barrier();
    if (region) gasnet_begin_nbi_accessregion();
    for (int i = 0; i < MANY; i++)
      gasnet_put_nbi_val(target, seg_at(target, PUT_AREA) + 8 * (size_t)i, (uint64_t)i * 3 + 1, 8);
    memset(got, 0, MANY * sizeof *got);
    for (int i = 0; i < MANY; i++) gasnet_get_nbi_bulk(&got[i], target, remote + 8 * (size_t)i, 8);
    if (region) gasnet_wait_syncnb(gasnet_end_nbi_accessregion());
    else gasnet_wait_syncnbi_all();
    test_barrier();
    int bad = -1;
    for (int i = 0; i < MANY && bad < 0; i++)
      if (((uint64_t *)seg_at(me, PUT_AREA))[i] != (uint64_t)i * 3 + 1) bad = i;
    CHECK(bad < 0, "10,000 put_nbi_val (region %d): element %d wrong", region, bad);
    for (int i = 0; i < MANY && bad < 0; i++)
      if (pattern_byte((uint32_t)target, 8 * (size_t)i) != *(uint8_t *)&got[i]) bad = i;
    CHECK(bad < 0, "10,000 get_nbi (region %d): element %d wrong", region, bad);
  }
  free(h);
  free(got);
}

#ifdef GASNET_PAR
#include <pthread.h>
#define THREADS 4
static int thread_target;
static void *region_thread(void *arg) {
  int t = (int)(intptr_t)arg;
  uint8_t *dst = seg_at(thread_target, PUT_AREA) + (size_t)t * 65536;
  uint8_t *src = malloc(65536);
  for (int round = 0; round < 50; round++) {
    fill_pattern(src, 65536, (uint32_t)(t * 1000 + round));
    gasnet_begin_nbi_accessregion();
    for (int k = 0; k < 16; k++) gasnet_put_nbi_bulk(thread_target, dst + 4096 * k, src + 4096 * k, 4096);
    gasnet_handle_t h = gasnet_end_nbi_accessregion();
    /* this thread's own implicit operations are separate from its region's */
    gasnet_put_nbi_val(thread_target, dst, 0, 1);
    gasnet_wait_syncnbi_puts();
    gasnet_wait_syncnb(h);
    gasnet_put(thread_target, dst, src, 1); /* restore byte 0 */
  }
  free(src);
  return NULL;
}

/* Handles issued by one thread and synchronized by another: gasnet_wait_syncnb_all skips its
 * array only while the process (not the calling thread) has no live operation, so the
 * syncing thread must still wait for the issuer's gets. */
enum { CROSS = 256 };
static gasnet_handle_t cross_h[CROSS];
static uint64_t cross_got[CROSS];

static void *cross_issue(void *arg) {
  (void)arg;
  uint8_t *remote = seg_at(thread_target, GET_AREA);
  for (int i = 0; i < CROSS; i++)
    cross_h[i] = gasnet_get_nb_bulk(&cross_got[i], thread_target, remote + 8 * (size_t)i, 8);
  return NULL;
}

static void *cross_sync(void *arg) {
  (void)arg;
  gasnet_wait_syncnb_all(cross_h, CROSS);
  return NULL;
}

static void cross_thread_handles(int target) {
  memset(cross_got, 0, sizeof cross_got);
  thread_target = target;
  pthread_t issuer, syncer;
  pthread_create(&issuer, NULL, cross_issue, NULL);
  pthread_join(issuer, NULL);
  pthread_create(&syncer, NULL, cross_sync, NULL);
  pthread_join(syncer, NULL);
  for (int i = 0; i < CROSS; i++) {
    CHECK(cross_h[i] == GASNET_INVALID_HANDLE, "handle %d still set after wait_syncnb_all", i);
    const uint8_t *b = (const uint8_t *)&cross_got[i];
    for (int k = 0; k < 8; k++)
      CHECK(b[k] == pattern_byte((uint32_t)target, 8 * (size_t)i + (size_t)k),
            "get %d issued by one thread, synced by another: byte %d wrong", i, k);
  }
}

static void threaded_regions(int target, int writer) {
  memset(seg_at(me, PUT_AREA), 0, THREADS * 65536);
  thread_target = target;
  test_barrier();
  pthread_t th[THREADS];
  for (int t = 0; t < THREADS; t++) pthread_create(&th[t], NULL, region_thread, (void *)(intptr_t)t);
  for (int t = 0; t < THREADS; t++) pthread_join(th[t], NULL);
  test_barrier();
  (void)writer;
  for (int t = 0; t < THREADS; t++) {
    size_t bad = check_pattern(seg_at(me, PUT_AREA) + (size_t)t * 65536, 65536,
                               (uint32_t)(t * 1000 + 49));
    CHECK(bad == 65536, "thread %d's region puts: byte %zu wrong", t, bad);
  }
}
#endif

int main(int argc, char **argv) {
  GASNET_SAFE(gasnet_init(&argc, &argv));
  GASNET_SAFE(gasnet_attach(NULL, 0, GASNET_PAGESIZE * ((SEGSIZE + GASNET_PAGESIZE - 1) / GASNET_PAGESIZE), 0));
  me = gasnet_mynode(), n = gasnet_nodes();
  seg = calloc((size_t)n, sizeof *seg);
  GASNET_SAFE(gasnet_getSegmentInfo(seg, n));
  heap = malloc(AREA);
  for (size_t k = 0; k < AREA; k++) seg_at(me, GET_AREA)[k] = pattern_byte((uint32_t)me, k);
  test_barrier();
  if (argc > 2 && strcmp(argv[1], "largest") == 0) {
    char *end;
    unsigned long long largest = strtoull(argv[2], &end, 10);
    CHECK(*end == '\0' && largest >= 65536 && largest <= BIG,
          "largest %s: expected a size in bytes from 65536 to %u", argv[2], BIG);
    sizes[NSIZES - 1] = (size_t)largest;
  }
  if (argc > 1 && strcmp(argv[1], "bad-put") == 0) {
    uint64_t x = 1;
    gasnet_put((gasnet_node_t)((me + 1) % n), seg_at((me + 1) % n, SEGSIZE + GASNET_PAGESIZE), &x, 8);
    test_finish("rma_test");
  }
  for (int pass = 0; pass < 2; pass++) {
    int target = pass == 0 ? (me + 1) % n : me;
    int writer = pass == 0 ? (me + n - 1) % n : me;
    put_cases(target, writer);
    get_cases(target);
    value_cases(target, writer);
    test_barrier();
    many_outstanding(target);
#ifdef GASNET_PAR
    threaded_regions(target, writer);
    cross_thread_handles(target);
#endif
    test_barrier();
    if (me == 0) printf("rma_test: pass %d done\n", pass);
  }
  free(heap);
  free(seg);
  test_finish("rma_test");
}
