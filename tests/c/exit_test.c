/* exit_test.c: the ways a job ends, chosen by argv: collective and one-rank gasnet_exit, return
 * from main, a rank killed by a signal, a fatal error, and ranks that wait to be interrupted. */
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "test_util.h"

static void idle_forever(void) {
  for (;;) usleep(1000); /* computing: never enters GASNet, so only a signal ends it */
}

static void usage(void) {
  fprintf(stderr,
          "usage: exit_test collective CODE | one RANK CODE | one-waiting RANK CODE | return |\n"
          "       return-one RANK | return-all-but RANK | signal RANK SIG | hang | hang-compute |\n"
          "       bad-handler RANK | stubborn RANK CODE | freeze RANK | after-barrier |\n"
          "       before-attach CODE\n");
  exit(2);
}

int main(int argc, char **argv) {
  GASNET_SAFE(gasnet_init(&argc, &argv));
  if (argc < 2) usage();
  const char *mode = argv[1];
  int a = argc > 2 ? atoi(argv[2]) : 0, b = argc > 3 ? atoi(argv[3]) : 0;
  if (strcmp(mode, "before-attach") == 0) gasnet_exit(a);
  GASNET_SAFE(gasnet_attach(NULL, 0, GASNET_PAGESIZE, 0));
  int me = gasnet_mynode();
  if (strcmp(mode, "freeze") != 0) test_barrier(); /* (a frozen rank would take it along) */
  if (strcmp(mode, "collective") == 0) {
    printf("rank %d leaving with %d\n", me, a);
    fflush(stdout);
    gasnet_exit(a);
  } else if (strcmp(mode, "one") == 0 || strcmp(mode, "one-waiting") == 0) {
    if (me == a) gasnet_exit(b);
    if (strcmp(mode, "one") == 0) idle_forever();
    gasnet_barrier_notify(0, GASNET_BARRIERFLAG_ANONYMOUS); /* never completes */
    gasnet_barrier_wait(0, GASNET_BARRIERFLAG_ANONYMOUS);
  } else if (strcmp(mode, "stubborn") == 0) {
    /* Rank a leaves with code b; the others block every polite signal (the supervisor's leave
     * signal included): only SIGKILL works. */
    if (me == a) gasnet_exit(b);
    sigset_t all;
    sigfillset(&all);
    sigprocmask(SIG_BLOCK, &all, NULL);
    idle_forever();
  } else if (strcmp(mode, "after-barrier") == 0) {
    /* Rank 0 leaves the moment a barrier completes; the others say so once through it
     * (stdio-buffered: the exit flushes it) and leave too. Odd ranks wait in the barrier;
     * even ones look at it only later, with gasnet_barrier_try. A barrier rank 0 has passed
     * is passed for all: no rank may be taken along before it returns. */
    gasnet_barrier_notify(0, GASNET_BARRIERFLAG_ANONYMOUS);
    if (me == 0 || me % 2) {
      GASNET_SAFE(gasnet_barrier_wait(0, GASNET_BARRIERFLAG_ANONYMOUS));
      if (me == 0) gasnet_exit(0);
    } else {
      usleep(300000); /* rank 0 has left by now (the grace period is a second) */
      int rc;
      while ((rc = gasnet_barrier_try(0, GASNET_BARRIERFLAG_ANONYMOUS)) == GASNET_ERR_NOT_READY) {
      }
      GASNET_SAFE(rc);
    }
    printf("rank %d passed\n", me);
    gasnet_exit(0);
  } else if (strcmp(mode, "return") == 0) {
    return 0;
  } else if (strcmp(mode, "return-all-but") == 0) {
    /* Every rank but a returns 0; a waits in a barrier they never reach. */
    if (me != a) return 0;
    gasnet_barrier_notify(0, GASNET_BARRIERFLAG_ANONYMOUS);
    gasnet_barrier_wait(0, GASNET_BARRIERFLAG_ANONYMOUS);
  } else if (strcmp(mode, "return-one") == 0) {
    if (me == a) return 0;
    gasnet_barrier_notify(0, GASNET_BARRIERFLAG_ANONYMOUS);
    gasnet_barrier_wait(0, GASNET_BARRIERFLAG_ANONYMOUS);
  } else if (strcmp(mode, "signal") == 0) {
    if (me == a) {
      signal(b, SIG_DFL);
      raise(b);
    }
    idle_forever();
  } else if (strcmp(mode, "hang") == 0 || strcmp(mode, "hang-compute") == 0) {
    printf("ready rank %d\n", me);
    fflush(stdout);
    if (strcmp(mode, "hang-compute") == 0) idle_forever();
    GASNET_BLOCKUNTIL(0);
  } else if (strcmp(mode, "freeze") == 0) {
    /* Rank a stops (as a vanished host would); the others put to it and wait for the answer. */
    if (me == a) raise(SIGSTOP);
    usleep(300000); /* rank a has surely stopped */
    gasnet_seginfo_t seg[GASNET_MAXNODES > 256 ? 256 : GASNET_MAXNODES];
    GASNET_SAFE(gasnet_getSegmentInfo(seg, gasnet_nodes() < 256 ? gasnet_nodes() : 256));
    long value = 42;
    gasnet_put(a, seg[a].addr, &value, sizeof value);
    fprintf(stderr, "rank %d: a put to frozen rank %d completed\n", me, a);
    return 4;
  } else if (strcmp(mode, "bad-handler") == 0) {
    if (me == a) GASNET_SAFE(gasnet_AMRequestShort0((gasnet_node_t)((a + 1) % gasnet_nodes()), 200));
    GASNET_BLOCKUNTIL(0); /* polls until the receiver's fatal error ends the job */
  } else {
    usage();
  }
  fprintf(stderr, "rank %d: exit_test %s fell through\n", me, mode);
  return 3;
}
