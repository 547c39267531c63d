/* ex_am_test.c: GASNet-EX active messages, as an EX client calls them.
 *   ex_am_test            registration (fixed indices, and 0 taking the highest free ones, in
 *                         two calls), the system and segment queries, every category with 0..16
 *                         arguments through the numbered calls and payloads of 0..MaxMedium (and
 *                         MaxLong) bytes to the right neighbour and to itself, replies in kind
 *                         from the handlers, gex_Token_Info in each, lc_opt events and groups,
 *                         the forms that count their arguments, and negotiated payloads
 *                         (runtime and client buffers, Mediums and Longs, requests and replies)
 *   ex_am_test largest BYTES   the same with Longs of at most BYTES (at least the largest
 *                         Medium), where moving MaxLong 17 times a rank is more than a test needs
 *   ex_am_test immediate DIR   rank 0 floods rank 1 with GEX_FLAG_IMMEDIATE Shorts, then
 *                         Mediums, then negotiated Mediums (GEX_FLAG_IMMEDIATE_COMMIT) while
 *                         rank 1 makes no GASNet call (it waits for a file rank 0 writes in DIR): the floods must be refused at some point, every message
 *                         accepted must arrive once, and none may run a handler on rank 0. */
#include <errno.h>
#include <stdio.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ex_test_util.h"

enum { SHORT, MEDIUM, LONG, NCAT };
#define MAXN 16

static size_t sizes[NCAT][6];
static int nsizes[NCAT];
static gex_AM_Index_t hreq[NCAT][MAXN + 1], hrep[NCAT][MAXN + 1];
static int *recv_count; /* [cat][n][src] messages seen by request handlers */
static int *sent_count; /* [cat][n][dest] */
static uint8_t *scratch; /* outgoing payloads (outside the segment) */
static volatile int replies;
static uint32_t expect_reply_seed;
static size_t expect_reply_size;
static gex_Rank_t me, nranks;
static size_t max_medium;

static const char *const cat_names[NCAT] = {"Short", "Medium", "Long"};

static uint32_t seed_of(int src, int cat, int n, int k) {
  return (uint32_t)(src * 1000003 + cat * 10007 + n * 101 + k);
}

static gex_AM_Arg_t arg_value(uint32_t seed, int i) {
  return (gex_AM_Arg_t)(seed * 2654435761u + (uint32_t)i * 0x9E3779B9u);
}

static void check_args(uint32_t seed, int n, const gex_AM_Arg_t *a) {
  for (int i = 0; i < n; i++)
    CHECK(a[i] == arg_value(seed, i), "arg %d of %d is %d, expected %d", i, n, (int)a[i],
          (int)arg_value(seed, i));
}

static void **segs; /* every rank's segment (handlers may not query it: gex_Segment_QueryBound
                     * may communicate) */

static void *reply_dest(gex_Rank_t requester) {
  return (uint8_t *)segs[requester] + GASNETC_MAX_LONG;
}

/* ---- sending through every numbered call ----------------------------------------------- */
#define AV0
#define AV1 , a[0]
#define AV2 AV1, a[1]
#define AV3 AV2, a[2]
#define AV4 AV3, a[3]
#define AV5 AV4, a[4]
#define AV6 AV5, a[5]
#define AV7 AV6, a[6]
#define AV8 AV7, a[7]
#define AV9 AV8, a[8]
#define AV10 AV9, a[9]
#define AV11 AV10, a[10]
#define AV12 AV11, a[11]
#define AV13 AV12, a[12]
#define AV14 AV13, a[13]
#define AV15 AV14, a[14]
#define AV16 AV15, a[15]
#define CALL(f, args) f args /* args expanded first: AV##k becomes its arguments */
#define EVERY_N(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11) X(12) X(13) \
  X(14) X(15) X(16)

