/* udp_rel_test.c: the udp conduit's reliability layer alone, over an in-memory network that
 * drops, duplicates, reorders and delays packets, under many seeded random schedules. Two
 * endpoints send each other numbered messages; every message must be delivered exactly once
 * and in order, every stream must drain in bounded (virtual) time, and every packet buffer must
 * come back. A peer that never answers must be declared unreachable after the maximum time.
 * Usage: udp_rel_test SCHEDULES MESSAGES FIRST_SEED   (prints one line; exit 1 on a failure) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "udp_rel.h"

typedef struct {
  int data;        /* a data packet (else an acknowledgement only) */
  uint32_t seq;
  unsigned copy;   /* a data packet's copy number */
  gasnetc_rel_ackinfo_t ack; /* with the echo, cut to 24 bits as the wire carries it */
  int msg;         /* the message number it carries */
  double arrive;   /* virtual time it reaches the other side */
  int to;          /* endpoint 0 or 1 */
} packet_t;

enum { MAXNET = 1 << 16 };
static packet_t net[MAXNET];
static int nnet;
static uint64_t rng;
static double drop_p, dup_p, max_delay;
static long allocated, released;

static double uniform(void) { /* xorshift64*: reproducible for a seed */
  rng ^= rng >> 12, rng ^= rng << 25, rng ^= rng >> 27;
  return (double)((rng * 2685821657736338717ull) >> 11) / 9007199254740992.0;
}

typedef struct {
  gasnetc_rel_t rel;
  int next_msg;   /* next message to send */
  int delivered;  /* messages delivered from the peer, in order */
  int failed;
  uint64_t resends, receives; /* resend() calls for it; data packets it was handed */
} endpoint_t;

static endpoint_t ep[2];
static double now;
static int current; /* the endpoint whose callbacks run */

static void transmit(int from, const packet_t *p) {
  int copies = uniform() < drop_p ? 0 : (uniform() < dup_p ? 2 : 1);
  for (int c = 0; c < copies && nnet < MAXNET; c++) {
    packet_t q = *p;
    q.to = 1 - from;
    q.arrive = now + uniform() * max_delay; /* independent delays reorder packets */
    net[nnet++] = q;
  }
}

static void release(void *ctx, void *buf) {
  (void)ctx;
  released++;
  free(buf);
}

/* What the conduit's header carries of an acknowledgement (the echo in 32 bits). */
static gasnetc_rel_ackinfo_t wire_ackinfo(gasnetc_rel_t *r) {
  gasnetc_rel_ackinfo_t info = gasnetc_rel_ackinfo(r);
  gasnetc_rel_echo_unpack(&info, gasnetc_rel_echo_pack(info));
  return info;
}

static void resend(void *ctx, void *buf, uint32_t len, unsigned copy) {
  (void)ctx, (void)len;
  packet_t p = *(packet_t *)buf;
  ep[current].resends++;
  p.copy = copy;
  p.ack = wire_ackinfo(&ep[current].rel); /* fresh acknowledgement, as the conduit does */
  transmit(current, &p);
}

static void send_data(int e, int msg, const gasnetc_rel_timeouts_t *t) {
  packet_t *p = malloc(sizeof *p);
  allocated++;
  p->data = 1, p->msg = msg;
  p->seq = gasnetc_rel_send(&ep[e].rel, p, sizeof *p, now, t);
  p->copy = 0;
  p->ack = wire_ackinfo(&ep[e].rel);
  transmit(e, p);
}

static int deliver(int e, const packet_t *p) {
  if (p->msg != ep[e].delivered) {
    fprintf(stderr, "endpoint %d: message %d delivered where %d was due\n", e, p->msg,
            ep[e].delivered);
    return 0;
  }
  ep[e].delivered++;
  return 1;
}

