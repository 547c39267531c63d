// api_client.cc: a C++ client of every part of the public interface but the AMs (which
// test_cxx_clients.py generates, every form with run-time arguments): the extended API in
// every form, VIS, collectives and the tools. Every value passed is a run-time value. Compiled
// by g++ and clang++ as C++11, 14 and 17 with -Wall -Wextra -pedantic -Werror.
#include <gasnet.h>
#include <gasnet_coll.h>
#include <gasnet_tools.h>
#include <gasnet_vis.h>

static int failures;
#define EXPECT(cond)                                                                \
  do {                                                                              \
    if (!(cond)) {                                                                  \
      failures++;                                                                   \
      fprintf(stderr, "rank %d: %s:%d: %s\n", (int)gasnet_mynode(), __FILE__, __LINE__, \
              #cond);                                                               \
    }                                                                               \
  } while (0)

static void sum_fn(void *res, size_t count, const void *left, size_t lcount, const void *right,
                   size_t esize, int flags, int arg) {
  (void)lcount, (void)esize, (void)flags, (void)arg;
  const uint64_t *l = static_cast<const uint64_t *>(left);
  const uint64_t *r = static_cast<const uint64_t *>(right);
  uint64_t *out = static_cast<uint64_t *>(res);
  for (size_t i = 0; i < count; i++) out[i] = l[i] + r[i];
}

static void barrier() {
  gasnet_barrier_notify(0, GASNET_BARRIERFLAG_ANONYMOUS);
  gasnet_barrier_wait(0, GASNET_BARRIERFLAG_ANONYMOUS);
}

// The extended API: blocking, nb, nbi, bulk, value and memset forms, every sync form.
static void extended(gasnet_node_t peer, char *mine, char *theirs, size_t n) {
  char buf[64];
  for (size_t i = 0; i < n; i++) buf[i] = static_cast<char>(i + gasnet_mynode());
  gasnet_put(peer, theirs, buf, n);
  gasnet_put_bulk(peer, theirs + n, buf, n);
  gasnet_get(buf, peer, theirs, n);
  gasnet_get_bulk(buf, peer, theirs, n);
  gasnet_handle_t h[4];
  h[0] = gasnet_put_nb(peer, theirs, buf, n);
  h[1] = gasnet_put_nb_bulk(peer, theirs + n, buf, n);
  h[2] = gasnet_get_nb(buf, peer, theirs, n);
  h[3] = gasnet_get_nb_bulk(buf + n, peer, theirs, n);
  gasnet_wait_syncnb_all(h, 4);
  h[0] = gasnet_memset_nb(peer, theirs, 7, n);
  gasnet_wait_syncnb(h[0]);
  h[0] = gasnet_put_nb(peer, theirs, buf, n);
  while (gasnet_try_syncnb(h[0]) != GASNET_OK) gasnet_AMPoll();
  h[0] = gasnet_get_nb(buf, peer, theirs, n);
  h[1] = gasnet_put_nb(peer, theirs + n, buf, n);
  gasnet_wait_syncnb_some(h, 2);
  gasnet_wait_syncnb_all(h, 2);
  (void)gasnet_try_syncnb_all(h, 2);
  (void)gasnet_try_syncnb_some(h, 2);
  gasnet_put_nbi(peer, theirs, buf, n);
  gasnet_put_nbi_bulk(peer, theirs + n, buf, n);
  gasnet_get_nbi(buf, peer, theirs, n);
  gasnet_get_nbi_bulk(buf, peer, theirs, n);
  gasnet_memset_nbi(peer, theirs, 3, n);
  gasnet_wait_syncnbi_puts();
  gasnet_wait_syncnbi_gets();
  gasnet_wait_syncnbi_all();
  (void)gasnet_try_syncnbi_puts();
  (void)gasnet_try_syncnbi_gets();
  (void)gasnet_try_syncnbi_all();
  gasnet_begin_nbi_accessregion();
  gasnet_put_nbi(peer, theirs, buf, n);
  gasnet_wait_syncnb(gasnet_end_nbi_accessregion());
  gasnet_memset(peer, theirs, 0, n);
  gasnet_register_value_t v = gasnet_mynode() + n;
  gasnet_put_val(peer, theirs, v, sizeof(uint32_t));
  gasnet_wait_syncnb(gasnet_put_nb_val(peer, theirs + 8, v, sizeof(uint64_t)));
  gasnet_put_nbi_val(peer, theirs + 16, v, 2);
  gasnet_wait_syncnbi_puts();
  EXPECT(gasnet_get_val(peer, theirs, sizeof(uint32_t)) == v);
  gasnet_valget_handle_t vh = gasnet_get_nb_val(peer, theirs + 8, sizeof(uint64_t));
  EXPECT(gasnet_wait_syncnb_valget(vh) == v);
  (void)mine;
}

// VIS: vector, indexed and strided, blocking, nb and nbi.
static void vis(gasnet_node_t peer, char *theirs, size_t n) {
  char src[64], dst[64];
  for (size_t i = 0; i < sizeof src; i++) src[i] = static_cast<char>(i * 3);
  gasnet_memvec_t dl[2] = {{theirs, n}, {theirs + 2 * n, n}};
  gasnet_memvec_t sl[1] = {{src, 2 * n}};
  gasnet_putv_bulk(peer, 2, dl, 1, sl);
  gasnet_memvec_t gl[1] = {{dst, 2 * n}};
  gasnet_getv_bulk(1, gl, peer, 2, dl);
  EXPECT(memcmp(src, dst, 2 * n) == 0);
  gasnet_wait_syncnb(gasnet_putv_nb_bulk(peer, 2, dl, 1, sl));
  gasnet_getv_nbi_bulk(1, gl, peer, 2, dl);
  gasnet_putv_nbi_bulk(peer, 2, dl, 1, sl);
  gasnet_wait_syncnb(gasnet_getv_nb_bulk(1, gl, peer, 2, dl));
  void *ri[2] = {theirs, theirs + 2 * n};
  void *li[1] = {src};
  gasnet_puti_bulk(peer, 2, ri, n, 1, li, 2 * n);
  gasnet_wait_syncnb(gasnet_puti_nb_bulk(peer, 2, ri, n, 1, li, 2 * n));
  gasnet_puti_nbi_bulk(peer, 2, ri, n, 1, li, 2 * n);
  void *gi[1] = {dst};
  gasnet_geti_bulk(1, gi, 2 * n, peer, 2, ri, n);
  gasnet_wait_syncnb(gasnet_geti_nb_bulk(1, gi, 2 * n, peer, 2, ri, n));
  gasnet_geti_nbi_bulk(1, gi, 2 * n, peer, 2, ri, n);
  size_t strides[1] = {2 * n}, lstrides[1] = {n}, count[2] = {n, 2};
  gasnet_puts_bulk(peer, theirs, strides, src, lstrides, count, 1);
  gasnet_wait_syncnb(gasnet_puts_nb_bulk(peer, theirs, strides, src, lstrides, count, 1));
  gasnet_puts_nbi_bulk(peer, theirs, strides, src, lstrides, count, 1);
  gasnet_gets_bulk(dst, lstrides, peer, theirs, strides, count, 1);
  gasnet_wait_syncnb(gasnet_gets_nb_bulk(dst, lstrides, peer, theirs, strides, count, 1));
  gasnet_gets_nbi_bulk(dst, lstrides, peer, theirs, strides, count, 1);
  gasnet_wait_syncnbi_all();
}

// Collectives: one of each kind, single and M forms, blocking and nb.
static void collectives(char *seg, size_t n) {
  int me = gasnet_mynode(), nodes = gasnet_nodes();
  const int flags = GASNET_COLL_LOCAL | GASNET_COLL_IN_ALLSYNC | GASNET_COLL_OUT_ALLSYNC;
  char *src = seg + 4096, *dst = seg + 8192;
  for (size_t i = 0; i < n * nodes; i++) src[i] = static_cast<char>(me + i);
  gasnet_coll_broadcast(GASNET_TEAM_ALL, dst, 0, src, n, flags);
  EXPECT(dst[1] == 1);
  void *dl[1] = {dst}, *sl[1] = {src};
  gasnet_coll_broadcastM(GASNET_TEAM_ALL, dl, 0, src, n, flags);
  gasnet_coll_scatter(GASNET_TEAM_ALL, dst, 0, src, n, flags);
  gasnet_coll_scatterM(GASNET_TEAM_ALL, dl, 0, src, n, flags);
  gasnet_coll_gather(GASNET_TEAM_ALL, 0, dst, src, n, flags);
  gasnet_coll_gatherM(GASNET_TEAM_ALL, 0, dst, sl, n, flags);
  gasnet_coll_gather_all(GASNET_TEAM_ALL, dst, src, n, flags);
  gasnet_coll_gather_allM(GASNET_TEAM_ALL, dl, sl, n, flags);
  gasnet_coll_exchange(GASNET_TEAM_ALL, dst, src, n, flags);
  gasnet_coll_exchangeM(GASNET_TEAM_ALL, dl, sl, n, flags);
  uint64_t *val = reinterpret_cast<uint64_t *>(src), *sum = reinterpret_cast<uint64_t *>(dst);
  val[0] = static_cast<uint64_t>(me) + 1;
  gasnet_coll_reduce(GASNET_TEAM_ALL, 0, sum, val, 0, 0, sizeof(uint64_t), 1, 0, 0, flags);
  if (me == 0) EXPECT(sum[0] == static_cast<uint64_t>(nodes) * (nodes + 1) / 2);
  gasnet_coll_reduceM(GASNET_TEAM_ALL, 0, sum, sl, 0, 0, sizeof(uint64_t), 1, 0, 0, flags);
  gasnet_coll_handle_t h[2];
  h[0] = gasnet_coll_broadcast_nb(GASNET_TEAM_ALL, dst, 0, src, n, flags);
  gasnet_coll_wait_sync(h[0]);
  h[0] = gasnet_coll_gather_all_nb(GASNET_TEAM_ALL, dst, src, n, flags);
  while (gasnet_coll_try_sync(h[0]) != GASNET_OK) gasnet_AMPoll();
  h[0] = gasnet_coll_scatter_nb(GASNET_TEAM_ALL, dst, 0, src, n, flags);
  h[1] = gasnet_coll_reduce_nb(GASNET_TEAM_ALL, 0, sum, val, 0, 0, 8, 1, 0, 0, flags);
  gasnet_coll_wait_sync_all(h, 2);
  h[0] = gasnet_coll_exchange_nb(GASNET_TEAM_ALL, dst, src, n, flags);
  h[1] = gasnet_coll_gather_nb(GASNET_TEAM_ALL, 0, dst + 4096, src, n, flags);
  gasnet_coll_wait_sync_some(h, 2);
  gasnet_coll_wait_sync_all(h, 2);
  (void)gasnet_coll_try_sync_all(h, 2);
  (void)gasnet_coll_try_sync_some(h, 2);
  // A team of every rank numbered backwards, its maps, a collective and a barrier on it.
  gasnet_team_handle_t rev = gasnet_coll_team_split(
      GASNET_TEAM_ALL, 0, static_cast<gasnet_node_t>(nodes - 1 - me), NULL);
  EXPECT(gasnet_coll_team_size(rev) == static_cast<gasnet_node_t>(nodes));
  EXPECT(gasnet_coll_team_rank2node(rev, 0) == static_cast<gasnet_node_t>(nodes - 1));
  EXPECT(gasnet_coll_team_node2rank(rev, gasnet_mynode()) == static_cast<gasnet_node_t>(nodes - 1 - me));
  src[0] = static_cast<char>(me);
  gasnet_coll_broadcast(rev, dst, 0, src, n, flags);
  EXPECT(dst[0] == static_cast<char>(nodes - 1));
  gasnet_coll_barrier_notify(rev, 7, 0);
  EXPECT(gasnet_coll_barrier_wait(rev, 7, 0) == GASNET_OK);
  int id = 0;
  EXPECT(gasnet_coll_barrier_result(rev, &id) == 0 && id == 7);
}

// Tools: timers, fences, atomics, locks, thread keys, environment and numbers, system queries.
GASNETT_THREADKEY_DEFINE(cxx_key);
static void tools() {
  gasnett_tick_t t0 = gasnett_ticks_now();
  gasnett_local_mb();
  gasnett_local_wmb();
  gasnett_local_rmb();
  gasnett_compiler_fence();
  gasnett_atomic_t a = gasnett_atomic_init(1);
  gasnett_atomic_increment(&a, 0);
  EXPECT(gasnett_atomic_read(&a, 0) == 2);
  EXPECT(gasnett_atomic_compare_and_swap(&a, 2, 5, GASNETT_ATOMIC_ACQ));
  gasnett_atomic64_t b = gasnett_atomic64_init(7);
  EXPECT(gasnett_atomic64_add(&b, 3, 0) == 10);
  gasnett_mutex_t m = GASNETT_MUTEX_INITIALIZER;
  gasnett_mutex_lock(&m);
  gasnett_mutex_unlock(&m);
  gasnet_hsl_t hsl = GASNET_HSL_INITIALIZER;
  gasnet_hsl_lock(&hsl);
  gasnet_hsl_unlock(&hsl);
  gasnett_threadkey_set(cxx_key, &a);
  EXPECT(gasnett_threadkey_get(cxx_key) == &a);
  char buf[64];
  gasnett_format_number(4096, buf, sizeof buf, 1);
  EXPECT(gasnett_parse_int("4K", 1) == 4096);
  EXPECT(gasnett_getenv_int_withdefault("CXX_CLIENT_UNSET", 3, 0) == 3);
  EXPECT(gasnett_cpu_count() > 0);
  EXPECT(gasnett_ticks_to_ns(gasnett_ticks_now() - t0) < 1000000000000ull);
  EXPECT(strlen(gasnett_gethostname()) > 0);
}

int cxx_api_main(gasnet_node_t peer, char *mine, char *theirs);
int cxx_api_main(gasnet_node_t peer, char *mine, char *theirs) {
  static gasnet_coll_fn_entry_t fns[1] = {{sum_fn, 0}};
  gasnet_coll_init(NULL, 0, fns, 1, 0);
  volatile size_t n = 16;  // a run-time size
  extended(peer, mine, theirs, n);
  barrier();
  vis(peer, theirs + 1024, n);
  barrier();
  collectives(mine, n);
  barrier();
  tools();
  return failures;
}
