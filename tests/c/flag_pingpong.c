/* flag_pingpong.c: two ranks ping-pong over 8-byte puts into a flag word that each polls and
 * resets, the way OpenSHMEM point-to-point synchronisation is built on GASNet. Compiled with
 * -O0 (SConstruct): the put is then not inlined with a constant size, which is where a
 * memcpy-based put writes the word twice and a reset in between is undone. Every value read
 * must be the next of the sequence.
 *   flag_pingpong ITERS [put|put_nb|put_nbi|put_val|get]
 * "get": each side instead fetches the peer's counter with gasnet_get until it changes. */
#include <inttypes.h>
#include <string.h>

#include "test_util.h"

static gasnet_seginfo_t seg[2];

static void send_value(const char *how, gasnet_node_t peer, uint64_t *remote, uint64_t v) {
  if (strcmp(how, "put_nb") == 0) gasnet_wait_syncnb(gasnet_put_nb(peer, remote, &v, sizeof v));
  else if (strcmp(how, "put_nbi") == 0) {
    gasnet_put_nbi(peer, remote, &v, sizeof v);
    gasnet_wait_syncnbi_puts();
  } else if (strcmp(how, "put_val") == 0) gasnet_put_val(peer, remote, v, sizeof v);
  else gasnet_put(peer, remote, &v, sizeof v);
}

/* Put mode: the flag in my segment is set by the peer and reset by me. */
static int pingpong_puts(const char *how, uint64_t iters) {
  gasnet_node_t me = gasnet_mynode(), peer = (gasnet_node_t)(1 - me);
  volatile uint64_t *flag = seg[me].addr;
  uint64_t *peer_flag = seg[peer].addr;
  const uint64_t last = 2 * iters;
  if (me == 0) send_value(how, peer, peer_flag, 1);
  for (uint64_t expected = me == 0 ? 2 : 1; expected <= last; expected += 2) {
    GASNET_BLOCKUNTIL(*flag != 0);
    uint64_t v = *flag;
    if (v != expected) {
      fprintf(stderr, "rank %d: flag read %" PRIu64 ", expected %" PRIu64
              " (a put was torn or repeated)\n", (int)me, v, expected);
      return 1;
    }
    *flag = 0;
    if (v < last) send_value(how, peer, peer_flag, v + 1);
  }
  return 0;
}

/* Get mode: round i, rank 0 publishes i in its word; rank 1 reads it with 8-byte gets until it
 * sees i, then publishes i in its own word, which rank 0 reads the same way. A get can only
 * see i-1 or i; anything else was assembled from pieces of two values. */
static int torn;

static int peer_reached(uint64_t i) {
  gasnet_node_t me = gasnet_mynode(), peer = (gasnet_node_t)(1 - me);
  uint64_t got;
  gasnet_get(&got, peer, seg[peer].addr, sizeof got);
  if (got != i && got != i - 1 && !torn++)
    fprintf(stderr, "rank %d: get read %" PRIu64 " while %" PRIu64 " or %" PRIu64
            " was expected (a get was torn)\n", (int)me, got, i - 1, i);
  return got == i || torn;
}

static int pingpong_gets(uint64_t iters) {
  volatile uint64_t *mine = seg[gasnet_mynode()].addr;
  for (uint64_t i = 1; i <= iters && !torn; i++) {
    if (gasnet_mynode() == 0) *mine = i;
    GASNET_BLOCKUNTIL(peer_reached(i));
    if (gasnet_mynode() == 1) *mine = i;
  }
  return torn;
}

int main(int argc, char **argv) {
  GASNET_SAFE(gasnet_init(&argc, &argv));
  GASNET_SAFE(gasnet_attach(NULL, 0, GASNET_PAGESIZE, 0));
  if (gasnet_nodes() != 2) {
    fprintf(stderr, "flag_pingpong: needs 2 ranks\n");
    gasnet_exit(2);
  }
  GASNET_SAFE(gasnet_getSegmentInfo(seg, 2));
  memset(seg[gasnet_mynode()].addr, 0, GASNET_PAGESIZE);
  uint64_t iters = argc > 1 ? strtoull(argv[1], NULL, 10) : 1000000;
  const char *how = argc > 2 ? argv[2] : "put";
  test_barrier();
  int bad = strcmp(how, "get") == 0 ? pingpong_gets(iters) : pingpong_puts(how, iters);
  if (bad) gasnet_exit(1);
  test_barrier();
  printf("flag_pingpong: rank %d OK (%" PRIu64 " round trips, %s)\n", (int)gasnet_mynode(),
         iters, how);
  gasnet_exit(0);
}
