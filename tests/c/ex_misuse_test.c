/* ex_misuse_test.c MODE: one misuse of the GASNet-EX API per run; each must end the job with a
 * message naming the call (or, for calls that return an error, return it and say why). Modes:
 *   before-init        gex_System_QueryJobRank before gex_Client_Init
 *   init-twice         gex_Client_Init a second time
 *   index-range        gex_EP_RegisterHandlers with index 5
 *   index-twice        an index taken by an earlier gex_EP_RegisterHandlers
 *   bad-flags          a handler entry with no category flag
 *   commit-larger      gex_AM_CommitRequestMedium of more bytes than its Prepare gave
 *   nested-prepare     a second Prepare before the first's Commit
 *   commit-unprepared  a Commit of GEX_AM_SRCDESC_NO_OP
 *   request-in-handler gex_AM_RequestShort inside a request handler
 *   lc-defer           gex_AM_RequestMedium with GEX_EVENT_DEFER
 *   noop-event         gex_Event_Wait(GEX_EVENT_NO_OP)
 *   wrong-kind         a Medium to a handler registered as Short-only
 *   outside-segment    gex_RMA_PutBlocking past the end of the peer's segment (debug build)
 *   bad-rank           gex_AM_RequestShort to rank = team size
 *   ad-float-bitwise   gex_AD_Create of GEX_DT_FLT with GEX_OP_AND
 *   ad-wrong-type      gex_AD_OpNB_I64 on a domain of GEX_DT_I32
 *   ad-op-not-created  gex_AD_OpNB_I32 with GEX_OP_SWAP on a domain made for GEX_OP_FADD
 *   ad-bad-rank        gex_AD_OpNBI_I64 to rank = team size
 *   ad-destroyed       gex_AD_OpNB_I32 on a destroyed domain
 *   ad-outside-segment gex_AD_OpNB_I64 on a location past the end of the peer's segment
 *   ad-null-result     gex_AD_OpNB_I64 with GEX_OP_FADD and result_p NULL */
#include <string.h>

#include <gasnet_ratomic.h>

#include "ex_test_util.h"

static gex_AM_Index_t h_short, h_nested;

static void short_handler(gex_Token_t t) { (void)t; }
static void nested_handler(gex_Token_t t) {
  (void)t;
  gex_AM_RequestShort0(ex_tm, 0, h_short, 0); /* a request from a handler */
}

static void register_all(void) {
  gex_AM_Entry_t table[] = {
      {0, (gex_AM_Fn_t)short_handler, GEX_FLAG_AM_SHORT | GEX_FLAG_AM_REQUEST, 0, NULL, "short"},
      {0, (gex_AM_Fn_t)nested_handler, GEX_FLAG_AM_SHORT | GEX_FLAG_AM_REQUEST, 0, NULL, "nested"}};
  EX_SAFE(gex_EP_RegisterHandlers(ex_ep, table, 2));
  h_short = table[0].gex_index;
  h_nested = table[1].gex_index;
}

