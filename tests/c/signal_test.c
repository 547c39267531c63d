/* signal_test.c: GASNet-1's signal rules as a client sees them. Every rank may install a
 * SIGQUIT handler (as GASNet-1 clients do after gasnet_init) that says it ran and then either
 * calls gasnet_exit(N) ("exit:N") or returns ("return"); "none" installs nothing.
 *   interrupt RANK SIG HANDLER     rank RANK gets SIG from outside; the others wait in a barrier
 *   peer-exit RANK CODE HANDLER W  rank RANK calls gasnet_exit(CODE); the others wait (W=wait,
 *                                  in a barrier) or compute without polling (W=compute)
 *   crash RANK                     rank RANK dereferences a bad pointer (SIGSEGV)
 *   fatal RANK                     rank RANK makes a fatal API error (an unregistered handler)
 *   hang                           every rank says "ready rank N" and waits inside GASNet */
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "test_util.h"

static int handler_code = -1; /* -1: the handler returns */

static void on_sigquit(int sig) {
  char line[96];
  int n = snprintf(line, sizeof line, "rank %d: SIGQUIT handler ran (signal %d)\n",
                   (int)gasnet_mynode(), sig);
  if (write(STDOUT_FILENO, line, (size_t)n) < 0) _exit(99);
  if (handler_code >= 0) gasnet_exit(handler_code);
}

static void install_handler(const char *how) {
  if (strcmp(how, "none") == 0) return;
  if (strncmp(how, "exit:", 5) == 0) handler_code = atoi(how + 5);
  else if (strcmp(how, "return") != 0) {
    fprintf(stderr, "signal_test: handler must be none, return or exit:N, not '%s'\n", how);
    exit(2);
  }
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_sigquit;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGQUIT, &sa, NULL);
}

static void wait_in_barrier(void) {
  gasnet_barrier_notify(0, GASNET_BARRIERFLAG_ANONYMOUS); /* never completes */
  gasnet_barrier_wait(0, GASNET_BARRIERFLAG_ANONYMOUS);
}

static void compute_forever(void) {
  for (;;) usleep(1000); /* never enters GASNet: only a signal reaches this rank */
}

/* Not inlined, so that a backtrace names it. */
__attribute__((noinline)) static void crash_here(volatile int *where) {
  *where = 42;
}

static void usage(void) {
  fprintf(stderr, "usage: signal_test interrupt RANK SIG HANDLER | peer-exit RANK CODE HANDLER "
                  "wait|compute | crash RANK | fatal RANK | hang\n");
  exit(2);
}

int main(int argc, char **argv) {
  GASNET_SAFE(gasnet_init(&argc, &argv));
  GASNET_SAFE(gasnet_attach(NULL, 0, GASNET_PAGESIZE, 0));
  if (argc < 2) usage();
  const char *mode = argv[1];
  int me = gasnet_mynode(), a = argc > 2 ? atoi(argv[2]) : 0, b = argc > 3 ? atoi(argv[3]) : 0;
  if (strcmp(mode, "interrupt") == 0 && argc == 5) {
    install_handler(argv[4]);
    test_barrier();
    if (me == a) kill(getpid(), b); /* as another process would send it */
    wait_in_barrier();
  } else if (strcmp(mode, "peer-exit") == 0 && argc == 6) {
    install_handler(argv[4]);
    test_barrier();
    if (me == a) gasnet_exit(b);
    if (strcmp(argv[5], "compute") == 0) compute_forever();
    wait_in_barrier();
  } else if (strcmp(mode, "crash") == 0) {
    test_barrier();
    if (me == a) crash_here((volatile int *)((uintptr_t)argc * 64) /* unmapped, aligned */);
    wait_in_barrier();
  } else if (strcmp(mode, "fatal") == 0) {
    test_barrier();
    if (me == a) GASNET_SAFE(gasnet_AMRequestShort0((gasnet_node_t)me, 200));
    GASNET_BLOCKUNTIL(0);
  } else if (strcmp(mode, "hang") == 0) {
    test_barrier();
    printf("ready rank %d\n", me);
    fflush(stdout);
    GASNET_BLOCKUNTIL(0);
  } else {
    usage();
  }
  fprintf(stderr, "rank %d: signal_test %s fell through\n", me, mode);
  return 3;
}
