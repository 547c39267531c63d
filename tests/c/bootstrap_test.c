/* bootstrap_test.c: the bootstrap's exchange carries GASNETI_BOOTSTRAP_BLOB_MAX bytes per rank
 * intact through every spawner, and the core refuses one byte more ("too-big"). Uses the
 * runtime's internal bootstrap interface (csrc/core/bootstrap.h). */
#include <string.h>

#include "bootstrap.h"
#include "test_util.h"

int main(int argc, char **argv) {
  GASNET_SAFE(gasnet_init(&argc, &argv));
  int me = (int)gasnet_mynode(), n = (int)gasnet_nodes();
  size_t len = GASNETI_BOOTSTRAP_BLOB_MAX + (argc > 1 && strcmp(argv[1], "too-big") == 0);
  uint8_t *mine = malloc(len), *all = malloc(len * (size_t)n);
  fill_pattern(mine, len, (uint32_t)me + 1);
  gasneti_bootstrap_exchange(mine, len, all);
  for (int r = 0; r < n; r++) {
    size_t bad = check_pattern(all + (size_t)r * len, len, (uint32_t)r + 1);
    CHECK(bad == len, "rank %d's blob differs at byte %zu", r, bad);
  }
  GASNET_SAFE(gasnet_attach(NULL, 0, GASNET_PAGESIZE, 0));
  free(mine);
  free(all);
  test_finish("bootstrap_test");
  return 0;
}