static void misuse_ad(const char *mode, gex_Rank_t peer) {
  gex_AD_t ad;
  int64_t result = 0;
  int32_t r32 = 0;
  void *base;
  uintptr_t size;
  EX_SAFE(gex_Segment_QueryBound(ex_tm, peer, &base, NULL, &size));
  if (!strcmp(mode, "ad-float-bitwise")) {
    gex_AD_Create(&ad, ex_tm, GEX_DT_FLT, GEX_OP_AND, 0);
    return;
  }
  gex_AD_Create(&ad, ex_tm, strstr(mode, "I64") || !strcmp(mode, "ad-bad-rank") ||
                                    !strcmp(mode, "ad-outside-segment") ||
                                    !strcmp(mode, "ad-null-result")
                                ? GEX_DT_I64 : GEX_DT_I32,
                GEX_OP_FADD, 0);
  if (!strcmp(mode, "ad-wrong-type")) {
    gex_Event_Wait(gex_AD_OpNB_I64(ad, &result, peer, base, GEX_OP_FADD, 1, 0, 0));
  } else if (!strcmp(mode, "ad-op-not-created")) {
    gex_Event_Wait(gex_AD_OpNB_I32(ad, &r32, peer, base, GEX_OP_SWAP, 1, 0, 0));
  } else if (!strcmp(mode, "ad-bad-rank")) {
    gex_AD_OpNBI_I64(ad, &result, gex_TM_QuerySize(ex_tm), base, GEX_OP_FADD, 1, 0, 0);
  } else if (!strcmp(mode, "ad-destroyed")) {
    gex_AD_Destroy(ad);
    gex_Event_Wait(gex_AD_OpNB_I32(ad, &r32, peer, base, GEX_OP_FADD, 1, 0, 0));
  } else if (!strcmp(mode, "ad-outside-segment")) {
    gex_Event_Wait(gex_AD_OpNB_I64(ad, &result, peer, (char *)base + size, GEX_OP_FADD, 1, 0, 0));
  } else if (!strcmp(mode, "ad-null-result")) {
    gex_Event_Wait(gex_AD_OpNB_I64(ad, NULL, peer, base, GEX_OP_FADD, 1, 0, 0));
  } else {
    fprintf(stderr, "ex_misuse_test: unknown mode '%s'\n", mode);
    gasnet_exit(2);
  }
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "";
  if (!strcmp(mode, "before-init")) {
    printf("%u\n", (unsigned)gex_System_QueryJobRank());
    return 0;
  }
  ex_start(&argc, &argv, "EX_MISUSE", 1 << 20);
  register_all();
  ex_barrier();
  gex_Rank_t me = gex_TM_QueryRank(ex_tm), peer = (me + 1) % gex_TM_QuerySize(ex_tm);
  static char buf[256];
  if (!strcmp(mode, "init-twice")) {
    gex_Client_t c;
    gex_EP_t e;
    gex_TM_t t;
    EX_SAFE(gex_Client_Init(&c, &e, &t, "AGAIN", &argc, &argv, 0));
  } else if (!strcmp(mode, "index-range")) {
    gex_AM_Entry_t e = {5, (gex_AM_Fn_t)short_handler, GEX_FLAG_AM_SHORT | GEX_FLAG_AM_REQUEST,
                        0, NULL, "low"};
    EX_SAFE(gex_EP_RegisterHandlers(ex_ep, &e, 1));
  } else if (!strcmp(mode, "index-twice")) {
    gex_AM_Entry_t e = {h_short, (gex_AM_Fn_t)short_handler,
                        GEX_FLAG_AM_SHORT | GEX_FLAG_AM_REQUEST, 0, NULL, "again"};
    EX_SAFE(gex_EP_RegisterHandlers(ex_ep, &e, 1));
  } else if (!strcmp(mode, "bad-flags")) {
    gex_AM_Entry_t e = {0, (gex_AM_Fn_t)short_handler, GEX_FLAG_AM_REQUEST, 0, NULL, "flagless"};
    EX_SAFE(gex_EP_RegisterHandlers(ex_ep, &e, 1));
  } else if (!strcmp(mode, "commit-larger")) {
    gex_AM_SrcDesc_t sd = gex_AM_PrepareRequestMedium(ex_tm, peer, NULL, 100, 100, NULL, 0, 0);
    gex_AM_CommitRequestMedium0(sd, h_short, 200);
  } else if (!strcmp(mode, "nested-prepare")) {
    gex_AM_PrepareRequestMedium(ex_tm, peer, NULL, 10, 10, NULL, 0, 0);
    gex_AM_PrepareRequestMedium(ex_tm, peer, buf, 10, 10, GEX_EVENT_NOW, 0, 0);
  } else if (!strcmp(mode, "commit-unprepared")) {
    gex_AM_CommitRequestMedium0(GEX_AM_SRCDESC_NO_OP, h_short, 0);
  } else if (!strcmp(mode, "request-in-handler")) {
    EX_SAFE(gex_AM_RequestShort0(ex_tm, peer, h_nested, 0));
    GASNET_BLOCKUNTIL(0);
  } else if (!strcmp(mode, "lc-defer")) {
    gex_AM_RequestMedium0(ex_tm, peer, h_short, buf, 8, GEX_EVENT_DEFER, 0);
  } else if (!strcmp(mode, "noop-event")) {
    gex_Event_Wait(GEX_EVENT_NO_OP);
  } else if (!strcmp(mode, "wrong-kind")) {
    gex_AM_RequestMedium0(ex_tm, peer, h_short, buf, 8, GEX_EVENT_NOW, 0);
    GASNET_BLOCKUNTIL(0);
  } else if (!strcmp(mode, "outside-segment")) {
    void *base;
    uintptr_t size;
    EX_SAFE(gex_Segment_QueryBound(ex_tm, peer, &base, NULL, &size));
    gex_RMA_PutBlocking(ex_tm, peer, (char *)base + size, buf, 8, 0);
  } else if (!strcmp(mode, "bad-rank")) {
    gex_AM_RequestShort0(ex_tm, gex_TM_QuerySize(ex_tm), h_short, 0);
  } else if (!strncmp(mode, "ad-", 3)) {
    misuse_ad(mode, peer);
  } else {
    fprintf(stderr, "ex_misuse_test: unknown mode '%s'\n", mode);
    gasnet_exit(2);
  }
  ex_barrier();
  printf("ex_misuse_test %s: no error\n", mode);
  gasnet_exit(0);
}
