/* self_am_progress_test: a lock handed round the ranks, where the rank waiting for it spins on
 * AM requests to itself (Short, Medium and Long in turn, as an OpenSHMEM's shmem_test_lock
 * does) and never polls otherwise: the holder's AM that hands the lock on must still run,
 * since GASNet polls on every request. A rank that sees no hand-over for 30 s of spinning says
 * so and fails (the hang this guards against), rather than hanging the job.
 *   self_am_progress_test [ROUNDS] */
#include <time.h>

#include "test_util.h"

static gasnet_handler_t h_self, h_grant;
static volatile int granted = -1; /* the last round whose lock this rank was handed */
static volatile long self_ams;
static gasnet_seginfo_t *seg;

static void on_self(gasnet_token_t t, void *buf, size_t n, gasnet_handlerarg_t round) {
  (void)t, (void)buf, (void)n, (void)round;
  self_ams++;
}
static void on_self_short(gasnet_token_t t, gasnet_handlerarg_t round) {
  on_self(t, NULL, 0, round);
}
static void on_grant(gasnet_token_t t, gasnet_handlerarg_t round) {
  (void)t;
  granted = round;
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char **argv) {
  GASNET_SAFE(gasnet_init(&argc, &argv));
  gasnet_handlerentry_t table[] = {{0, (void (*)())on_self}, {0, (void (*)())on_grant},
                                   {0, (void (*)())on_self_short}};
  GASNET_SAFE(gasnet_attach(table, 3, GASNET_PAGESIZE, 0));
  gasnet_handler_t h_medium = table[0].index;
  h_grant = table[1].index, h_self = table[2].index;
  seg = calloc(gasnet_nodes(), sizeof *seg);
  GASNET_SAFE(gasnet_getSegmentInfo(seg, gasnet_nodes()));
  int rounds = argc > 1 ? atoi(argv[1]) : 200;
  int me = gasnet_mynode(), n = gasnet_nodes();
  char payload[64] = "self";
  test_barrier();
  for (int round = 0; round < rounds; round++) {
    int holder = round % n;
    if (me == holder) {
      /* Hold the lock a moment (the next rank spins meanwhile), then hand it on. */
      for (volatile int k = 0; k < 1000; k++) {
      }
      GASNET_SAFE(gasnet_AMRequestShort1((gasnet_node_t)((me + 1) % n), h_grant, round));
    } else if (me == (holder + 1) % n) {
      double start = now_s();
      for (long spin = 0; granted != round; spin++) {
        switch (spin % 3) { /* no gasnet_AMPoll: only the requests may serve the network */
          case 0: GASNET_SAFE(gasnet_AMRequestShort1((gasnet_node_t)me, h_self, round)); break;
          case 1:
            GASNET_SAFE(gasnet_AMRequestMedium1((gasnet_node_t)me, h_medium, payload,
                                                sizeof payload, round));
            break;
          default:
            GASNET_SAFE(gasnet_AMRequestLong1((gasnet_node_t)me, h_medium, payload,
                                              sizeof payload, seg[me].addr, round));
        }
        if ((spin & 1023) == 0 && now_s() - start > 30) {
          printf("self_am_progress_test: rank %d: no hand-over of round %d after %ld requests "
                 "to itself\n", me, round, spin + 1);
          fflush(stdout);
          gasnet_exit(1);
        }
      }
    }
  }
  CHECK(n == 1 || self_ams > 0, "no request to itself ran");
  test_finish("self_am_progress_test");
}
