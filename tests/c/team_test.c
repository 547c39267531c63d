/* team_test: teams of the collectives. GASNET_TEAM_ALL is split twice (by parity, and into a
 * lower and an upper half numbered backwards), and the upper half split again; on every team
 * each collective (broadcast, scatter, gather, gather_all, exchange, reduce; single and M
 * forms; SINGLE and LOCAL; blocking and nb) is checked against what it must produce, the
 * maps between team and job ranks are checked both ways, and team barriers (named, anonymous,
 * mismatched, try) run on teams at the same time. The reduce function checks it gets GASNet's
 * arguments: left_count == result_count == elem_count, its table flags, the call's func_arg.
 *   team_test                 all of the above
 *   team_test nonmember       node2rank of a rank outside the team (must fail, naming it)
 *   team_test badrelrank      two ranks of one color give the same relrank (must fail) */
#include "test_util.h"

static size_t expect_count;
static int bad_reduce_args;
enum { FN_SUM, FN_FIRST };
static const unsigned FN_FLAGS[] = {0, GASNET_COLL_NONCOMM | GASNET_COLL_AMSAFE};

static void check_args(size_t rcount, size_t lcount, size_t esize, int flags, int arg,
                       int fn) {
  if (rcount != expect_count || lcount != expect_count || esize != sizeof(uint64_t) ||
      flags != (int)FN_FLAGS[fn] || arg != 1000 + fn) {
    if (bad_reduce_args++ < 5)
      fprintf(stderr, "rank %d: reduce function %d called with result_count %zu left_count %zu "
              "elem_size %zu flags %#x arg %d (elem_count %zu)\n", (int)gasnet_mynode(), fn,
              rcount, lcount, esize, (unsigned)flags, arg, expect_count);
  }
}
static void sum_fn(void *res, size_t rcount, const void *left, size_t lcount, const void *right,
                   size_t esize, int flags, int arg) {
  check_args(rcount, lcount, esize, flags, arg, FN_SUM);
  const uint64_t *l = left, *r = right;
  uint64_t *out = res;
  for (size_t i = 0; i < rcount; i++) out[i] = l[i] + r[i];
}
/* Non-commutative: keeps the left operand (so the result is the lowest team rank's). */
static void first_fn(void *res, size_t rcount, const void *left, size_t lcount,
                     const void *right, size_t esize, int flags, int arg) {
  check_args(rcount, lcount, esize, flags, arg, FN_FIRST);
  (void)right;
  memmove(res, left, rcount * esize);
}

static uint64_t val(int job_rank, size_t i, int salt) {
  return (uint64_t)job_rank * 1000003u + i * 7u + (uint64_t)salt * 31u + 1;
}

enum { NB = 24 }; /* bytes per block */
static gasnet_seginfo_t *seg;

