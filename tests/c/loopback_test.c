/* loopback_test.c: an AM to the caller's own rank runs its handler, and the handler's reply,
 * before the request call returns (as in GASNet), in SEQ and PAR, for every category. In PAR a
 * sibling thread spins without ever polling on the flag the loopback handler sets, and the
 * main thread then joins it without polling either: a deferred handler would hang the job. */
#include "test_util.h"

#ifdef GASNET_PAR
#include <pthread.h>
#endif

static gasnet_handler_t h_short, h_req, h_rep;
static volatile int requests, replies;
static gasnet_seginfo_t *seg;

static void on_req(gasnet_token_t t, void *buf, size_t n, gasnet_handlerarg_t v) {
  (void)buf, (void)n;
  requests++;
  GASNET_SAFE(gasnet_AMReplyShort1(t, h_rep, v));
}

static void on_short(gasnet_token_t t, gasnet_handlerarg_t v) {
  requests++;
  GASNET_SAFE(gasnet_AMReplyShort1(t, h_rep, v));
}

static void on_rep(gasnet_token_t t, gasnet_handlerarg_t v) {
  (void)t;
  replies += v;
}

#ifdef GASNET_PAR
static void *spinner(void *arg) {
  int want = (int)(intptr_t)arg;
  while (replies < want) {
  } /* no poll: only a synchronous loopback can end this */
  return NULL;
}
#endif

int main(int argc, char **argv) {
  GASNET_SAFE(gasnet_init(&argc, &argv));
  gasnet_handlerentry_t table[] = {
      {0, (void (*)())on_req}, {0, (void (*)())on_rep}, {0, (void (*)())on_short}};
  GASNET_SAFE(gasnet_attach(table, 3, GASNET_PAGESIZE, 0));
  h_req = table[0].index, h_rep = table[1].index, h_short = table[2].index;
  seg = calloc(gasnet_nodes(), sizeof *seg);
  GASNET_SAFE(gasnet_getSegmentInfo(seg, gasnet_nodes()));
  gasnet_node_t me = gasnet_mynode();
  char payload[32] = "loopback";
  for (int round = 0; round < 300; round++) {
#ifdef GASNET_PAR
    pthread_t th;
    pthread_create(&th, NULL, spinner, (void *)(intptr_t)(replies + 1));
#endif
    int before = replies;
    switch (round % 3) {
      case 0: GASNET_SAFE(gasnet_AMRequestShort1(me, h_short, 1)); break;
      case 1: GASNET_SAFE(gasnet_AMRequestMedium1(me, h_req, payload, sizeof payload, 1)); break;
      default:
        GASNET_SAFE(gasnet_AMRequestLong1(me, h_req, payload, sizeof payload, seg[me].addr, 1));
    }
    CHECK(replies == before + 1, "round %d: the loopback reply had not run when the request "
          "returned", round);
#ifdef GASNET_PAR
    pthread_join(th, NULL);
#endif
  }
  CHECK(requests == 300 && replies == 300, "%d requests, %d replies", requests, replies);
  test_finish("loopback_test");
}
