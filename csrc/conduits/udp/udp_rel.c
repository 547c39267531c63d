/* udp_rel.c: sequence numbers, cumulative and selective acknowledgements, retransmission with
 * backoff, duplicate suppression and in-order delivery for one peer (see udp_rel.h). The
 * timeout adapts to measured round trips as TCP's does (RFC 6298, with Karn's backoff), from a
 * configured start. */
#include "udp_rel.h"

#include <stdlib.h>

static inline uint32_t slot(const gasnetc_rel_t *r, uint32_t seq) { return seq & (r->window - 1); }
/* Sequence arithmetic that survives wrap-around. */
static inline bool before(uint32_t a, uint32_t b) { return (int32_t)(a - b) < 0; }

bool gasnetc_rel_init(gasnetc_rel_t *r, uint32_t window, const gasnetc_rel_timeouts_t *t) {
  *r = (gasnetc_rel_t){.window = window, .rtt = {.rto = t->initial}, .stalled_since = -1,
                       .progress_at = -1, .echo_copy = GASNETC_REL_NO_ECHO};
  if (window == 0 || window > 65536 || (window & (window - 1))) return false;
  r->out = calloc(window, sizeof *r->out);
  r->held = calloc(window, sizeof *r->held);
  r->held_len = calloc(window, sizeof *r->held_len);
  return r->out && r->held && r->held_len;
}

void gasnetc_rel_fini(gasnetc_rel_t *r, gasnetc_rel_release_fn release, void *ctx) {
  if (r->out)
    for (uint32_t i = 0; i < r->window; i++)
      if (r->out[i].in_use && release) release(ctx, r->out[i].buf);
  if (r->held)
    for (uint32_t i = 0; i < r->window; i++)
      if (r->held[i] && release) release(ctx, r->held[i]);
  free(r->out);
  free(r->held);
  free(r->held_len);
  r->out = NULL, r->held = NULL, r->held_len = NULL;
}

/* ---- sending ---------------------------------------------------------------------------- */
uint32_t gasnetc_rel_send(gasnetc_rel_t *r, void *buf, uint32_t len, double now,
                          const gasnetc_rel_timeouts_t *t) {
  uint32_t seq = r->next_seq++;
  r->counts.sent++;
  gasnetc_rel_out_t *o = &r->out[slot(r, seq)];
  /* A stream that measured nothing yet starts from what the rank's other streams learnt. */
  double rto = gasnetc_rel_rto(r, t);
  *o = (gasnetc_rel_out_t){.buf = buf, .len = len, .in_use = 1, .first_sent = now,
                           .last_sent = now, .rto = rto};
  if (r->stalled_since < 0) r->stalled_since = now;
  return seq;
}

static void update_rtt(gasnetc_rel_rtt_t *e, double rtt, double floor) {
  if (e->srtt == 0) {
    e->srtt = rtt > 0 ? rtt : 1e-9;
    e->rttvar = rtt / 2;
  } else {
    double err = rtt > e->srtt ? rtt - e->srtt : e->srtt - rtt;
    e->rttvar = 0.75 * e->rttvar + 0.25 * err;
    e->srtt = 0.875 * e->srtt + 0.125 * rtt;
  }
  e->rto = e->srtt + 4 * e->rttvar;
  if (e->rto < floor) e->rto = floor;
}

static void sample_rtt(gasnetc_rel_t *r, double rtt, const gasnetc_rel_timeouts_t *t) {
  update_rtt(&r->rtt, rtt, t->floor);
  if (t->learnt) update_rtt(t->learnt, rtt, t->floor);
}

/* The echo names a packet still unacknowledged here and the copy of it that arrived: the
 * round trip is measured on it, from that copy's sending (a copy between the first and the
 * last has no time kept), and on nothing else. A packet acknowledged together with others was
 * not what made the peer answer: it may have waited at the peer behind a lost one until the
 * loss was repaired (only the oldest packet goes again on a timeout), and its time would grow
 * the timeout without bound. And a packet sent more than once is measured too, so a peer
 * slower to answer than the timeout still teaches it (Karn's rule would never measure it).
 * Returns when that copy was sent (-1: not known). */
static double take_echo(gasnetc_rel_t *r, gasnetc_rel_ackinfo_t info, double now,
                        const gasnetc_rel_timeouts_t *t) {
  if (info.echo_copy == GASNETC_REL_NO_ECHO || r->una == r->next_seq) return -1;
  uint32_t seq = r->una + ((info.echo_seq - r->una) & 0xFFFFFFu);
  if (!before(seq, r->next_seq)) return -1;
  gasnetc_rel_out_t *o = &r->out[slot(r, seq)];
  if (!o->in_use) return -1;
  double sent = info.echo_copy == 0 ? o->first_sent
                : info.echo_copy == o->copies ? o->last_sent : -1;
  if (sent >= 0 && !o->sampled) {
    o->sampled = 1;
    sample_rtt(r, now - sent, t);
  }
  return sent;
}

