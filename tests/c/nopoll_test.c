/* nopoll_test: GASNet 1.x's gasnet_try_syncnb_nopoll, _some_nopoll and _all_nopoll check
 * handles without serving the network. Each rank gets a word from its peer over the AM path
 * (run with every rank its own supernode): the reply can only run when this rank polls, so the
 * nopoll forms report GASNET_ERR_NOT_READY however often they are asked, and GASNET_OK once a
 * gasnet_AMPoll has run the reply. Handles completed when issued (GASNET_INVALID_HANDLE) are
 * ready at once. */
#include "test_util.h"

static gasnet_seginfo_t *seg;

static int nopoll_form(int form, gasnet_handle_t *h) {
  switch (form) {
    case 0: return gasnet_try_syncnb_nopoll(h[0]);
    case 1: return gasnet_try_syncnb_some_nopoll(h, 2);
    default: return gasnet_try_syncnb_all_nopoll(h, 2);
  }
}

int main(int argc, char **argv) {
  GASNET_SAFE(gasnet_init(&argc, &argv));
  GASNET_SAFE(gasnet_attach(NULL, 0, GASNET_PAGESIZE, 0));
  seg = calloc(gasnet_nodes(), sizeof *seg);
  GASNET_SAFE(gasnet_getSegmentInfo(seg, gasnet_nodes()));
  gasnet_node_t me = gasnet_mynode(), peer = (gasnet_node_t)((me + 1) % gasnet_nodes());
  static const char *const names[] = {"gasnet_try_syncnb_nopoll", "gasnet_try_syncnb_some_nopoll",
                                      "gasnet_try_syncnb_all_nopoll"};
  *(uint64_t *)seg[me].addr = 1000 + me;
  gasnet_handle_t none[2] = {GASNET_INVALID_HANDLE, GASNET_INVALID_HANDLE};
  for (int form = 0; form < 3; form++)
    CHECK(nopoll_form(form, none) == GASNET_OK, "%s of invalid handles: not ready", names[form]);
  test_barrier();
  gasnet_nodeinfo_t *info = calloc(gasnet_nodes(), sizeof *info);
  GASNET_SAFE(gasnet_getNodeInfo(info, gasnet_nodes()));
  int remote = info[peer].supernode != info[me].supernode;
  for (int form = 0; form < 3; form++) {
    uint64_t got[2] = {0, 0};
    gasnet_handle_t h[2];
    h[0] = gasnet_get_nb(&got[0], peer, seg[peer].addr, sizeof got[0]);
    h[1] = gasnet_get_nb(&got[1], peer, seg[peer].addr, sizeof got[1]);
    if (remote) {
      CHECK(h[0] != GASNET_INVALID_HANDLE, "a get over the AM path completed when issued");
      long asked = 0;
      for (; asked < 200000; asked++)
        if (nopoll_form(form, h) == GASNET_OK) break;
      CHECK(asked == 200000, "%s reported the get done after %ld calls without a poll",
            names[form], asked);
    }
    while (nopoll_form(form, h) != GASNET_OK) gasnet_AMPoll();
    if (form == 0) h[0] = GASNET_INVALID_HANDLE; /* synchronized: the handle is spent */
    gasnet_wait_syncnb_all(h, 2);                /* whatever the single and some forms left */
    CHECK(got[0] == 1000u + peer && got[1] == 1000u + peer, "%s: got %llu and %llu",
          names[form], (unsigned long long)got[0], (unsigned long long)got[1]);
  }
  free(info);
  test_finish("nopoll_test");
}
