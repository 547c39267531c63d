/* am_test.c: every AM category with 0..16 arguments and payloads of 0, 1, 7, 4096, MaxMedium
 * (and MaxLong) bytes, to the right neighbour and to itself; each request handler checks what
 * arrived and replies in kind from inside the handler, and the reply handler checks again.
 * "am_test largest BYTES" makes BYTES (from MaxMedium to MaxLong) the largest Long, for jobs of
 * many ranks on few cores, where 17 round trips of MaxLong a rank are most of the run. */
#include <string.h>

#include "test_util.h"

enum { SHORT, MEDIUM, LONG, NCAT };
#define MAXN 16

static size_t sizes[NCAT][6];
static int nsizes[NCAT];
static gasnet_handler_t hreq[NCAT][MAXN + 1], hrep[NCAT][MAXN + 1];
static gasnet_seginfo_t *seg;
static int *recv_count; /* [cat][n][src] messages seen by request handlers */
static int *sent_count; /* [cat][n][dest], mirrors recv_count at the receiver */
static uint8_t *scratch; /* outgoing payloads (outside the segment) */
static volatile int replies;
static uint32_t expect_reply_seed;
static size_t expect_reply_size;

static uint32_t seed_of(int src, int cat, int n, int k) {
  return (uint32_t)(src * 1000003 + cat * 10007 + n * 101 + k);
}

static gasnet_handlerarg_t arg_value(uint32_t seed, int i) {
  return (gasnet_handlerarg_t)(seed * 2654435761u + (uint32_t)i * 0x9E3779B9u);
}

static void check_args(uint32_t seed, int n, const gasnet_handlerarg_t *a) {
  for (int i = 0; i < n; i++)
    CHECK(a[i] == arg_value(seed, i), "arg %d of %d is %d, expected %d", i, n, (int)a[i],
          (int)arg_value(seed, i));
}

static void *reply_dest(gasnet_node_t requester) {
  return (uint8_t *)seg[requester].addr + GASNETC_MAX_LONG;
}

/* Request side: check, then reply with the same category, argument count and size. */
static void on_request(gasnet_token_t t, int cat, int n, void *buf, size_t nbytes,
                       const gasnet_handlerarg_t *a) {
  gasnet_node_t src;
  GASNET_SAFE(gasnet_AMGetMsgSource(t, &src));
  int k = recv_count[(cat * (MAXN + 1) + n) * gasnet_nodes() + src]++;
  uint32_t seed = seed_of(src, cat, n, k);
  check_args(seed, n, a);
  size_t want = cat == SHORT ? 0 : sizes[cat][k % nsizes[cat]];
  if (cat != SHORT) {
    CHECK(nbytes == want, "cat %d n %d: %zu bytes, expected %zu", cat, n, nbytes, want);
    size_t bad = check_pattern(buf, nbytes, seed);
    CHECK(bad == nbytes, "cat %d n %d size %zu: byte %zu wrong", cat, n, nbytes, bad);
    CHECK(nbytes == 0 || (uintptr_t)buf % 8 == 0, "payload at %p is not 8-byte aligned", buf);
    if (cat == LONG)
      CHECK(buf == (uint8_t *)seg[gasnet_mynode()].addr, "Long buf %p is not the target address",
            buf);
  }
  /* Reply payload comes from a handler-local copy: the request's buffer is only valid here. */
  uint32_t rseed = seed + 1;
  gasnet_handlerarg_t ra[MAXN];
  for (int i = 0; i < n; i++) ra[i] = arg_value(rseed, i);
  static uint8_t *rbuf;
  if (!rbuf) rbuf = malloc(GASNETC_MAX_LONG);
  fill_pattern(rbuf, want, rseed);
  switch (cat) {
    case SHORT:
      gasneti_AMReplyShort(t, hrep[cat][n], n, ra);
      break;
    case MEDIUM:
      gasneti_AMReplyMedium(t, hrep[cat][n], rbuf, want, n, ra);
      break;
    default:
      gasneti_AMReplyLong(t, hrep[cat][n], rbuf, want, reply_dest(src), n, ra);
  }
}

static void on_reply(gasnet_token_t t, int cat, int n, void *buf, size_t nbytes,
                     const gasnet_handlerarg_t *a) {
  (void)t;
  check_args(expect_reply_seed, n, a);
  if (cat != SHORT) {
    CHECK(nbytes == expect_reply_size, "reply of %zu bytes, expected %zu", nbytes,
          expect_reply_size);
    size_t bad = check_pattern(buf, nbytes, expect_reply_seed);
    CHECK(bad == nbytes, "reply cat %d n %d size %zu: byte %zu wrong", cat, n, nbytes, bad);
  }
  replies++;
}

