/* misuse_test.c: a client that breaks one rule of the API, chosen by argv, so tests can check
 * that the runtime stops it with a message naming the rule instead of hanging or corrupting
 * memory; and "linger SECONDS", "hold FILE" or "chat FILE", a well-behaved job that keeps
 * polling while tests attack it or its launcher (hold and chat: until FILE exists, after
 * saying each rank's pid; chat also sends its neighbour an AM every millisecond). */
#include <stdbool.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "test_util.h"

#define H_BARRIER 200
#define H_CHAT 201

static void barrier_handler(gasnet_token_t token) {
  (void)token;
  gasnet_barrier_notify(0, GASNET_BARRIERFLAG_ANONYMOUS); /* not allowed here */
  gasnet_barrier_wait(0, GASNET_BARRIERFLAG_ANONYMOUS);
}

static volatile long chats;
static void chat_handler(gasnet_token_t token) {
  (void)token;
  chats++;
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void usage(void) {
  fprintf(stderr, "usage: misuse_test internal-handler | barrier-in-handler | double-wait |\n"
                  "       outside-segment | linger SECONDS | hold FILE | chat FILE\n");
  exit(2);
}

int main(int argc, char **argv) {
  GASNET_SAFE(gasnet_init(&argc, &argv));
  if (argc < 2) usage();
  const char *mode = argv[1];
  gasnet_handlerentry_t handlers[] = {{H_BARRIER, (void (*)())barrier_handler},
                                      {H_CHAT, (void (*)())chat_handler}};
  GASNET_SAFE(gasnet_attach(handlers, 2, GASNET_PAGESIZE, 0));
  gasnet_node_t me = gasnet_mynode(), peer = (gasnet_node_t)((me + 1) % gasnet_nodes());
  gasnet_seginfo_t seg[2];
  GASNET_SAFE(gasnet_getSegmentInfo(seg, gasnet_nodes() < 2 ? gasnet_nodes() : 2));
  test_barrier();
  if (strcmp(mode, "internal-handler") == 0) {
    /* Index 2 is the runtime's put handler: it would write wherever the message says. */
    if (me == 0) gasnet_AMRequestShort0(peer, 2);
  } else if (strcmp(mode, "barrier-in-handler") == 0) {
    if (me == 0) GASNET_SAFE(gasnet_AMRequestShort0(peer, H_BARRIER));
    GASNET_BLOCKUNTIL(0); /* polls until the fatal error ends the job */
  } else if (strcmp(mode, "double-wait") == 0) {
    if (me == 0) {
      long value = 7;
      gasnet_handle_t h = gasnet_put_nb(peer, seg[peer].addr, &value, sizeof value);
      gasnet_wait_syncnb(h);
      gasnet_wait_syncnb(h); /* the handle went back to the pool with the first wait */
    }
  } else if (strcmp(mode, "outside-segment") == 0) {
    /* A put 1 MiB past the end of the peer's segment: the debug build's check refuses it; on
     * ibv the target HCA does (a remote access error). */
    if (me == 0) {
      long value = 7;
      gasnet_put(peer, (char *)seg[peer].addr + seg[peer].size + (1 << 20), &value, sizeof value);
    }
    GASNET_BLOCKUNTIL(0);
  } else if ((strcmp(mode, "linger") == 0 || strcmp(mode, "hold") == 0 ||
              strcmp(mode, "chat") == 0) && argc > 2) {
    bool hold = mode[0] != 'l', chat = mode[0] == 'c';
    if (hold) {
      printf("rank %d pid %d attached\n", (int)me, (int)getpid());
      fflush(stdout);
    }
    double until = hold ? 0 : now() + atof(argv[2]);
    while (hold ? access(argv[2], F_OK) != 0 : now() < until) {
      if (chat) GASNET_SAFE(gasnet_AMRequestShort0(peer, H_CHAT));
      gasnet_AMPoll();
      usleep(1000);
    }
    test_barrier();
    printf("rank %d lingered\n", (int)me);
    return 0;
  } else {
    usage();
  }
  test_barrier();
  fprintf(stderr, "rank %d: misuse_test %s was not stopped\n", (int)me, mode);
  return 3;
}
