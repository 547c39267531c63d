/* diagnostics_test: the runtime's self-test as GASNet 1.x's testinternal drives it.
 *   diagnostics_test ITERS THREADS [SECTIONS [nohandlers]]
 * The table of gasnett_diagnostic_gethandlers is registered unless "nohandlers"; every rank
 * prints "errors N" and the job's code is 1 when any rank counted a failure. */
#include <gasnet.h>
#include <gasnet_tools.h>

#include <stdbool.h>

#include "test_util.h"

int main(int argc, char **argv) {
  GASNET_SAFE(gasnet_init(&argc, &argv));
  bool handlers = !(argc > 4 && strcmp(argv[4], "nohandlers") == 0);
  gasnet_handlerentry_t *table = NULL;
  int count = 0;
  if (handlers) gasnett_diagnostic_gethandlers(&table, &count);
  GASNET_SAFE(gasnet_attach(table, count, 1 << 20, 0));
  int iters = argc > 1 ? atoi(argv[1]) : 100, threads = argc > 2 ? atoi(argv[2]) : 2;
  const char *sections = argc > 3 ? argv[3] : NULL;
  gasnet_seginfo_t *seg = calloc(gasnet_nodes(), sizeof *seg);
  GASNET_SAFE(gasnet_getSegmentInfo(seg, (int)gasnet_nodes()));
  int errors = gasnett_run_diagnostics(iters, threads, sections, seg);
  printf("errors %d\n", errors);
  fflush(stdout);
  gasnet_barrier(0, GASNET_BARRIERFLAG_ANONYMOUS);
  gasnet_exit(errors ? 1 : 0);
  return 0;
}
