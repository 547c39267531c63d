/* credits.c: setting up the AM credit counters from the knobs, and waiting for a credit (the
 * rules are in credits.h). */
#include "credits.h"

#include <stdlib.h>

#include "knobs.h"

bool gasneti_credits_init(gasneti_credits_t *c, int nranks, int pp, int total, int slack) {
  /* The default banks a third of _PP, at most 4: the sender keeps two thirds of its credits
   * in flight while a hidden reply travels back, and a flood (requests with no reply) costs
   * one hidden reply per 5 requests instead of per 2 (on udp;ofi_rxd, a datagram and its
   * acknowledgement each: 10.3 -> 8.1 us a message across hosts, ofi README). */
  if (slack < 0) slack = pp / 3 < 4 ? pp / 3 : 4;
  *c = (gasneti_credits_t){.nranks = nranks, .pp = pp, .slack = slack};
  if (total < 0) total = nranks * pp < 256 ? nranks * pp : 256;
  c->total_limit = total;
  if (c->slack > pp - 1) c->slack = pp - 1;
  if (total && nranks > 1 && (int64_t)total <= (int64_t)(nranks - 1) * c->slack)
    c->slack = (total - 1) / (nranks - 1);
  c->used = calloc((size_t)nranks, sizeof *c->used);
  c->owed = calloc((size_t)nranks, sizeof *c->owed);
  return c->used && c->owed;
}

void gasneti_credits_fini(gasneti_credits_t *c) {
  free(c->used);
  free(c->owed);
  c->used = c->owed = NULL;
}

void gasneti_credits_setup(gasneti_credits_t *c, const char *conduit) {
  int64_t total = gasneti_knob_is_set("GASNET_AM_CREDITS_TOTAL")
                      ? gasneti_knob_int("GASNET_AM_CREDITS_TOTAL") : -1;
  int64_t slack = gasneti_knob_is_set("GASNET_AM_CREDITS_SLACK")
                      ? gasneti_knob_int("GASNET_AM_CREDITS_SLACK") : -1;
  if (!gasneti_credits_init(c, gasneti_nodes, (int)gasneti_knob_int("GASNET_AM_CREDITS_PP"),
                            (int)total, (int)slack))
    gasneti_fatalerror("%s: out of memory for AM credits", conduit);
}

bool gasneti_credit_wait(gasneti_credits_t *c, gasneti_spinlock_t *lock, int peer,
                         const bool *finished, int (*serve)(int which), int which) {
  for (;;) {
    if (lock) gasneti_spin_lock(lock);
    bool gone = *finished, ok = gone || gasneti_credit_take(c, peer);
    if (lock) gasneti_spin_unlock(lock);
    if (ok) return !gone;
    if (!serve(which)) gasneti_wait_backoff();
    gasneti_exit_check();
  }
}
