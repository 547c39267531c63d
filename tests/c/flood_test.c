/* flood_test.c: every rank floods rank 0 with requests (100,000 in all, or argv[1], Short and
 * Medium, rank 0 included) and nothing may be lost; then a flood where every request is
 * answered, so request and reply queues are full at once. */
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

#define DEFAULT_TOTAL 100000
#define ANSWERED_PER_RANK 5000

static volatile int64_t received, payload_sum, replies;
static gasnet_handler_t h_short, h_medium, h_ask, h_answer;

static void on_short(gasnet_token_t t, gasnet_handlerarg_t v) {
  (void)t;
  received++;
  payload_sum += v;
}

static void on_medium(gasnet_token_t t, void *buf, size_t n, gasnet_handlerarg_t v) {
  (void)t;
  int64_t sum = 0;
  for (size_t i = 0; i < n; i++) sum += ((uint8_t *)buf)[i];
  CHECK(sum == (int64_t)n * (v & 0xff), "medium payload sum %lld, expected %lld", (long long)sum,
        (long long)n * (v & 0xff));
  received++;
  payload_sum += v;
}

static void on_ask(gasnet_token_t t, gasnet_handlerarg_t v) {
  GASNET_SAFE(gasnet_AMReplyShort1(t, h_answer, v + 1));
}

static void on_answer(gasnet_token_t t, gasnet_handlerarg_t v) {
  (void)t;
  (void)v;
  replies++;
}

int main(int argc, char **argv) {
  GASNET_SAFE(gasnet_init(&argc, &argv));
  gasnet_handlerentry_t table[] = {{0, (void (*)())on_short}, {0, (void (*)())on_medium},
                                   {0, (void (*)())on_ask}, {0, (void (*)())on_answer}};
  GASNET_SAFE(gasnet_attach(table, 4, GASNET_PAGESIZE, 0));
  h_short = table[0].index, h_medium = table[1].index;
  h_ask = table[2].index, h_answer = table[3].index;
  int me = gasnet_mynode(), n = gasnet_nodes();
  int total = argc > 1 ? atoi(argv[1]) : DEFAULT_TOTAL;
  CHECK(total > 0, "usage: flood_test [number of requests, at least 1], not %s", argv[1]);

  /* Rank r sends its share: messages r, r+n, r+2n, ... of the total. */
  int64_t my_sum = 0, expected_sum = 0;
  uint8_t payload[200];
  for (int m = me; m < total; m += n) {
    gasnet_handlerarg_t v = m;
    my_sum += v;
    if (m % 3 == 0) {
      memset(payload, v & 0xff, sizeof payload);
      GASNET_SAFE(gasnet_AMRequestMedium1(0, h_medium, payload, (size_t)(m % 200), v));
    } else {
      GASNET_SAFE(gasnet_AMRequestShort1(0, h_short, v));
    }
  }
  for (int m = 0; m < total; m++) expected_sum += m;
  (void)my_sum;
  if (me == 0) {
    GASNET_BLOCKUNTIL(received == total);
    CHECK(payload_sum == expected_sum, "sum of values %lld, expected %lld",
          (long long)payload_sum, (long long)expected_sum);
    printf("flood_test: rank 0 received all %d requests\n", total);
  }
  test_barrier();
  CHECK(me == 0 || received == 0, "rank %d received %lld stray requests", me, (long long)received);

  /* Answered flood: everyone asks everyone (itself included) without waiting in between. */
  for (int i = 0; i < ANSWERED_PER_RANK; i++)
    GASNET_SAFE(gasnet_AMRequestShort1((gasnet_node_t)((me + i) % n), h_ask, i));
  GASNET_BLOCKUNTIL(replies == ANSWERED_PER_RANK);
  test_finish("flood_test");
}
