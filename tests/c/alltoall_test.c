/* alltoall_test.c: every rank sends every rank (itself included) a Short and a Medium request
 * per round, starting with its right neighbour so that no rank is everyone's first target; each
 * request is answered, and every rank checks that it served each peer exactly the messages that
 * peer sent, with their payloads intact. The scale tests run it over 512 ranks: a rank talks to
 * all the others, so every peer's address and connection state is used.
 *   alltoall_test [ROUNDS]   (default 4) */
#include <string.h>

#include "test_util.h"

enum { MEDIUM_BYTES = 64 };

static gasnet_handler_t h_short, h_medium, h_reply;
static int *served; /* [src]: requests served from src (each round: one Short, one Medium) */
static volatile long replies;

static void count_from(gasnet_token_t t, int round) {
  gasnet_node_t src;
  GASNET_SAFE(gasnet_AMGetMsgSource(t, &src));
  CHECK(served[src] / 2 == round, "from rank %d: a message of round %d during round %d",
        (int)src, round, served[src] / 2);
  served[src]++;
}

static void on_short(gasnet_token_t t, gasnet_handlerarg_t round) {
  count_from(t, round);
  GASNET_SAFE(gasnet_AMReplyShort0(t, h_reply));
}

static void on_medium(gasnet_token_t t, void *buf, size_t n, gasnet_handlerarg_t round,
                      gasnet_handlerarg_t src) {
  CHECK(n == MEDIUM_BYTES && check_pattern(buf, n, (uint32_t)(src * 7919 + round)) == n,
        "Medium of round %d from rank %d damaged (%zu bytes)", (int)round, (int)src, n);
  count_from(t, round);
  GASNET_SAFE(gasnet_AMReplyShort0(t, h_reply));
}

static void on_reply(gasnet_token_t t) {
  (void)t;
  replies++;
}

int main(int argc, char **argv) {
  GASNET_SAFE(gasnet_init(&argc, &argv));
  gasnet_handlerentry_t table[] = {{0, (void (*)())on_short}, {0, (void (*)())on_medium},
                                   {0, (void (*)())on_reply}};
  GASNET_SAFE(gasnet_attach(table, 3, 0, 0));
  h_short = table[0].index, h_medium = table[1].index, h_reply = table[2].index;
  int rounds = argc > 1 ? atoi(argv[1]) : 4;
  if (rounds < 1) {
    fprintf(stderr, "alltoall_test: ROUNDS %s: must be a whole number, 1 or more\n", argv[1]);
    gasnet_exit(2);
  }
  int n = gasnet_nodes(), me = gasnet_mynode();
  served = calloc((size_t)n, sizeof *served);
  uint8_t payload[MEDIUM_BYTES];
  test_barrier();
  for (int r = 0; r < rounds; r++) {
    fill_pattern(payload, MEDIUM_BYTES, (uint32_t)(me * 7919 + r));
    for (int k = 1; k <= n; k++) {
      gasnet_node_t dest = (gasnet_node_t)((me + k) % n);
      GASNET_SAFE(gasnet_AMRequestShort1(dest, h_short, r));
      GASNET_SAFE(gasnet_AMRequestMedium2(dest, h_medium, payload, MEDIUM_BYTES, r, me));
    }
    GASNET_BLOCKUNTIL(replies == 2L * n * (r + 1));
    test_barrier(); /* every rank's round r was served everywhere before round r + 1 starts */
  }
  for (int src = 0; src < n; src++)
    CHECK(served[src] == 2 * rounds, "served %d messages from rank %d, expected %d",
          served[src], src, 2 * rounds);
  test_finish("alltoall_test");
}
