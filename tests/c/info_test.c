/* info_test.c: segment and node information, size limits, handler registration rules, error
 * names, gasnet_getenv, and reading peers' segments through the PSHM offsets. */
#include <string.h>

#include "test_util.h"

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define CONDUIT_MACRO(name) CAT(GASNET_CONDUIT_, name)

static void on_nothing(gasnet_token_t t) { (void)t; }

int main(int argc, char **argv) {
  CHECK(gasnet_attach(NULL, 0, 0, 0) == GASNET_ERR_NOT_INIT, "attach before init accepted");
  GASNET_SAFE(gasnet_init(&argc, &argv));
  CHECK(gasnet_init(&argc, &argv) != GASNET_OK, "a second gasnet_init succeeded");
  uintptr_t local = gasnet_getMaxLocalSegmentSize(), global = gasnet_getMaxGlobalSegmentSize();
  if (gasnet_mynode() == 0) printf("info_test: max local segment %lu\n", (unsigned long)local);
  CHECK(local % GASNET_PAGESIZE == 0 && global % GASNET_PAGESIZE == 0, "limits not page-sized");
  CHECK(global <= local && global >= 16 * GASNET_PAGESIZE, "global %lu, local %lu",
        (unsigned long)global, (unsigned long)local);

  /* Reserved indices are refused; fixed ones are kept; 0 gets the lowest free client index. */
  gasnet_handlerentry_t bad[] = {{5, (void (*)())on_nothing}};
  CHECK(gasnet_attach(bad, 1, 0, 0) == GASNET_ERR_BAD_ARG, "reserved index accepted");
  CHECK(gasnet_attach(NULL, 0, 1000, 0) == GASNET_ERR_BAD_ARG, "unaligned segsize accepted");
  gasnet_handlerentry_t table[] = {{0, (void (*)())on_nothing}, {128, (void (*)())on_nothing},
                                   {0, (void (*)())on_nothing}};
  uintptr_t segsize = 64 * GASNET_PAGESIZE;
  GASNET_SAFE(gasnet_attach(table, 3, segsize, 0));
  CHECK(table[0].index == 129 && table[1].index == 128 && table[2].index == 130,
        "assigned %d %d %d", table[0].index, table[1].index, table[2].index);
  CHECK(gasnet_attach(table, 3, segsize, 0) != GASNET_OK, "a second attach succeeded");

  int me = gasnet_mynode(), n = gasnet_nodes();
  gasnet_seginfo_t *seg = calloc((size_t)n + 1, sizeof *seg);
  seg[n].size = 12345; /* beyond numentries: untouched */
  GASNET_SAFE(gasnet_getSegmentInfo(seg, n));
  for (int r = 0; r < n; r++)
    CHECK(seg[r].size == segsize && (uintptr_t)seg[r].addr % GASNET_PAGESIZE == 0,
          "rank %d segment %p size %lu", r, seg[r].addr, (unsigned long)seg[r].size);
  CHECK(seg[n].size == 12345, "getSegmentInfo wrote past numentries");

  /* Each rank writes its rank number into its segment; supernode peers read it directly. */
  memset(seg[me].addr, me + 1, segsize);
  test_barrier();
  gasnet_nodeinfo_t *info = calloc((size_t)n, sizeof *info);
  GASNET_SAFE(gasnet_getNodeInfo(info, n));
  const char *maxsize_env = gasnet_getenv("GASNET_SUPERNODE_MAXSIZE");
  int maxsize = maxsize_env && atoi(maxsize_env) > 0 ? atoi(maxsize_env) : n;
  int peers = 0;
  for (int r = 0; r < n; r++) {
    CHECK(info[r].host == 0, "rank %d on host %d", r, info[r].host);
    CHECK((int)info[r].supernode == r / maxsize, "rank %d in supernode %d, expected %d", r,
          info[r].supernode, r / maxsize);
    if (info[r].supernode == info[me].supernode && r != me) {
      const uint8_t *p = (const uint8_t *)((uintptr_t)seg[r].addr + info[r].offset);
      CHECK(p[0] == r + 1 && p[segsize - 1] == r + 1, "peer %d's segment reads %d", r, p[0]);
      peers++;
    }
  }
  int snode_size = n - (me / maxsize) * maxsize;
  if (snode_size > maxsize) snode_size = maxsize;
  CHECK(peers == snode_size - 1, "saw %d supernode peers, expected %d", peers, snode_size - 1);
  CHECK(strcmp(gasnet_ErrorName(GASNET_ERR_BARRIER_MISMATCH), "GASNET_ERR_BARRIER_MISMATCH") == 0,
        "error name %s", gasnet_ErrorName(GASNET_ERR_BARRIER_MISMATCH));
  CHECK(strlen(gasnet_ErrorDesc(GASNET_ERR_NOT_READY)) > 0, "empty error description");
  CHECK(gasnet_AMMaxMedium() >= 512 && gasnet_AMMaxLongRequest() >= 512, "AM limits too small");
  CHECK(strstr(GASNET_CONFIG_STRING, "CONDUIT=" GASNET_CONDUIT_NAME_STR) != NULL, "config %s",
        GASNET_CONFIG_STRING);
  /* GASNET_CONDUIT_<NAME> (NAME as in GASNET_CORE_NAME) is 1: a conduit without it does not
   * compile this. */
  CHECK(CONDUIT_MACRO(GASNET_CORE_NAME) == 1, "GASNET_CONDUIT_%s", GASNET_CORE_NAME_STR);
  CHECK(GASNET_PSHM == 1 && GASNET_SEGMENT_FAST == 1, "config macros");
  CHECK(gasnet_set_waitmode(GASNET_WAIT_SPINBLOCK) == GASNET_OK, "set_waitmode failed");
  CHECK(gasnet_set_waitmode(99) == GASNET_ERR_BAD_ARG, "bad wait mode accepted");
  free(info);
  free(seg);
  test_finish("info_test");
}