static void resend_now(gasnetc_rel_t *r, gasnetc_rel_out_t *o, double now,
                       gasnetc_rel_resend_fn resend, void *ctx) {
  o->last_sent = now;
  if (o->copies < GASNETC_REL_NO_ECHO - 1) o->copies++;
  r->counts.resent_hole++;
  if (resend) resend(ctx, o->buf, o->len, o->copies);
}

uint32_t gasnetc_rel_acked(gasnetc_rel_t *r, gasnetc_rel_ackinfo_t info, double now,
                           const gasnetc_rel_timeouts_t *t, gasnetc_rel_release_fn release,
                           gasnetc_rel_resend_fn resend, void *ctx) {
  uint32_t freed = 0;
  /* An acknowledgement of something never sent is garbage: ignore it. */
  if (before(r->next_seq, info.ack)) return 0;
  double arrived_sent = take_echo(r, info, now, t);
  while (before(r->una, info.ack)) {
    gasnetc_rel_out_t *o = &r->out[slot(r, r->una)];
    if (o->in_use) {
      if (release) release(ctx, o->buf);
      o->in_use = 0;
      freed++;
    }
    r->una++;
  }
  /* Selectively acknowledged packets are done too; a hole below one of them with three or
   * more after it was lost: send it again once, without waiting for its timeout. */
  int highest = -1;
  for (int i = 63; i >= 0; i--)
    if (info.sack >> i & 1) {
      highest = i;
      break;
    }
  for (int i = 0; i <= highest; i++) {
    uint32_t seq = info.ack + 1 + (uint32_t)i;
    if (!before(seq, r->next_seq)) break;
    /* A late acknowledgement may name packets acknowledged long ago, whose slots now hold
     * newer ones. */
    if (before(seq, r->una)) continue;
    gasnetc_rel_out_t *o = &r->out[slot(r, seq)];
    if (!o->in_use) continue;
    if (info.sack >> i & 1) {
      if (release) release(ctx, o->buf);
      o->in_use = 0;
      o->buf = NULL;
      freed++;
    }
  }
  if (before(r->una, r->next_seq)) {
    /* The first unacknowledged packet (info.ack itself) is a hole if later ones arrived. */
    int later = 0;
    for (int i = 0; i <= highest; i++) later += (int)(info.sack >> i & 1);
    for (uint32_t seq = r->una; later >= 3 && !before(info.ack, r->una) &&
                                before(seq, info.ack + 1 + (uint32_t)highest);
         seq++) {
      gasnetc_rel_out_t *o = &r->out[slot(r, seq)];
      if (!o->in_use || o->fast_done) continue;
      o->fast_done = 1;
      resend_now(r, o, now, resend, ctx);
    }
    /* A copy that arrived was sent after these, which are still missing: on a path that keeps
     * the order of datagrams they were lost (a quarter of a round trip allows for a path that
     * does not quite). This is what repairs a burst of losses once the one packet a timeout
     * sent again is answered, instead of one timeout per lost packet. Only as far as the
     * selective acknowledgements see: a packet beyond them may have arrived. */
    if (arrived_sent >= 0) {
      double slack = r->rtt.srtt / 4;
      for (uint32_t seq = r->una; before(seq, r->next_seq) &&
                                  before(seq, info.ack + 65); seq++) {
        gasnetc_rel_out_t *o = &r->out[slot(r, seq)];
        if (o->in_use && o->last_sent + slack < arrived_sent) resend_now(r, o, now, resend, ctx);
      }
    }
  }
  if (freed) {
    r->stalled_since = before(r->una, r->next_seq) ? now : -1;
    r->progress_at = now;
  }
  return freed;
}

/* The one packet a timeout may send again: the oldest unacknowledged. */
static gasnetc_rel_out_t *oldest(gasnetc_rel_t *r) {
  for (uint32_t seq = r->una; before(seq, r->next_seq); seq++) {
    gasnetc_rel_out_t *o = &r->out[slot(r, seq)];
    if (o->in_use) return o;
  }
  return NULL;
}

/* Its timeout runs from its last sending or from the last acknowledgement that acknowledged
 * something, whichever is later (RFC 6298 5.3): while the peer acknowledges, the packets
 * queued behind the acknowledged ones are on their way, however long the queue. */