static int request(int cat, gex_Rank_t dest, gex_AM_Index_t h, int n, const gex_AM_Arg_t *a,
                   const void *buf, size_t size, void *dst, gex_Event_t *lc) {
  switch (cat * 100 + n) {
#define X(k)                                                                                    \
  case SHORT * 100 + k: return CALL(gex_AM_RequestShort##k, (ex_tm, dest, h, 0 AV##k));       \
  case MEDIUM * 100 + k:                                                                        \
    return CALL(gex_AM_RequestMedium##k, (ex_tm, dest, h, buf, size, lc, 0 AV##k));             \
  case LONG * 100 + k:                                                                          \
    return CALL(gex_AM_RequestLong##k, (ex_tm, dest, h, buf, size, dst, lc, 0 AV##k));
    EVERY_N(X)
#undef X
  }
  return -1;
}

static int reply(int cat, gex_Token_t t, gex_AM_Index_t h, int n, const gex_AM_Arg_t *a,
                 const void *buf, size_t size, void *dst, gex_Event_t *lc) {
  switch (cat * 100 + n) {
#define X(k)                                                                           \
  case SHORT * 100 + k: return CALL(gex_AM_ReplyShort##k, (t, h, 0 AV##k));                   \
  case MEDIUM * 100 + k: return CALL(gex_AM_ReplyMedium##k, (t, h, buf, size, lc, 0 AV##k));  \
  case LONG * 100 + k: return CALL(gex_AM_ReplyLong##k, (t, h, buf, size, dst, lc, 0 AV##k));
    EVERY_N(X)
#undef X
  }
  return -1;
}

/* ---- the handlers -------------------------------------------------------------------------- */
static void check_token(gex_Token_t t, int cat, bool is_req, const char *name) {
  gex_Token_Info_t info;
  gex_TI_t got = gex_Token_Info(t, &info, GEX_TI_ALL);
  CHECK((got & (GEX_TI_SRCRANK | GEX_TI_EP)) == (GEX_TI_SRCRANK | GEX_TI_EP),
        "gex_Token_Info left out a required field: 0x%x", (unsigned)got);
  CHECK(info.gex_srcrank < nranks, "source rank %u", (unsigned)info.gex_srcrank);
  CHECK(info.gex_ep == ex_ep, "token's endpoint %p, not %p", (void *)info.gex_ep, (void *)ex_ep);
  if (got & GEX_TI_IS_REQ) CHECK(!info.gex_is_req == !is_req, "is_req %d", info.gex_is_req);
  if (got & GEX_TI_IS_LONG)
    CHECK(!info.gex_is_long == (cat != LONG), "is_long %d for a %s", info.gex_is_long,
          cat_names[cat]);
  if (got & GEX_TI_ENTRY)
    CHECK(info.gex_entry && info.gex_entry->gex_name && !strcmp(info.gex_entry->gex_name, name),
          "entry %s, expected %s", info.gex_entry && info.gex_entry->gex_name ?
          info.gex_entry->gex_name : "(none)", name);
}

static gex_Rank_t source_of(gex_Token_t t) {
  gex_Token_Info_t info;
  gex_Token_Info(t, &info, GEX_TI_SRCRANK);
  return info.gex_srcrank;
}

/* Request side: check, then reply with the same category, argument count and size. */
static void on_request(gex_Token_t t, int cat, int n, void *buf, size_t nbytes,
                       const gex_AM_Arg_t *a, const char *name) {
  check_token(t, cat, true, name);
  gex_Rank_t src = source_of(t);
  int k = recv_count[(cat * (MAXN + 1) + n) * nranks + src]++;
  uint32_t seed = seed_of((int)src, cat, n, k);
  check_args(seed, n, a);
  size_t want = cat == SHORT ? 0 : sizes[cat][k % nsizes[cat]];
  if (cat != SHORT) {
    CHECK(nbytes == want, "%s n %d: %zu bytes, expected %zu", cat_names[cat], n, nbytes, want);
    size_t bad = check_pattern(buf, nbytes, seed);
    CHECK(bad == nbytes, "%s n %d size %zu: byte %zu wrong", cat_names[cat], n, nbytes, bad);
    if (cat == LONG)
      CHECK(buf == segs[me], "Long buf %p is not the target address", buf);
  }
  uint32_t rseed = seed + 1;
  gex_AM_Arg_t ra[MAXN];
  for (int i = 0; i < n; i++) ra[i] = arg_value(rseed, i);
  static uint8_t *rbuf;
  if (!rbuf) rbuf = malloc(GASNETC_MAX_LONG);
  fill_pattern(rbuf, want, rseed);
  gex_Event_t lc = GEX_EVENT_NO_OP;
  int rc = reply(cat, t, hrep[cat][n], n, ra, rbuf, want, reply_dest(src), &lc);
  CHECK(rc == 0, "a reply returned %d without GEX_FLAG_IMMEDIATE", rc);
  if (cat != SHORT) CHECK(lc == GEX_EVENT_INVALID, "a reply's lc_opt event was not set");
}

static void on_reply(gex_Token_t t, int cat, int n, void *buf, size_t nbytes,
                     const gex_AM_Arg_t *a, const char *name) {
  check_token(t, cat, false, name);
  check_args(expect_reply_seed, n, a);
  if (cat != SHORT) {
    CHECK(nbytes == expect_reply_size, "reply of %zu bytes, expected %zu", nbytes,
          expect_reply_size);
    size_t bad = check_pattern(buf, nbytes, expect_reply_seed);
    CHECK(bad == nbytes, "reply %s n %d size %zu: byte %zu wrong", cat_names[cat], n, nbytes, bad);
  }
  replies++;
}

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
#define PA1 PA0, gex_AM_Arg_t a0
#define PA2 PA1, gex_AM_Arg_t a1
#define PA3 PA2, gex_AM_Arg_t a2
#define PA4 PA3, gex_AM_Arg_t a3
#define PA5 PA4, gex_AM_Arg_t a4
#define PA6 PA5, gex_AM_Arg_t a5
#define PA7 PA6, gex_AM_Arg_t a6
#define PA8 PA7, gex_AM_Arg_t a7
#define PA9 PA8, gex_AM_Arg_t a8
#define PA10 PA9, gex_AM_Arg_t a9
#define PA11 PA10, gex_AM_Arg_t a10
#define PA12 PA11, gex_AM_Arg_t a11
#define PA13 PA12, gex_AM_Arg_t a12
#define PA14 PA13, gex_AM_Arg_t a13
#define PA15 PA14, gex_AM_Arg_t a14
#define PA16 PA15, gex_AM_Arg_t a15
#define ARGV(n) ((const gex_AM_Arg_t[]){0 CA##n} + 1)

#define HANDLERS(n)                                                                           \
  static void sreq##n(gex_Token_t t PA##n) { on_request(t, SHORT, n, 0, 0, ARGV(n), "sreq" #n); } \
  static void srep##n(gex_Token_t t PA##n) { on_reply(t, SHORT, n, 0, 0, ARGV(n), "srep" #n); }   \
  static void mreq##n(gex_Token_t t, void *b, size_t s PA##n) {                               \
    on_request(t, MEDIUM, n, b, s, ARGV(n), "mreq" #n);                                       \
  }                                                                                           \
  static void mrep##n(gex_Token_t t, void *b, size_t s PA##n) {                               \
    on_reply(t, MEDIUM, n, b, s, ARGV(n), "mrep" #n);                                         \
  }                                                                                           \
  static void lreq##n(gex_Token_t t, void *b, size_t s PA##n) {                               \
    on_request(t, LONG, n, b, s, ARGV(n), "lreq" #n);                                         \
  }                                                                                           \
  static void lrep##n(gex_Token_t t, void *b, size_t s PA##n) {                               \
    on_reply(t, LONG, n, b, s, ARGV(n), "lrep" #n);                                           \
  }
EVERY_N(HANDLERS)

/* nargs 0's handlers take fixed indices; every other entry asks for one (index 0). */
#define FIXED(n, k) ((n) == 0 ? 128 + (k) : 0)
#define ENTRIES(n)                                                                              \
  {FIXED(n, 0), (gex_AM_Fn_t)sreq##n, GEX_FLAG_AM_SHORT | GEX_FLAG_AM_REQUEST, n, NULL, "sreq" #n}, \
  {FIXED(n, 1), (gex_AM_Fn_t)srep##n, GEX_FLAG_AM_SHORT | GEX_FLAG_AM_REPLY, n, NULL, "srep" #n},   \
  {FIXED(n, 2), (gex_AM_Fn_t)mreq##n, GEX_FLAG_AM_MEDIUM | GEX_FLAG_AM_REQUEST, n, NULL, "mreq" #n}, \
  {FIXED(n, 3), (gex_AM_Fn_t)mrep##n, GEX_FLAG_AM_MEDIUM | GEX_FLAG_AM_REPLY, n, NULL, "mrep" #n},  \
  {FIXED(n, 4), (gex_AM_Fn_t)lreq##n, GEX_FLAG_AM_LONG | GEX_FLAG_AM_REQUEST, n, NULL, "lreq" #n},  \
  {FIXED(n, 5), (gex_AM_Fn_t)lrep##n, GEX_FLAG_AM_LONG | GEX_FLAG_AM_REPLY, n, NULL, "lrep" #n},
static gex_AM_Entry_t table[] = {EVERY_N(ENTRIES)};

/* ---- negotiated payloads ------------------------------------------------------------------ */
/* np_req (Medium or Long request, 2 arguments: seed and the reply's kind) checks its payload and
 * answers through gex_AM_PrepareReply* with a runtime buffer; np_rep checks that. */
enum { NP_REPLY_MEDIUM = 1, NP_REPLY_LONG = 2 };
static gex_AM_Index_t h_np_req, h_np_rep;
static volatile int np_replies;
static uint32_t np_expect_seed;
static size_t np_expect_size;

static void np_req(gex_Token_t t, void *buf, size_t nbytes, gex_AM_Arg_t seed, gex_AM_Arg_t how) {
  size_t bad = check_pattern(buf, nbytes, (uint32_t)seed);
  CHECK(bad == nbytes, "negotiated request of %zu bytes: byte %zu wrong", nbytes, bad);
  size_t n = nbytes ? nbytes : 1;
  gex_Rank_t src = source_of(t);
  CHECK(gex_Token_MaxReplyMedium(t, NULL, 0, 1) == gex_AM_MaxReplyMedium(ex_tm, src, NULL, 0, 1) &&
        gex_Token_MaxReplyLong(t, NULL, 0, 1) == gex_AM_MaxReplyLong(ex_tm, src, NULL, 0, 1),
        "gex_Token_MaxReply* differ from gex_AM_MaxReply* to the token's source");
  gex_AM_SrcDesc_t sd;
  if (how == NP_REPLY_MEDIUM)
    sd = gex_AM_PrepareReplyMedium(t, NULL, n, n, NULL, 0, 1);
  else
    sd = gex_AM_PrepareReplyLong(t, NULL, n, n, reply_dest(src), NULL, 0, 1);
  CHECK(sd != GEX_AM_SRCDESC_NO_OP, "PrepareReply refused without GEX_FLAG_IMMEDIATE");
  if (sd == GEX_AM_SRCDESC_NO_OP) return;
  CHECK(gex_AM_SrcDescSize(sd) == n, "PrepareReply of %zu bytes gave %zu", n,
        gex_AM_SrcDescSize(sd));
  fill_pattern(gex_AM_SrcDescAddr(sd), n, (uint32_t)seed + 7);
  if (how == NP_REPLY_MEDIUM) gex_AM_CommitReplyMedium1(sd, h_np_rep, n, seed + 7);
  else gex_AM_CommitReplyLong1(sd, h_np_rep, n, reply_dest(src), seed + 7);
}

static void np_rep(gex_Token_t t, void *buf, size_t nbytes, gex_AM_Arg_t seed) {
  (void)t;
  CHECK((uint32_t)seed == np_expect_seed + 7, "negotiated reply's argument %d", (int)seed);
  CHECK(nbytes == np_expect_size, "negotiated reply of %zu bytes, expected %zu", nbytes,
        np_expect_size);
  size_t bad = check_pattern(buf, nbytes, np_expect_seed + 7);
  CHECK(bad == nbytes, "negotiated reply of %zu bytes: byte %zu wrong", nbytes, bad);
  np_replies++;
}

/* One negotiated request of `want` bytes (least) out of up to twice that (most), to dest. */
static void np_once(gex_Rank_t dest, int cat, bool client, size_t want, bool dest_at_prepare,
                    int how, uint32_t seed) {
  static uint8_t *cbuf;
  if (!cbuf) cbuf = malloc(GASNETC_MAX_LONG);
  size_t limit = cat == MEDIUM ? max_medium : GASNETC_MAX_LONG;
  size_t most = want * 2 < limit ? want * 2 : limit;
  void *dst = cat == LONG ? segs[dest] : NULL;
  gex_Event_t lc = GEX_EVENT_NO_OP;
  gex_AM_SrcDesc_t sd =
      cat == MEDIUM
          ? gex_AM_PrepareRequestMedium(ex_tm, dest, client ? cbuf : NULL, want, most,
                                        client ? &lc : NULL, 0, 2)
          : gex_AM_PrepareRequestLong(ex_tm, dest, client ? cbuf : NULL, want, most,
                                      dest_at_prepare ? dst : NULL, client ? &lc : NULL, 0, 2);
  CHECK(sd != GEX_AM_SRCDESC_NO_OP, "Prepare refused without GEX_FLAG_IMMEDIATE");
  if (sd == GEX_AM_SRCDESC_NO_OP) return;
  size_t size = gex_AM_SrcDescSize(sd);
  CHECK(size >= want && size <= most, "Prepare of %zu..%zu bytes gave %zu", want, most, size);
  void *addr = gex_AM_SrcDescAddr(sd);
  if (client) CHECK(addr == cbuf, "a client buffer came back as %p, not %p", addr, (void *)cbuf);
  else CHECK((uintptr_t)addr % 8 == 0, "a runtime buffer at %p is not aligned", addr);
  fill_pattern(addr, want, seed);
  np_expect_seed = seed;
  np_expect_size = want;
  int before = np_replies;
  if (cat == MEDIUM) gex_AM_CommitRequestMedium2(sd, h_np_req, want, seed, how);
  else gex_AM_CommitRequestLong2(sd, h_np_req, want, dst, seed, how);
  if (client) CHECK(lc == GEX_EVENT_INVALID, "a committed client buffer's lc_opt was not set");
  GASNET_BLOCKUNTIL(np_replies == before + 1);
}

static void test_negotiated(gex_Rank_t dest) {
  size_t np_sizes[] = {1, 100, 4096, max_medium};
  uint32_t seed = 77 + me * 1000;
  for (int s = 0; s < 4; s++)
    for (int client = 0; client < 2; client++)
      for (int how = NP_REPLY_MEDIUM; how <= NP_REPLY_LONG; how++) {
        np_once(dest, MEDIUM, client, np_sizes[s], false, how, seed++);
        np_once(dest, LONG, client, np_sizes[s], false, how, seed++);
        np_once(dest, LONG, client, np_sizes[s], true, how, seed++);
      }
  np_once(dest, LONG, false, GASNETC_MAX_LONG / 2, true, NP_REPLY_LONG, seed++);
  /* Committing fewer bytes than prepared. */
  gex_AM_SrcDesc_t sd = gex_AM_PrepareRequestMedium(ex_tm, dest, NULL, 64, 64, NULL, 0, 2);
  fill_pattern(gex_AM_SrcDescAddr(sd), 10, seed);
  np_expect_seed = seed;
  np_expect_size = 10;
  int before = np_replies;
  gex_AM_CommitRequestMedium2(sd, h_np_req, 10, seed, NP_REPLY_MEDIUM);
  GASNET_BLOCKUNTIL(np_replies == before + 1);
}

/* ---- immediate mode under back-pressure -------------------------------------------------- */
static gex_AM_Index_t h_imm_short, h_imm_medium, h_poke;
static volatile int imm_received, poked;

static void imm_short(gex_Token_t t) { (void)t, imm_received++; }
static void imm_medium(gex_Token_t t, void *buf, size_t nbytes, gex_AM_Arg_t seed) {
  (void)t;
  size_t bad = check_pattern(buf, nbytes, (uint32_t)seed);
  CHECK(bad == nbytes, "an immediate Medium of %zu bytes: byte %zu wrong", nbytes, bad);
  imm_received++;
}
static void poke(gex_Token_t t) { (void)t, poked++; }

static void path_of(char *out, size_t len, const char *dir, const char *what) {
  snprintf(out, len, "%s/%s", dir, what);
}

/* Rank 1 makes no GASNet call until rank 0 wrote how many messages it sent (the file's
 * appearance is the event; rename makes it whole). */
static long wait_for_file(const char *path) {
  struct timespec tick = {0, 1000000};
  FILE *f;
  while (!(f = fopen(path, "r"))) {
    if (errno != ENOENT) {
      perror(path);
      return -1;
    }
    nanosleep(&tick, NULL);
  }
  long n = -1;
  if (fscanf(f, "%ld", &n) != 1) n = -1;
  fclose(f);
  return n;
}

static void write_file(const char *dir, const char *what, long n) {
  char tmp[4096], path[4096];
  path_of(tmp, sizeof tmp, dir, "tmp");
  path_of(path, sizeof path, dir, what);
  FILE *f = fopen(tmp, "w");
  if (!f || fprintf(f, "%ld\n", n) < 0 || fclose(f) != 0 || rename(tmp, path) != 0) {
    perror(path);
    gasnet_exit(2);
  }
}

enum { FLOOD_SHORT, FLOOD_MEDIUM, FLOOD_NEGOTIATED };
static const char *const flood_names[] = {"Short", "Medium", "Negotiated"};

/* One immediate request of a kind: 0 sent, non-zero refused. A negotiated Medium may be
 * refused by its Prepare or (GEX_FLAG_IMMEDIATE_COMMIT: a conduit that sends Commit's buffer as
 * a fixed-payload AM) by its Commit. */
static int immediate_once(int kind, const uint8_t *payload, size_t n) {
  if (kind == FLOOD_SHORT) return gex_AM_RequestShort0(ex_tm, 1, h_imm_short, GEX_FLAG_IMMEDIATE);
  if (kind == FLOOD_MEDIUM)
    return gex_AM_RequestMedium1(ex_tm, 1, h_imm_medium, (void *)payload, n, GEX_EVENT_NOW,
                                 GEX_FLAG_IMMEDIATE, 5);
  gex_AM_SrcDesc_t sd = gex_AM_PrepareRequestMedium(
      ex_tm, 1, NULL, n, n, NULL, GEX_FLAG_IMMEDIATE | GEX_FLAG_IMMEDIATE_COMMIT, 1);
  if (sd == GEX_AM_SRCDESC_NO_OP) return 1;
  memcpy(gex_AM_SrcDescAddr(sd), payload, n);
  return gex_AM_CommitRequestMedium1(sd, h_imm_medium, n, 5);
}

static void flood(const char *dir, const char *what, int kind) {
  enum { TRIES_AFTER_REFUSAL = 1000, MAX_ACCEPTED = 1000000 };
  static uint8_t payload[4096];
  fill_pattern(payload, sizeof payload, 5);
  if (me == 0) {
    long accepted = 0, refused = 0, tries = 0;
    int poked_before = poked; /* rank 1's request may have run in the barrier before */
    while (accepted < MAX_ACCEPTED && refused < TRIES_AFTER_REFUSAL) {
      int rc = immediate_once(kind, payload, sizeof payload);
      tries++;
      if (rc) refused++;
      else accepted++;
    }
    CHECK(refused > 0, "%ld immediate %ss to a rank that never polled were all accepted",
          accepted, flood_names[kind]);
    CHECK(poked == poked_before, "an immediate request ran a handler (it polled)");
    printf("immediate %s: rank 0 accepted %ld, refused %ld of %ld attempts\n",
           flood_names[kind], accepted, refused, tries);
    fflush(stdout);
    write_file(dir, what, accepted);
    ex_barrier(); /* rank 1 drains its queues meanwhile */
    GASNET_BLOCKUNTIL(poked == 1);
  } else if (me == 1) {
    /* A request rank 0 may only run once it polls. */
    EX_SAFE(gex_AM_RequestShort0(ex_tm, 0, h_poke, 0));
    char path[4096];
    path_of(path, sizeof path, dir, what);
    long expected = wait_for_file(path);
    CHECK(expected > 0, "%s: no count", path);
    GASNET_BLOCKUNTIL(imm_received == expected);
    CHECK(imm_received == expected, "received %d of %ld", imm_received, expected);
    imm_received = 0;
    ex_barrier();
  } else {
    ex_barrier();
  }
  ex_barrier();
  if (me == 0) { /* once drained, an immediate request goes again (after a poll or a few) */
    int rc;
    while ((rc = gex_AM_RequestShort0(ex_tm, 1, h_imm_short, GEX_FLAG_IMMEDIATE))) gasnet_AMPoll();
  } else if (me == 1) {
    GASNET_BLOCKUNTIL(imm_received == 1);
    imm_received = 0;
  }
  poked = 0;
  ex_barrier();
}

static void register_more(void) {
  gex_AM_Entry_t more[] = {
      {0, (gex_AM_Fn_t)np_req, GEX_FLAG_AM_MEDLONG | GEX_FLAG_AM_REQUEST, 2, NULL, "np_req"},
      {0, (gex_AM_Fn_t)np_rep, GEX_FLAG_AM_MEDLONG | GEX_FLAG_AM_REPLY, 1, NULL, "np_rep"},
      {0, (gex_AM_Fn_t)imm_short, GEX_FLAG_AM_SHORT | GEX_FLAG_AM_REQUEST, 0, NULL, "imm_short"},
      {0, (gex_AM_Fn_t)imm_medium, GEX_FLAG_AM_MEDIUM | GEX_FLAG_AM_REQUEST, 1, NULL, "imm_med"},
      {0, (gex_AM_Fn_t)poke, GEX_FLAG_AM_SHORT | GEX_FLAG_AM_REQREP, 0, NULL, "poke"},
  };
  EX_SAFE(gex_EP_RegisterHandlers(ex_ep, more, sizeof more / sizeof more[0]));
  h_np_req = more[0].gex_index;
  h_np_rep = more[1].gex_index;
  h_imm_short = more[2].gex_index;
  h_imm_medium = more[3].gex_index;
  h_poke = more[4].gex_index;
  /* The first call took 128..133 and 255 downwards for its 96 others (255..160). */
  CHECK(h_np_req == 159 && h_poke == 155, "second registration got %d..%d, expected 159..155",
        (int)h_np_req, (int)h_poke);
}

/* Client data, endpoints, segment queries, memory kinds and locks. */
static void test_objects(void) {
  static int cdata[4];
  gex_Client_SetCData(ex_client, &cdata[0]);
  gex_EP_SetCData(ex_ep, &cdata[1]);
  gex_TM_SetCData(ex_tm, &cdata[2]);
  gex_Segment_SetCData(ex_seg, &cdata[3]);
  CHECK(gex_Client_QueryCData(ex_client) == &cdata[0] && gex_EP_QueryCData(ex_ep) == &cdata[1] &&
        gex_TM_QueryCData(ex_tm) == &cdata[2] && gex_Segment_QueryCData(ex_seg) == &cdata[3],
        "client data does not come back");
  CHECK(gex_EP_QueryIndex(ex_ep) == 0 && gex_Segment_QueryClient(ex_seg) == ex_client,
        "primordial endpoint index %u", (unsigned)gex_EP_QueryIndex(ex_ep));
  for (gex_Rank_t r = 0; r < nranks; r++) {
    gex_EP_Location_t loc = gex_TM_TranslateRankToEP(ex_tm, r, 0);
    CHECK(loc.gex_rank == r && loc.gex_ep_index == 0, "rank %u's endpoint is %u/%u",
          (unsigned)r, (unsigned)loc.gex_rank, (unsigned)loc.gex_ep_index);
    void *owner = NULL, *local = NULL, *owner_nb = (void *)1, *local_nb = (void *)1;
    uintptr_t size = 0, size_nb = 1;
    EX_SAFE(gex_Segment_QueryBound(ex_tm, r, &owner, &local, &size));
    gex_Event_Wait(gex_EP_QueryBoundSegmentNB(ex_tm, r, &owner_nb, &local_nb, &size_nb, 0));
    CHECK(owner == owner_nb && local == local_nb && size == size_nb,
          "gex_EP_QueryBoundSegmentNB of rank %u differs from gex_Segment_QueryBound",
          (unsigned)r);
  }
  EX_SAFE(gex_EP_PublishBoundSegment(ex_tm, &ex_ep, 1, 0));
  /* Memory kinds: host only; a device kind is refused (with a message on stderr). */
  gex_MK_Create_args_t args;
  memset(&args, 0, sizeof args);
  args.gex_class = GEX_MK_CLASS_CUDA_UVA;
  gex_MK_t kind = GEX_MK_HOST;
  CHECK(gex_MK_Create(&kind, ex_client, &args, 0) == GASNET_ERR_RESOURCE,
        "gex_MK_Create of a CUDA kind did not fail with GASNET_ERR_RESOURCE");
  /* Handler-safe locks. */
  static gex_HSL_t lock = GEX_HSL_INITIALIZER;
  gex_HSL_Lock(&lock);
  gex_HSL_Unlock(&lock);
  CHECK(gex_HSL_Trylock(&lock) == GASNET_OK, "a free lock could not be taken");
  gex_HSL_Unlock(&lock);
}

static void test_queries(void) {
  CHECK(gex_TM_QueryRank(ex_tm) == me && gex_TM_QuerySize(ex_tm) == nranks,
        "team rank/size %u/%u", (unsigned)gex_TM_QueryRank(ex_tm),
        (unsigned)gex_TM_QuerySize(ex_tm));
  CHECK(gex_TM_QueryEP(ex_tm) == ex_ep && gex_EP_QueryClient(ex_ep) == ex_client &&
        gex_TM_QueryClient(ex_tm) == ex_client && gex_EP_QuerySegment(ex_ep) == ex_seg,
        "the objects do not point at each other");
  CHECK(!strcmp(gex_Client_QueryName(ex_client), "EX_AM_TEST"), "client name %s",
        gex_Client_QueryName(ex_client));
  CHECK(gex_Segment_QueryAddr(ex_seg) == ex_seg_of(me), "segment address");
  CHECK(gex_Segment_QuerySize(ex_seg) >= 2 * GASNETC_MAX_LONG, "segment size %lu",
        (unsigned long)gex_Segment_QuerySize(ex_seg));
  gex_RankInfo_t *nbrhd, *host;
  gex_Rank_t nsize, nidx, hsize, hidx, nsets, nrank, hsets, hrank;
  gex_System_QueryNbrhdInfo(&nbrhd, &nsize, &nidx);
  gex_System_QueryHostInfo(&host, &hsize, &hidx);
  gex_System_QueryMyPosition(&nsets, &nrank, &hsets, &hrank);
  CHECK(nbrhd[nidx].gex_jobrank == me && host[hidx].gex_jobrank == me, "own entries");
  CHECK(nsize <= hsize && nsets >= hsets && nrank < nsets && hrank < hsets,
        "nbrhd %u of %u (%u sets), host %u of %u (%u sets)", (unsigned)nidx, (unsigned)nsize,
        (unsigned)nsets, (unsigned)hidx, (unsigned)hsize, (unsigned)hsets);
  for (gex_Rank_t i = 1; i < nsize; i++)
    CHECK(nbrhd[i - 1].gex_jobrank < nbrhd[i].gex_jobrank, "neighbourhood not ascending");
  /* The host's ranks, for the test to compare with where the launcher put them. */
  char line[256];
  int len = snprintf(line, sizeof line, "ex_am_test: rank %u host ranks", (unsigned)me);
  for (gex_Rank_t i = 0; i < hsize && len < 200; i++)
    len += snprintf(line + len, sizeof line - (size_t)len, " %u", (unsigned)host[i].gex_jobrank);
  printf("%s\n", line);
  fflush(stdout);
  for (gex_Rank_t r = 0; r < nranks; r++) {
    void *owner, *local;
    uintptr_t size;
    EX_SAFE(gex_Segment_QueryBound(ex_tm, r, &owner, &local, &size));
    bool in_nbrhd = false;
    for (gex_Rank_t i = 0; i < nsize; i++) in_nbrhd |= nbrhd[i].gex_jobrank == r;
    CHECK(size >= 2 * GASNETC_MAX_LONG, "rank %u's segment of %lu bytes", (unsigned)r,
          (unsigned long)size);
    CHECK(!local == !in_nbrhd, "rank %u: local address %p, in my neighbourhood: %d", (unsigned)r,
          local, in_nbrhd);
    CHECK(gex_TM_TranslateRankToJobrank(ex_tm, r) == r &&
          gex_TM_TranslateJobrankToRank(ex_tm, r) == r, "primordial team translation of %u",
          (unsigned)r);
  }
  CHECK(gex_AM_MaxRequestMedium(ex_tm, GEX_RANK_INVALID, GEX_EVENT_NOW, 0, 16) == max_medium &&
        gex_AM_MaxReplyLong(ex_tm, 0, NULL, 0, 0) == GASNETC_MAX_LONG &&
        gex_AM_LUBRequestMedium() >= 512, "AM limits");
}

/* The forms that count their own arguments, and lc_opt's events and groups. */
static void test_forms(gex_Rank_t dest) {
  int cat = SHORT, n = 2;
  int k = sent_count[(cat * (MAXN + 1) + n) * nranks + dest]++;
  uint32_t seed = seed_of((int)me, cat, n, k);
  expect_reply_seed = seed + 1;
  int before = replies;
  EX_SAFE(gex_AM_RequestShort(ex_tm, dest, hreq[SHORT][2], 0, arg_value(seed, 0),
                              arg_value(seed, 1)));
  GASNET_BLOCKUNTIL(replies == before + 1);
  /* A Medium with an lc_opt event, then one in the NBI group. */
  cat = MEDIUM, n = 0;
  for (int group = 0; group < 2; group++) {
    k = sent_count[(cat * (MAXN + 1) + n) * nranks + dest]++;
    seed = seed_of((int)me, cat, n, k);
    size_t size = sizes[MEDIUM][k % nsizes[MEDIUM]];
    fill_pattern(scratch, size, seed);
    expect_reply_seed = seed + 1;
    expect_reply_size = size;
    before = replies;
    gex_Event_t lc = GEX_EVENT_NO_OP;
    EX_SAFE(gex_AM_RequestMedium(ex_tm, dest, hreq[MEDIUM][0], scratch, size,
                                 group ? GEX_EVENT_GROUP : &lc, 0));
    if (group) {
      gex_NBI_Wait(GEX_EC_AM | GEX_EC_LC, 0);
      CHECK(gex_NBI_Test(GEX_EC_AM, 0) == 0, "NBI AM group not complete after its wait");
    } else {
      CHECK(lc == GEX_EVENT_INVALID, "lc_opt event of a Medium request was not set");
    }
    GASNET_BLOCKUNTIL(replies == before + 1);
  }
}

static void send_one(gex_Rank_t dest, int cat, int n, size_t size) {
  int k = sent_count[(cat * (MAXN + 1) + n) * nranks + dest]++;
  uint32_t seed = seed_of((int)me, cat, n, k);
  gex_AM_Arg_t a[MAXN];
  for (int i = 0; i < n; i++) a[i] = arg_value(seed, i);
  fill_pattern(scratch, size, seed);
  expect_reply_seed = seed + 1;
  expect_reply_size = size;
  int before = replies;
  EX_SAFE(request(cat, dest, hreq[cat][n], n, a, scratch, size, segs[dest], GEX_EVENT_NOW));
  GASNET_BLOCKUNTIL(replies == before + 1);
}

int main(int argc, char **argv) {
  ex_start(&argc, &argv, "EX_AM_TEST", 2 * GASNETC_MAX_LONG + GASNET_PAGESIZE);
  me = gex_TM_QueryRank(ex_tm);
  nranks = gex_TM_QuerySize(ex_tm);
  CHECK(me == gex_System_QueryJobRank() && nranks == gex_System_QueryJobSize(),
        "primordial team %u/%u is not the job", (unsigned)me, (unsigned)nranks);
  EX_SAFE(gex_EP_RegisterHandlers(ex_ep, table, sizeof table / sizeof table[0]));
  int next = 255;
  for (int n = 0; n <= MAXN; n++)
    for (int c = 0; c < NCAT; c++) {
      hreq[c][n] = table[n * 6 + c * 2].gex_index;
      hrep[c][n] = table[n * 6 + c * 2 + 1].gex_index;
      int want_req = n == 0 ? 128 + c * 2 : next--;
      int want_rep = n == 0 ? 128 + c * 2 + 1 : next--;
      CHECK(hreq[c][n] == want_req && hrep[c][n] == want_rep,
            "%s n %d got indices %d/%d, expected %d/%d", cat_names[c], n, hreq[c][n], hrep[c][n],
            want_req, want_rep);
    }
  register_more();
  max_medium = gex_AM_MaxRequestMedium(ex_tm, GEX_RANK_INVALID, GEX_EVENT_NOW, 0, 16);
  size_t medium[] = {0, 1, 7, 4096, max_medium};
  size_t largest = GASNETC_MAX_LONG;
  if (argc > 2 && !strcmp(argv[1], "largest")) largest = (size_t)strtoul(argv[2], NULL, 0);
  CHECK(largest >= max_medium && largest <= GASNETC_MAX_LONG,
        "largest %lu: give max_medium..MaxLong bytes", (unsigned long)largest);
  size_t lng[] = {0, 1, 7, 4096, max_medium, largest};
  memcpy(sizes[MEDIUM], medium, sizeof medium);
  memcpy(sizes[LONG], lng, sizeof lng);
  nsizes[SHORT] = 1, nsizes[MEDIUM] = 5, nsizes[LONG] = 6;
  recv_count = calloc((size_t)NCAT * (MAXN + 1) * nranks, sizeof *recv_count);
  sent_count = calloc((size_t)NCAT * (MAXN + 1) * nranks, sizeof *sent_count);
  scratch = malloc(GASNETC_MAX_LONG);
  segs = malloc(nranks * sizeof *segs);
  for (gex_Rank_t r = 0; r < nranks; r++) segs[r] = ex_seg_of(r);
  ex_barrier(); /* every rank's handlers exist before anything is sent */

  if (argc > 2 && !strcmp(argv[1], "immediate")) {
    flood(argv[2], "short", FLOOD_SHORT);
    flood(argv[2], "medium", FLOOD_MEDIUM);
    flood(argv[2], "negotiated", FLOOD_NEGOTIATED);
    ex_finish("ex_am_test immediate");
  }

  test_queries();
  test_objects();
  gex_Rank_t targets[2] = {(gex_Rank_t)((me + 1) % nranks), me};
  for (int t = 0; t < 2; t++) {
    gex_Rank_t dest = targets[t];
    for (int n = 0; n <= MAXN; n++)
      for (int c = 0; c < NCAT; c++)
        for (int s = 0; s < nsizes[c]; s++) send_one(dest, c, n, sizes[c][s]);
    test_forms(dest);
    test_negotiated(dest);
    ex_barrier(); /* Longs to a rank's segment come from one rank at a time */
  }
  ex_finish("ex_am_test");
}
