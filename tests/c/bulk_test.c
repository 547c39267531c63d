/* bulk_test.c: every rank puts MiB blocks into its right neighbour's segment, round after round,
 * each round with its own byte pattern, then gets them back, in blocking, nb and nbi forms;
 * after every round each rank checks what landed in its segment. A lost piece, a piece
 * delivered twice late (an old round's bytes over a new one) or a misplaced one shows as a
 * wrong byte. Usage: bulk_test [MIB]   (MiB each rank puts, and gets, in all; default 64) */
#include <string.h>

#include "test_util.h"

enum { BLOCK = 1 << 20, SLOTS = 4 };

int main(int argc, char **argv) {
  GASNET_SAFE(gasnet_init(&argc, &argv));
  int mib = argc > 1 ? atoi(argv[1]) : 64;
  GASNET_SAFE(gasnet_attach(NULL, 0, (uintptr_t)SLOTS * BLOCK, 0));
  int me = gasnet_mynode(), n = gasnet_nodes();
  gasnet_node_t right = (gasnet_node_t)((me + 1) % n), left = (gasnet_node_t)((me + n - 1) % n);
  gasnet_seginfo_t *seg = calloc((size_t)n, sizeof *seg);
  GASNET_SAFE(gasnet_getSegmentInfo(seg, n));
  uint8_t *mine = seg[me].addr, *src = malloc(BLOCK), *back = malloc(BLOCK);
  for (int round = 0; round < mib; round++) {
    int slot = round % SLOTS;
    uint32_t seed = (uint32_t)(round * 7919 + me);
    fill_pattern(src, BLOCK, seed);
    uint8_t *remote = (uint8_t *)seg[right].addr + (size_t)slot * BLOCK;
    switch (round % 3) { /* every form carries the same bytes */
      case 0: gasnet_put_bulk(right, remote, src, BLOCK); break;
      case 1: gasnet_wait_syncnb(gasnet_put_nb_bulk(right, remote, src, BLOCK)); break;
      default:
        gasnet_put_nbi_bulk(right, remote, src, BLOCK / 2);
        gasnet_put_nbi_bulk(right, remote + BLOCK / 2, src + BLOCK / 2, BLOCK / 2);
        gasnet_wait_syncnbi_puts();
    }
    test_barrier();
    /* What my left neighbour put must be here, whole. */
    uint32_t expect = (uint32_t)(round * 7919 + left);
    size_t bad = check_pattern(mine + (size_t)slot * BLOCK, BLOCK, expect);
    CHECK(bad == BLOCK, "round %d: byte %zu of the put from rank %d is wrong", round, bad, left);
    /* And what I put must come back by get. */
    memset(back, 0, BLOCK);
    if (round % 2) gasnet_wait_syncnb(gasnet_get_nb_bulk(back, right, remote, BLOCK));
    else gasnet_get_bulk(back, right, remote, BLOCK);
    bad = check_pattern(back, BLOCK, seed);
    CHECK(bad == BLOCK, "round %d: byte %zu of the get from rank %d is wrong", round, bad, right);
    test_barrier(); /* nobody overwrites a slot before its owner checked it */
    if (test_failures) break;
  }
  printf("bulk_test: rank %d moved %d MiB each way\n", me, mib);
  free(src), free(back), free(seg);
  test_finish("bulk_test");
}
