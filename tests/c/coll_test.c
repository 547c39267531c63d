/* coll_test: GASNet-1 collectives with random roots, sizes, synchronization flags, address
 * modes (single and M forms, SINGLE and LOCAL) and completion (blocking, nb synchronized by
 * wait, try or wait_all with several in flight); every result is checked against what the
 * operation must produce. The choices come from a seed every rank shares.
 *   coll_test [ITERATIONS [SEED]]
 *   coll_test badflags        a broadcast with two IN flags (must fail, naming them) */
#include <gasnet.h>
#include <gasnet_coll.h>

#include "test_util.h"

static uint64_t rng_state;
static uint64_t rnd(void) {
  rng_state ^= rng_state >> 12, rng_state ^= rng_state << 25, rng_state ^= rng_state >> 27;
  return rng_state * 2685821657736338717ull;
}
static size_t below(size_t n) { return (size_t)(rnd() % n); }

/* Element-wise sum of uint64; and 2x2 matrix products (associative, not commutative). */
static void sum_fn(void *res, size_t count, const void *left, size_t lcount, const void *right,
                   size_t esize, int flags, int arg) {
  (void)lcount, (void)esize, (void)flags;
  if (arg != 3) abort(); /* func_arg is passed through */
  const uint64_t *l = left, *r = right;
  uint64_t *out = res;
  for (size_t i = 0; i < count; i++) out[i] = l[i] + r[i];
}
static void matmul_fn(void *res, size_t count, const void *left, size_t lcount, const void *right,
                      size_t esize, int flags, int arg) {
  (void)lcount, (void)esize, (void)arg;
  if (!(flags & GASNET_COLL_NONCOMM)) abort(); /* registered NONCOMM: must be told */
  const uint64_t *l = left, *r = right;
  uint64_t *out = res;
  for (size_t i = 0; i < count; i++, l += 4, r += 4, out += 4) {
    uint64_t m[4] = {l[0] * r[0] + l[1] * r[2], l[0] * r[1] + l[1] * r[3],
                     l[2] * r[0] + l[3] * r[2], l[2] * r[1] + l[3] * r[3]};
    memcpy(out, m, sizeof m);
  }
}
enum { FN_SUM, FN_MATMUL };

static uint64_t elem(uint32_t seed, int rank, size_t i) {
  return (uint64_t)seed * 1000003u + (uint64_t)rank * 7919u + i * 31u + 1;
}

static int me, n;
static const char *const KIND[] = {"broadcast", "scatter", "gather", "gather_all", "exchange",
                                   "reduce", "reduce_noncomm"};

typedef struct {
  int kind, root, flags, use_m;
  size_t nb, count;
  uint32_t seed;
  uint8_t *src, *dst;
  gasnet_coll_handle_t h;
} call_t;

static int random_flags(void) {
  static const int in[] = {GASNET_COLL_IN_NOSYNC, GASNET_COLL_IN_MYSYNC, GASNET_COLL_IN_ALLSYNC};
  static const int out[] = {GASNET_COLL_OUT_NOSYNC, GASNET_COLL_OUT_MYSYNC, GASNET_COLL_OUT_ALLSYNC};
  int flags = in[below(3)] | out[below(3)];
  return flags | (below(2) ? GASNET_COLL_SINGLE : GASNET_COLL_LOCAL);
}

static void prepare(call_t *c) {
  c->kind = (int)below(7);
  c->root = (int)below((size_t)n);
  c->flags = random_flags();
  c->use_m = (int)below(2);
  c->seed = (uint32_t)rnd();
  size_t r = below(10);
  c->nb = r < 2 ? 1 + below(16) : r < 8 ? 1 + below(5000) : 1 + below(200000);
  size_t src_len = c->nb, dst_len = c->nb;
  if (c->kind == 1) src_len = c->nb * (size_t)n;                       /* scatter */
  if (c->kind == 2 || c->kind == 3) dst_len = c->nb * (size_t)n;        /* gathers */
  if (c->kind == 4) src_len = dst_len = c->nb * (size_t)n;             /* exchange */
  if (c->kind >= 5) { /* reduce: count elements of 8 (sum) or 32 (matrix) bytes */
    c->count = 1 + below(r < 8 ? 64 : 5000);
    size_t esize = c->kind == 5 ? 8 : 32;
    src_len = dst_len = c->count * esize;
    c->nb = src_len;
  }
  c->src = malloc(src_len);
  c->dst = malloc(dst_len);
  memset(c->dst, 0xEE, dst_len);
  if (c->kind == 0) fill_pattern(c->src, c->nb, c->seed + (uint32_t)me);
  if (c->kind == 1)
    for (int j = 0; j < n; j++) fill_pattern(c->src + (size_t)j * c->nb, c->nb, c->seed + (uint32_t)j + (uint32_t)me * 1000);
  if (c->kind == 2 || c->kind == 3) fill_pattern(c->src, c->nb, c->seed + (uint32_t)me);
  if (c->kind == 4)
    for (int j = 0; j < n; j++) fill_pattern(c->src + (size_t)j * c->nb, c->nb, c->seed + (uint32_t)(me * n + j));
  if (c->kind == 5)
    for (size_t i = 0; i < c->count; i++) ((uint64_t *)c->src)[i] = elem(c->seed, me, i);
  if (c->kind == 6)
    for (size_t i = 0; i < c->count * 4; i++) ((uint64_t *)c->src)[i] = elem(c->seed, me, i) % 5;
}

