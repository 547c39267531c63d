/* udp_rel.h: reliable, ordered delivery over an unreliable datagram service, for one pair of
 * streams (to and from one peer). No socket calls and no clock: the caller moves packets and
 * passes the time, so the same code runs under the conduit and under a lossy in-memory test
 * transport (tests/c/udp_rel_test.c).
 *
 * Each data packet carries a sequence number; every packet (data or not) carries the
 * cumulative acknowledgement (the next sequence number expected) and a selective one (which
 * of the 64 following have arrived). A packet is sent again when packets sent after it arrived
 * first (a hole in the selective acknowledgements, or the echo below names a later copy), or
 * when it is the oldest unacknowledged one and nothing was acknowledged for its timeout, with
 * exponential backoff; duplicates are dropped; packets that arrive early are held and
 * delivered in order.
 *
 * Every copy of a packet carries its copy number (0: the first sending), and every packet
 * echoes the sequence number and copy number of the last data packet its sender received.
 * So a round trip is measured also on a packet sent more than once (which copy arrived is
 * known), and a packet sent again for nothing (its first copy arrived: the peer was only
 * slow) raises the timeout instead of being sent again and again: with timeouts measured only
 * on packets sent once (Karn), a peer slower to answer than the timeout never yields a
 * measurement, and every packet to it goes several times. */
#ifndef GASNETC_UDP_REL_H
#define GASNETC_UDP_REL_H

#include <stdbool.h>
#include <stdint.h>

/* A round-trip estimate (RFC 6298's smoothed time and variation, and the timeout they give). */
typedef struct {
  double srtt, rttvar, rto; /* srtt 0: nothing measured yet */
} gasnetc_rel_rtt_t;

typedef struct {
  double initial;  /* first retransmission timeout, before any round trip was measured (s) */
  double backoff;  /* each retransmission of a packet multiplies its timeout by this */
  double max;      /* no acknowledgement progress for this long: the peer is unreachable (s) */
  double floor;    /* the adaptive timeout never goes below this (s) */
  /* Learnt from every stream of the rank that shares it (NULL: none): a stream that measured
   * nothing yet starts from it. One rank's peers mostly answer alike (a host running many
   * ranks per core answers all of them late), and in an all-to-all of hundreds of ranks each
   * stream carries a handful of packets: measured alone, each would learn too late. */
  gasnetc_rel_rtt_t *learnt;
} gasnetc_rel_timeouts_t;

typedef struct {
  void *buf; /* the packet as sent (the caller's; returned through release()) */
  uint32_t len;
  uint8_t in_use;
  uint8_t fast_done;     /* already sent again on a selective-acknowledgement hole */
  uint8_t copies;        /* copy number of the last sending (saturates below GASNETC_REL_NO_ECHO) */
  uint8_t sampled;       /* an echo measured its round trip already */
  double first_sent, last_sent, rto;
} gasnetc_rel_out_t;

/* What happened to this stream's packets (statistics: udp_conduit.c's gasnetc_stats). */
typedef struct {
  /* sending; resent_hole: sent again because packets sent after them arrived */
  uint64_t sent, resent_timeout, resent_hole;
  uint64_t delivered, held, duplicates, beyond;        /* receiving */
} gasnetc_rel_counts_t;

typedef struct {
  /* ---- sending ---- */
  uint32_t window;      /* packets that may be unacknowledged at once (a power of two) */
  uint32_t next_seq;    /* sequence number of the next new data packet */
  uint32_t una;         /* oldest unacknowledged sequence number */
  gasnetc_rel_out_t *out; /* [seq & (window - 1)] for seq in [una, next_seq) */
  gasnetc_rel_rtt_t rtt;  /* this stream's own measurements (rto: t->initial before any) */
  double stalled_since; /* when the oldest unacknowledged packet was first sent */
  double progress_at;   /* when an acknowledgement last acknowledged something (-1: never) */
  /* ---- receiving ---- */
  uint32_t expected;    /* next sequence number to deliver */
  void **held;          /* [seq & (window - 1)]: packets that arrived early */
  uint32_t *held_len;
  bool ack_due;         /* something arrived that the peer has not been told about */
  uint32_t echo_seq;    /* the last data packet received: its sequence and copy numbers */
  uint8_t echo_copy;    /* (GASNETC_REL_NO_ECHO: none yet) */
  gasnetc_rel_counts_t counts;
} gasnetc_rel_t;

