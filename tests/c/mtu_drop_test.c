/* mtu_drop_test: transfers that start after the path between hosts has shrunk (an interface's
 * or a switch port's MTU lowered mid-job). Ranks attach, say "ready" with their pid, poll until
 * the file GO exists (the test lowers the MTU meanwhile); then rank 0 puts 1 MiB into the last
 * rank's segment in pieces of many sizes up to 64 KiB (full datagrams one way), gets it back
 * whole (full datagrams the other way) and checks the bytes, while the others serve it.
 *
 * Only rank 0 transfers: ranks serving each other's large gets at the same time are
 * mutual_get_test's subject, not this test's.
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
  if (me == 0) {
    int peer = n - 1;
    uint8_t *src = malloc(BYTES), *back = malloc(BYTES);
    fill_pattern(src, BYTES, 7);
    size_t off = 0;
    for (size_t piece = 65536; off < BYTES; piece = piece * 3 % 65536 + 1) { /* full one first */
      size_t len = piece < BYTES - off ? piece : BYTES - off;
      gasnet_put(peer, (uint8_t *)seg[peer].addr + off, src + off, len);
      off += len;
    }
    gasnet_get(back, peer, seg[peer].addr, BYTES);
    size_t bad = check_pattern(back, BYTES, 7);
    CHECK(bad == BYTES, "byte %zu of what rank %d holds for it differs", bad, peer);
  }
  test_finish("mtu_drop_test");
  return 0;
}