/* Handler families: one function per category, direction and argument count. */
#define CA0
#define CA1 CA0, a0
#define CA2 CA1, a1
#define CA3 CA2, a2
#define CA4 CA3, a3
#define CA5 CA4, a4
#define CA6 CA5, a5
#define CA7 CA6, a6
#define CA8 CA7, a7
#define CA9 CA8, a8
#define CA10 CA9, a9
#define CA11 CA10, a10
#define CA12 CA11, a11
#define CA13 CA12, a12
#define CA14 CA13, a13
#define CA15 CA14, a14
#define CA16 CA15, a15
#define PA0
#define PA1 PA0, gasnet_handlerarg_t a0
#define PA2 PA1, gasnet_handlerarg_t a1
#define PA3 PA2, gasnet_handlerarg_t a2
#define PA4 PA3, gasnet_handlerarg_t a3
#define PA5 PA4, gasnet_handlerarg_t a4
#define PA6 PA5, gasnet_handlerarg_t a5
#define PA7 PA6, gasnet_handlerarg_t a6
#define PA8 PA7, gasnet_handlerarg_t a7
#define PA9 PA8, gasnet_handlerarg_t a8
#define PA10 PA9, gasnet_handlerarg_t a9
#define PA11 PA10, gasnet_handlerarg_t a10
#define PA12 PA11, gasnet_handlerarg_t a11
#define PA13 PA12, gasnet_handlerarg_t a12
#define PA14 PA13, gasnet_handlerarg_t a13
#define PA15 PA14, gasnet_handlerarg_t a14
#define PA16 PA15, gasnet_handlerarg_t a15
#define ARGV(n) ((const gasnet_handlerarg_t[]){0 CA##n} + 1)

#define HANDLERS(n)                                                                  \
  static void sreq##n(gasnet_token_t t PA##n) { on_request(t, SHORT, n, 0, 0, ARGV(n)); } \
  static void srep##n(gasnet_token_t t PA##n) { on_reply(t, SHORT, n, 0, 0, ARGV(n)); }   \
  static void mreq##n(gasnet_token_t t, void *b, size_t s PA##n) {                   \
    on_request(t, MEDIUM, n, b, s, ARGV(n));                                         \
  }                                                                                  \
  static void mrep##n(gasnet_token_t t, void *b, size_t s PA##n) {                   \
    on_reply(t, MEDIUM, n, b, s, ARGV(n));                                           \
  }                                                                                  \
  static void lreq##n(gasnet_token_t t, void *b, size_t s PA##n) {                   \
    on_request(t, LONG, n, b, s, ARGV(n));                                           \
  }                                                                                  \
  static void lrep##n(gasnet_token_t t, void *b, size_t s PA##n) {                   \
    on_reply(t, LONG, n, b, s, ARGV(n));                                             \
  }
HANDLERS(0) HANDLERS(1) HANDLERS(2) HANDLERS(3) HANDLERS(4) HANDLERS(5) HANDLERS(6)
HANDLERS(7) HANDLERS(8) HANDLERS(9) HANDLERS(10) HANDLERS(11) HANDLERS(12) HANDLERS(13)
HANDLERS(14) HANDLERS(15) HANDLERS(16)

