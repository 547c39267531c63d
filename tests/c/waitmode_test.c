/* waitmode_test: how a waiting rank uses its core. Ranks 0 and 1 ping-pong Short AMs, each
 * waiting for the other's with a gasnet_AMPoll loop, after gasnet_set_waitmode(MODE) (or
 * without calling it: "none"). The program counts its own polls and, by defining sched_yield
 * itself (the runtime library is linked statically, so its calls land here), the yields the
 * runtime made during those loops. Each rank prints
 *   waitmode_test: rank R: polls P, received A, yields Y
 * and the test decides from the mode and whether the host was oversubscribed: GASNet yields on
 * every idle wait iteration in every mode but SPIN, and a client's mode must not stop the
 * runtime from yielding when ranks outnumber cores. With THREADS 2 (PAR), a second thread of
 * each rank waits in GASNet too: the host's waiting threads then outnumber its cores even
 * when its ranks do not.
 *   waitmode_test none|spin|block|spinblock [ROUNDS [THREADS]] */
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "test_util.h"

#ifdef GASNET_PAR
#include <pthread.h>
#endif

static _Thread_local long yields; /* this thread's */
int sched_yield(void) {
  yields++;
  return (int)syscall(SYS_sched_yield);
}

static gasnet_handler_t h_ball;
static volatile int received;
static void on_ball(gasnet_token_t t) {
  (void)t;
  received++;
}

#ifdef GASNET_PAR
static volatile int helper_polled, helper_stop;
static void *helper(void *arg) {
  (void)arg;
  while (!helper_stop) {
    gasnet_AMPoll();
    helper_polled = 1;
  }
  return NULL;
}
#endif

int main(int argc, char **argv) {
  GASNET_SAFE(gasnet_init(&argc, &argv));
  gasnet_handlerentry_t table[] = {{0, (void (*)())on_ball}};
  GASNET_SAFE(gasnet_attach(table, 1, GASNET_PAGESIZE, 0));
  h_ball = table[0].index;
  const char *mode = argc > 1 ? argv[1] : "none";
  int rounds = argc > 2 ? atoi(argv[2]) : 200;
  int threads = argc > 3 ? atoi(argv[3]) : 1;
#ifdef GASNET_PAR
  pthread_t th;
  if (threads > 1) {
    pthread_create(&th, NULL, helper, NULL);
    while (!helper_polled) {
    } /* the helper has waited in GASNet before the timed loops start */
  }
#else
  if (threads > 1) {
    fprintf(stderr, "waitmode_test: THREADS %d needs the PAR build\n", threads);
    gasnet_exit(2);
  }
#endif
  if (strcmp(mode, "spin") == 0) GASNET_SAFE(gasnet_set_waitmode(GASNET_WAIT_SPIN));
  else if (strcmp(mode, "block") == 0) GASNET_SAFE(gasnet_set_waitmode(GASNET_WAIT_BLOCK));
  else if (strcmp(mode, "spinblock") == 0) GASNET_SAFE(gasnet_set_waitmode(GASNET_WAIT_SPINBLOCK));
  else if (strcmp(mode, "none") != 0) {
    fprintf(stderr, "waitmode_test: mode '%s': expected none, spin, block or spinblock\n", mode);
    gasnet_exit(2);
  }
  CHECK(gasnet_set_waitmode(99) == GASNET_ERR_BAD_ARG, "gasnet_set_waitmode(99) accepted");
  test_barrier();
  int me = gasnet_mynode();
  long polls = 0, yields_in_loops = 0;
  if (me < 2 && gasnet_nodes() >= 2) {
    gasnet_node_t peer = (gasnet_node_t)(1 - me);
    for (int r = 0; r < rounds; r++) {
      if (me == 0) GASNET_SAFE(gasnet_AMRequestShort0(peer, h_ball));
      long before = yields;
      while (received <= r) {
        gasnet_AMPoll();
        polls++;
      }
      yields_in_loops += yields - before;
      if (me == 1) GASNET_SAFE(gasnet_AMRequestShort0(peer, h_ball));
    }
  }
#ifdef GASNET_PAR
  if (threads > 1) {
    helper_stop = 1;
    pthread_join(th, NULL);
  }
#endif
  printf("waitmode_test: rank %d: polls %ld, received %d, yields %ld\n", me, polls, received,
         yields_in_loops);
  fflush(stdout);
  test_finish("waitmode_test");
}
