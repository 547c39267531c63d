/* null_args_test.c: a program that gives the runtime no argc and argv, as some clients do:
 * gasnet_init(NULL, NULL), or gex_Client_Init(..., NULL, NULL, 0) when NULL_ARGS_API=ex. Each
 * rank sends its right neighbour a Short and prints "null_args_test: rank R of N OK" once its
 * own has arrived. */
#include <gasnet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static volatile int arrived;
static void ping(gasnet_token_t token) { (void)token, arrived = 1; }
static void ex_ping(gex_Token_t token) { (void)token, arrived = 1; }

int main(void) {
  const char *api = getenv("NULL_ARGS_API");
  gex_Rank_t me, n;
  if (api && !strcmp(api, "ex")) {
    gex_Client_t client;
    gex_EP_t ep;
    gex_TM_t tm;
    gex_Segment_t seg;
    if (gex_Client_Init(&client, &ep, &tm, "NULL_ARGS", NULL, NULL, 0) != GASNET_OK) return 1;
    if (gex_Segment_Attach(&seg, tm, GASNET_PAGESIZE) != GASNET_OK) return 1;
    gex_AM_Entry_t table[] = {{0, (gex_AM_Fn_t)ex_ping, GEX_FLAG_AM_SHORT | GEX_FLAG_AM_REQUEST,
                               0, NULL, "ex_ping"}};
    if (gex_EP_RegisterHandlers(ep, table, 1) != GASNET_OK) return 1;
    me = gex_TM_QueryRank(tm), n = gex_TM_QuerySize(tm);
    gex_Event_Wait(gex_Coll_BarrierNB(tm, 0));
    gex_AM_RequestShort0(tm, (me + 1) % n, table[0].gex_index, 0);
  } else {
    gasnet_handlerentry_t table[] = {{201, (void (*)())ping}};
    if (gasnet_init(NULL, NULL) != GASNET_OK) return 1;
    if (gasnet_attach(table, 1, GASNET_PAGESIZE, 0) != GASNET_OK) return 1;
    me = gasnet_mynode(), n = gasnet_nodes();
    gasnet_AMRequestShort0((gasnet_node_t)((me + 1) % n), 201);
  }
  GASNET_BLOCKUNTIL(arrived);
  printf("null_args_test: rank %u of %u OK\n", (unsigned)me, (unsigned)n);
  fflush(stdout);
  gasnet_barrier(0, GASNET_BARRIERFLAG_ANONYMOUS);
  gasnet_exit(0);
}
