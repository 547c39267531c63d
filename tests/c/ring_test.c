/* ring_test.c: a nearest-neighbour program that talks to its right-hand neighbour only (no
 * barrier, whose rounds would reach further ranks), so the connections it uses form a ring:
 * the connect-file loop records and replays them. Each round puts a value into the right
 * neighbour's segment, then tells it with a Short AM; a rank waits for its left neighbour's
 * notice of the same round and checks the value. With "putonly" the notice is a second put
 * (a flag word, after the value's put completed), so the right neighbour sees no message from
 * this rank at all: only RDMA. Usage: ring_test [rounds [putonly]] */
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

enum { H_DONE = 200 };
static volatile int64_t heard; /* rounds the left neighbour finished */

static void done_handler(gasnet_token_t t, gasnet_handlerarg_t round) {
  (void)t;
  heard = round;
}

int main(int argc, char **argv) {
  GASNET_SAFE(gasnet_init(&argc, &argv));
  gasnet_handlerentry_t handlers[] = {{H_DONE, (void (*)(void))done_handler}};
  GASNET_SAFE(gasnet_attach(handlers, 1, 65536, 0));
  int rounds = argc > 1 ? atoi(argv[1]) : 100;
  int putonly = argc > 2 && !strcmp(argv[2], "putonly");
  gasnet_node_t me = gasnet_mynode(), n = gasnet_nodes();
  gasnet_node_t right = (me + 1) % n, left = (me + n - 1) % n;
  gasnet_seginfo_t *seg = malloc(sizeof *seg * n);
  GASNET_SAFE(gasnet_getSegmentInfo(seg, (int)n));
  uint64_t *mine = seg[me].addr;
  /* A rank runs at most n rounds ahead of its right neighbour (the ring couples them), so 2n
   * slots keep every value until it was checked. */
  int slots = 2 * (int)n;
  for (int r = 1; r <= rounds; r++) {
    uint64_t value = ((uint64_t)me << 32) | (uint64_t)r;
    gasnet_put(right, (uint64_t *)seg[right].addr + r % slots, &value, sizeof value);
    if (putonly) { /* the flag word sits past the value slots */
      int64_t flag = r;
      gasnet_put(right, (int64_t *)seg[right].addr + slots, &flag, sizeof flag);
      volatile int64_t *mine_flag = (volatile int64_t *)seg[me].addr + slots;
      GASNET_BLOCKUNTIL(*mine_flag >= r);
    } else {
      GASNET_SAFE(gasnet_AMRequestShort1(right, H_DONE, r));
      GASNET_BLOCKUNTIL(heard >= r);
    }
    uint64_t expect = ((uint64_t)left << 32) | (uint64_t)r;
    CHECK(mine[r % slots] == expect, "round %d: found %llx, expected %llx", r,
          (unsigned long long)mine[r % slots], (unsigned long long)expect);
  }
  /* Every rank returns on its own: the job ends when all have (no exit notice, no barrier). */
  printf("ring_test: rank %d %s\n", (int)me, test_failures ? "FAILED" : "OK");
  fflush(stdout);
  free(seg);
  return test_failures ? 1 : 0;
}