static double due(const gasnetc_rel_t *r, const gasnetc_rel_out_t *o) {
  double from = o->last_sent > r->progress_at ? o->last_sent : r->progress_at;
  return from + o->rto;
}

/* A timeout sends the oldest unacknowledged packet again, and only it (RFC 6298 5.4): a peer
 * that was only slow to read (descheduled, busy in a handler) then gets one needless copy, not
 * one of every packet in flight; the answer to that copy shows what else was lost (above), and
 * a peer that stays silent gets the same packet again after a longer timeout. */
bool gasnetc_rel_tick(gasnetc_rel_t *r, double now, const gasnetc_rel_timeouts_t *t,
                      gasnetc_rel_resend_fn resend, void *ctx) {
  if (!before(r->una, r->next_seq)) return true;
  if (r->stalled_since >= 0 && now - r->stalled_since > t->max) return false;
  gasnetc_rel_out_t *o = oldest(r);
  if (!o || now < due(r, o)) return true;
  o->last_sent = now;
  r->counts.resent_timeout++;
  /* Back off, but keep at least 16 attempts within the time that declares a peer lost, so
   * heavy loss alone does not look like a vanished peer. */
  o->rto *= t->backoff;
  if (o->rto > t->max / 16) o->rto = t->max / 16;
  if (o->copies < GASNETC_REL_NO_ECHO - 1) o->copies++;
  if (resend) resend(ctx, o->buf, o->len, o->copies);
  return true;
}

void gasnetc_rel_peer_alive(gasnetc_rel_t *r, double now) {
  if (r->stalled_since >= 0) r->stalled_since = now;
}

double gasnetc_rel_next_deadline(const gasnetc_rel_t *r) {
  const gasnetc_rel_out_t *o = oldest((gasnetc_rel_t *)r);
  return o ? due(r, o) : -1;
}

/* ---- receiving -------------------------------------------------------------------------- */
int gasnetc_rel_receive(gasnetc_rel_t *r, uint32_t seq, unsigned copy, void *buf, uint32_t len) {
  r->ack_due = true; /* even a duplicate: our acknowledgement may have been lost */
  /* The first packet since the last echo went: of a slow reader's backlog (copies 0, 1, 2 of
   * one packet read in one go), copy 0, whose sending time the sender kept. */
  if (r->echo_copy == GASNETC_REL_NO_ECHO) {
    r->echo_seq = seq;
    r->echo_copy = copy < GASNETC_REL_NO_ECHO ? (uint8_t)copy : GASNETC_REL_NO_ECHO - 1;
  }
  if (before(seq, r->expected)) return r->counts.duplicates++, GASNETC_REL_DUPLICATE;
  if (seq - r->expected >= r->window) return r->counts.beyond++, GASNETC_REL_BEYOND;
  if (seq == r->expected) {
    r->expected++;
    r->counts.delivered++;
    return GASNETC_REL_DELIVER;
  }
  uint32_t s = slot(r, seq);
  if (r->held[s]) return r->counts.duplicates++, GASNETC_REL_DUPLICATE;
  r->held[s] = buf;
  r->held_len[s] = len;
  r->counts.held++;
  return GASNETC_REL_HELD;
}

void gasnetc_rel_keep_held(gasnetc_rel_t *r, uint32_t seq, void *buf) {
  r->held[slot(r, seq)] = buf;
}

bool gasnetc_rel_wanted(const gasnetc_rel_t *r, uint32_t seq) {
  return !before(seq, r->expected) && seq - r->expected < r->window && !r->held[slot(r, seq)];
}

void *gasnetc_rel_next_held(gasnetc_rel_t *r, uint32_t *len) {
  uint32_t s = slot(r, r->expected);
  void *buf = r->held[s];
  if (!buf) return NULL;
  r->held[s] = NULL;
  *len = r->held_len[s];
  r->expected++;
  r->counts.delivered++;
  return buf;
}

gasnetc_rel_ackinfo_t gasnetc_rel_ackinfo(gasnetc_rel_t *r) {
  /* The echo goes once: repeated in later packets (the first one lost, say), it would
   * measure from the copy's arrival to a later packet's, and inflate the timeout. */
  gasnetc_rel_ackinfo_t info = {.ack = r->expected, .sack = 0, .echo_seq = r->echo_seq,
                                .echo_copy = r->echo_copy};
  r->echo_copy = GASNETC_REL_NO_ECHO;
  for (uint32_t i = 0; i < 64 && i + 1 < r->window; i++)
    if (r->held[slot(r, r->expected + 1 + i)]) info.sack |= 1ull << i;
  r->ack_due = false;
  return info;
}