/* Every collective on team t (this rank is team rank me of n). */
static void collectives(gasnet_team_handle_t t, int salt) {
  int n = gasnet_coll_team_size(t), me = gasnet_coll_team_node2rank(t, gasnet_mynode());
  int job = gasnet_mynode(), root = n - 1 - salt % n;
  int flags[] = {GASNET_COLL_LOCAL | GASNET_COLL_IN_ALLSYNC | GASNET_COLL_OUT_ALLSYNC,
                 GASNET_COLL_SINGLE | GASNET_COLL_IN_MYSYNC | GASNET_COLL_OUT_MYSYNC,
                 GASNET_COLL_LOCAL | GASNET_COLL_IN_NOSYNC | GASNET_COLL_OUT_ALLSYNC};
  uint64_t *src = malloc((size_t)n * NB), *dst = malloc((size_t)n * NB);
  for (int f = 0; f < 3; f++) {
    int fl = flags[f], single = (fl & GASNET_COLL_SINGLE) != 0;
    size_t words = NB / 8;
    for (size_t i = 0; i < (size_t)n * words; i++) src[i] = val(job, i, salt + f);
    /* A SINGLE M list names every team image's buffer (an image uses its own entry); a LOCAL
     * one only the caller's. */
    void **dlist = malloc((size_t)n * sizeof(void *)), **slist = malloc((size_t)n * sizeof(void *));
    for (int i = 0; i < n; i++) dlist[i] = slist[i] = NULL;
    dlist[single ? me : 0] = dst, slist[single ? me : 0] = src;
    int root_job = gasnet_coll_team_rank2node(t, root);

    memset(dst, 0, (size_t)n * NB);
    if (f == 1) gasnet_coll_broadcastM(t, dlist, (gasnet_image_t)root, src, NB, fl);
    else gasnet_coll_wait_sync(gasnet_coll_broadcast_nb(t, dst, (gasnet_image_t)root, src, NB, fl));
    for (size_t i = 0; i < words; i++)
      CHECK(dst[i] == val(root_job, i, salt + f), "broadcast f%d word %zu", f, i);

    memset(dst, 0, NB);
    if (f == 1) gasnet_coll_scatterM(t, dlist, (gasnet_image_t)root, src, NB, fl);
    else gasnet_coll_scatter(t, dst, (gasnet_image_t)root, src, NB, fl);
    for (size_t i = 0; i < words; i++)
      CHECK(dst[i] == val(root_job, (size_t)me * words + i, salt + f), "scatter f%d", f);

    memset(dst, 0, (size_t)n * NB);
    if (f == 1) gasnet_coll_gatherM(t, (gasnet_image_t)root, dst, slist, NB, fl);
    else gasnet_coll_gather(t, (gasnet_image_t)root, dst, src, NB, fl);
    if (me == root)
      for (int r = 0; r < n; r++)
        CHECK(dst[(size_t)r * words] == val(gasnet_coll_team_rank2node(t, r), 0, salt + f),
              "gather f%d block %d", f, r);

    memset(dst, 0, (size_t)n * NB);
    if (f == 1) gasnet_coll_gather_allM(t, dlist, slist, NB, fl);
    else gasnet_coll_gather_all(t, dst, src, NB, fl);
    for (int r = 0; r < n; r++)
      CHECK(dst[(size_t)r * words] == val(gasnet_coll_team_rank2node(t, r), 0, salt + f),
            "gather_all f%d block %d", f, r);

    memset(dst, 0, (size_t)n * NB);
    if (f == 1) gasnet_coll_exchangeM(t, dlist, slist, NB, fl);
    else gasnet_coll_exchange(t, dst, src, NB, fl);
    for (int r = 0; r < n; r++)
      CHECK(dst[(size_t)r * words] ==
                val(gasnet_coll_team_rank2node(t, r), (size_t)me * words, salt + f),
            "exchange f%d block %d", f, r);

    /* Reduce NB/8 = 3 elements (sum over the team), and the non-commutative one. */
    expect_count = words;
    memset(dst, 0, NB);
    if (f == 1) gasnet_coll_reduceM(t, (gasnet_image_t)root, dst, slist, 0, 0, 8, words, FN_SUM, 1000, fl);
    else gasnet_coll_reduce(t, (gasnet_image_t)root, dst, src, 0, 0, 8, words, FN_SUM, 1000, fl);
    if (me == root)
      for (size_t i = 0; i < words; i++) {
        uint64_t want = 0;
        for (int r = 0; r < n; r++) want += val(gasnet_coll_team_rank2node(t, r), i, salt + f);
        CHECK(dst[i] == want, "reduce f%d element %zu: %llu, expected %llu", f, i,
              (unsigned long long)dst[i], (unsigned long long)want);
      }
    memset(dst, 0, NB);
    gasnet_coll_wait_sync(gasnet_coll_reduce_nb(t, (gasnet_image_t)root, dst, src, 0, 0, 8, words,
                                                FN_FIRST, 1001, fl));
    if (me == root)
      CHECK(dst[0] == val(gasnet_coll_team_rank2node(t, 0), 0, salt + f),
            "non-commutative reduce f%d: not team rank 0's", f);
    free(dlist), free(slist);
  }
  free(src), free(dst);
}

static void maps(gasnet_team_handle_t t, int expect_size) {
  int n = gasnet_coll_team_size(t);
  CHECK(n == expect_size, "team size %d, expected %d", n, expect_size);
  for (int r = 0; r < n; r++)
    CHECK((int)gasnet_coll_team_node2rank(t, gasnet_coll_team_rank2node(t, r)) == r, "maps of %d", r);
}

/* Named barriers with the team's own names, a mismatched one, anonymous notify with a named
 * wait, and try. Teams run theirs at the same time with different names. */
