/* udp_internal.h: the udp conduit's state, shared by its files: the packet buffer pool
 * (udp_pool.c), sending (udp_send.c), receiving and delivery (udp_recv.c), and set-up, exit and
 * the receive thread (udp_conduit.c). */
#ifndef GASNETC_UDP_INTERNAL_H
#define GASNETC_UDP_INTERNAL_H

#include <stdatomic.h>
#include <string.h>

#include "am/credits.h"
#include "conduit.h"
#include "siphash.h"
#include "udp_rel.h"
#include "udp_sock.h"
#include "udp_wire.h"

/* ---- packet buffers: one contiguous pool of 64 KiB blocks, so that a pointer anywhere in a
 * block (a datagram, or one datagram of a GRO run) names its block without a lookup table ---- */
enum { UDP_BLOCK = 65536 };

typedef struct {
  uint8_t *base;
  uint32_t blocks;
  uint32_t *refs;   /* per block */
  uint32_t *free;   /* stack of free block indices */
  uint32_t nfree;
} udp_pool_t;

bool udp_pool_init(udp_pool_t *p, uint32_t blocks);
uint8_t *udp_pool_get(udp_pool_t *p);             /* NULL when empty */
void udp_pool_ref(udp_pool_t *p, const void *anywhere);
void udp_pool_put(udp_pool_t *p, const void *anywhere);
static inline bool udp_pool_owns(const udp_pool_t *p, const void *at) {
  const uint8_t *b = at;
  return b >= p->base && b < p->base + (size_t)p->blocks * UDP_BLOCK;
}

/* A data packet whose last message's payload is sent from where it lies (a GASNETI_AM_STABLE
 * Long piece of at least UDP_EXT_MIN bytes) instead of being copied into the packet: where it
 * is, kept in the block's last bytes, which no datagram reaches (at most 65507 bytes). */
typedef struct {
  const void *ext;   /* NULL: the whole datagram is in the block */
  uint32_t ext_len;  /* payload bytes at ext; zeros pad the datagram to its length after them */
  uint32_t head_len; /* bytes of the datagram in the block, before the payload */
  /* ---- a sent data packet (udp_send.c: path MTU) ---- */
  uint32_t len;      /* the packet's */
  uint16_t resends;  /* times it was sent again */
  uint16_t cut;      /* 0: it always went whole; else the size of the pieces it last went in */
} udp_tail_t;
enum { UDP_TAIL_AT = UDP_BLOCK - 24, UDP_EXT_MIN = 2048 };
_Static_assert(UDP_TAIL_AT >= 65507 && UDP_TAIL_AT % 8 == 0, "tail after every datagram");
_Static_assert(UDP_TAIL_AT + sizeof(udp_tail_t) <= UDP_BLOCK, "tail inside its block");
static inline udp_tail_t *udp_tail(void *block) {
  return (udp_tail_t *)((uint8_t *)block + UDP_TAIL_AT);
}

/* ---- one queued packet awaiting delivery ---- */
typedef struct {
  uint8_t *data;
  uint32_t len;
} udp_pkt_t;

typedef struct {
  udp_pkt_t *items;
  uint32_t head, count, cap;
} udp_pktq_t;

/* ---- per peer ---- */
/* A data packet being put together from its pieces (UDP_PART). */
typedef struct {
  uint8_t *block;    /* NULL: the slot is free */
  uint32_t seq, whole, have; /* have: UDP_PART_UNITs of it received */
  uint64_t got[UDP_BLOCK / UDP_PART_UNIT / 64]; /* which units */
} udp_whole_t;

