/* handler_macros_test: GASNet-1's portable handler macros (gasnet_handler.h) with handlers
 * that carry pointers: each rank sends its peer Short, Medium, Long and LongAsync requests
 * whose arguments PACK pointers into the sender's memory; the handlers UNPACK them and send
 * them back in replies that write through them. A pointer whose low word has its top bit set
 * (sign-extended on arrival) and one with a non-zero high word travel unchanged, and the
 * HIWORD/LOWORD/MAKEWORD helpers round-trip them. portable_inttypes.h by name, too. */
#include <gasnet.h>
#include <gasnet_handler.h>
#include <portable_inttypes.h>

#include "test_util.h"

enum { _hidx_ping = 200, _hidx_pong, _hidx_med, _hidx_medrep, _hidx_lng, _hidx_lngrep,
       _hidx_probe, _hidx_plain };

static gasnet_seginfo_t *seg;
static volatile int plain_sum, plain_count;
/* What a probe request carried, checked by the receiver against the known value. */
static void *const PROBE = (void *)(uintptr_t)UINT64_C(0x123456789abcdef0);
static volatile int probes_ok, probes_bad;

/* Short: a pointer and a sequence number; the reply writes the number through the pointer. */
static void ping_inner(gasnet_token_t token, void *where, gasnet_handlerarg_t seq) {
  SHORT_REP(2, 3, (token, gasneti_handleridx(pong), PACK(where), seq));
}
SHORT_HANDLER(ping, 2, 3, (token, UNPACK(a0), a1), (token, UNPACK2(a0, a1), a2));
static void pong_inner(gasnet_token_t token, void *where, gasnet_handlerarg_t seq) {
  (void)token;
  *(volatile int *)where = seq;
}
SHORT_HANDLER(pong, 2, 3, (token, UNPACK(a0), a1), (token, UNPACK2(a0, a1), a2));

/* Medium: a payload and two pointers (the sum's slot and a done flag). */
static void med_inner(gasnet_token_t token, void *addr, size_t nbytes, void *sum, void *done) {
  uint64_t total = 0;
  for (size_t i = 0; i < nbytes; i++) total += ((uint8_t *)addr)[i];
  MEDIUM_REP(2, 4, (token, gasneti_handleridx(medrep), &total, sizeof total, PACK(sum),
                    PACK(done)));
}
MEDIUM_HANDLER(med, 2, 4, (token, addr, nbytes, UNPACK(a0), UNPACK(a1)),
               (token, addr, nbytes, UNPACK2(a0, a1), UNPACK2(a2, a3)));
static void medrep_inner(gasnet_token_t token, void *addr, size_t nbytes, void *sum,
                         void *done) {
  (void)token, (void)nbytes;
  memcpy(sum, addr, sizeof(uint64_t));
  *(volatile int *)done = 1;
}
MEDIUM_HANDLER(medrep, 2, 4, (token, addr, nbytes, UNPACK(a0), UNPACK(a1)),
               (token, addr, nbytes, UNPACK2(a0, a1), UNPACK2(a2, a3)));

/* Long: the payload lands in the peer's segment; the reply is a Long back into the sender's
 * segment (its address travels as a pointer) with a done flag. */
static void lng_inner(gasnet_token_t token, void *addr, size_t nbytes, void *back, void *done) {
  LONG_REP(1, 2, (token, gasneti_handleridx(lngrep), addr, nbytes, back, PACK(done)));
}
LONG_HANDLER(lng, 2, 4, (token, addr, nbytes, UNPACK(a0), UNPACK(a1)),
             (token, addr, nbytes, UNPACK2(a0, a1), UNPACK2(a2, a3)));
static void lngrep_inner(gasnet_token_t token, void *addr, size_t nbytes, void *done) {
  (void)token, (void)addr, (void)nbytes;
  *(volatile int *)done = 1;
}
LONG_HANDLER(lngrep, 1, 2, (token, addr, nbytes, UNPACK(a0)),
             (token, addr, nbytes, UNPACK2(a0, a1)));

static void probe_inner(gasnet_token_t token, void *p) {
  (void)token;
  if (p == PROBE) probes_ok++;
  else probes_bad++;
}
SHORT_HANDLER(probe, 1, 2, (token, UNPACK(a0)), (token, UNPACK2(a0, a1)));