static void barriers(gasnet_team_handle_t t, int name) {
  int me = gasnet_coll_team_node2rank(t, gasnet_mynode()), n = gasnet_coll_team_size(t), id, rc;
  for (int i = 0; i < 20; i++) {
    rc = gasnet_coll_barrier(t, name + i, 0);
    CHECK(rc == GASNET_OK, "team barrier %d: %s", i, gasnet_ErrorName(rc));
    CHECK(gasnet_coll_barrier_result(t, &id) == 0 && id == name + i, "team result id %d", id);
  }
  if (n > 1) {
    rc = gasnet_coll_barrier(t, me == 0 ? name : name + 1, 0);
    CHECK(rc == GASNET_ERR_BARRIER_MISMATCH, "mismatched team barrier gave %s", gasnet_ErrorName(rc));
  }
  gasnet_coll_barrier_notify(t, 0, GASNET_BARRIERFLAG_ANONYMOUS);
  rc = gasnet_coll_barrier_wait(t, 5, 0);
  CHECK(rc == GASNET_OK, "anonymous notify, named wait on a team gave %s", gasnet_ErrorName(rc));
  gasnet_coll_barrier_notify(t, name, GASNET_BARRIERFLAG_IMAGES);
  while ((rc = gasnet_coll_barrier_try(t, name, GASNET_BARRIERFLAG_IMAGES)) == GASNET_ERR_NOT_READY)
    gasnet_AMPoll();
  CHECK(rc == GASNET_OK, "team barrier_try gave %s", gasnet_ErrorName(rc));
}

int main(int argc, char **argv) {
  GASNET_SAFE(gasnet_init(&argc, &argv));
  GASNET_SAFE(gasnet_attach(NULL, 0, GASNET_PAGESIZE, 0));
  seg = calloc(gasnet_nodes(), sizeof *seg);
  GASNET_SAFE(gasnet_getSegmentInfo(seg, gasnet_nodes()));
  gasnet_coll_fn_entry_t fns[] = {{sum_fn, FN_FLAGS[FN_SUM]}, {first_fn, FN_FLAGS[FN_FIRST]}};
  gasnet_coll_init(NULL, 0, fns, 2, 0);
  int me = gasnet_mynode(), n = gasnet_nodes();
  const char *mode = argc > 1 ? argv[1] : "";

  gasnet_team_handle_t parity = gasnet_coll_team_split(GASNET_TEAM_ALL, (gasnet_node_t)(me % 2),
                                                       (gasnet_node_t)(me / 2), NULL);
  if (strcmp(mode, "nonmember") == 0 && n > 1)
    gasnet_coll_team_node2rank(parity, (gasnet_node_t)((me + 1) % n)); /* the other parity */
  int upper = me >= n / 2, half_size = upper ? n - n / 2 : n / 2;
  int pos = upper ? me - n / 2 : me;
  gasnet_node_t rel = (gasnet_node_t)(half_size - 1 - pos); /* numbered backwards */
  if (strcmp(mode, "badrelrank") == 0) rel = 0;
  gasnet_team_handle_t half = gasnet_coll_team_split(GASNET_TEAM_ALL, (gasnet_node_t)upper, rel,
                                                     NULL);
  maps(GASNET_TEAM_ALL, n);
  maps(parity, me % 2 ? n / 2 : n - n / 2);
  maps(half, half_size);
  CHECK(gasnet_coll_team_rank2node(half, 0) ==
            (gasnet_node_t)(upper ? n - 1 : n / 2 - 1), "half's rank 0 is job rank %d",
        (int)gasnet_coll_team_rank2node(half, 0));
  /* The upper half split again: its even team ranks and its odd ones. */
  gasnet_team_handle_t sub = NULL;
  if (upper) {
    int hr = gasnet_coll_team_node2rank(half, (gasnet_node_t)me);
    sub = gasnet_coll_team_split(half, (gasnet_node_t)(hr % 2), (gasnet_node_t)(hr / 2), NULL);
  }

  expect_count = 4;
  uint64_t one[4] = {1, 2, 3, (uint64_t)me}, total[4];
  gasnet_coll_reduce(GASNET_TEAM_ALL, 0, total, one, 0, 0, 8, 4, FN_SUM, 1000,
                     GASNET_COLL_LOCAL | GASNET_COLL_IN_ALLSYNC | GASNET_COLL_OUT_ALLSYNC);
  if (me == 0) CHECK(total[0] == (uint64_t)n && total[3] == (uint64_t)n * (n - 1) / 2, "all sum");

  for (int round = 0; round < 3; round++) {
    collectives(parity, round);
    collectives(half, round + 1);
    if (sub) collectives(sub, round + 2);
    collectives(GASNET_TEAM_ALL, round + 3);
  }
  barriers(parity, 1000 * (me % 2 + 1));
  barriers(half, 5000 + 100 * upper);
  if (sub) barriers(sub, 9000);
  CHECK(bad_reduce_args == 0, "%d reduce calls with arguments other than GASNet's",
        bad_reduce_args);
  test_finish("team_test");
}
