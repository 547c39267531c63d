/* maxseg_test.c: attaches the largest segment the runtime allows (what many clients do), puts
 * a page into the next rank's segment end and checks it arrived: the whole segment is usable
 * (on ibv: registered). Prints the segment size. */
#include <string.h>

#include "test_util.h"

int main(int argc, char **argv) {
  GASNET_SAFE(gasnet_init(&argc, &argv));
  uintptr_t size = gasnet_getMaxLocalSegmentSize() & ~(uintptr_t)(GASNET_PAGESIZE - 1);
  GASNET_SAFE(gasnet_attach(NULL, 0, size, 0));
  gasnet_node_t me = gasnet_mynode(), n = gasnet_nodes(), right = (me + 1) % n;
  gasnet_seginfo_t *seg = malloc(sizeof *seg * n);
  GASNET_SAFE(gasnet_getSegmentInfo(seg, (int)n));
  uint8_t page[GASNET_PAGESIZE];
  fill_pattern(page, sizeof page, me);
  gasnet_put(right, (uint8_t *)seg[right].addr + seg[right].size - sizeof page, page, sizeof page);
  test_barrier();
  gasnet_node_t left = (me + n - 1) % n;
  size_t bad = check_pattern((uint8_t *)seg[me].addr + seg[me].size - sizeof page, sizeof page,
                             left);
  CHECK(bad == sizeof page, "byte %zu of the page from rank %d is wrong", bad, (int)left);
  printf("maxseg_test: rank %d segment %lu\n", (int)me, (unsigned long)seg[me].size);
  free(seg);
  test_finish("maxseg_test");
}
