/* trace_test.c: a program whose traffic is known exactly, for the tracing and statistics tests
 * (tests/test_tracing.py). Every rank, to its right-hand neighbour: 3 blocking puts of 8 bytes,
 * 2 put_nb of 16 (each synced), 1 put_nbi of 32 (synced), 2 blocking gets of 8, 1 get_nb_bulk
 * of 64 (synced), 4 Short requests (each answered by a Short reply) and 1 Medium request of
 * 100 bytes; two barriers. The source lines of the calls are printed by rank 0 as
 * "line <what> <n>", so the tests can check the trace's file:line against them. */
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

enum { H_PING = 200, H_PONG, H_MEDIUM };
static volatile int pongs, mediums;

static void ping_handler(gasnet_token_t t, gasnet_handlerarg_t a, gasnet_handlerarg_t b) {
  GASNET_SAFE(gasnet_AMReplyShort1(t, H_PONG, a + b));
}
static void pong_handler(gasnet_token_t t, gasnet_handlerarg_t v) {
  (void)t;
  (void)v;
  pongs++;
}
static void medium_handler(gasnet_token_t t, void *buf, size_t n) {
  (void)t;
  (void)buf;
  if (n == 100) mediums++;
}

#define LINE(what) \
  if (me == 0) printf("line %s %d\n", what, __LINE__ + 1)

int main(int argc, char **argv) {
  GASNET_SAFE(gasnet_init(&argc, &argv));
  gasnet_handlerentry_t handlers[] = {{H_PING, (void (*)(void))ping_handler},
                                      {H_PONG, (void (*)(void))pong_handler},
                                      {H_MEDIUM, (void (*)(void))medium_handler}};
  GASNET_SAFE(gasnet_attach(handlers, 3, 65536, 0));
  gasnet_node_t me = gasnet_mynode(), n = gasnet_nodes();
  gasnet_node_t right = (gasnet_node_t)((me + 1) % n);
  gasnet_seginfo_t *seg = malloc(sizeof *seg * n);
  GASNET_SAFE(gasnet_getSegmentInfo(seg, (int)n));
  char *remote = seg[right].addr;
  char local[128];
  memset(local, (int)me, sizeof local);

  LINE("barrier_notify");
  gasnet_barrier_notify(1, 0);
  gasnet_barrier_wait(1, 0);
  for (int i = 0; i < 3; i++) {
    LINE("put");
    gasnet_put(right, remote + 8 * i, local, 8);
  }
  for (int i = 0; i < 2; i++) {
    gasnet_handle_t h = gasnet_put_nb(right, remote + 64 + 16 * i, local, 16);
    LINE("wait_syncnb");
    gasnet_wait_syncnb(h);
  }
  gasnet_put_nbi(right, remote + 128, local, 32);
  LINE("wait_syncnbi_puts");
  gasnet_wait_syncnbi_puts();
  for (int i = 0; i < 2; i++) {
    LINE("get");
    gasnet_get(local, right, remote + 8 * i, 8);
  }
  gasnet_handle_t g = gasnet_get_nb_bulk(local, right, remote, 64);
  gasnet_wait_syncnb(g);
  for (int i = 0; i < 4; i++) {
    LINE("am_request_short");
    GASNET_SAFE(gasnet_AMRequestShort2(right, H_PING, i, 1));
  }
  GASNET_SAFE(gasnet_AMRequestMedium0(right, H_MEDIUM, local, 100));
  GASNET_BLOCKUNTIL(pongs == 4 && mediums == 1);
  gasnet_barrier_notify(0, GASNET_BARRIERFLAG_ANONYMOUS);
  gasnet_barrier_wait(0, GASNET_BARRIERFLAG_ANONYMOUS);
  printf("trace_test: rank %d OK\n", (int)me);
  fflush(stdout);
  free(seg);
  gasnet_exit(0);
  return 0;
}