SHORT_HANDLER_NOBITS_DECL(plain, 1);
SHORT_HANDLER_NOBITS_DECL(plain, 1) {
  (void)token;
  plain_sum += a0;
  plain_count++;
}

int main(int argc, char **argv) {
  GASNET_SAFE(gasnet_init(&argc, &argv));
  gasnet_handlerentry_t table[] = {
      gasneti_handler_tableentry_with_bits(ping), gasneti_handler_tableentry_with_bits(pong),
      gasneti_handler_tableentry_with_bits(med), gasneti_handler_tableentry_with_bits(medrep),
      gasneti_handler_tableentry_with_bits(lng), gasneti_handler_tableentry_with_bits(lngrep),
      gasneti_handler_tableentry_with_bits(probe), gasneti_handler_tableentry_no_bits(plain)};
  GASNET_SAFE(gasnet_attach(table, (int)(sizeof table / sizeof table[0]), 16 * GASNET_PAGESIZE, 0));
  seg = calloc(gasnet_nodes(), sizeof *seg);
  GASNET_SAFE(gasnet_getSegmentInfo(seg, gasnet_nodes()));
  gasnet_node_t me = gasnet_mynode(), peer = (gasnet_node_t)((me + 1) % gasnet_nodes());

  /* The helpers: a value whose low word has its top bit set survives the round trip even
   * after the low word is sign-extended, as a handler argument is. */
  uint64_t word = UINT64_C(0xfedcba9887654321);
  gasnet_handlerarg_t hi = (gasnet_handlerarg_t)GASNETI_HIWORD(word);
  gasnet_handlerarg_t lo = (gasnet_handlerarg_t)GASNETI_LOWORD(word);
  CHECK(GASNETI_MAKEWORD(hi, (int64_t)lo) == word, "MAKEWORD(HIWORD, LOWORD) of %#" PRIx64, word);
  CHECK(sizeof(int8_t) == 1 && sizeof(uint64_t) == 8 && sizeof(uintptr_t) == sizeof(void *),
        "portable_inttypes.h types");

  for (int round = 0; round < 50; round++) {
    volatile int seen = -1;
    SHORT_REQ(2, 3, (peer, gasneti_handleridx(ping), PACK(&seen), round));
    GASNET_BLOCKUNTIL(seen == round);

    uint8_t payload[300];
    uint64_t want = 0, sum = 0;
    for (size_t i = 0; i < sizeof payload; i++) payload[i] = (uint8_t)(i * 7 + round), want += payload[i];
    volatile int done = 0;
    MEDIUM_REQ(2, 4, (peer, gasneti_handleridx(med), payload, sizeof payload, PACK(&sum),
                      PACK(&done)));
    GASNET_BLOCKUNTIL(done);
    CHECK(sum == want, "round %d: medium sum %" PRIu64 " (expected %" PRIu64 ")", round, sum, want);

    char *there = (char *)seg[peer].addr + 1024 * me;
    char *back = (char *)seg[me].addr + 32768 + 1024 * me;
    memset(back, 0, 300);
    done = 0;
    if (round % 2)
      LONG_REQ(2, 4, (peer, gasneti_handleridx(lng), payload, sizeof payload, there, PACK(back),
                      PACK(&done)));
    else
      LONGASYNC_REQ(2, 4, (peer, gasneti_handleridx(lng), payload, sizeof payload, there,
                           PACK(back), PACK(&done)));
    GASNET_BLOCKUNTIL(done);
    CHECK(memcmp(back, payload, sizeof payload) == 0, "round %d: long payload came back changed",
          round);

    SHORT_REQ(1, 2, (peer, gasneti_handleridx(probe), PACK(PROBE)));
    gasnet_AMRequestShort1(peer, gasneti_handleridx(plain), round);
  }
  /* Requests without a reply: wait for the peer's to arrive. */
  GASNET_BLOCKUNTIL(probes_ok + probes_bad == 50 && plain_count == 50);
  CHECK(probes_ok == 50 && probes_bad == 0, "probe pointers: %d intact, %d changed", probes_ok,
        probes_bad);
  CHECK(plain_sum == 49 * 50 / 2, "plain handler sum %d", plain_sum);
  test_finish("handler_macros_test");
}
