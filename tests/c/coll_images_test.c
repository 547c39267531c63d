/* coll_images_test (PAR): collectives with several images (threads) per rank, as GASNet-1 has
 * them: every thread calls gasnet_coll_init with the job's images array and its own image
 * (node-major), then every collective; image numbers name roots, and each image passes its own
 * buffers (LOCAL), or every image's (SINGLE M lists) or its rank's images' (LOCAL M lists). Each
 * result is checked; an image barrier (GASNET_BARRIERFLAG_IMAGES) separates the rounds.
 *   coll_images_test [THREADS [uneven]]   uneven: rank r has 1 + r % THREADS images */
#include <pthread.h>

#include "test_util.h"

enum { MAX_IMAGES = 8, WORDS = 3, NB = WORDS * 8 };
static gasnet_image_t *images;
static int total, first_mine, mine_count;
static int bad_reduce;
static gasnet_coll_fn_entry_t fns[1];
/* This rank's images' buffers, for LOCAL M lists (indexed by local image). */
static uint64_t *local_src[MAX_IMAGES], *local_dst[MAX_IMAGES];
static pthread_barrier_t ready;

static uint64_t val(int image, size_t i, int salt) {
  return (uint64_t)image * 1000003u + i * 7u + (uint64_t)salt * 31u + 1;
}
static void sum_fn(void *res, size_t rcount, const void *left, size_t lcount, const void *right,
                   size_t esize, int flags, int arg) {
  if (lcount != rcount || esize != 8 || flags != 0 || arg != 5)
    __atomic_add_fetch(&bad_reduce, 1, __ATOMIC_RELAXED);
  const uint64_t *l = left, *r = right;
  uint64_t *out = res;
  for (size_t i = 0; i < rcount; i++) out[i] = l[i] + r[i];
}

