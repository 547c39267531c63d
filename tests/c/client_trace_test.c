/* client_trace_test.c: a client's own trace and statistics lines through the tools header
 * (GASNETT_TRACE_* and GASNETT_STATS_*), as a runtime built over GASNet uses them
 * (tests/test_tracing.py). Each rank: a message at a source line it set; a put made while that
 * line is frozen (traced at the frozen line, not at the put's own); a put after unfreezing (at
 * its own line, which GETSOURCELINE then reports, and which a message gets back after the
 * line was saved, other calls made, and the line restored); a new line in the same file (a
 * NULL file); a call without a line of its own; a mask without P (a put not traced), a
 * message that the mask drops and a forced one it does not; TRACELOCAL set and read back; a
 * statistics callback that writes one line. Rank 0 prints what it saw ("key value" lines).
 * With the argument "badmask" every rank first sets a mask with a letter that is no category
 * (ignored, and said once). */
#include <string.h>

#include "test_util.h"
#include <gasnet_tools.h>

static int puts_made;

static void client_stats(void (*format)(const char *, ...)) {
  format("client stat puts=%d", puts_made);
}

int main(int argc, char **argv) {
  GASNET_SAFE(gasnet_init(&argc, &argv));
  GASNET_SAFE(gasnet_attach(NULL, 0, 65536, 0));
  gasnet_node_t me = gasnet_mynode(), n = gasnet_nodes();
  gasnet_node_t right = (gasnet_node_t)((me + 1) % n);
  gasnet_seginfo_t seg[64];
  GASNET_SAFE(gasnet_getSegmentInfo(seg, (int)n));
  char *remote = seg[right].addr;
  char local[8] = {0};
  if (argc > 1 && strcmp(argv[1], "badmask") == 0) GASNETT_TRACE_SETMASK("GPQ");

  int stats_on = GASNETT_STATS_INIT(client_stats);
  if (me == 0) printf("enabled %d\nstats %d\nmask %s\n", GASNETT_TRACE_ENABLED, stats_on,
                      GASNETT_TRACE_GETMASK());

  GASNETT_TRACE_SETSOURCELINE("user.upc", 10);
  GASNETT_TRACE_PRINTF("hello from rank %d", (int)me);

  GASNETT_TRACE_SETSOURCELINE("user.upc", 20);
  GASNETT_TRACE_FREEZESOURCELINE();
  gasnet_put(right, remote, local, 8); /* as a library's own call: traced at user.upc:20 */
  GASNETT_TRACE_SETSOURCELINE("library.c", 99); /* ignored while frozen */
  GASNETT_TRACE_UNFREEZESOURCELINE();
  puts_made++;

  if (me == 0) printf("put_line %d\n", __LINE__ + 1);
  gasnet_put(right, remote, local, 8);
  puts_made++;
  const char *saved_file = NULL, *file = NULL;
  unsigned int saved_line = 0, line = 0;
  GASNETT_TRACE_GETSOURCELINE(&saved_file, &saved_line); /* saved, as a library does */
  if (me == 0) printf("getsourceline %s %u\n", saved_file, saved_line);
  gasnet_barrier_notify(1, 0);
  gasnet_barrier_wait(1, 0);
  gasnet_get(local, right, remote, 8); /* a call at another line */
  GASNETT_TRACE_GETSOURCELINE(&file, &line);
  if (me == 0) printf("barrier_line %s %u\n", file, line);
  GASNETT_TRACE_SETSOURCELINE(saved_file, saved_line); /* and restored */
  GASNETT_TRACE_PRINTF("restored");
  GASNETT_TRACE_SETSOURCELINE(NULL, 77); /* a new line in the same file */
  GASNETT_TRACE_PRINTF("line 77 of the same file");
  if (me == 0) printf("put_nb_line %d\n", __LINE__ + 1);
  gasnet_handle_t h = gasnet_put_nb(right, remote, local, 8);
  gasnet_wait_syncnb_some(&h, 1); /* a call without a line of its own: traced without one */

  GASNETT_TRACE_SETMASK("BS");
  gasnet_put(right, remote, local, 8); /* P is off: no line */
  puts_made++;
  GASNETT_TRACE_PRINTF("dropped by the mask");
  GASNETT_TRACE_PRINTF_FORCE("forced past the mask");
  if (me == 0) printf("mask_after %s\n", GASNETT_TRACE_GETMASK());
  GASNETT_TRACE_SET_TRACELOCAL(0);
  if (me == 0) printf("tracelocal %d\n", GASNETT_TRACE_GET_TRACELOCAL());
  fflush(stdout);

  gasnet_barrier_notify(0, GASNET_BARRIERFLAG_ANONYMOUS);
  gasnet_barrier_wait(0, GASNET_BARRIERFLAG_ANONYMOUS);
  gasnet_exit(0);
  return 0;
}
