/* vis_test: vector, indexed and strided puts and gets (gasnet_vis.h) with random shapes, in
 * every form, each checked against a naive loop of contiguous puts/gets of the same bytes.
 *   vis_test [ITERATIONS [SEED]]   random transfers to/from the next rank
 *   vis_test mismatch              a putv whose sides differ in size (must fail, naming both)
 * Each rank's segment: V (VIS puts land here), F (the naive puts), P (a fixed pattern gets
 * read), L1, L2 (in-segment get destinations). */
#include <gasnet.h>
#include <gasnet_vis.h>

#include "test_util.h"

#define REGION (1u << 20)
#define SEGSIZE (5u * REGION)
enum { V = 0, F = 1, P = 2, L1 = 3, L2 = 4 };

static gasnet_seginfo_t *seg;
static uint64_t rng_state;

static uint64_t rnd(void) { /* xorshift64* */
  rng_state ^= rng_state >> 12, rng_state ^= rng_state << 25, rng_state ^= rng_state >> 27;
  return rng_state * 2685821657736338717ull;
}
static size_t below(size_t n) { return n ? (size_t)(rnd() % n) : 0; }

static uint8_t *area(gasnet_node_t node, int which) {
  return (uint8_t *)seg[node].addr + (size_t)which * REGION;
}

/* One transfer's shape, as the API takes it, plus its byte-by-byte map (offsets of the n-th
 * byte of each side within its region) for the naive reference. */
typedef struct {
  int family; /* 0 vector, 1 indexed, 2 strided */
  size_t total;
  gasnet_memvec_t dvec[64], svec[64];
  size_t dcount, scount;
  void *dlist[4096], *slist[4096];
  size_t dlen, slen;
  size_t count[11], dstrides[10], sstrides[10], levels;
  uint32_t *dmap, *smap;
} shape_t;

static void shuffle(size_t *a, size_t n) {
  for (size_t i = n; i > 1; i--) {
    size_t j = below(i), t = a[i - 1];
    a[i - 1] = a[j], a[j] = t;
  }
}

/* n lengths summing to total (some may be zero). */
static void partition(size_t total, size_t n, size_t *lens) {
  size_t left = total;
  for (size_t i = 0; i + 1 < n; i++) {
    lens[i] = below(left / 2 + 1);
    if (below(8) == 0) lens[i] = 0;
    left -= lens[i];
  }
  lens[n - 1] = left;
}

static void map_vector(uint32_t *map, const gasnet_memvec_t *v, size_t count, const uint8_t *base) {
  size_t k = 0;
  for (size_t i = 0; i < count; i++)
    for (size_t b = 0; b < v[i].len; b++) map[k++] = (uint32_t)((uint8_t *)v[i].addr - base + b);
}

static void make_vector(shape_t *s, uint8_t *dbase, uint8_t *sbase) {
  size_t big = below(4) == 0; /* now and then pieces large enough to go as contiguous AMs */
  s->total = 1 + below(big ? REGION / 2 : 20000);
  size_t lens[64];
  /* destination: disjoint pieces in a random order with random gaps */
  s->dcount = 1 + below(big ? 4 : 64);
  partition(s->total, s->dcount, lens);
  size_t order[64];
  for (size_t i = 0; i < s->dcount; i++) order[i] = i;
  shuffle(order, s->dcount);
  size_t spare = REGION - s->total, at = 0, offs[64];
  for (size_t i = 0; i < s->dcount; i++) {
    size_t gap = below(spare / (s->dcount + 1) + 1);
    spare -= gap, at += gap;
    offs[order[i]] = at;
    at += lens[order[i]];
  }
  for (size_t i = 0; i < s->dcount; i++) s->dvec[i] = (gasnet_memvec_t){dbase + offs[i], lens[i]};
  /* source: any pieces (reads may overlap) */
  s->scount = 1 + below(big ? 4 : 64);
  partition(s->total, s->scount, lens);
  for (size_t i = 0; i < s->scount; i++)
    s->svec[i] = (gasnet_memvec_t){sbase + below(REGION - lens[i] + 1), lens[i]};
  map_vector(s->dmap, s->dvec, s->dcount, dbase);
  map_vector(s->smap, s->svec, s->scount, sbase);
}

