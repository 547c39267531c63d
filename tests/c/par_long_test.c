/* par_long_test: the PAR core under heavy Long traffic. Every thread of every rank sends its
 * peer 1 MiB Long requests, and the peer's handler (run by whichever of its threads polls)
 * answers each with a 1 MiB Long reply into the requester's segment; the payloads are
 * checked. With every rank its own supernode the Longs travel in Medium-sized pieces through
 * the PSHM outboxes, where a handler's reply must find room while the peer's handlers do the
 * same. Prints the elapsed time per round trip.
 *   par_long_test [THREADS [ROUNDS [BYTES]]] */
#include <pthread.h>
#include <time.h>

#include "test_util.h"

enum { MAX_THREADS = 8 };
static gasnet_seginfo_t *seg;
static gasnet_handler_t h_req, h_rep;
static size_t bytes;
static int threads, rounds;
static volatile int done[MAX_THREADS];

/* Each thread owns two slots of the segment: where requests to it land, where replies land. */
static uint8_t *slot(gasnet_node_t node, int thread, int which) {
  return (uint8_t *)seg[node].addr + ((size_t)thread * 2 + (size_t)which) * bytes;
}

static void on_req(gasnet_token_t t, void *buf, size_t n, gasnet_handlerarg_t thread,
                   gasnet_handlerarg_t seed) {
  gasnet_node_t src;
  gasnet_AMGetMsgSource(t, &src);
  size_t bad = check_pattern(buf, n, (uint32_t)seed);
  CHECK(bad == n, "request payload from rank %d thread %d wrong at byte %zu", (int)src,
        (int)thread, bad);
  GASNET_SAFE(gasnet_AMReplyLong2(t, h_rep, buf, n, slot(src, thread, 1), thread, seed));
}

static void on_rep(gasnet_token_t t, void *buf, size_t n, gasnet_handlerarg_t thread,
                   gasnet_handlerarg_t seed) {
  (void)t;
  size_t bad = check_pattern(buf, n, (uint32_t)seed);
  CHECK(bad == n, "reply payload of thread %d wrong at byte %zu", (int)thread, bad);
  __atomic_add_fetch(&done[thread], 1, __ATOMIC_RELEASE);
}

static void *worker(void *arg) {
  int thread = (int)(intptr_t)arg;
  gasnet_node_t me = gasnet_mynode(), peer = (gasnet_node_t)((me + 1) % gasnet_nodes());
  uint8_t *src = malloc(bytes);
  for (int r = 0; r < rounds; r++) {
    uint32_t seed = (uint32_t)(me * 1000003 + thread * 1009 + r);
    fill_pattern(src, bytes, seed);
    GASNET_SAFE(gasnet_AMRequestLong2(peer, h_req, src, bytes, slot(peer, thread, 0), thread,
                                      (gasnet_handlerarg_t)seed));
    GASNET_BLOCKUNTIL(__atomic_load_n(&done[thread], __ATOMIC_ACQUIRE) == r + 1);
  }
  free(src);
  return NULL;
}

int main(int argc, char **argv) {
  GASNET_SAFE(gasnet_init(&argc, &argv));
  threads = argc > 1 ? atoi(argv[1]) : 2;
  rounds = argc > 2 ? atoi(argv[2]) : 20;
  bytes = argc > 3 ? (size_t)atol(argv[3]) : (size_t)1 << 20;
#ifndef GASNET_PAR
  threads = 1; /* SEQ: one client thread */
#endif
  if (threads < 1 || threads > MAX_THREADS || bytes > gasnet_AMMaxLongRequest()) {
    fprintf(stderr, "par_long_test: 1..%d threads and at most %zu bytes\n", MAX_THREADS,
            (size_t)gasnet_AMMaxLongRequest());
    gasnet_exit(2);
  }
  gasnet_handlerentry_t table[] = {{0, (void (*)())on_req}, {0, (void (*)())on_rep}};
  size_t segsize = ((size_t)threads * 2 * bytes + GASNET_PAGESIZE - 1) / GASNET_PAGESIZE *
                   GASNET_PAGESIZE;
  GASNET_SAFE(gasnet_attach(table, 2, segsize, 0));
  h_req = table[0].index, h_rep = table[1].index;
  seg = calloc(gasnet_nodes(), sizeof *seg);
  GASNET_SAFE(gasnet_getSegmentInfo(seg, gasnet_nodes()));
  test_barrier();
  struct timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  pthread_t th[MAX_THREADS];
  for (int i = 1; i < threads; i++) pthread_create(&th[i], NULL, worker, (void *)(intptr_t)i);
  worker((void *)0);
  for (int i = 1; i < threads; i++) pthread_join(th[i], NULL);
  clock_gettime(CLOCK_MONOTONIC, &b);
  double us = ((double)(b.tv_sec - a.tv_sec) * 1e6 + (double)(b.tv_nsec - a.tv_nsec) / 1e3) /
              (double)(threads * rounds);
  printf("par_long_test: rank %d: %d threads x %d round trips of %zu bytes, %.1f us each\n",
         (int)gasnet_mynode(), threads, rounds, bytes, us);
  test_finish("par_long_test");
}