static void *image_main(void *arg) {
  int local = (int)(intptr_t)arg, me = first_mine + local;
  gasnet_coll_init(images, (gasnet_image_t)me, fns, 1, 0);
  uint64_t *src = local_src[local] = malloc((size_t)total * NB);
  uint64_t *dst = local_dst[local] = malloc((size_t)total * NB);
  pthread_barrier_wait(&ready); /* every local image's buffers are in the lists */
  void **single_d = malloc((size_t)total * sizeof(void *));
  void **single_s = malloc((size_t)total * sizeof(void *));
  for (int i = 0; i < total; i++) single_d[i] = single_s[i] = NULL;
  single_d[me] = dst, single_s[me] = src;
  void **local_d = (void **)local_dst, **local_s = (void **)local_src;
  for (int round = 0; round < 6; round++) {
    int root = (round * 5 + 1) % total, m = round % 3; /* 0: plain, 1: M SINGLE, 2: M LOCAL */
    int flags = (m == 1 ? GASNET_COLL_SINGLE : GASNET_COLL_LOCAL) |
                (round % 2 ? GASNET_COLL_IN_ALLSYNC | GASNET_COLL_OUT_ALLSYNC
                           : GASNET_COLL_IN_MYSYNC | GASNET_COLL_OUT_MYSYNC);
    void **dl = m == 1 ? single_d : local_d, **sl = m == 1 ? single_s : local_s;
    for (size_t i = 0; i < (size_t)total * WORDS; i++) src[i] = val(me, i, round);
    memset(dst, 0, (size_t)total * NB);
    if (m) gasnet_coll_broadcastM(GASNET_TEAM_ALL, dl, (gasnet_image_t)root, src, NB, flags);
    else gasnet_coll_broadcast(GASNET_TEAM_ALL, dst, (gasnet_image_t)root, src, NB, flags);
    CHECK(dst[1] == val(root, 1, round), "image %d round %d: broadcast", me, round);
    memset(dst, 0, (size_t)total * NB);
    if (m) gasnet_coll_scatterM(GASNET_TEAM_ALL, dl, (gasnet_image_t)root, src, NB, flags);
    else gasnet_coll_scatter(GASNET_TEAM_ALL, dst, (gasnet_image_t)root, src, NB, flags);
    CHECK(dst[0] == val(root, (size_t)me * WORDS, round), "image %d round %d: scatter", me, round);
    memset(dst, 0, (size_t)total * NB);
    if (m) gasnet_coll_gatherM(GASNET_TEAM_ALL, (gasnet_image_t)root, dst, sl, NB, flags);
    else gasnet_coll_gather(GASNET_TEAM_ALL, (gasnet_image_t)root, dst, src, NB, flags);
    if (me == root)
      for (int j = 0; j < total; j++)
        CHECK(dst[(size_t)j * WORDS] == val(j, 0, round), "round %d: gather block %d", round, j);
    memset(dst, 0, (size_t)total * NB);
    if (m) gasnet_coll_gather_allM(GASNET_TEAM_ALL, dl, sl, NB, flags);
    else gasnet_coll_gather_all(GASNET_TEAM_ALL, dst, src, NB, flags);
    for (int j = 0; j < total; j++)
      CHECK(dst[(size_t)j * WORDS] == val(j, 0, round), "image %d round %d: gather_all %d", me,
            round, j);
    memset(dst, 0, (size_t)total * NB);
    if (m) gasnet_coll_exchangeM(GASNET_TEAM_ALL, dl, sl, NB, flags);
    else gasnet_coll_exchange(GASNET_TEAM_ALL, dst, src, NB, flags);
    for (int j = 0; j < total; j++)
      CHECK(dst[(size_t)j * WORDS] == val(j, (size_t)me * WORDS, round),
            "image %d round %d: exchange block %d", me, round, j);
    memset(dst, 0, NB);
    if (m)
      gasnet_coll_reduceM(GASNET_TEAM_ALL, (gasnet_image_t)root, dst, sl, 0, 0, 8, WORDS, 0, 5,
                          flags);
    else
      gasnet_coll_reduce(GASNET_TEAM_ALL, (gasnet_image_t)root, dst, src, 0, 0, 8, WORDS, 0, 5,
                         flags);
    if (me == root) {
      uint64_t want = 0;
      for (int j = 0; j < total; j++) want += val(j, 2, round);
      CHECK(dst[2] == want, "round %d: reduce %llu, expected %llu", round,
            (unsigned long long)dst[2], (unsigned long long)want);
    }
    int rc = gasnet_coll_barrier(GASNET_TEAM_ALL, round, GASNET_BARRIERFLAG_IMAGES);
    CHECK(rc == GASNET_OK, "image %d: image barrier %d gave %s", me, round, gasnet_ErrorName(rc));
  }
  free(single_d), free(single_s);
  return NULL;
}

int main(int argc, char **argv) {
  GASNET_SAFE(gasnet_init(&argc, &argv));
  GASNET_SAFE(gasnet_attach(NULL, 0, GASNET_PAGESIZE, 0));
  int threads = argc > 1 ? atoi(argv[1]) : 2, uneven = argc > 2 && strcmp(argv[2], "uneven") == 0;
#ifndef GASNET_PAR
  threads = 1; /* SEQ: one image per rank, given as an images array */
#endif
  if (threads < 1 || threads > MAX_IMAGES) {
    fprintf(stderr, "coll_images_test: 1..%d threads\n", MAX_IMAGES);
    gasnet_exit(2);
  }
  int n = gasnet_nodes(), me = gasnet_mynode();
  images = calloc((size_t)n, sizeof *images);
  for (int r = 0; r < n; r++) {
    images[r] = (gasnet_image_t)(uneven ? 1 + r % threads : threads);
    if (r == me) first_mine = total, mine_count = (int)images[r];
    total += (int)images[r];
  }
  fns[0] = (gasnet_coll_fn_entry_t){sum_fn, 0};
  pthread_barrier_init(&ready, NULL, (unsigned)mine_count);
  pthread_t th[MAX_IMAGES];
  for (int t = 1; t < mine_count; t++) pthread_create(&th[t], NULL, image_main, (void *)(intptr_t)t);
  image_main((void *)0);
  for (int t = 1; t < mine_count; t++) pthread_join(th[t], NULL);
  CHECK(bad_reduce == 0, "%d reduce calls with arguments other than GASNet's", bad_reduce);
  test_finish("coll_images_test");
}
