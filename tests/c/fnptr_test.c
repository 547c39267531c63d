/* fnptr_test: ranks that send each other function pointers, as some PGAS clients do (a
 * remote procedure named by its address). Every rank reports where a function of the program,
 * a function of libc and a variable of the program lie; when all ranks agree, each rank sends
 * its peer pointers to a function of the program and to libc's strlen in an AM, and the peer
 * calls through them. Prints "fnptr_test: addresses same" or "... differ" (then nothing is
 * called: a call would land anywhere). Built as a PIE, as Debian's compilers build programs. */
#include <gasnet_handler.h>

#include "test_util.h"

static volatile int calls, replies;
static int marker;

static int remote_procedure(int x) { return 3 * x + 1; }

typedef int (*procedure_t)(int);
typedef size_t (*length_t)(const char *);

static void run_inner(gasnet_token_t token, void *fn, void *len, gasnet_handlerarg_t x) {
  int got = ((procedure_t)fn)(x) + (int)((length_t)len)("four");
  SHORT_REP(1, 1, (token, 201, got));
}
SHORT_HANDLER(run, 3, 5, (token, UNPACK(a0), UNPACK(a1), a2),
              (token, UNPACK2(a0, a1), UNPACK2(a2, a3), a4));
static void on_reply(gasnet_token_t token, gasnet_handlerarg_t got) {
  (void)token;
  CHECK(got == 3 * 14 + 1 + 4, "the peer's call through my pointers returned %d", (int)got);
  replies++;
}

enum { _hidx_run = 200 };

int main(int argc, char **argv) {
  GASNET_SAFE(gasnet_init(&argc, &argv));
  gasnet_handlerentry_t table[] = {gasneti_handler_tableentry_with_bits(run),
                                   {201, (void (*)())on_reply}};
  GASNET_SAFE(gasnet_attach(table, 2, GASNET_PAGESIZE, 0));
  gasnet_coll_init(NULL, 0, NULL, 0, 0);
  int me = gasnet_mynode(), n = gasnet_nodes();
  uint64_t mine[3] = {(uint64_t)(uintptr_t)remote_procedure, (uint64_t)(uintptr_t)strlen,
                      (uint64_t)(uintptr_t)&marker};
  uint64_t *all = calloc((size_t)n * 3, sizeof *all);
  gasnet_coll_gather_all(GASNET_TEAM_ALL, all, mine, sizeof mine,
                         GASNET_COLL_LOCAL | GASNET_COLL_IN_ALLSYNC | GASNET_COLL_OUT_ALLSYNC);
  int same = 1;
  for (int r = 0; r < n; r++)
    for (int k = 0; k < 3; k++) same &= all[3 * r + k] == mine[k];
  if (me == 0) printf("fnptr_test: addresses %s\n", same ? "same" : "differ");
  if (same && n > 1) {
    gasnet_node_t peer = (gasnet_node_t)((me + 1) % n);
    SHORT_REQ(3, 5, (peer, gasneti_handleridx(run), PACK(remote_procedure), PACK(strlen), 14));
    GASNET_BLOCKUNTIL(replies == 1);
  }
  (void)calls;
  test_finish("fnptr_test");
}