#define ENTRIES(n)                                                                      \
  {0, (void (*)())sreq##n}, {0, (void (*)())srep##n}, {0, (void (*)())mreq##n},        \
      {0, (void (*)())mrep##n}, {0, (void (*)())lreq##n}, {0, (void (*)())lrep##n},
static gasnet_handlerentry_t table[] = {
    ENTRIES(0) ENTRIES(1) ENTRIES(2) ENTRIES(3) ENTRIES(4) ENTRIES(5) ENTRIES(6) ENTRIES(7)
    ENTRIES(8) ENTRIES(9) ENTRIES(10) ENTRIES(11) ENTRIES(12) ENTRIES(13) ENTRIES(14)
    ENTRIES(15) ENTRIES(16)};

static void send_one(gasnet_node_t dest, int cat, int n, size_t size) {
  int k = sent_count[(cat * (MAXN + 1) + n) * gasnet_nodes() + dest]++;
  uint32_t seed = seed_of(gasnet_mynode(), cat, n, k);
  gasnet_handlerarg_t a[MAXN];
  for (int i = 0; i < n; i++) a[i] = arg_value(seed, i);
  fill_pattern(scratch, size, seed);
  expect_reply_seed = seed + 1;
  expect_reply_size = size;
  int before = replies;
  switch (cat) {
    case SHORT: GASNET_SAFE(gasneti_AMRequestShort(dest, hreq[cat][n], n, a)); break;
    case MEDIUM:
      GASNET_SAFE(gasneti_AMRequestMedium(dest, hreq[cat][n], scratch, size, n, a));
      break;
    default:
      GASNET_SAFE(gasneti_AMRequestLong(dest, hreq[cat][n], scratch, size, seg[dest].addr, n, a));
  }
  GASNET_BLOCKUNTIL(replies == before + 1);
}

int main(int argc, char **argv) {
  GASNET_SAFE(gasnet_init(&argc, &argv));
  uintptr_t segsize = 2 * GASNETC_MAX_LONG + GASNET_PAGESIZE;
  GASNET_SAFE(gasnet_attach(table, (int)(sizeof table / sizeof table[0]), segsize, 0));
  /* Every entry asked for "any index": the assignment is written back, and is the same
   * everywhere because the table is. */
  for (int n = 0; n <= MAXN; n++)
    for (int c = 0; c < NCAT; c++) {
      hreq[c][n] = table[n * 6 + c * 2].index;
      hrep[c][n] = table[n * 6 + c * 2 + 1].index;
      CHECK(hreq[c][n] >= 128, "assigned handler index %d is reserved", hreq[c][n]);
    }
  size_t medium[] = {0, 1, 7, 4096, gasnet_AMMaxMedium()};
  size_t lng[] = {0, 1, 7, 4096, gasnet_AMMaxMedium(), gasnet_AMMaxLongRequest()};
  if (argc > 2 && strcmp(argv[1], "largest") == 0) {
    char *end;
    unsigned long long largest = strtoull(argv[2], &end, 10);
    CHECK(*end == '\0' && largest >= gasnet_AMMaxMedium() && largest <= gasnet_AMMaxLongRequest(),
          "largest %s: expected a size in bytes from %zu to %zu", argv[2], (size_t)gasnet_AMMaxMedium(),
          (size_t)gasnet_AMMaxLongRequest());
    lng[5] = (size_t)largest;
  }
  memcpy(sizes[MEDIUM], medium, sizeof medium);
  memcpy(sizes[LONG], lng, sizeof lng);
  nsizes[SHORT] = 1, nsizes[MEDIUM] = 5, nsizes[LONG] = 6;
  CHECK(gasnet_AMMaxArgs() >= 16, "gasnet_AMMaxArgs() = %zu", gasnet_AMMaxArgs());
  CHECK(gasnet_AMMaxLongReply() == gasnet_AMMaxLongRequest(), "Long limits differ");

  gasnet_node_t me = gasnet_mynode(), n_ranks = gasnet_nodes();
  seg = calloc(n_ranks, sizeof *seg);
  GASNET_SAFE(gasnet_getSegmentInfo(seg, n_ranks));
  recv_count = calloc((size_t)NCAT * (MAXN + 1) * n_ranks, sizeof(int));
  sent_count = calloc((size_t)NCAT * (MAXN + 1) * n_ranks, sizeof(int));
  scratch = malloc(GASNETC_MAX_LONG);
  test_barrier();

  /* Pass 0: to the right neighbour; pass 1: loopback. Each target gets one sender per pass,
   * and passes are separated by barriers, so segment regions are never shared. */
  for (int pass = 0; pass < 2; pass++) {
    gasnet_node_t dest = pass == 0 ? (gasnet_node_t)((me + 1) % n_ranks) : me;
    int expected = 0;
    for (int cat = 0; cat < NCAT; cat++)
      for (int n = 0; n <= MAXN; n++)
        for (int s = 0; s < nsizes[cat]; s++) {
          send_one(dest, cat, n, cat == SHORT ? 0 : sizes[cat][s]);
          expected++;
        }
    test_barrier();
    if (me == 0) printf("am_test: pass %d: %d round trips per rank\n", pass, expected);
  }
  free(seg);
  free(scratch);
  free(sent_count);
  free(recv_count);
  test_finish("am_test");
}
