/* barrier_order_test: what a barrier's wait runs. Rank 1 passes each barrier, sends rank 0 an
 * AM naming it and then says so in a file; rank 0, which notified the barrier but did not poll
 * meanwhile, only then calls its wait. The AM left rank 1 after everything rank 0's barrier
 * needs from rank 1, so it arrived after the barrier completed at rank 0: a wait that runs it
 * is a wait that ran a message a peer sent after passing the barrier it waits for (GASNet 1.x
 * lets a wait return first, and clients' start-up code relies on it).
 *   barrier_order_test DIR ROUNDS     (2 ranks; DIR: where rank 1's files go)
 * Prints "inside N of ROUNDS" (rank 0) and exits 1 when N > 0. */
#include <errno.h>
#include <sched.h>
#include <string.h>
#include <unistd.h>

#include "test_util.h"

static volatile int waiting_in; /* the barrier rank 0's wait is in, else 0 */
static volatile int arrived, ran_inside;

static void on_passed(gasnet_token_t token, gasnet_handlerarg_t round) {
  (void)token;
  if (waiting_in == round) ran_inside++;
  arrived = round;
}

static void flag_path(char *path, size_t len, const char *dir, int round) {
  snprintf(path, len, "%s/passed-%d", dir, round);
}

int main(int argc, char **argv) {
  GASNET_SAFE(gasnet_init(&argc, &argv));
  gasnet_handlerentry_t table[] = {{201, (void (*)())on_passed}};
  GASNET_SAFE(gasnet_attach(table, 1, GASNET_PAGESIZE, 0));
  if (argc != 3 || gasnet_nodes() != 2) {
    fprintf(stderr, "usage: barrier_order_test DIR ROUNDS (2 ranks)\n");
    gasnet_exit(2);
  }
  const char *dir = argv[1];
  int rounds = atoi(argv[2]);
  char path[4096];
  for (int round = 1; round <= rounds; round++) {
    flag_path(path, sizeof path, dir, round);
    gasnet_barrier_notify(round, 0);
    if (gasnet_mynode() == 1) {
      GASNET_SAFE(gasnet_barrier_wait(round, 0));
      GASNET_SAFE(gasnet_AMRequestShort1(0, 201, round));
      gasnet_AMPoll(); /* on the wire before the file says so */
      FILE *f = fopen(path, "w");
      if (!f || fclose(f) != 0) {
        fprintf(stderr, "rank 1: cannot write %s: %s\n", path, strerror(errno));
        gasnet_exit(2);
      }
    } else {
      while (access(path, F_OK) != 0) sched_yield(); /* no GASNet call: nothing runs here */
      waiting_in = round;
      GASNET_SAFE(gasnet_barrier_wait(round, 0));
      waiting_in = 0;
      GASNET_BLOCKUNTIL(arrived == round);
    }
  }
  if (gasnet_mynode() == 0) printf("inside %d of %d\n", ran_inside, rounds);
  fflush(stdout);
  test_barrier();
  gasnet_exit(ran_inside ? 1 : 0);
  return 0;
}