typedef struct {
  struct sockaddr_in addr;
  uint32_t dgram;    /* largest datagram to it (lowered when its path's MTU drops) */
  bool other_host;   /* on another host: a switch on the way may drop what is too large */
  /* ---- its path's MTU (udp_send.c) ---- */
  uint32_t cut_in_flight; /* unacknowledged packets to it that went in pieces */
  /* Packets to it that arrived only once cut into pieces of narrow_to bytes, after going
   * whole in vain, with no larger whole packet arriving since. */
  uint32_t narrow_to, narrow_votes;
  /* [udp.window] from it, allocated at its first piece: one for each packet it may have in
   * flight, so that no piece waits for a slot (meanwhile its sender would try smaller pieces
   * and end up re-sizing its datagrams smaller than the path needs) */
  udp_whole_t *wholes;
  bool network;      /* reached through this conduit (not self, not a supernode peer) */
  bool finished;     /* it returned from main: nothing more goes to it */
  /* Its agent said it had ended when this rank met it: nothing goes to it (told once), but
   * what it sent before it ended is still taken (a barrier's last round, say). */
  bool ended, told_ended;
  gasnetc_rel_t rel;
  uint8_t *open;     /* data packet being filled, or NULL */
  uint32_t open_len;
  uint32_t unacked;  /* data packets received from it that no packet of ours acknowledged */
  double ack_by;     /* when a standalone acknowledgement must go at the latest */
  bool in_active;    /* listed in udp.active (has packets in flight) */
  uint32_t sent_in_epoch; /* udp.poll_epoch when a client's message last left at once */
  bool dirty;        /* listed in udp.dirty (open packet or acknowledgement pending) */
  udp_pktq_t ready;  /* in-order packets not yet delivered */
  uint8_t *medium[2]; /* [reply]: a Medium being reassembled from pieces */
  uint32_t medium_got[2];
  /* [reply]: the send (its progress record) whose Medium pieces are under way to this peer:
   * pieces are reassembled in order, so another thread's must wait (PAR) */
  const void *medium_owner[2];
  /* ---- liveness (udp_conduit.c): a peer silent for a while is probed on live_addr ---- */
  struct sockaddr_in live_addr; /* its liveness thread's socket */
  double pinged;        /* when the last probe went (-1: never) */
  double alive_at;      /* when its process last answered one (-1: never) */
  double reading_at;    /* when an answer last showed it had read its socket since the one
                         * before (-1: never) */
  uint32_t polls_seen;  /* its count of socket reads in that answer */
  uint32_t got_seen;    /* how far it had received this rank's stream, in that answer */
  /* The last answer, as the liveness thread took it (answer: reads << 32 | received; then
   * answer_seq: the probe's seq << 1 | 1 if it had not met this rank): udp_check_timers reads
   * it under udp_lock. */
  _Atomic uint64_t answer;
  _Atomic uint32_t answer_seq;
  _Atomic uint16_t answer_backlog; /* KiB unread in its own socket then */
  uint32_t answer_taken;
  /* This peer's stream received in order up to here (rel.expected, written under udp_lock):
   * the liveness thread puts it in its answers to the peer's probes. */
  _Atomic uint32_t got;
  uint32_t ping_seq;    /* probes sent to it; an answer echoes the one it answers */
} udp_peer_t;

/* A datagram from a rank this one has not met yet, kept while its address card is looked up
 * (a copy in a pool block) and then taken as if it had just arrived. */
typedef struct {
  uint8_t *block;
  uint32_t len;
  struct sockaddr_in from;
} udp_held_t;
enum { UDP_HELD_MAX = 64 };

/* What this rank's socket saw (statistics, udp_stats.c; the per-peer streams count their own
 * packets: gasnetc_rel_counts_t). */
typedef struct {
  uint64_t datagrams_out, bytes_out; /* handed to the socket (pieces and acknowledgements too) */
  uint64_t acks_alone;     /* acknowledgements that found no data packet to ride on */
  uint64_t pieces_out;     /* pieces of packets too large for their path (UDP_PART) */
  uint64_t probes_out;     /* liveness probes */
  uint64_t datagrams_in, bytes_in;
  uint64_t dropped_in;     /* not of this job, malformed, forged, from a stranger's address */
  uint64_t no_buffer;      /* data packets read with no block to keep them (they come again) */
  uint64_t copied_in;      /* received packets copied out of their block (the pool ran low) */
} udp_counts_t;

typedef struct {
  udp_sock_t sock;
  udp_pool_t pool;
  udp_counts_t counts;
  /* [rank]: its state, allocated when this rank first talks to it or hears from it (udp_meet):
   * a rank that talks to a few peers holds a few. Written once under udp_lock; read by the
   * liveness thread without it. */
  _Atomic(udp_peer_t *) *peer_at;
  int *met, nmet, met_cap;  /* the ranks met so far */
  udp_held_t held[UDP_HELD_MAX];
  int nheld;
  gasneti_credits_t credits;
  gasnetc_rel_timeouts_t timeouts;
  uint32_t tag;          /* the job's datagram tag */
  uint8_t ctl_key[16];   /* authenticates control datagrams (udp_wire.h: udp_ctl_t) */
  uint32_t window;       /* per-peer unacknowledged datagrams */
  uint32_t depth_total;  /* all unacknowledged datagrams of this rank */
  uint32_t in_flight;
  bool coalesce;
  int *active, nactive;  /* peers with datagrams in flight */
  int *dirty, ndirty;    /* peers to flush at the end of a send or poll */
  int *dirty_spare;      /* the other half of a double buffer (udp_flush_all) */
  double next_check;     /* earliest retransmission deadline (-1: none) */
  udp_out_t *out;        /* datagrams to hand to the socket */
  int nout, outcap;
  udp_ctl_t *acks;       /* acknowledgement-only and control datagrams, beside out */
  int nacks;
  bool delivering;       /* SEQ: a handler is running (no nested delivery) */
  uint32_t poll_epoch;   /* counts the client's polls (not flow control's inside a send) */
  double timers_at;      /* when udp_check_timers last ran (at first: gasnetc_init) */
} udp_state_t;

extern udp_state_t udp;

/* A peer's state, NULL before the two ranks met. */
static inline udp_peer_t *udp_peer(int rank) {
  return atomic_load_explicit(&udp.peer_at[rank], memory_order_acquire);
}
/* Reached through this conduit: not itself, not a peer of its supernode (shared memory). */
static inline bool udp_is_network(int rank) {
  return rank != (int)gasneti_mynode && !gasneti_pshm_reach[rank];
}

