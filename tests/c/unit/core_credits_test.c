/* core_credits_test.c: the core's AM credit rules alone, in a simulated job: ranks send
 * requests to random peers, handlers reply or not (implicit replies), credits come back in
 * replies, piggybacked on requests, or in hidden replies once the slack is exceeded. Checks:
 * a rank never has more than GASNET_AM_CREDITS_PP requests in flight to a peer nor more than
 * _TOTAL in all, nobody owes more than the slack when it could have returned, and at the end
 * every credit is back. Usage: core_credits_test ROUNDS FIRST_SEED */
#include <stdio.h>
#include <stdlib.h>

#include "am/credits.h"

enum { RANKS = 6, MAXQ = 1 << 16 };

typedef struct {
  int from, to;
  int is_reply;     /* a reply (returns the request's credit) or a hidden credit return */
  int piggyback;    /* credits carried back */
} msg_t;

static msg_t queue[MAXQ];
static int nq;
static uint64_t rng;

static unsigned rnd(unsigned n) {
  rng ^= rng >> 12, rng ^= rng << 25, rng ^= rng >> 27;
  return (unsigned)((rng * 2685821657736338717ull) >> 33) % n;
}

static int check(int ok, const char *what, uint64_t seed) {
  if (!ok) fprintf(stderr, "seed %llu: %s\n", (unsigned long long)seed, what);
  return ok;
}

static int run(uint64_t seed, int rounds) {
  rng = seed * 0x9E3779B97F4A7C15ull + 7;
  int pp = 1 + (int)rnd(8), slack = (int)rnd((unsigned)pp + 1), total = rnd(2) ? -1 : 1 + (int)rnd(20);
  gasneti_credits_t c[RANKS];
  for (int r = 0; r < RANKS; r++) gasneti_credits_init(&c[r], RANKS, pp, total, slack);
  int limit = c[0].total_limit, ok = 1;
  nq = 0;
  for (int step = 0; step < rounds && ok; step++) {
    int r = (int)rnd(RANKS);
    if (rnd(2) && nq < MAXQ - 2) { /* rank r sends a request to a random peer */
      int to = (int)rnd(RANKS);
      if (to != r && gasneti_credit_take(&c[r], to))
        queue[nq++] = (msg_t){r, to, 0, gasneti_credit_collect(&c[r], to)};
      ok &= check(c[r].used[to] <= pp, "more requests in flight than GASNET_AM_CREDITS_PP", seed);
      ok &= check(!limit || c[r].total_used <= limit, "more than GASNET_AM_CREDITS_TOTAL", seed);
    } else if (nq) { /* a message arrives (in any order) */
      int i = (int)rnd((unsigned)nq);
      msg_t m = queue[i];
      queue[i] = queue[--nq];
      gasneti_credits_t *me = &c[m.to];
      gasneti_credit_returned(me, m.from, m.piggyback + (m.is_reply == 1));
      if (m.is_reply) continue;
      if (rnd(2)) { /* the handler replies: its credit and what is owed go back */
        queue[nq++] = (msg_t){m.to, m.from, 1, gasneti_credit_collect(me, m.from)};
      } else {      /* implicit reply: owed; returned once beyond the slack */
        gasneti_credit_owe(me, m.from);
        if (gasneti_credit_overdue(me, m.from))
          queue[nq++] = (msg_t){m.to, m.from, 2, gasneti_credit_collect(me, m.from)};
        ok &= check(me->owed[m.from] <= slack, "owes more than GASNET_AM_CREDITS_SLACK", seed);
      }
    }
  }
  /* drain: deliver everything, then pay every debt */
  while (nq && ok) {
    msg_t m = queue[--nq];
    gasneti_credit_returned(&c[m.to], m.from, m.piggyback + (m.is_reply == 1));
    if (!m.is_reply) gasneti_credit_returned(&c[m.from], m.to, 1);
  }
  for (int r = 0; r < RANKS; r++)
    for (int p = 0; p < RANKS; p++) gasneti_credit_returned(&c[p], r, gasneti_credit_collect(&c[r], p));
  for (int r = 0; r < RANKS && ok; r++) {
    ok &= check(c[r].total_used == 0, "credits never came back", seed);
    for (int p = 0; p < RANKS; p++) ok &= check(c[r].used[p] == 0, "a peer kept credits", seed);
  }
  for (int r = 0; r < RANKS; r++) gasneti_credits_fini(&c[r]);
  return ok;
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: core_credits_test ROUNDS FIRST_SEED\n");
    return 2;
  }
  int rounds = atoi(argv[1]), failures = 0;
  uint64_t first = strtoull(argv[2], NULL, 10);
  for (uint64_t s = first; s < first + 200; s++) failures += !run(s, rounds);
  printf("core_credits_test: 200 jobs of %d steps, %d failures\n", rounds, failures);
  return failures != 0;
}
