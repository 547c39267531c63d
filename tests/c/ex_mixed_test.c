/* ex_mixed_test.c: one program using GASNet-1 and GASNet-EX together, as hybrid clients do.
 *   ex_mixed_test gasnet1   gasnet_init/gasnet_attach, then the EX objects through
 *                           gasnet_QueryGexObjects and EX handlers registered beside GASNet-1's
 *   ex_mixed_test ex        gex_Client_Init(GEX_FLAG_USES_GASNET1) and gex_Segment_Attach, then
 *                           GASNet-1's queries and calls
 * Either way: AMs of one API to handlers of the other, replies across APIs, puts of one read by
 * gets of the other, a GASNet-1 handle waited as an event and an event synced as a handle,
 * barriers of both APIs one after the other. */
#include <gasnet.h>
#include <stdbool.h>
#include <string.h>

static int failures;
#define CHECK(cond, ...)                                                                       \
  do {                                                                                         \
    if (!(cond)) {                                                                             \
      failures++;                                                                              \
      fprintf(stderr, "rank %d: CHECK failed at %s:%d: %s: ", (int)gasnet_mynode(), __FILE__, \
              __LINE__, #cond);                                                                \
      fprintf(stderr, __VA_ARGS__);                                                            \
      fputc('\n', stderr);                                                                     \
    }                                                                                          \
  } while (0)
#define SAFE(call)                                                                    \
  do {                                                                                \
    int rc_ = (call);                                                                 \
    if (rc_ != GASNET_OK) {                                                           \
      fprintf(stderr, "%s failed: %s\n", #call, gasnet_ErrorName(rc_));              \
      gasnet_exit(1);                                                                 \
    }                                                                                 \
  } while (0)

static gex_Client_t client;
static gex_EP_t ep;
static gex_TM_t tm;
static gex_Segment_t seg;
static volatile int g1_requests, g1_replies, ex_requests, ex_replies;
static gex_AM_Index_t h_g1_req, h_g1_rep, h_ex_req, h_ex_rep;

/* GASNet-1 handlers: the request answers with an EX reply. */
static void g1_req(gasnet_token_t t, gasnet_handlerarg_t a) {
  CHECK(a == 41, "GASNet-1 handler got %d", (int)a);
  g1_requests++;
  SAFE(gex_AM_ReplyShort1(t, h_ex_rep, 0, a + 1));
}
static void g1_rep(gasnet_token_t t, gasnet_handlerarg_t a) {
  (void)t;
  CHECK(a == 43, "GASNet-1 reply handler got %d", (int)a);
  g1_replies++;
}
/* EX handlers: the request answers with a GASNet-1 reply. */
static void ex_req(gex_Token_t t, gex_AM_Arg_t a) {
  CHECK(a == 42, "EX handler got %d", (int)a);
  gex_Token_Info_t info;
  gex_Token_Info(t, &info, GEX_TI_SRCRANK);
  gasnet_node_t src;
  gasnet_AMGetMsgSource(t, &src);
  CHECK(info.gex_srcrank == src, "gex_Token_Info says %u, gasnet_AMGetMsgSource %u",
        (unsigned)info.gex_srcrank, (unsigned)src);
  ex_requests++;
  SAFE(gasnet_AMReplyShort1(t, h_g1_rep, a + 1));
}
static void ex_rep(gex_Token_t t, gex_AM_Arg_t a) {
  (void)t;
  CHECK(a == 42, "EX reply handler got %d", (int)a);
  ex_replies++;
}

int main(int argc, char **argv) {
  bool via_ex = argc > 1 && !strcmp(argv[1], "ex");
  gasnet_handlerentry_t g1_table[] = {{0, (void (*)())g1_req}, {0, (void (*)())g1_rep}};
  uintptr_t segsize = 1 << 20;
  if (via_ex) {
    SAFE(gex_Client_Init(&client, &ep, &tm, "EX_MIXED", &argc, &argv, GEX_FLAG_USES_GASNET1));
    SAFE(gex_Segment_Attach(&seg, tm, segsize));
    gex_AM_Entry_t g1_as_ex[] = {
        {0, (gex_AM_Fn_t)g1_req, GEX_FLAG_AM_SHORT | GEX_FLAG_AM_REQUEST, 1, NULL, "g1_req"},
        {0, (gex_AM_Fn_t)g1_rep, GEX_FLAG_AM_SHORT | GEX_FLAG_AM_REPLY, 1, NULL, "g1_rep"}};
    SAFE(gex_EP_RegisterHandlers(ep, g1_as_ex, 2));
    h_g1_req = g1_as_ex[0].gex_index, h_g1_rep = g1_as_ex[1].gex_index;
    gex_Client_t c2;
    gex_TM_t t2;
    gasnet_QueryGexObjects(&c2, NULL, &t2, NULL);
    CHECK(c2 == client && t2 == tm, "gasnet_QueryGexObjects gave other objects");
  } else {
    SAFE(gasnet_init(&argc, &argv));
    SAFE(gasnet_attach(g1_table, 2, segsize, 0));
    h_g1_req = g1_table[0].index, h_g1_rep = g1_table[1].index;
    gasnet_QueryGexObjects(&client, &ep, &tm, &seg);
    CHECK(gex_Client_QueryFlags(client) & GEX_FLAG_USES_GASNET1, "a GASNet-1 client's flags");
    /* An index the GASNet-1 table took is taken for EX too. */
    gex_AM_Entry_t clash = {h_g1_req, (gex_AM_Fn_t)ex_req,
                            GEX_FLAG_AM_SHORT | GEX_FLAG_AM_REQUEST, 1, NULL, "clash"};
    gex_System_SetVerboseErrors(0);
    CHECK(gex_EP_RegisterHandlers(ep, &clash, 1) == GASNET_ERR_BAD_ARG,
          "index %d registered twice", (int)h_g1_req);
    gex_System_SetVerboseErrors(1);
  }
  gex_AM_Entry_t ex_table[] = {
      {0, (gex_AM_Fn_t)ex_req, GEX_FLAG_AM_SHORT | GEX_FLAG_AM_REQUEST, 1, NULL, "ex_req"},
      {0, (gex_AM_Fn_t)ex_rep, GEX_FLAG_AM_SHORT | GEX_FLAG_AM_REPLY, 1, NULL, "ex_rep"}};
  SAFE(gex_EP_RegisterHandlers(ep, ex_table, 2));
  h_ex_req = ex_table[0].gex_index, h_ex_rep = ex_table[1].gex_index;
  gasnet_node_t me = gasnet_mynode(), n = gasnet_nodes(), right = (gasnet_node_t)((me + 1) % n);
  CHECK(me == gex_TM_QueryRank(tm) && n == gex_TM_QuerySize(tm), "job and team differ");
  gasnet_seginfo_t *si = malloc(n * sizeof *si);
  SAFE(gasnet_getSegmentInfo(si, n));
  void *owner;
  SAFE(gex_Segment_QueryBound(tm, right, &owner, NULL, NULL));
  CHECK(owner == si[right].addr, "two APIs, two segment addresses");
  gasnet_barrier(0, GASNET_BARRIERFLAG_ANONYMOUS);
  gex_Event_Wait(gex_Coll_BarrierNB(tm, 0)); /* one API's barrier after the other's */

  /* AMs across the APIs, both ways, to the right neighbour and to itself. */
  gasnet_node_t targets[2] = {right, me};
  for (int i = 0; i < 2; i++) {
    SAFE(gex_AM_RequestShort1(tm, targets[i], h_g1_req, 0, 41)); /* EX -> GASNet-1 -> EX */
    GASNET_BLOCKUNTIL(ex_replies == i + 1);
    SAFE(gasnet_AMRequestShort1(targets[i], h_ex_req, 42)); /* GASNet-1 -> EX -> GASNet-1 */
    GASNET_BLOCKUNTIL(g1_replies == i + 1);
  }
  CHECK(ex_replies == 2 && g1_replies == 2, "replies: %d EX, %d GASNet-1", ex_replies, g1_replies);

  /* RMA across the APIs. */
  uint64_t *mine = si[me].addr, word = 0x1234567800000000ull | me, got = 0;
  gasnet_put(right, si[right].addr, &word, 8);
  gasnet_barrier(0, GASNET_BARRIERFLAG_ANONYMOUS);
  gasnet_node_t left = (gasnet_node_t)((me + n - 1) % n);
  CHECK(mine[0] == (0x1234567800000000ull | left), "gasnet_put seen as %llx",
        (unsigned long long)mine[0]);
  SAFE(gex_RMA_GetBlocking(tm, &got, right, si[right].addr, 8, 0));
  CHECK(got == word, "gex_RMA_GetBlocking read %llx", (unsigned long long)got);
  gex_Event_Wait(gasnet_put_nb(right, (uint64_t *)si[right].addr + 1, &word, 8)); /* handle as event */
  gasnet_wait_syncnb(gex_RMA_GetNB(tm, &got, right, (uint64_t *)si[right].addr + 1, 8, 0));
  CHECK(got == word, "a handle synced as an event, or the other way, lost a word");
  gex_Event_Wait(gex_Coll_BarrierNB(tm, 0));
  if (failures) {
    printf("ex_mixed_test: rank %d FAILED %d checks\n", (int)me, failures);
    fflush(stdout);
    gasnet_exit(1);
  }
  printf("ex_mixed_test: rank %d OK\n", (int)me);
  fflush(stdout);
  gasnet_barrier(0, GASNET_BARRIERFLAG_ANONYMOUS);
  gasnet_exit(0);
}