static int receive(int e, packet_t *p, const gasnetc_rel_timeouts_t *t) {
  current = e;
  gasnetc_rel_acked(&ep[e].rel, p->ack, now, t, release, resend, NULL);
  if (!p->data) return 1;
  ep[e].receives++;
  packet_t *copy = malloc(sizeof *copy);
  allocated++;
  *copy = *p;
  /* What a packet still coming in pieces asks (udp_recv.c): would this one be taken? */
  bool wanted = gasnetc_rel_wanted(&ep[e].rel, p->seq);
  int what = gasnetc_rel_receive(&ep[e].rel, p->seq, p->copy, copy, sizeof *copy);
  if (wanted != (what == GASNETC_REL_DELIVER || what == GASNETC_REL_HELD)) {
    fprintf(stderr, "endpoint %d: seq %u wanted=%d but receive said %d\n", e, p->seq, wanted,
            what);
    release(NULL, copy);
    return 0;
  }
  if (what != GASNETC_REL_HELD) release(NULL, copy);
  if (what != GASNETC_REL_DELIVER) return 1;
  if (!deliver(e, p)) return 0;
  uint32_t len;
  packet_t *held;
  while ((held = gasnetc_rel_next_held(&ep[e].rel, &len))) {
    int ok = deliver(e, held);
    release(NULL, held);
    if (!ok) return 0;
  }
  return 1;
}

/* One schedule; returns 1 when every check held. */
static int schedule(uint64_t seed, int messages) {
  rng = seed * 0x9E3779B97F4A7C15ull + 1;
  drop_p = uniform() * 0.35, dup_p = uniform() * 0.2, max_delay = 1e-6 + uniform() * 2e-3;
  uint32_t window = 1u << (1 + (int)(uniform() * 7)); /* 2..128 */
  gasnetc_rel_timeouts_t t = {.initial = 1e-3, .backoff = 2, .max = 5.0, .floor = 50e-6};
  nnet = 0, now = 0, allocated = released = 0;
  for (int e = 0; e < 2; e++) {
    ep[e] = (endpoint_t){0};
    if (!gasnetc_rel_init(&ep[e].rel, window, &t)) return 0;
  }
  int ok = 1;
  while (ok) {
    int done = 1;
    for (int e = 0; e < 2; e++) {
      /* a burst of new messages while the window allows */
      int burst = 1 + (int)(uniform() * 8);
      while (burst-- && ep[e].next_msg < messages && gasnetc_rel_window_open(&ep[e].rel))
        send_data(e, ep[e].next_msg++, &t);
      current = e;
      if (!gasnetc_rel_tick(&ep[e].rel, now, &t, resend, NULL)) {
        fprintf(stderr, "seed %llu: endpoint %d declared its peer unreachable at t=%.3f\n",
                (unsigned long long)seed, e, now);
        ok = 0;
      }
      done &= ep[e].next_msg == messages && gasnetc_rel_in_flight(&ep[e].rel) == 0 &&
              ep[1 - e].delivered == messages;
    }
    if (done || !ok) break;
    /* advance to the earliest arrival (or a retransmission deadline) */
    double next = -1;
    for (int i = 0; i < nnet; i++)
      if (next < 0 || net[i].arrive < next) next = net[i].arrive;
    for (int e = 0; e < 2; e++) {
      double d = gasnetc_rel_next_deadline(&ep[e].rel);
      if (d >= 0 && (next < 0 || d < next)) next = d;
    }
    if (next < 0) next = now + 1e-4;
    if (next > now) now = next;
    for (int i = 0; i < nnet && ok;) {
      if (net[i].arrive > now) {
        i++;
        continue;
      }
      packet_t p = net[i];
      net[i] = net[--nnet];
      ok = receive(p.to, &p, &t);
    }
    /* acknowledgement-only packets when data arrived and nothing else goes back */
    for (int e = 0; e < 2; e++)
      if (ep[e].rel.ack_due) {
        packet_t a = {.data = 0, .ack = wire_ackinfo(&ep[e].rel)};
        transmit(e, &a);
      }
    if (now > 60.0) {
      fprintf(stderr, "seed %llu: not drained after 60 s of virtual time\n",
              (unsigned long long)seed);
      ok = 0;
    }
  }
  /* The statistics' counts (udp_stats.c) agree with what happened: every message sent once
   * and delivered once, each resend counted as a timeout's or a hole's, and every data packet
   * handed over either delivered (directly or after being held), a duplicate, or beyond. */
  for (int e = 0; ok && e < 2; e++) {
    const gasnetc_rel_counts_t *c = &ep[e].rel.counts;
    if (c->sent != (uint64_t)messages || c->delivered != (uint64_t)messages ||
        c->resent_timeout + c->resent_hole != ep[e].resends ||
        c->delivered + c->duplicates + c->beyond != ep[e].receives || c->held > c->delivered) {
      fprintf(stderr, "seed %llu: endpoint %d counted sent %llu delivered %llu resent %llu+%llu "
              "(%llu resends) held %llu duplicates %llu beyond %llu (%llu received)\n",
              (unsigned long long)seed, e, (unsigned long long)c->sent,
              (unsigned long long)c->delivered, (unsigned long long)c->resent_timeout,
              (unsigned long long)c->resent_hole, (unsigned long long)ep[e].resends,
              (unsigned long long)c->held, (unsigned long long)c->duplicates,
              (unsigned long long)c->beyond, (unsigned long long)ep[e].receives);
      ok = 0;
    }
  }
  for (int e = 0; e < 2; e++) gasnetc_rel_fini(&ep[e].rel, release, NULL);
  if (ok && allocated != released) {
    fprintf(stderr, "seed %llu: %ld buffers allocated, %ld released\n", (unsigned long long)seed,
            allocated, released);
    ok = 0;
  }
  if (!ok)
    fprintf(stderr, "seed %llu failed (drop %.2f dup %.2f delay %.4f window %u)\n",
            (unsigned long long)seed, drop_p, dup_p, max_delay, window);
  return ok;
}

