/* tools_client: a GASNet client that uses the tools from its conduit library (gasnet.h first,
 * then gasnet_tools.h; no -lgasnet_tools).
 *   tools_client          timers, atomics and an AM counted with a tools atomic; "OK" per rank
 *   tools_client fatal    rank 0 calls gasnett_fatalerror: the whole job ends, naming it */
#include <gasnet.h>
#include <gasnet_tools.h>

#include "test_util.h"

static gasnett_atomic_t arrivals = gasnett_atomic_init(0);
static void on_hello(gasnet_token_t t) { (void)t, gasnett_atomic_increment(&arrivals, 0); }

int main(int argc, char **argv) {
  GASNET_SAFE(gasnet_init(&argc, &argv));
  gasnet_handlerentry_t table[] = {{0, (void (*)())on_hello}};
  GASNET_SAFE(gasnet_attach(table, 1, GASNET_PAGESIZE, 0));
  gasnett_backtrace_init(argv[0]);
  if (argc > 1 && strcmp(argv[1], "fatal") == 0) {
    if (gasnet_mynode() == 0) gasnett_fatalerror("tools_client gives up on rank %d", 0);
    GASNET_BLOCKUNTIL(0); /* the others wait to be ended by rank 0's error */
  }
  CHECK(strcmp(GASNETT_THREAD_MODEL_STR, GASNETI_THREAD_MODEL) == 0 ||
            strcmp(GASNETI_THREAD_MODEL, "PARSYNC") == 0,
        "tools model %s, gasnet model %s", GASNETT_THREAD_MODEL_STR, GASNETI_THREAD_MODEL);
  CHECK(GASNETT_RELEASE_VERSION_MAJOR == GASNET_RELEASE_VERSION_MAJOR, "release");
  gasnett_tick_t start = gasnett_ticks_now();
  test_barrier();
  for (gasnet_node_t peer = 0; peer < gasnet_nodes(); peer++)
    GASNET_SAFE(gasnet_AMRequestShort0(peer, table[0].index));
  GASNET_BLOCKUNTIL(gasnett_atomic_read(&arrivals, GASNETT_ATOMIC_ACQ) == gasnet_nodes());
  CHECK(gasnett_ticks_to_ns(gasnett_ticks_now() - start) > 0, "the clock moved");
  CHECK(gasnett_cpu_count() >= 1 && gasnett_getPhysMemSz(0) > 0, "system queries");
  test_finish("tools_client");
  return 0;
}
