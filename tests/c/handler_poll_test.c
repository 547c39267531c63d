/* handler_poll_test.c: handlers that call the try_sync functions (which poll) while their
 * message is being handled. Every request must run exactly once and get exactly one reply:
 * a poll from inside a handler must not run the message at the head of its queue again (in
 * PAR, a lone thread skips the queue locks that used to refuse such a nested poll). Ranks
 * send Short and Medium requests to every rank, their own included. */
#include "test_util.h"

enum { PER_PEER = 2000, MEDIUM_BYTES = 300 };

static gasnet_handler_t h_req, h_medium, h_rep;
static volatile long served, replies;

static void poll_from_handler(void) {
  (void)gasnet_try_syncnbi_all();
  (void)gasnet_try_syncnbi_puts();
  (void)gasnet_try_syncnb(GASNET_INVALID_HANDLE);
}

static void on_req(gasnet_token_t t, gasnet_handlerarg_t v) {
  poll_from_handler();
  served++;
  GASNET_SAFE(gasnet_AMReplyShort1(t, h_rep, v));
}

static void on_medium(gasnet_token_t t, void *buf, size_t n, gasnet_handlerarg_t v) {
  poll_from_handler();
  CHECK(n == MEDIUM_BYTES && ((uint8_t *)buf)[n - 1] == (uint8_t)v, "Medium %d damaged", (int)v);
  served++;
  GASNET_SAFE(gasnet_AMReplyShort1(t, h_rep, v));
}

static void on_rep(gasnet_token_t t, gasnet_handlerarg_t v) {
  (void)t, (void)v;
  poll_from_handler();
  replies++;
}

int main(int argc, char **argv) {
  GASNET_SAFE(gasnet_init(&argc, &argv));
  gasnet_handlerentry_t table[] = {{0, (void (*)())on_req}, {0, (void (*)())on_medium},
                                   {0, (void (*)())on_rep}};
  GASNET_SAFE(gasnet_attach(table, 3, 0, 0));
  h_req = table[0].index, h_medium = table[1].index, h_rep = table[2].index;
  int n = gasnet_nodes(), me = gasnet_mynode();
  uint8_t payload[MEDIUM_BYTES];
  test_barrier();
  for (int i = 0; i < PER_PEER; i++)
    for (int k = 0; k < n; k++) {
      gasnet_node_t dest = (gasnet_node_t)((me + k) % n);
      if (i % 2) {
        for (int b = 0; b < MEDIUM_BYTES; b++) payload[b] = (uint8_t)i;
        GASNET_SAFE(gasnet_AMRequestMedium1(dest, h_medium, payload, MEDIUM_BYTES, i));
      } else {
        GASNET_SAFE(gasnet_AMRequestShort1(dest, h_req, i));
      }
    }
  GASNET_BLOCKUNTIL(replies >= (long)PER_PEER * n);
  test_barrier(); /* every rank has all its replies: every request everywhere was served */
  CHECK(replies == (long)PER_PEER * n, "%ld replies for %ld requests", replies, (long)PER_PEER * n);
  CHECK(served == (long)PER_PEER * n, "served %ld requests, sent %ld", served, (long)PER_PEER * n);
  test_finish("handler_poll_test");
}