/* A peer that never answers: the sender must give up after t.max, not before. */
static int unreachable_after_max(void) {
  gasnetc_rel_timeouts_t t = {.initial = 1e-3, .backoff = 2, .max = 2.0, .floor = 50e-6};
  gasnetc_rel_t r;
  if (!gasnetc_rel_init(&r, 8, &t)) return 0;
  now = 0;
  packet_t *p = malloc(sizeof *p);
  gasnetc_rel_send(&r, p, sizeof *p, now, &t);
  int resends = 0, ok = 1;
  for (now = 0; now < 1.99; now += 1e-3)
    if (!gasnetc_rel_tick(&r, now, &t, NULL, NULL)) ok = 0;
  if (!ok) fprintf(stderr, "gave up before GASNET_REQUESTTIMEOUT_MAX\n");
  for (; now < 2.1; now += 1e-3) resends += !gasnetc_rel_tick(&r, now, &t, NULL, NULL);
  if (!resends) fprintf(stderr, "did not give up after GASNET_REQUESTTIMEOUT_MAX\n"), ok = 0;
  released = 0;
  gasnetc_rel_fini(&r, release, NULL);
  return ok && released == 1;
}

/* Peers that always answer after 50 ms, far beyond the first timeout (1 ms), as a rank sees
 * them in an all-to-all on hosts running many ranks per core: 100 streams (one per peer) of 3
 * packets each, one at a time, each acknowledgement 50 ms after the packet's first sending.
 * The first packet's echo (its first copy arrived) must teach the stream, and the rank's
 * other streams through what they share, so that packets are not sent again and again for
 * nothing: each one six times when only packets sent once were measured, and the first
 * packet of every stream when each stream learnt alone. */
