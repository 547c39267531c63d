/* mtu_drop_test: transfers that start after the path between hosts has shrunk (an interface's
 * or a switch port's MTU lowered mid-job). Ranks attach, say "ready" with their pid, poll until
 * the file GO exists (the test lowers the MTU meanwhile), then each puts 1 MiB to its right
 * neighbour in pieces of many sizes up to 64 KiB, gets it back whole and checks the bytes.
 *
 * usage: mtu_drop_test GO */
#include <string.h>
#include <unistd.h>

#include "test_util.h"

enum { BYTES = 1 << 20 };

int main(int argc, char **argv) {
  GASNET_SAFE(gasnet_init(&argc, &argv));
  if (argc < 2) {
    fprintf(stderr, "usage: mtu_drop_test GO\n");
    gasnet_exit(2);
  }
  GASNET_SAFE(gasnet_attach(NULL, 0, 2 * BYTES, 0));
  int me = (int)gasnet_mynode(), n = (int)gasnet_nodes();
  gasnet_seginfo_t *seg = malloc((size_t)n * sizeof *seg);
  GASNET_SAFE(gasnet_getSegmentInfo(seg, n));
  test_barrier();
  printf("ready rank %d pid %d\n", me, (int)getpid());
  fflush(stdout);
  while (access(argv[1], F_OK) != 0) { /* the peers keep being served meanwhile */
    gasnet_AMPoll();
    usleep(1000);
  }
  /* No barrier here: a peer stopped meanwhile (the test's other case) must meet full-size
   * datagrams in flight, not a barrier's small ones. */
  int right = (me + 1) % n;
  uint8_t *src = malloc(BYTES), *back = malloc(BYTES);
  fill_pattern(src, BYTES, (uint32_t)me);
  size_t off = 0;
  for (size_t piece = 65536; off < BYTES; piece = piece * 3 % 65536 + 1) { /* a full one first */
    size_t len = piece < BYTES - off ? piece : BYTES - off;
    gasnet_put(right, (uint8_t *)seg[right].addr + off, src + off, len);
    off += len;
  }
  gasnet_get(back, right, seg[right].addr, BYTES);
  size_t bad = check_pattern(back, BYTES, (uint32_t)me);
  CHECK(bad == BYTES, "byte %zu of what rank %d holds for it differs", bad, right);
  test_finish("mtu_drop_test");
  return 0;
}
