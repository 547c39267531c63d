/* busy_peer_test: a rank that computes without calling GASNet for several times
 * GASNET_REQUESTTIMEOUT_MAX is alive, and its peers must keep waiting for it (issue 38: udp
 * declared it unreachable). After a barrier rank 1 computes for COMPUTE x the timeout while
 * rank 0 sends it AM requests and a blocking put and waits for the answers; "both" has rank 0
 * compute as long after sending, so that it comes back to a peer silent for longer than the
 * timeout without having watched it. Both then check that everything arrived exactly once.
 *
 * usage: busy_peer_test one|both [COMPUTE]   (COMPUTE: multiples of the timeout, default 3) */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "test_util.h"

enum { REQUESTS = 16 };
static volatile int served, replied;
static gasnet_handler_t h_req, h_rep;

static void on_request(gasnet_token_t t, gasnet_handlerarg_t k) {
  served++;
  GASNET_SAFE(gasnet_AMReplyShort1(t, h_rep, k));
}

static void on_reply(gasnet_token_t t, gasnet_handlerarg_t k) {
  (void)t, (void)k;
  replied++;
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Busy work with no GASNet call: the rank's socket is not read until it ends. */
static volatile double sink;
static void compute(double seconds) {
  double until = now() + seconds;
  double x = 1;
  while (now() < until)
    for (int i = 0; i < 1000; i++) x = x * 1.0000001 + 1e-9;
  sink = x;
}

int main(int argc, char **argv) {
  GASNET_SAFE(gasnet_init(&argc, &argv));
  gasnet_handlerentry_t table[] = {{0, (void (*)())on_request}, {0, (void (*)())on_reply}};
  GASNET_SAFE(gasnet_attach(table, 2, GASNET_PAGESIZE, 0));
  h_req = table[0].index, h_rep = table[1].index;
  if (argc < 2 || (strcmp(argv[1], "one") != 0 && strcmp(argv[1], "both") != 0)) {
    fprintf(stderr, "usage: busy_peer_test one|both [COMPUTE]\n");
    gasnet_exit(2);
  }
  bool both = strcmp(argv[1], "both") == 0;
  double times = argc > 2 ? atof(argv[2]) : 3;
  const char *max = getenv("GASNET_REQUESTTIMEOUT_MAX");
  double span = times * (max ? atof(max) : 30);
  gasnet_seginfo_t seg[2];
  GASNET_SAFE(gasnet_getSegmentInfo(seg, 2));
  gasnet_node_t me = gasnet_mynode();
  long *word = seg[me].addr;
  *word = 0;
  test_barrier();
  if (me == 0) {
    for (int k = 0; k < REQUESTS; k++) GASNET_SAFE(gasnet_AMRequestShort1(1, h_req, k));
    if (both) compute(span);
    long value = 4242;
    gasnet_put(1, seg[1].addr, &value, sizeof value); /* blocks until rank 1 answers */
    GASNET_BLOCKUNTIL(replied == REQUESTS);
  } else if (me == 1) {
    compute(span);
  }
  test_barrier();
  if (me == 1) {
    CHECK(served == REQUESTS, "rank 1 served %d requests, not %d", served, REQUESTS);
    CHECK(*word == 4242, "the put left %ld", *word);
    printf("busy_peer_test: rank 1 served %d requests and a put after computing for %g x "
           "GASNET_REQUESTTIMEOUT_MAX\n", served, times);
  }
  test_finish("busy_peer_test");
}