static int slow_peers_learnt(void) {
  gasnetc_rel_rtt_t learnt = {0};
  gasnetc_rel_timeouts_t t = {.initial = 1e-3, .backoff = 2, .max = 30.0, .floor = 50e-6,
                              .learnt = &learnt};
  enum { STREAMS = 100, PACKETS = 3 };
  static int dummy[PACKETS];
  uint64_t resent = 0;
  now = 0;
  for (int s = 0; s < STREAMS; s++) {
    gasnetc_rel_t r;
    if (!gasnetc_rel_init(&r, 8, &t)) return 0;
    for (int i = 0; i < PACKETS; i++) {
      uint32_t seq = gasnetc_rel_send(&r, &dummy[i], sizeof dummy[i], now, &t);
      double answer = now + 50e-3;
      for (; now < answer; now += 1e-4) gasnetc_rel_tick(&r, now, &t, NULL, NULL);
      now = answer;
      gasnetc_rel_acked(&r, (gasnetc_rel_ackinfo_t){.ack = seq + 1, .echo_seq = seq & 0xFFFFFF,
                                                    .echo_copy = 0},
                        now, &t, NULL, NULL, NULL);
    }
    resent += r.counts.resent_timeout;
    gasnetc_rel_fini(&r, NULL, NULL);
  }
  if (resent > 20)
    fprintf(stderr, "peers answering in 50 ms got %llu of %d packets sent again (at most 20: "
            "the timeout does not learn their round trip)\n", (unsigned long long)resent,
            STREAMS * PACKETS);
  return resent <= 20;
}

/* A stream with a measured round trip of 20 us, as two polling ranks have. */
static void measured(gasnetc_rel_t *r, const gasnetc_rel_timeouts_t *t) {
  static int dummy;
  for (int i = 0; i < 20; i++) {
    uint32_t seq = gasnetc_rel_send(r, &dummy, sizeof dummy, now, t);
    now += 20e-6;
    gasnetc_rel_acked(r, (gasnetc_rel_ackinfo_t){.ack = seq + 1, .echo_seq = seq, .echo_copy = 0},
                      now, t, NULL, NULL, NULL);
  }
}

static uint32_t resent_seqs[4096];
static int nresent;
static void note_resend(void *ctx, void *buf, uint32_t len, unsigned copy) {
  (void)ctx, (void)len, (void)copy;
  if (nresent < 4096) resent_seqs[nresent++] = *(uint32_t *)buf;
}

/* A peer that stops reading for 10 ms (descheduled, or busy in a handler) with 32 packets in
 * flight, all of which arrive: a timeout sends the oldest again, and only it (with backoff),
 * not each of the 32 (the early timer of issue 68 item 7: 10% of a clean stream's packets
 * went twice). Then its acknowledgement of everything ends it. */
static int stalled_reader_gets_one_packet_again(void) {
  gasnetc_rel_timeouts_t t = {.initial = 1e-3, .backoff = 2, .max = 30.0, .floor = 50e-6};
  gasnetc_rel_t r;
  static uint32_t seqs[32];
  if (!gasnetc_rel_init(&r, 64, &t)) return 0;
  now = 0;
  measured(&r, &t);
  for (int i = 0; i < 32; i++) seqs[i] = gasnetc_rel_send(&r, &seqs[i], sizeof seqs[i], now, &t);
  nresent = 0;
  double wake = now + 10e-3;
  for (; now < wake; now += 1e-5) gasnetc_rel_tick(&r, now, &t, note_resend, NULL);
  gasnetc_rel_acked(&r, (gasnetc_rel_ackinfo_t){.ack = seqs[31] + 1, .echo_seq = seqs[0],
                                                .echo_copy = 0},
                    now, &t, NULL, note_resend, NULL);
  int ok = nresent >= 1 && nresent <= 10 && gasnetc_rel_in_flight(&r) == 0;
  for (int i = 0; i < nresent; i++) ok &= resent_seqs[i] == seqs[0];
  if (!ok)
    fprintf(stderr, "a peer that read nothing for 10 ms got %d packets sent again (expected "
            "1..10 copies of the oldest, and no other)\n", nresent);
  gasnetc_rel_fini(&r, NULL, NULL);
  return ok;
}

/* All 16 packets in flight lost (a burst, a full socket buffer): the timeout sends the oldest
 * again; once the answer to that copy shows the other 15 still missing, they go at once, not
 * one timeout each. */