#if GASNETI_THREADS
extern gasneti_spinlock_t udp_lock;     /* all of the above */
extern gasneti_spinlock_t udp_deliver;  /* one thread delivers at a time, in order */
#define UDP_LOCK (&udp_lock)
#else
#define UDP_LOCK NULL
#endif
static inline void udp_lock_take(void) {
#if GASNETI_THREADS
  gasneti_spin_lock(&udp_lock);
#endif
}
static inline void udp_lock_drop(void) {
#if GASNETI_THREADS
  gasneti_spin_unlock(&udp_lock);
#endif
}

double udp_now(void);

/* Socket reads of this rank, for the liveness thread's answers (written under udp_lock, read
 * by that thread without it). */
extern _Atomic uint32_t udp_reads;

/* udp_send.c (callers hold udp_lock unless said otherwise) */
/* This thread is in a send that waits for credits or window (its polls keep the epoch). */
extern GASNETI_TLS int udp_send_waiting;
void udp_queue_out(int peer, const void *buf, uint32_t len);  /* a control datagram */
void udp_queue_data(int peer, void *block, uint32_t len);      /* a data packet (its tail) */
void udp_flush_peer(int peer, bool force);
void udp_flush_all(void);            /* open packets, acknowledgements, hidden credit returns */
/* Acknowledgements wait this long for a data packet to ride on (a second packet: none). */
#define UDP_ACK_DELAY 20e-6
void udp_send_now(void);             /* hands udp.out to the socket */
void udp_mark_dirty(int peer);
void udp_resend(void *ctx, void *buf, uint32_t len, unsigned copy);
void udp_release(void *ctx, void *buf);   /* acknowledged (ctx: the peer) */
void udp_drop_sent(void *buf);            /* never to be acknowledged (the peer finished) */
/* Sends one AM (without udp_lock held): blocks, serving the network, for credits and room; an
 * immediate one (GASNETI_AM_IMMEDIATE) that cannot all be placed at once is not sent: false. */
bool udp_send_am(gasnet_node_t dest, const gasneti_am_t *am, gasneti_token_t *reply_to);
/* The pieces of sending that udp_np.c shares (udp_lock held): a fresh data packet for peer
 * (false when window, depth or buffers are short now), one message appended to its open packet
 * (payload copied, unless it is already where the message puts it), what follows a placed
 * message, and a poll that waits for credits or room. */
bool udp_open_packet(int peer);
void udp_append(int peer, const gasneti_am_t *am, bool reply, uint8_t flags, bool with_args,
                uint32_t chunk, const uint8_t *payload, uint64_t dst, bool external);
void udp_placed(int dest, bool in_handler);
int udp_serve_waiting(int which);
void udp_send_control(int peer, int type, int code);
/* Control datagrams' MAC (udp_wire.h): seal before sending, check on receipt. Both only read
 * udp.ctl_key, fixed before any datagram moves (the liveness thread uses them too). */
static inline void udp_ctl_seal(udp_ctl_t *c) {
  c->mac = gasneti_siphash24(udp.ctl_key, &c->h, sizeof c->h);
}
static inline bool udp_ctl_valid(const void *data, uint32_t len) {
  if (len != sizeof(udp_ctl_t)) return false;
  udp_ctl_t c;
  memcpy(&c, data, sizeof c);
  return c.mac == gasneti_siphash24(udp.ctl_key, &c.h, sizeof c.h);
}
void udp_send_ping(int peer);        /* a liveness probe to its liveness socket */
/* udp_conduit.c: first contact. The peer's state, after looking up its address card (a round
 * trip to the spawner: call without udp_lock held). */
udp_peer_t *udp_meet(int peer);
/* Meets the senders of held datagrams, then takes the datagrams (without udp_lock held). */
void udp_meet_held(void);
/* Ranks not met yet that probed this one's liveness (the liveness thread notes them; the
 * application side meets them at its next poll, without udp_lock held). */
extern _Atomic int udp_probed;
void udp_ask_to_meet(int peer);
void udp_meet_probers(void);
/* The liveness socket (udp_conduit.c): probes leave from it and answers come back to it. */
extern int udp_live_fd;
/* KiB waiting unread in this rank's socket (at most 65535; any thread may ask). */
uint16_t udp_backlog_kib(void);

/* A received packet done with: back to its pool block, or freed (a copy, udp_recv.c). */
static inline void udp_packet_put(void *data) {
  if (udp_pool_owns(&udp.pool, data)) udp_pool_put(&udp.pool, data);
  else free(data);
}

/* udp_recv.c */
int udp_receive(void);               /* datagrams in, acknowledgements applied (holds udp_lock) */
int udp_deliver_ready(void);         /* AM handlers of in-order packets (no udp_lock held) */
void udp_check_timers(double now);

#endif
