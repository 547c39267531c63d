/* sleep_test.c: ranks that wait while rank 0 takes its time, each wait ended by one kind of
 * event: a first message from rank 0, a barrier, an AM reply, a put, a memset and a strided
 * put from rank 0 (through the supernode's shared memory, or over the network). Run with GASNET_WAIT_MODE=block, waiting
 * ranks sleep in the kernel: each prints the CPU time its thread used against the time it
 * waited, and with GASNET_WAIT_SLEEP_MAX large a wake that never comes hangs the job.
 * argv[1]: how long rank 0 keeps the others waiting in each phase, in ms (default 300);
 * argv[2] "exit": then rank 0 ends the job (gasnet_exit(6)) while the others sleep in a
 * barrier, which only the exit word (or udp's exit notice) wakes them from. */
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include <gasnet_vis.h>

#include "test_util.h"

static volatile int answered, served, seen;
static gasnet_handler_t h_ask, h_answer, h_seen;

static void on_ask(gasnet_token_t t) {
  served++;
  GASNET_SAFE(gasnet_AMReplyShort0(t, h_answer));
}
static void on_answer(gasnet_token_t t) {
  (void)t;
  answered = 1;
}
static void on_seen(gasnet_token_t t) {
  (void)t;
  seen++;
}

static double wall(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
static double cpu(void) { /* this thread's (udp's liveness thread has its own) */
  struct rusage ru;
  getrusage(RUSAGE_THREAD, &ru);
  return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
         (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
}

static long hold_ms;
static void hold(void) { /* rank 0 keeps the others waiting, without using a core */
  struct timespec ts = {hold_ms / 1000, (hold_ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) != 0) {
  }
}

static double t0, c0;
static void waiting(void) { t0 = wall(), c0 = cpu(); }
static void waited(const char *what) {
  double t = wall() - t0, c = cpu() - c0;
  printf("sleep_test: rank %d waited %.3f s for %s using %.3f s of CPU\n", (int)gasnet_mynode(),
         t, what, c);
  fflush(stdout);
}

static volatile uint64_t *flag(int phase) { /* this rank's word of a phase, in its segment */
  gasnet_seginfo_t *si = malloc(sizeof *si * gasnet_nodes());
  GASNET_SAFE(gasnet_getSegmentInfo(si, (int)gasnet_nodes()));
  volatile uint64_t *f = (volatile uint64_t *)si[gasnet_mynode()].addr + phase;
  free(si);
  return f;
}
static void *flag_of(int rank, int phase) {
  gasnet_seginfo_t *si = malloc(sizeof *si * gasnet_nodes());
  GASNET_SAFE(gasnet_getSegmentInfo(si, (int)gasnet_nodes()));
  void *f = (uint64_t *)si[rank].addr + phase;
  free(si);
  return f;
}

int main(int argc, char **argv) {
  GASNET_SAFE(gasnet_init(&argc, &argv));
  gasnet_handlerentry_t table[] = {{0, (void (*)())on_ask}, {0, (void (*)())on_answer},
                                   {0, (void (*)())on_seen}};
  GASNET_SAFE(gasnet_attach(table, 3, GASNET_PAGESIZE, 0));
  h_ask = table[0].index, h_answer = table[1].index, h_seen = table[2].index;
  int me = (int)gasnet_mynode(), n = (int)gasnet_nodes();
  hold_ms = argc > 1 ? atol(argv[1]) : 300;

  /* A first message from a rank it never heard from (on-demand addresses and connections:
   * ofi_rxm's connection request arrives while it sleeps). Before any barrier, whose messages
   * would be the first. */
  if (me == 0) {
    hold();
    for (int r = 1; r < n; r++) GASNET_SAFE(gasnet_AMRequestShort0((gasnet_node_t)r, h_seen));
  } else {
    waiting();
    GASNET_BLOCKUNTIL(seen == 1);
    waited("a first message");
    seen = 0;
  }
  test_barrier();

  /* A barrier rank 0 joins late. */
  if (me == 0) hold();
  else waiting();
  test_barrier();
  if (me) waited("a barrier");

  /* A reply to a request rank 0 serves late. */
  if (me == 0) {
    hold();
    while (served < n - 1) gasnet_AMPoll();
  } else {
    waiting();
    GASNET_SAFE(gasnet_AMRequestShort0(0, h_ask));
    GASNET_BLOCKUNTIL(answered);
    waited("an AM reply");
  }
  test_barrier();

  /* Words rank 0 writes late: a put, a memset, a strided put. */
  static const char *how[] = {"a put", "a memset", "a strided put"};
  for (int phase = 0; phase < 3; phase++) {
    if (me == 0) {
      hold();
      for (int r = 1; r < n; r++) {
        uint64_t one = 1;
        size_t strides[1] = {8}, count[2] = {8, 1};
        if (phase == 0) gasnet_put_val((gasnet_node_t)r, flag_of(r, phase), 1, 8);
        else if (phase == 1) gasnet_memset((gasnet_node_t)r, flag_of(r, phase), 1, 8);
        else gasnet_puts_bulk((gasnet_node_t)r, flag_of(r, phase), strides, &one, strides, count, 1);
      }
      /* Nothing else of rank 0's may wake them (a barrier's notify would): it waits until
       * each saw its word. */
      GASNET_BLOCKUNTIL(seen == (phase + 1) * (n - 1));
    } else {
      volatile uint64_t *f = flag(phase);
      uint64_t want = phase == 1 ? 0x0101010101010101ull : 1;
      waiting();
      GASNET_BLOCKUNTIL(*f == want);
      waited(how[phase]);
      GASNET_SAFE(gasnet_AMRequestShort0(0, h_seen));
    }
    test_barrier();
  }
  if (argc > 2 && strcmp(argv[2], "exit") == 0) {
    if (me == 0) {
      hold();
      gasnet_exit(6);
    }
    gasnet_barrier_notify(0, GASNET_BARRIERFLAG_ANONYMOUS); /* never completes */
    gasnet_barrier_wait(0, GASNET_BARRIERFLAG_ANONYMOUS);
  }
  test_finish("sleep_test");
  return 0;
}
