/* mutual_flood_test.c: every rank floods every other rank with Medium requests of the largest
 * size, each answered by a Medium reply as large, all at once: every rank's receive side is
 * full of requests and replies while it is itself still sending. Nothing may be lost and no
 * rank may wait forever on a peer that waits on it. argv[1]: requests per peer (default 200);
 * argv[2]: payload bytes (default gasnet_AMMaxMedium()). */
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

static volatile int64_t requests, replies;
static gasnet_handler_t h_ask, h_answer;
static size_t size;

static void check(const void *buf, size_t n, gasnet_handlerarg_t v) {
  const uint8_t *b = buf;
  CHECK(n == size, "payload of %zu bytes, expected %zu", n, size);
  CHECK(b[0] == (uint8_t)v && b[n - 1] == (uint8_t)v, "payload bytes differ from %d", (int)v);
}

static void on_ask(gasnet_token_t t, void *buf, size_t n, gasnet_handlerarg_t v) {
  check(buf, n, v);
  requests++;
  GASNET_SAFE(gasnet_AMReplyMedium1(t, h_answer, buf, n, v));
}

static void on_answer(gasnet_token_t t, void *buf, size_t n, gasnet_handlerarg_t v) {
  (void)t;
  check(buf, n, v);
  replies++;
}

int main(int argc, char **argv) {
  GASNET_SAFE(gasnet_init(&argc, &argv));
  gasnet_handlerentry_t table[] = {{0, (void (*)())on_ask}, {0, (void (*)())on_answer}};
  GASNET_SAFE(gasnet_attach(table, 2, GASNET_PAGESIZE, 0));
  h_ask = table[0].index, h_answer = table[1].index;
  int me = gasnet_mynode(), n = gasnet_nodes();
  int per_peer = argc > 1 ? atoi(argv[1]) : 200;
  size = argc > 2 ? (size_t)atol(argv[2]) : gasnet_AMMaxMedium();
  CHECK(per_peer > 0 && size > 0 && size <= gasnet_AMMaxMedium(),
        "usage: mutual_flood_test [requests per peer] [payload bytes, 1 to %zu]",
        (size_t)gasnet_AMMaxMedium());
  uint8_t *payload = malloc(size);
  CHECK(payload, "out of memory");
  test_barrier();
  for (int i = 0; i < per_peer; i++)
    for (int k = 1; k < n; k++) {
      int v = (me + i) & 0x7f;
      memset(payload, v, size);
      GASNET_SAFE(gasnet_AMRequestMedium1((gasnet_node_t)((me + k) % n), h_ask, payload, size, v));
    }
  int64_t expected = (int64_t)per_peer * (n - 1);
  GASNET_BLOCKUNTIL(replies == expected && requests == expected);
  free(payload);
  test_finish("mutual_flood_test");
}