/* What the other side told us, and what we tell it, in every packet. */
enum { GASNETC_REL_NO_ECHO = 0xFF };
typedef struct {
  uint32_t ack;  /* every sequence number below this has arrived */
  uint64_t sack; /* bit i: ack + 1 + i has arrived too */
  uint32_t echo_seq;  /* the last data packet received (only its low 24 bits are compared) */
  uint8_t echo_copy;  /* ... and which of its copies; GASNETC_REL_NO_ECHO: none */
} gasnetc_rel_ackinfo_t;
/* The echo in 32 bits, for a packet header: low 24 bits of the sequence number, copy. */
static inline uint32_t gasnetc_rel_echo_pack(gasnetc_rel_ackinfo_t i) {
  return i.echo_seq << 8 | i.echo_copy;
}
static inline void gasnetc_rel_echo_unpack(gasnetc_rel_ackinfo_t *i, uint32_t packed) {
  i->echo_seq = packed >> 8;
  i->echo_copy = (uint8_t)packed;
}

typedef void (*gasnetc_rel_release_fn)(void *ctx, void *buf);
/* copy: the copy number the packet must now carry (1, 2, ...). */
typedef void (*gasnetc_rel_resend_fn)(void *ctx, void *buf, uint32_t len, unsigned copy);

/* window: a power of two, 1..65536. Returns false when out of memory. */
bool gasnetc_rel_init(gasnetc_rel_t *r, uint32_t window, const gasnetc_rel_timeouts_t *t);
void gasnetc_rel_fini(gasnetc_rel_t *r, gasnetc_rel_release_fn release, void *ctx);

/* ---- sending ---- */
static inline bool gasnetc_rel_window_open(const gasnetc_rel_t *r) {
  return r->next_seq - r->una < r->window;
}
static inline uint32_t gasnetc_rel_in_flight(const gasnetc_rel_t *r) {
  return r->next_seq - r->una;
}
/* The retransmission timeout a packet sent now would get. */
static inline double gasnetc_rel_rto(const gasnetc_rel_t *r, const gasnetc_rel_timeouts_t *t) {
  return r->rtt.srtt == 0 && t->learnt && t->learnt->srtt > 0 ? t->learnt->rto : r->rtt.rto;
}
/* Takes the next sequence number for a packet about to be sent (the window must be open) and
 * keeps buf until it is acknowledged. */
uint32_t gasnetc_rel_send(gasnetc_rel_t *r, void *buf, uint32_t len, double now,
                          const gasnetc_rel_timeouts_t *t);
/* Applies what a packet from the peer acknowledged: frees acknowledged packets (release), sends
 * again the ones a selective-acknowledgement hole shows lost (resend). Returns how many were
 * acknowledged. */
uint32_t gasnetc_rel_acked(gasnetc_rel_t *r, gasnetc_rel_ackinfo_t info, double now,
                           const gasnetc_rel_timeouts_t *t, gasnetc_rel_release_fn release,
                           gasnetc_rel_resend_fn resend, void *ctx);
/* Sends again whatever timed out. Returns false when the peer made no progress for t->max. */
bool gasnetc_rel_tick(gasnetc_rel_t *r, double now, const gasnetc_rel_timeouts_t *t,
                      gasnetc_rel_resend_fn resend, void *ctx);
/* The peer is known to be alive though it acknowledges nothing (its process answered a
 * liveness probe without having polled since the last one: it computes): its silence so far
 * is not a failure, so the time that declares it lost starts again now. */
void gasnetc_rel_peer_alive(gasnetc_rel_t *r, double now);
/* The next time tick() has something to do (-1: nothing in flight). */
double gasnetc_rel_next_deadline(const gasnetc_rel_t *r);

/* ---- receiving ---- */
enum {
  GASNETC_REL_DELIVER = 0,   /* in order: deliver it now, then gasnetc_rel_next_held() */
  GASNETC_REL_HELD = 1,      /* early: kept (buf now belongs to the stream) */
  GASNETC_REL_DUPLICATE = 2, /* seen before: drop it */
  GASNETC_REL_BEYOND = 3     /* outside the window: drop it (the sender will send again) */
};
/* copy: the copy number the packet carried (echoed back to its sender). */
int gasnetc_rel_receive(gasnetc_rel_t *r, uint32_t seq, unsigned copy, void *buf, uint32_t len);
/* A packet receive() said HELD is kept at buf instead (a copy of it). */
void gasnetc_rel_keep_held(gasnetc_rel_t *r, uint32_t seq, void *buf);
/* Whether a packet with this sequence number would be taken (inside the window, neither
 * delivered nor held), without taking it: a packet still being put together from pieces. */
bool gasnetc_rel_wanted(const gasnetc_rel_t *r, uint32_t seq);
/* After delivering in-order packets: the next held packet that is now in order, or NULL. */
void *gasnetc_rel_next_held(gasnetc_rel_t *r, uint32_t *len);
/* What to tell the peer; clears ack_due. */
gasnetc_rel_ackinfo_t gasnetc_rel_ackinfo(gasnetc_rel_t *r);

#endif