static void make_indexed(shape_t *s, uint8_t *dbase, uint8_t *sbase) {
  size_t u = 1 + below(below(3) == 0 ? 600 : 16), a = 1 + below(4), b = 1 + below(4);
  size_t k = 1 + below(16); /* at most 600*4*4*16 bytes, 64 entries a side */
  s->dlen = u * a, s->slen = u * b, s->dcount = b * k, s->scount = a * k;
  s->total = s->dlen * s->dcount;
  /* destination: distinct slots of dlen bytes */
  size_t slots = REGION / s->dlen, picked = 0;
  static size_t slot[REGION];
  for (size_t i = 0; i < slots; i++) slot[i] = i;
  for (; picked < s->dcount; picked++) { /* partial Fisher-Yates */
    size_t j = picked + below(slots - picked), t = slot[picked];
    slot[picked] = slot[j], slot[j] = t;
  }
  for (size_t i = 0; i < s->dcount; i++) s->dlist[i] = dbase + slot[i] * s->dlen;
  for (size_t i = 0; i < s->scount; i++) s->slist[i] = sbase + below(REGION - s->slen + 1);
  size_t m = 0;
  for (size_t i = 0; i < s->dcount; i++)
    for (size_t b2 = 0; b2 < s->dlen; b2++)
      s->dmap[m++] = (uint32_t)((uint8_t *)s->dlist[i] - dbase + b2);
  m = 0;
  for (size_t i = 0; i < s->scount; i++)
    for (size_t b2 = 0; b2 < s->slen; b2++)
      s->smap[m++] = (uint32_t)((uint8_t *)s->slist[i] - sbase + b2);
}

/* Strides that nest (each at least the extent below it, sometimes exactly: contiguous). */
static size_t make_strides(size_t *strides, const size_t *count, size_t levels) {
  size_t extent = count[0];
  for (size_t l = 0; l < levels; l++) {
    strides[l] = extent + (below(3) == 0 ? 0 : below(64));
    extent = strides[l] * (count[l + 1] - 1) + extent;
  }
  return extent;
}

static void map_strided(uint32_t *map, const size_t *count, const size_t *strides, size_t levels) {
  size_t idx[10] = {0}, k = 0;
  for (;;) {
    size_t off = 0;
    for (size_t l = 0; l < levels; l++) off += idx[l] * strides[l];
    for (size_t b = 0; b < count[0]; b++) map[k++] = (uint32_t)(off + b);
    size_t l = 0;
    while (l < levels && ++idx[l] == count[l + 1]) idx[l++] = 0;
    if (l == levels) return;
  }
}

static void make_strided(shape_t *s) {
  for (;;) {
    s->levels = below(5) == 0 ? 9 + below(2) : below(4); /* deep shapes exercise the heap path */
    s->count[0] = 1 + below(below(3) == 0 ? 3000 : 40);
    for (size_t l = 1; l <= s->levels; l++) s->count[l] = 1 + below(s->levels > 4 ? 2 : 7);
    size_t dext = make_strides(s->dstrides, s->count, s->levels);
    size_t sext = make_strides(s->sstrides, s->count, s->levels);
    s->total = s->count[0];
    for (size_t l = 1; l <= s->levels; l++) s->total *= s->count[l];
    if (dext <= REGION && sext <= REGION) break;
  }
  map_strided(s->dmap, s->count, s->dstrides, s->levels);
  map_strided(s->smap, s->count, s->sstrides, s->levels);
}

/* Naive reference: one contiguous transfer per run that is contiguous on both sides. */
static void naive(const shape_t *s, int is_put, gasnet_node_t peer, uint8_t *dbase, uint8_t *sbase) {
  for (size_t i = 0; i < s->total;) {
    size_t j = i + 1;
    while (j < s->total && s->dmap[j] == s->dmap[j - 1] + 1 && s->smap[j] == s->smap[j - 1] + 1) j++;
    if (is_put) gasnet_put_bulk(peer, dbase + s->dmap[i], sbase + s->smap[i], j - i);
    else gasnet_get_bulk(dbase + s->dmap[i], peer, sbase + s->smap[i], j - i);
    i = j;
  }
}

