/* credits.h: AM flow control for network conduits, shared so each gets the same
 * rules: a request consumes a credit for its destination (and one of the rank's total); the
 * reply that answers it returns it. A responder whose handler sends no reply owes the credit
 * (an implicit reply) and banks it; banked credits ride back on its next message to that
 * peer, or in a hidden reply once more than the slack are banked. Banked credits come back
 * only with traffic, so the slack is clamped where banking could strand a sender whose peers
 * fall silent: below _PP (else one peer can hold all of a sender's credits for it), and to 0
 * when _TOTAL could be spread over peers that each bank up to the slack. Not thread safe: the
 * conduit calls it under its own lock. */
#ifndef GASNETI_CREDITS_H
#define GASNETI_CREDITS_H

#include <stdbool.h>
#include <stdint.h>

#include "gasnet_internal.h"

typedef struct {
  int nranks, pp, slack;
  int total_limit; /* 0: no limit beyond the per-peer one */
  int total_used;
  uint16_t *used;  /* per peer: requests in flight to it */
  uint16_t *owed;  /* per peer: credits banked for it (requests served, not yet returned) */
} gasneti_credits_t;

/* From GASNET_AM_CREDITS_PP, _TOTAL (negative: computed, min(256, ranks * pp)) and _SLACK
 * (negative: computed, _PP / 3 and at most 4; clamped as said above). */
bool gasneti_credits_init(gasneti_credits_t *c, int nranks, int pp, int total, int slack);
void gasneti_credits_fini(gasneti_credits_t *c);
/* gasneti_credits_init from this job's knobs; out of memory is fatal, naming the conduit. */
void gasneti_credits_setup(gasneti_credits_t *c, const char *conduit);

/* A request to peer may go: takes a credit, or returns false (poll and try again). */
static inline bool gasneti_credit_take(gasneti_credits_t *c, int peer) {
  if (c->used[peer] >= c->pp || (c->total_limit && c->total_used >= c->total_limit)) return false;
  c->used[peer]++;
  c->total_used++;
  return true;
}

/* n credits came back from peer (in a reply or piggybacked on any of its messages). */
static inline void gasneti_credit_returned(gasneti_credits_t *c, int peer, int n) {
  if (n > c->used[peer]) n = c->used[peer]; /* never more than were taken */
  c->used[peer] = (uint16_t)(c->used[peer] - n);
  c->total_used -= n;
}

/* A request from peer was served without a reply: its credit is owed. */
static inline void gasneti_credit_owe(gasneti_credits_t *c, int peer) { c->owed[peer]++; }

/* Credits to send back to peer now (all that is owed); clears the debt. */
static inline int gasneti_credit_collect(gasneti_credits_t *c, int peer) {
  int n = c->owed[peer];
  c->owed[peer] = 0;
  return n;
}

/* Credits collected for a message that then did not go: owed again. */
static inline void gasneti_credit_reowe(gasneti_credits_t *c, int peer, int n) {
  c->owed[peer] = (uint16_t)(c->owed[peer] + n);
}

/* More than the slack is owed: return it in a hidden reply without waiting for traffic. */
static inline bool gasneti_credit_overdue(const gasneti_credits_t *c, int peer) {
  return c->owed[peer] > c->slack;
}

/* An immediate request's credit (GEX_FLAG_IMMEDIATE): 1 taken, 0 none free now, -1 the peer
 * returned from main (nothing to send). Never serves the network. lock as below. */
static inline int gasneti_credit_try(gasneti_credits_t *c, gasneti_spinlock_t *lock, int peer,
                                     const bool *finished) {
  if (lock) gasneti_spin_lock(lock);
  int got = *finished ? -1 : gasneti_credit_take(c, peer) ? 1 : 0;
  if (lock) gasneti_spin_unlock(lock);
  return got;
}

/* A credit taken for a request that then did not go (an immediate one that found no buffer). */
static inline void gasneti_credit_untake(gasneti_credits_t *c, gasneti_spinlock_t *lock, int peer) {
  if (lock) gasneti_spin_lock(lock);
  gasneti_credit_returned(c, peer, 1);
  if (lock) gasneti_spin_unlock(lock);
}

/* A request to peer takes a credit, waiting while none is free: serve(which) runs the
 * conduit's network (returning how many messages ran; an idle one backs off). lock (NULL in
 * SEQ builds) is the conduit's lock over the counters. Returns false, taking nothing, once
 * *finished says the peer returned from main (nobody will read the request). */
bool gasneti_credit_wait(gasneti_credits_t *c, gasneti_spinlock_t *lock, int peer,
                         const bool *finished, int (*serve)(int which), int which);

#endif