static void start(call_t *c, int nb) {
  void *dlist[256], *slist[256];
  int single = c->flags & GASNET_COLL_SINGLE;
  /* M lists: SINGLE has one entry per image (only ours is used here, the others are ours too:
   * every rank passes the same list, as SINGLE requires of addresses it knows), LOCAL one. */
  for (int j = 0; j < (single ? n : 1); j++) dlist[j] = c->dst, slist[j] = c->src;
  gasnet_team_handle_t t = GASNET_TEAM_ALL;
  gasnet_image_t root = (gasnet_image_t)c->root;
  gasnet_coll_handle_t h = GASNET_COLL_INVALID_HANDLE;
  switch (c->kind) {
    case 0:
      if (nb) h = c->use_m ? gasnet_coll_broadcastM_nb(t, dlist, root, c->src, c->nb, c->flags)
                           : gasnet_coll_broadcast_nb(t, c->dst, root, c->src, c->nb, c->flags);
      else if (c->use_m) gasnet_coll_broadcastM(t, dlist, root, c->src, c->nb, c->flags);
      else gasnet_coll_broadcast(t, c->dst, root, c->src, c->nb, c->flags);
      break;
    case 1:
      if (nb) h = c->use_m ? gasnet_coll_scatterM_nb(t, dlist, root, c->src, c->nb, c->flags)
                           : gasnet_coll_scatter_nb(t, c->dst, root, c->src, c->nb, c->flags);
      else if (c->use_m) gasnet_coll_scatterM(t, dlist, root, c->src, c->nb, c->flags);
      else gasnet_coll_scatter(t, c->dst, root, c->src, c->nb, c->flags);
      break;
    case 2:
      if (nb) h = c->use_m ? gasnet_coll_gatherM_nb(t, root, c->dst, slist, c->nb, c->flags)
                           : gasnet_coll_gather_nb(t, root, c->dst, c->src, c->nb, c->flags);
      else if (c->use_m) gasnet_coll_gatherM(t, root, c->dst, slist, c->nb, c->flags);
      else gasnet_coll_gather(t, root, c->dst, c->src, c->nb, c->flags);
      break;
    case 3:
      if (nb) h = c->use_m ? gasnet_coll_gather_allM_nb(t, dlist, slist, c->nb, c->flags)
                           : gasnet_coll_gather_all_nb(t, c->dst, c->src, c->nb, c->flags);
      else if (c->use_m) gasnet_coll_gather_allM(t, dlist, slist, c->nb, c->flags);
      else gasnet_coll_gather_all(t, c->dst, c->src, c->nb, c->flags);
      break;
    case 4:
      if (nb) h = c->use_m ? gasnet_coll_exchangeM_nb(t, dlist, slist, c->nb, c->flags)
                           : gasnet_coll_exchange_nb(t, c->dst, c->src, c->nb, c->flags);
      else if (c->use_m) gasnet_coll_exchangeM(t, dlist, slist, c->nb, c->flags);
      else gasnet_coll_exchange(t, c->dst, c->src, c->nb, c->flags);
      break;
    default: {
      size_t esize = c->kind == 5 ? 8 : 32;
      gasnet_coll_fn_handle_t fn = c->kind == 5 ? FN_SUM : FN_MATMUL;
      if (nb) h = c->use_m ? gasnet_coll_reduceM_nb(t, root, c->dst, slist, 0, 0, esize, c->count, fn, 3, c->flags)
                           : gasnet_coll_reduce_nb(t, root, c->dst, c->src, 0, 0, esize, c->count, fn, 3, c->flags);
      else if (c->use_m) gasnet_coll_reduceM(t, root, c->dst, slist, 0, 0, esize, c->count, fn, 3, c->flags);
      else gasnet_coll_reduce(t, root, c->dst, c->src, 0, 0, esize, c->count, fn, 3, c->flags);
    }
  }
  c->h = h;
}