static const char *const FAMILY[] = {"vector", "indexed", "strided"};
static const char *const FORM[] = {"blocking", "nb", "nbi"};

/* The VIS call of this family, direction and form. */
static void vis(shape_t *s, int is_put, int form, gasnet_node_t peer, uint8_t *dbase) {
  (void)dbase;
  gasnet_handle_t h = GASNET_INVALID_HANDLE;
  if (s->family == 0) {
    if (is_put) {
      if (form == 0) gasnet_putv_bulk(peer, s->dcount, s->dvec, s->scount, s->svec);
      else if (form == 1) h = gasnet_putv_nb_bulk(peer, s->dcount, s->dvec, s->scount, s->svec);
      else gasnet_putv_nbi_bulk(peer, s->dcount, s->dvec, s->scount, s->svec);
    } else {
      if (form == 0) gasnet_getv_bulk(s->dcount, s->dvec, peer, s->scount, s->svec);
      else if (form == 1) h = gasnet_getv_nb_bulk(s->dcount, s->dvec, peer, s->scount, s->svec);
      else gasnet_getv_nbi_bulk(s->dcount, s->dvec, peer, s->scount, s->svec);
    }
  } else if (s->family == 1) {
    if (is_put) {
      if (form == 0) gasnet_puti_bulk(peer, s->dcount, s->dlist, s->dlen, s->scount, s->slist, s->slen);
      else if (form == 1)
        h = gasnet_puti_nb_bulk(peer, s->dcount, s->dlist, s->dlen, s->scount, s->slist, s->slen);
      else gasnet_puti_nbi_bulk(peer, s->dcount, s->dlist, s->dlen, s->scount, s->slist, s->slen);
    } else {
      if (form == 0) gasnet_geti_bulk(s->dcount, s->dlist, s->dlen, peer, s->scount, s->slist, s->slen);
      else if (form == 1)
        h = gasnet_geti_nb_bulk(s->dcount, s->dlist, s->dlen, peer, s->scount, s->slist, s->slen);
      else gasnet_geti_nbi_bulk(s->dcount, s->dlist, s->dlen, peer, s->scount, s->slist, s->slen);
    }
  }
  if (h != GASNET_INVALID_HANDLE) {
    if (rnd() & 1) gasnet_wait_syncnb(h);
    else
      while (gasnet_try_syncnb(h) != GASNET_OK) gasnet_AMPoll();
  }
  if (form == 2) {
    if (is_put) gasnet_wait_syncnbi_puts();
    else gasnet_wait_syncnbi_gets();
  }
}

static void vis_strided(shape_t *s, int is_put, int form, gasnet_node_t peer, uint8_t *dbase,
                        uint8_t *sbase) {
  gasnet_handle_t h = GASNET_INVALID_HANDLE;
  if (is_put) {
    if (form == 0) gasnet_puts_bulk(peer, dbase, s->dstrides, sbase, s->sstrides, s->count, s->levels);
    else if (form == 1)
      h = gasnet_puts_nb_bulk(peer, dbase, s->dstrides, sbase, s->sstrides, s->count, s->levels);
    else gasnet_puts_nbi_bulk(peer, dbase, s->dstrides, sbase, s->sstrides, s->count, s->levels);
  } else {
    if (form == 0) gasnet_gets_bulk(dbase, s->dstrides, peer, sbase, s->sstrides, s->count, s->levels);
    else if (form == 1)
      h = gasnet_gets_nb_bulk(dbase, s->dstrides, peer, sbase, s->sstrides, s->count, s->levels);
    else gasnet_gets_nbi_bulk(dbase, s->dstrides, peer, sbase, s->sstrides, s->count, s->levels);
  }
  gasnet_wait_syncnb(h);
  if (form == 2) {
    if (is_put) gasnet_wait_syncnbi_puts();
    else gasnet_wait_syncnbi_gets();
  }
}

static void make(shape_t *s, uint8_t *dbase, uint8_t *sbase) {
  if (s->family == 0) make_vector(s, dbase, sbase);
  else if (s->family == 1) make_indexed(s, dbase, sbase);
  else make_strided(s);
}