static int burst_loss_repaired_after_one_timeout(void) {
  gasnetc_rel_timeouts_t t = {.initial = 1e-3, .backoff = 2, .max = 30.0, .floor = 50e-6};
  gasnetc_rel_t r;
  static uint32_t seqs[16];
  if (!gasnetc_rel_init(&r, 64, &t)) return 0;
  now = 0;
  measured(&r, &t);
  for (int i = 0; i < 16; i++) seqs[i] = gasnetc_rel_send(&r, &seqs[i], sizeof seqs[i], now, &t);
  nresent = 0;
  while (nresent == 0) {
    now += 1e-5;
    gasnetc_rel_tick(&r, now, &t, note_resend, NULL);
  }
  now += 20e-6; /* the copy arrives and is acknowledged, the others are not */
  gasnetc_rel_acked(&r, (gasnetc_rel_ackinfo_t){.ack = seqs[0] + 1, .echo_seq = seqs[0],
                                                .echo_copy = 1},
                    now, &t, NULL, note_resend, NULL);
  int ok = nresent == 16 && r.counts.resent_hole == 15 && r.counts.resent_timeout == 1;
  for (int i = 1; i < nresent; i++) ok &= resent_seqs[i] == seqs[i];
  if (!ok)
    fprintf(stderr, "16 lost packets: %d sent again when the first copy's answer came "
            "(expected 1 on timeout, then the 15 others at once)\n", nresent);
  gasnetc_rel_fini(&r, NULL, NULL);
  return ok;
}

/* 64 packets sent at once to a peer that takes 40 us for each, less than the timeout (50 us)
 * but a queue of 2.6 ms, far longer: while acknowledgements come, the packets queued behind
 * them do not time out. */
static int queued_packets_do_not_time_out_while_acknowledged(void) {
  gasnetc_rel_timeouts_t t = {.initial = 1e-3, .backoff = 2, .max = 30.0, .floor = 50e-6};
  gasnetc_rel_t r;
  static uint32_t seqs[64];
  if (!gasnetc_rel_init(&r, 64, &t)) return 0;
  now = 0;
  measured(&r, &t);
  for (int i = 0; i < 64; i++) seqs[i] = gasnetc_rel_send(&r, &seqs[i], sizeof seqs[i], now, &t);
  nresent = 0;
  for (int i = 0; i < 64; i++) {
    double answer = now + 40e-6;
    for (; now < answer; now += 1e-5) gasnetc_rel_tick(&r, now, &t, note_resend, NULL);
    now = answer;
    gasnetc_rel_acked(&r, (gasnetc_rel_ackinfo_t){.ack = seqs[i] + 1,
                                                  .echo_copy = GASNETC_REL_NO_ECHO},
                      now, &t, NULL, note_resend, NULL);
  }
  int ok = nresent == 0;
  if (!ok)
    fprintf(stderr, "a queue of 64 packets acknowledged one each 40 us: %d sent again "
            "(expected none)\n", nresent);
  gasnetc_rel_fini(&r, NULL, NULL);
  return ok;
}

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: udp_rel_test SCHEDULES MESSAGES FIRST_SEED\n");
    return 2;
  }
  long schedules = atol(argv[1]), messages = atol(argv[2]);
  uint64_t first = strtoull(argv[3], NULL, 10);
  long failures = 0, delivered = 0;
  for (long s = 0; s < schedules; s++) {
    if (!schedule(first + (uint64_t)s, (int)messages)) failures++;
    delivered += ep[0].delivered + ep[1].delivered;
    if (failures > 5) break;
  }
  if (!unreachable_after_max()) failures++;
  if (!slow_peers_learnt()) failures++;
  if (!stalled_reader_gets_one_packet_again()) failures++;
  if (!burst_loss_repaired_after_one_timeout()) failures++;
  if (!queued_packets_do_not_time_out_while_acknowledged()) failures++;
  printf("udp_rel_test: %ld schedules, %ld messages delivered, %ld failures\n", schedules,
         delivered, failures);
  return failures ? 1 : 0;
}
