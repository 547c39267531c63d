/* mutual_get_test.c: ranks in pairs (0-1, 2-3, ...) get large blocks from each other at the
 * same time into memory outside their segments, so each block comes back as Medium replies
 * that the partner's request handler sends while its own buffers fill with the replies to
 * its own gets, which it may not deliver inside that handler. With small datagrams (each reply
 * in dozens of pieces) both ranks once stalled for good, each pool full of the other's
 * undelivered pieces, neither taking nor acknowledging the other's datagrams. Every byte is
 * checked. argv[1]: rounds (default 8); argv[2]: KiB per get (default 1024). */
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

int main(int argc, char **argv) {
  GASNET_SAFE(gasnet_init(&argc, &argv));
  int rounds = argc > 1 ? atoi(argv[1]) : 8;
  size_t bytes = (size_t)(argc > 2 ? atoi(argv[2]) : 1024) * 1024;
  if (rounds < 1 || bytes == 0) {
    fprintf(stderr, "usage: mutual_get_test [ROUNDS] [KIB]\n");
    gasnet_exit(2);
  }
  GASNET_SAFE(gasnet_attach(NULL, 0, bytes + 4096, 0));
  int me = (int)gasnet_mynode(), n = (int)gasnet_nodes();
  gasnet_seginfo_t *seg = malloc((size_t)n * sizeof *seg);
  GASNET_SAFE(gasnet_getSegmentInfo(seg, n));
  fill_pattern(seg[me].addr, bytes, (uint32_t)me + 1);
  int partner = me ^ 1;
  uint8_t *into = malloc(bytes); /* not in the segment: the get comes back as Medium replies */
  test_barrier();
  if (partner < n) {
    for (int r = 0; r < rounds; r++) {
      memset(into, 0, bytes);
      gasnet_get_bulk(into, partner, seg[partner].addr, bytes);
      size_t bad = check_pattern(into, bytes, (uint32_t)partner + 1);
      CHECK(bad == bytes, "round %d: byte %zu got from rank %d differs", r, bad, partner);
    }
  }
  test_barrier();
  free(into);
  test_finish("mutual_get_test");
  return 0;
}
