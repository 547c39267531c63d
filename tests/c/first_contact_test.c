/* first_contact_test.c: ranks meeting for the first time, where a conduit looks up a peer's
 * address only then (GASNET_ON_DEMAND_ADDRESSES).
 *   all         right after attach, with no barrier before, every rank sends a request to
 *               every other at the same moment and waits for every reply: each pair meets
 *               from both ends at once, and most first datagrams reach a rank that has not
 *               met their sender yet.
 *   exited DIR  rank 1 writes its pid to DIR/pid and returns from main at once; rank 0 waits
 *               until that process is gone (reaped: its agent knows), then sends it a request
 *               (no reply can come) and returns. The job must end normally and at once, with
 *               a warning that rank 1 had exited, not wait for rank 1's acknowledgement.
 *               Ranks of one host only (rank 0 watches rank 1's pid).
 *   busy SECONDS right after attach rank 1 computes for SECONDS without a GASNet call while
 *               rank 0 sends it a first request and waits for the reply: rank 1 has not met
 *               rank 0 when it is probed (run it with GASNET_REQUESTTIMEOUT_MAX well below
 *               SECONDS: the job must wait for rank 1, not end it as unreachable).
 *   vanish SECONDS right after attach rank 1 computes for SECONDS without a GASNet call, then
 *               returns from main, never having read what rank 0 sent it; rank 0 sends it a
 *               first request at once (looking it up while it still runs) and returns once the
 *               request is out or dropped. Rank 1 never met rank 0, so it tells rank 0 nothing
 *               when it leaves: rank 0 must find out (from the spawner), not wait for good.
 *   banked DIR  rank 0 sends rank 1 two requests whose handler sends no reply (rank 1 banks
 *               their credits: GASNET_AM_CREDITS_SLACK), and rank 1 returns from main once
 *               both ran, having sent rank 0 nothing; once rank 1's process is gone (as in
 *               exited), rank 0 sends it 40 more. Rank 1 must have told rank 0 that it
 *               finished (it heard from rank 0), or rank 0 waits for good for credits.
 * Usage: first_contact_test all | exited DIR | busy SECONDS | vanish SECONDS | banked DIR */
#include <time.h>
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test_util.h"

enum { H_PING = 201, H_PONG = 202, H_NOTE = 203 };
static volatile int pongs;
static volatile int pinged_by;
static volatile int noted;

static void note_handler(gasnet_token_t t, gasnet_handlerarg_t from) {
  (void)t, (void)from;
  noted++;
}

static void ping_handler(gasnet_token_t t, gasnet_handlerarg_t from) {
  pinged_by++;
  GASNET_SAFE(gasnet_AMReplyShort1(t, H_PONG, from));
}

static void pong_handler(gasnet_token_t t, gasnet_handlerarg_t from) {
  (void)t, (void)from;
  pongs++;
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Busy work with no GASNet call: the rank's socket is not read until it ends. */
static volatile double sink;
static void compute(double seconds) {
  double until = now() + seconds, x = 1;
  while (now() < until)
    for (int i = 0; i < 1000; i++) x = x * 1.0000001 + 1e-9;
  sink = x;
}

/* Gone and reaped by its agent, which learns of a rank's end in the same step. */
static int gone(pid_t pid) { return kill(pid, 0) != 0 && errno == ESRCH; }

int main(int argc, char **argv) {
  GASNET_SAFE(gasnet_init(&argc, &argv));
  gasnet_handlerentry_t handlers[] = {{H_PING, (void (*)(void))ping_handler},
                                      {H_PONG, (void (*)(void))pong_handler},
                                      {H_NOTE, (void (*)(void))note_handler}};
  GASNET_SAFE(gasnet_attach(handlers, 3, 65536, 0));
  gasnet_node_t me = gasnet_mynode(), n = gasnet_nodes();
  const char *mode = argc > 1 ? argv[1] : "";
  if (!strcmp(mode, "all")) {
    for (gasnet_node_t k = 1; k < n; k++)
      GASNET_SAFE(gasnet_AMRequestShort1((me + k) % n, H_PING, (gasnet_handlerarg_t)me));
    GASNET_BLOCKUNTIL(pongs == (int)n - 1);
    /* The others' requests to this rank may still be on their way: stay for them. */
    GASNET_BLOCKUNTIL(pinged_by == (int)n - 1);
    printf("first_contact_test: rank %d met %d peers\n", (int)me, (int)n - 1);
  } else if ((!strcmp(mode, "exited") || !strcmp(mode, "banked")) && argc > 2 && n >= 2) {
    bool banked = !strcmp(mode, "banked");
    char path[4096], tmp[4096];
    snprintf(path, sizeof path, "%s/pid", argv[2]);
    if (me == 0 && banked)
      for (int i = 0; i < 2; i++) GASNET_SAFE(gasnet_AMRequestShort1(1, H_NOTE, 0));
    if (me == 1 && banked) GASNET_BLOCKUNTIL(noted == 2);
    if (me == 1) {
      snprintf(tmp, sizeof tmp, "%s/pid.tmp", argv[2]);
      FILE *f = fopen(tmp, "w");
      CHECK(f && fprintf(f, "%d\n", (int)getpid()) > 0 && fclose(f) == 0 && rename(tmp, path) == 0,
            "cannot write %s: %s", path, strerror(errno));
      printf("first_contact_test: rank 1 leaves\n");
      fflush(stdout);
      return test_failures ? 1 : 0;
    }
    if (me == 0) {
      int pid = 0;
      while (pid <= 0) { /* rank 1 writes it at once */
        FILE *f = fopen(path, "r");
        if (f) {
          if (fscanf(f, "%d", &pid) != 1) pid = 0;
          fclose(f);
        }
        if (pid <= 0) usleep(1000);
        /* Banked: the requests must get out, and rank 1's notice in (GASNet progresses only
         * inside its calls). */
        if (banked) GASNET_SAFE(gasnet_AMPoll());
      }
      while (!gone((pid_t)pid)) {
        usleep(1000);
        if (banked) GASNET_SAFE(gasnet_AMPoll());
      }
      for (int i = 0; i < (banked ? 40 : 1); i++)
        GASNET_SAFE(gasnet_AMRequestShort1(1, banked ? H_NOTE : H_PING, 0));
      printf("first_contact_test: rank 0 sent to rank 1 after it left\n");
    }
  } else if (!strcmp(mode, "busy") && argc > 2 && n >= 2) {
    double seconds = atof(argv[2]);
    if (me == 1) {
      compute(seconds);
      GASNET_BLOCKUNTIL(pinged_by == 1);
      printf("first_contact_test: rank 1 computed for %s s, then served rank 0\n", argv[2]);
    } else if (me == 0) {
      GASNET_SAFE(gasnet_AMRequestShort1(1, H_PING, 0));
      GASNET_BLOCKUNTIL(pongs == 1);
      printf("first_contact_test: rank 0 heard from rank 1\n");
    }
  } else if (!strcmp(mode, "vanish") && argc > 2 && n >= 2) {
    if (me == 1) {
      compute(atof(argv[2]));
      printf("first_contact_test: rank 1 leaves without a GASNet call\n");
    } else if (me == 0) {
      GASNET_SAFE(gasnet_AMRequestShort1(1, H_PING, 0));
      printf("first_contact_test: rank 0's request to rank 1 is out or dropped\n");
    }
  } else {
    fprintf(stderr, "usage: first_contact_test all | exited DIR | busy SECONDS | vanish SECONDS "
                    "| banked DIR (all but all need 2 ranks)\n");
    gasnet_exit(2);
  }
  fflush(stdout);
  return test_failures ? 1 : 0;
}