static void transfer(shape_t *s, int is_put, int form, gasnet_node_t peer, uint8_t *dbase,
                     uint8_t *sbase) {
  if (s->family == 2) vis_strided(s, is_put, form, peer, dbase, sbase);
  else vis(s, is_put, form, peer, dbase);
}

static void mismatch(void) {
  gasnet_node_t peer = (gasnet_node_t)((gasnet_mynode() + 1) % gasnet_nodes());
  static uint8_t local[64];
  gasnet_memvec_t d = {area(peer, V), 32}, s = {local, 48};
  gasnet_putv_bulk(peer, 1, &d, 1, &s);
  fprintf(stderr, "vis_test: a mismatched putv returned\n");
  gasnet_exit(3);
}

int main(int argc, char **argv) {
  GASNET_SAFE(gasnet_init(&argc, &argv));
  GASNET_SAFE(gasnet_attach(NULL, 0, SEGSIZE, 0));
  gasnet_node_t me = gasnet_mynode(), n = gasnet_nodes(), peer = (gasnet_node_t)((me + 1) % n);
  seg = calloc(n, sizeof *seg);
  GASNET_SAFE(gasnet_getSegmentInfo(seg, n));
  if (argc > 1 && strcmp(argv[1], "mismatch") == 0) mismatch();
  long iterations = argc > 1 ? atol(argv[1]) : 200;
  uint64_t seed = argc > 2 ? strtoull(argv[2], NULL, 0) : 12345;
  rng_state = seed * 0x9E3779B97F4A7C15ull + me + 1;

  fill_pattern(area(me, P), REGION, 77);
  uint8_t *src = malloc(REGION), *heap_a = malloc(REGION), *heap_b = malloc(REGION);
  shape_t *s = calloc(1, sizeof *s);
  s->dmap = malloc(REGION * sizeof(uint32_t));
  s->smap = malloc(REGION * sizeof(uint32_t));
  long counts[3][2][3] = {{{0}}};
  for (long it = 0; it < iterations; it++) { /* all ranks run every iteration: they meet in barriers */
    s->family = (int)below(3);
    int form = (int)below(3);
    /* put: VIS into the peer's V, naive into its F; the peer compares them */
    memset(area(me, V), 0xEE, REGION);
    memset(area(me, F), 0xEE, REGION);
    fill_pattern(src, REGION, (uint32_t)(it * 31 + me));
    test_barrier();
    make(s, area(peer, V), src);
    transfer(s, 1, form, peer, area(peer, V), src);
    naive(s, 1, peer, area(peer, F), src);
    counts[s->family][1][form]++;
    test_barrier();
    size_t diff = 0;
    while (diff < REGION && area(me, V)[diff] == area(me, F)[diff]) diff++;
    CHECK(diff == REGION, "put iteration %ld (seed %llu): byte %zu differs from the naive loop",
          it, (unsigned long long)seed, diff);
    /* get: from the peer's P, VIS into A, naive into B (in the segment or the heap) */
    s->family = (int)below(3);
    form = (int)below(3);
    int in_seg = (int)(rnd() & 1);
    uint8_t *a = in_seg ? area(me, L1) : heap_a, *b = in_seg ? area(me, L2) : heap_b;
    memset(a, 0xEE, REGION);
    memset(b, 0xEE, REGION);
    make(s, a, area(peer, P));
    transfer(s, 0, form, peer, a, area(peer, P));
    naive(s, 0, peer, b, area(peer, P));
    counts[s->family][0][form]++;
    diff = 0;
    while (diff < REGION && a[diff] == b[diff]) diff++;
    CHECK(diff == REGION,
          "get %s/%s iteration %ld (seed %llu, %s): byte %zu differs from the naive loop",
          FAMILY[s->family], FORM[form], it, (unsigned long long)seed,
          in_seg ? "segment" : "heap", diff);
  }
  if (me == 0) {
    for (int f = 0; f < 3; f++)
      printf("vis_test: %s put %ld/%ld/%ld get %ld/%ld/%ld (blocking/nb/nbi)\n", FAMILY[f],
             counts[f][1][0], counts[f][1][1], counts[f][1][2], counts[f][0][0], counts[f][0][1],
             counts[f][0][2]);
  }
  test_finish("vis_test");
  return 0;
}