static void check(const call_t *c, long it) {
  size_t nb = c->nb, bad = 0;
  int ok = 1;
  switch (c->kind) {
    case 0: ok = (bad = check_pattern(c->dst, nb, c->seed + (uint32_t)c->root)) == nb; break;
    case 1: ok = (bad = check_pattern(c->dst, nb, c->seed + (uint32_t)me + (uint32_t)c->root * 1000)) == nb; break;
    case 2:
      if (me != c->root) break;
      __attribute__((fallthrough)); /* the root checks like gather_all */
    case 3:
      for (int j = 0; j < n && ok; j++) ok = (bad = check_pattern(c->dst + (size_t)j * nb, nb, c->seed + (uint32_t)j)) == nb;
      break;
    case 4:
      for (int j = 0; j < n && ok; j++) ok = (bad = check_pattern(c->dst + (size_t)j * nb, nb, c->seed + (uint32_t)(j * n + me))) == nb;
      break;
    case 5:
      if (me != c->root) break;
      for (size_t i = 0; i < c->count && ok; i++) {
        uint64_t want = 0;
        for (int r = 0; r < n; r++) want += elem(c->seed, r, i);
        ok = ((uint64_t *)c->dst)[i] == want, bad = i;
      }
      break;
    default:
      if (me != c->root) break;
      for (size_t i = 0; i < c->count && ok; i++) {
        uint64_t acc[4];
        for (int k = 0; k < 4; k++) acc[k] = elem(c->seed, 0, i * 4 + (size_t)k) % 5;
        for (int r = 1; r < n; r++) {
          uint64_t m[4], out[4];
          for (int k = 0; k < 4; k++) m[k] = elem(c->seed, r, i * 4 + (size_t)k) % 5;
          out[0] = acc[0] * m[0] + acc[1] * m[2], out[1] = acc[0] * m[1] + acc[1] * m[3];
          out[2] = acc[2] * m[0] + acc[3] * m[2], out[3] = acc[2] * m[1] + acc[3] * m[3];
          memcpy(acc, out, sizeof acc);
        }
        ok = memcmp((uint64_t *)c->dst + i * 4, acc, sizeof acc) == 0, bad = i;
      }
  }
  CHECK(ok, "iteration %ld: %s root %d nbytes %zu flags 0x%x %s: wrong at %zu", it, KIND[c->kind],
        c->root, nb, (unsigned)c->flags, c->use_m ? "M" : "single", bad);
}

int main(int argc, char **argv) {
  GASNET_SAFE(gasnet_init(&argc, &argv));
  GASNET_SAFE(gasnet_attach(NULL, 0, GASNET_PAGESIZE, 0));
  me = (int)gasnet_mynode(), n = (int)gasnet_nodes();
  gasnet_coll_fn_entry_t fns[] = {{sum_fn, 0}, {matmul_fn, GASNET_COLL_NONCOMM}};
  gasnet_coll_init(NULL, 0, fns, 2, 0);
  if (argc > 1 && strcmp(argv[1], "badflags") == 0) {
    char x = 0;
    gasnet_coll_broadcast(GASNET_TEAM_ALL, &x, 0, &x, 1,
                          GASNET_COLL_IN_NOSYNC | GASNET_COLL_IN_MYSYNC | GASNET_COLL_OUT_MYSYNC |
                              GASNET_COLL_LOCAL);
    gasnet_exit(3);
  }
  long iterations = argc > 1 ? atol(argv[1]) : 100;
  rng_state = (argc > 2 ? strtoull(argv[2], NULL, 0) : 4242) * 0x9E3779B97F4A7C15ull + 1;
  long done[7] = {0};
  call_t calls[4];
  /* Every rank runs every iteration (a rank stopping early would leave the others waiting in
   * a collective); failures are counted and reported at the end. */
  for (long it = 0; it < iterations; it++) {
    int mode = (int)below(4); /* blocking, nb+wait, nb+try, several nb + wait_all */
    int k = mode == 3 ? 2 + (int)below(3) : 1;
    for (int i = 0; i < k; i++) {
      prepare(&calls[i]);
      start(&calls[i], mode != 0);
    }
    if (mode == 1) gasnet_coll_wait_sync(calls[0].h);
    if (mode == 2)
      while (gasnet_coll_try_sync(calls[0].h) != GASNET_OK) gasnet_AMPoll();
    if (mode == 3) {
      gasnet_coll_handle_t hs[4];
      for (int i = 0; i < k; i++) hs[i] = calls[i].h;
      gasnet_coll_wait_sync_all(hs, (size_t)k);
      for (int i = 0; i < k; i++) CHECK(hs[i] == GASNET_COLL_INVALID_HANDLE, "wait_sync_all left a handle");
    }
    for (int i = 0; i < k; i++) {
      check(&calls[i], it);
      done[calls[i].kind]++;
      free(calls[i].src);
      free(calls[i].dst);
    }
  }
  if (me == 0) {
    printf("coll_test:");
    for (int i = 0; i < 7; i++) printf(" %s=%ld", KIND[i], done[i]);
    printf("\n");
  }
  test_finish("coll_test");
  return 0;
}
