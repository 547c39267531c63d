/* udp_recv.c: from datagrams to AMs. Every valid datagram updates what its sender acknowledged;
 * data packets go through the reliability layer and, once in order, wait for delivery. Delivery
 * (running handlers) happens only where request handlers may run, one thread at a time, so a
 * Long's pieces are in place before its handler. Anything that is not a well-formed datagram
 * of this job from a known peer's address is dropped without disturbing the job. */
#include <arpa/inet.h>
#include <string.h>

#include "udp_internal.h"

enum { POOL_RESERVE = 8 };
/* Below this many free blocks, a received data packet waiting for delivery (or held early) is
 * copied out of its 64 KiB block into memory of its own size. A rank busy in a handler does
 * not deliver, yet keeps taking and acknowledging what its peers send (hundreds of peers, a
 * window each): kept in blocks, those packets took every block, the rank then had to drop
 * what came next unacknowledged (UDP_NO_BUFFER), replies to it among them, and a ring of
 * ranks each replying to the next stalled until one declared the next unreachable. */
enum { COPY_BELOW = 2 * UDP_RX_BATCH + POOL_RESERVE };

/* A received packet kept for delivery: in a pool block, or (the pool ran low) a copy. */
static uint8_t *keep_packet(uint8_t *data, uint32_t len) {
  if (udp.pool.nfree >= COPY_BELOW) {
    udp_pool_ref(&udp.pool, data);
    return data;
  }
  udp.counts.copied_in++;
  uint8_t *copy = gasneti_malloc(len);
  memcpy(copy, data, len);
  return copy;
}

_Atomic uint32_t udp_reads;

static int *ready_peers, nready;
static bool *in_ready;
static uint8_t *scratch; /* for a datagram that arrives when no buffer is free */

static void drop_note(const char *why, const struct sockaddr_in *from) {
  static int told;
  udp.counts.dropped_in++;
  if (told++ < 3)
    gasneti_warning("udp: dropped a datagram from %s:%d (%s)", inet_ntoa(from->sin_addr),
                    ntohs(from->sin_port), why);
}

static void queue_ready(int peer, uint8_t *data, uint32_t len) {
  udp_peer_t *p = udp_peer(peer);
  udp_pktq_t *q = &p->ready;
  if (q->count == q->cap) { /* grow; rare, and bounded by the pool */
    uint32_t cap = q->cap ? 2 * q->cap : 16;
    udp_pkt_t *items = gasneti_malloc(cap * sizeof *items);
    for (uint32_t i = 0; i < q->count; i++) items[i] = q->items[(q->head + i) % q->cap];
    free(q->items);
    q->items = items, q->head = 0, q->cap = cap;
  }
  q->items[(q->head + q->count++) % q->cap] = (udp_pkt_t){data, len};
  /* Credits count once: when their packet is accepted in order. */
  gasneti_credit_returned(&udp.credits, peer, ((udp_pkt_hdr_t *)data)->credits);
  if (!in_ready[peer]) {
    in_ready[peer] = true;
    ready_peers[nready++] = peer;
  }
}

/* The peer returned from main: nothing it was sent needs an acknowledgement any more, and
 * nothing more goes to it. What it sent before still gets delivered. */
static void peer_finished(int peer) {
  udp_peer_t *p = udp_peer(peer);
  if (p->finished) return;
  p->finished = true;
  gasnetc_rel_t *r = &p->rel;
  for (uint32_t i = 0; i < r->window; i++) {
    if (r->out[i].in_use) udp_drop_sent(r->out[i].buf); /* sent, never to be acknowledged */
    if (r->held[i]) udp_packet_put(r->held[i]);               /* received early, now moot */
    r->out[i].in_use = 0;
    r->held[i] = NULL;
  }
  r->una = r->next_seq;
  for (uint32_t i = 0; p->wholes && i < udp.window; i++)
    if (p->wholes[i].block) { /* pieces of packets that will never be complete */
      udp_pool_put(&udp.pool, p->wholes[i].block);
      p->wholes[i].block = NULL;
    }
  if (p->open) {
    udp_drop_sent(p->open);
    p->open = NULL;
  }
}

/* Its liveness thread answered a probe (one of the last two: they go out a while apart): the
 * process lives. The time that declares it lost starts again when it has not read its socket
 * since its previous answer (it computes, or runs a long handler), has not met this rank yet,
 * has received more of this rank's stream, or has datagrams waiting unread in its socket (it
 * acknowledges late: a rank among hundreds on a few cores, whose socket held megabytes while
 * it waited its turn for a core; this rank's datagrams are likely among them). Otherwise it reads its socket and this rank's datagrams do not reach it, or its
 * acknowledgements do not come back: the clock runs on (see udp_check_timers). */
static void take_answer(int peer) {
  udp_peer_t *p = udp_peer(peer);
  uint32_t seq = atomic_load_explicit(&p->answer_seq, memory_order_acquire);
  if (seq == p->answer_taken) return;
  p->answer_taken = seq;
  if (p->finished || (seq >> 1) - (p->ping_seq - 1) > 1) return;
  uint64_t answer = atomic_load_explicit(&p->answer, memory_order_relaxed);
  uint32_t reads = (uint32_t)(answer >> 32), got = (uint32_t)answer;
  bool unmet = seq & 1, behind = atomic_load_explicit(&p->answer_backlog, memory_order_relaxed);
  double now = udp_now();
  bool before = p->alive_at >= 0;
  if (unmet || (before && (reads == p->polls_seen || got != p->got_seen || behind)))
    gasnetc_rel_peer_alive(&p->rel, now);
  else if (before) p->reading_at = now;
  p->alive_at = now;
  p->polls_seen = reads;
  p->got_seen = got;
}

static void take_data(int src, uint8_t *data, uint32_t len, bool keep);
static void handle(uint8_t *data, uint32_t len, const struct sockaddr_in *from, bool keep);

/* Kept (copied: the receive batch reuses its blocks) until udp_meet_held, outside udp_lock,
 * looks its sender up. When too many wait, or no block is free, it is dropped: the sender
 * sends it again. */
static void hold(const uint8_t *data, uint32_t len, const struct sockaddr_in *from) {
  uint8_t *block = udp.nheld < UDP_HELD_MAX && udp.pool.nfree > POOL_RESERVE
                       ? udp_pool_get(&udp.pool) : NULL;
  if (!block) return;
  memcpy(block, data, len);
  udp.held[udp.nheld++] = (udp_held_t){block, len, *from};
}

void udp_meet_held(void) {
  for (;;) {
    udp_lock_take();
    int stranger = -1;
    for (int i = 0; i < udp.nheld && stranger < 0; i++) {
      int src = ((const udp_pkt_hdr_t *)udp.held[i].block)->src;
      if (!udp_peer(src)) stranger = src;
    }
    if (stranger < 0) { /* every sender met: take them as if they had just arrived */
      int n = udp.nheld;
      udp.nheld = 0;
      for (int i = 0; i < n; i++) {
        handle(udp.held[i].block, udp.held[i].len, &udp.held[i].from, true);
        udp_pool_put(&udp.pool, udp.held[i].block);
      }
      udp_lock_drop();
      return;
    }
    udp_lock_drop();
    udp_meet(stranger);
  }
}
static void take_piece(int src, const udp_pkt_hdr_t *h, uint32_t len,
                       const struct sockaddr_in *from);

/* One datagram at data (its block already holds a reference the caller drops later). */
static void handle(uint8_t *data, uint32_t len, const struct sockaddr_in *from, bool keep) {
  if (len < sizeof(udp_pkt_hdr_t)) { drop_note("too short", from); return; }
  udp_pkt_hdr_t *h = (udp_pkt_hdr_t *)data;
  if (h->tag != udp.tag) { drop_note("not of this job", from); return; }
  if (h->src >= gasneti_nodes || !udp_is_network(h->src)) { drop_note("bad sender", from); return; }
  int src = h->src;
  udp_peer_t *p = udp_peer(src);
  if (!p) { /* a rank not met yet: its address is checked once its card is here */
    hold(data, len, from);
    return;
  }
  if (p->addr.sin_addr.s_addr != from->sin_addr.s_addr || p->addr.sin_port != from->sin_port)
    { drop_note("sender's address does not match its rank", from); return; }
  if (h->type == UDP_EXIT || h->type == UDP_FINISHED) {
    if (!udp_ctl_valid(data, len)) { drop_note("a control datagram failed authentication", from); return; }
    if (h->type == UDP_EXIT) {
      gasneti_exit_post(h->code, h->seq);
      return;
    }
    peer_finished(src);
    return;
  }
  if (p->finished) return;
  if (h->type != UDP_DATA && h->type != UDP_ACK && h->type != UDP_PART)
    { drop_note("unknown type", from); return; }
  gasnetc_rel_ackinfo_t info = {h->ack, h->sack, 0, GASNETC_REL_NO_ECHO};
  if (h->type != UDP_PART) gasnetc_rel_echo_unpack(&info, (uint32_t)h->code);
  gasnetc_rel_acked(&p->rel, info, udp_now(), &udp.timeouts, udp_release, udp_resend,
                    (void *)(intptr_t)src);
  if (h->type == UDP_PART) take_piece(src, h, len, from);
  else if (h->type == UDP_DATA) take_data(src, data, len, keep);
}

/* A data packet from src, whole (its block holds a reference that is not this one's). */
static void take_data(int src, uint8_t *data, uint32_t len, bool keep) {
  udp_peer_t *p = udp_peer(src);
  udp_mark_dirty(src); /* it expects an acknowledgement: soon, and at once for a second packet */
  if (p->unacked++ == 0) p->ack_by = udp_now() + UDP_ACK_DELAY;
  else p->ack_by = 0;
  if (!keep) {         /* no buffer to hold it: not acknowledged, so it will come again */
    udp.counts.no_buffer++;
    p->rel.ack_due = true;
    return;
  }
  const udp_pkt_hdr_t *h = (const udp_pkt_hdr_t *)data;
  int what = gasnetc_rel_receive(&p->rel, h->seq, h->whole, data, len);
  if (what == GASNETC_REL_DELIVER) {
    queue_ready(src, keep_packet(data, len), len);
    uint32_t hlen;
    uint8_t *held;
    while ((held = gasnetc_rel_next_held(&p->rel, &hlen))) queue_ready(src, held, hlen);
    atomic_store_explicit(&p->got, p->rel.expected, memory_order_relaxed);
  } else if (what == GASNETC_REL_HELD) {
    gasnetc_rel_keep_held(&p->rel, h->seq, keep_packet(data, len));
  }
}

/* ---- packets that come in pieces (UDP_PART: their path's MTU dropped after they were
 * built, see udp_send.c) ---- */
static bool unit_got(const udp_whole_t *w, uint32_t u) { return w->got[u / 64] >> (u % 64) & 1; }

/* The slot putting seq together, else a fresh one (a free slot, or one whose packet arrived
 * meanwhile); NULL when no block is free. */
static udp_whole_t *whole_for(udp_peer_t *p, uint32_t seq, uint32_t whole) {
  if (!p->wholes) p->wholes = gasneti_calloc(udp.window, sizeof *p->wholes);
  udp_whole_t *fresh = NULL;
  for (uint32_t i = 0; i < udp.window; i++) {
    udp_whole_t *w = &p->wholes[i];
    if (w->block && w->seq == seq && w->whole == whole) return w;
    if (w->block && !gasnetc_rel_wanted(&p->rel, w->seq)) { /* stale */
      udp_pool_put(&udp.pool, w->block);
      w->block = NULL;
    }
    if (!w->block && !fresh) fresh = w;
  }
  if (!fresh || udp.pool.nfree <= POOL_RESERVE) return NULL;
  *fresh = (udp_whole_t){.block = udp_pool_get(&udp.pool), .seq = seq, .whole = whole};
  return fresh;
}

static void take_piece(int src, const udp_pkt_hdr_t *h, uint32_t len,
                       const struct sockaddr_in *from) {
  udp_peer_t *p = udp_peer(src);
  uint32_t off = (uint32_t)h->code, n = len - (uint32_t)sizeof *h, whole = h->whole;
  if (whole < sizeof *h || whole > UDP_MAX_PAYLOAD || off % UDP_PART_UNIT || n == 0 ||
      off > whole || n > whole - off || (n % UDP_PART_UNIT && off + n != whole))
    { drop_note("a malformed piece", from); return; }
  if (!gasnetc_rel_wanted(&p->rel, h->seq)) { /* it arrived already: say so again */
    p->rel.ack_due = true;
    udp_mark_dirty(src);
    return;
  }
  udp_whole_t *w = whole_for(p, h->seq, whole);
  if (!w) return; /* it comes again */
  memcpy(w->block + off, h + 1, n);
  for (uint32_t u = off / UDP_PART_UNIT; u * UDP_PART_UNIT < off + n; u++)
    if (!unit_got(w, u)) {
      w->got[u / 64] |= 1ull << (u % 64);
      w->have++;
    }
  if (w->have * UDP_PART_UNIT < whole) return;
  uint8_t *block = w->block;
  w->block = NULL;
  const udp_pkt_hdr_t *inner = (const udp_pkt_hdr_t *)block;
  if (inner->tag == udp.tag && inner->src == src && inner->type == UDP_DATA &&
      inner->seq == h->seq)
    take_data(src, block, whole, true); /* as if it had come whole (its acknowledgements are
                                           old: the pieces' were applied) */
  else
    drop_note("pieces that make no packet of its", from);
  udp_pool_put(&udp.pool, block); /* take_data took its own reference if it keeps it */
}

/* The armed receive batch: each slot holds a block with the receive's reference; a slot that
 * received gives that reference up once its datagrams are handled (the block lives on where
 * handle() kept a reference) and gets a fresh block. */
static udp_rx_t rx = {.cap = UDP_BLOCK};

static void rx_refill(int got) {
  int kept = 0;
  for (int i = 0; i < rx.n; i++) {
    uint8_t *b = rx.bufs[i];
    if (i < got) {
      udp_pool_put(&udp.pool, b); /* the receive's reference */
      b = udp.pool.nfree > POOL_RESERVE ? udp_pool_get(&udp.pool) : NULL;
      if (!b) continue;
    } else if (kept == i) {
      kept++; /* armed and untouched, already in place */
      continue;
    }
    udp_rx_arm(&udp.sock, &rx, kept++, b);
  }
  rx.n = kept;
  while (rx.n < UDP_RX_BATCH && udp.pool.nfree > POOL_RESERVE)
    udp_rx_arm(&udp.sock, &rx, rx.n++, udp_pool_get(&udp.pool));
}

int udp_receive(void) {
  /* A plain increment: udp_lock orders the writers; the liveness thread only reads it. */
  atomic_store_explicit(&udp_reads, atomic_load_explicit(&udp_reads, memory_order_relaxed) + 1,
                        memory_order_relaxed);
  if (rx.n < UDP_RX_BATCH / 2) rx_refill(0); /* the pool had run low: take blocks back */
  udp_in_t in[UDP_RX_BATCH];
  int got;
  bool keep = rx.n > 0;
  if (keep) {
    got = udp_rx_recv(&udp.sock, &rx, in);
  } else { /* no block to spare: still read, for the acknowledgements it carries */
    uint8_t *one[1] = {scratch};
    got = udp_sock_recv(&udp.sock, one, UDP_BLOCK, in, 1);
  }
  for (int i = 0; i < got; i++) {
    uint32_t seg = in[i].segment ? in[i].segment : in[i].len;
    for (uint32_t off = 0; off < in[i].len; off += seg) {
      uint32_t len = in[i].len - off < seg ? in[i].len - off : seg;
      udp.counts.datagrams_in++;
      udp.counts.bytes_in += len;
      handle(in[i].buf + off, len, &in[i].from, keep);
    }
  }
  if (keep && got) rx_refill(got);
  return got;
}

/* Retransmissions, liveness probes and the verdict on a peer that acknowledges nothing. A
 * peer silent for a quarter of GASNET_REQUESTTIMEOUT_MAX is probed (udp_send_ping) at each
 * look; answers that show it computing restart its clock (peer_answered). So the job ends only
 * for a peer whose process does not answer (gone, stopped, its host or the path down) or that
 * reads its socket without ever getting this rank's datagrams. */
void udp_check_timers(double now) {
  const double max = udp.timeouts.max;
  /* This rank itself did not look for a while (it computed): the silence it finds proves
   * nothing about its peers, who may have answered into a socket no one read. */
  bool was_away = now - udp.timers_at > max / 4;
  udp.timers_at = now;
  double next = -1;
  int kept = 0;
  for (int i = 0; i < udp.nactive; i++) {
    int peer = udp.active[i];
    udp_peer_t *p = udp_peer(peer);
    if (was_away) gasnetc_rel_peer_alive(&p->rel, now);
    take_answer(peer);
    double stalled = p->rel.stalled_since;
    if (stalled >= 0 && now - stalled > max / 4 && (p->pinged < 0 || now - p->pinged >= max / 32)) {
      udp_send_ping(peer);
      p->pinged = now;
    }
    /* This rank is itself behind on reading (its socket holds datagrams it has not read): the
     * answers it waits for may be among them, and the silence proves nothing yet. */
    bool lost = !gasnetc_rel_tick(&p->rel, now, &udp.timeouts, udp_resend, (void *)(intptr_t)peer);
    if (lost && udp_backlog_kib() > 0) {
      gasnetc_rel_peer_alive(&p->rel, now);
      lost = false;
    }
    if (lost) {
      udp_lock_drop();
      if (p->alive_at >= stalled && (int32_t)(p->got_seen - p->rel.una) > 0)
        gasneti_fatalerror("udp: rank %d on host %s receives this rank's datagrams but none of "
                           "its acknowledgements came back for %g s (GASNET_REQUESTTIMEOUT_MAX): "
                           "the path from it to this rank drops them (a filter?)", peer,
                           gasneti_host_name(peer), max);
      if (p->reading_at >= stalled)
        gasneti_fatalerror("udp: rank %d on host %s reads its socket but acknowledged none of "
                           "this rank's datagrams for %g s (GASNET_REQUESTTIMEOUT_MAX): they do "
                           "not reach it (a filter on the path, or a path MTU below 576?)", peer,
                           gasneti_host_name(peer), max);
      gasneti_fatalerror("udp: rank %d on host %s acknowledged nothing for %g s "
                         "(GASNET_REQUESTTIMEOUT_MAX): it is unreachable (its process answers "
                         "no liveness probe: gone, stopped, or its host cut off)", peer,
                         gasneti_host_name(peer), max);
    }
    double d = gasnetc_rel_next_deadline(&p->rel);
    if (d < 0) {
      p->in_active = false;
      continue;
    }
    udp.active[kept++] = peer;
    if (next < 0 || d < next) next = d;
  }
  udp.nactive = kept;
  udp.next_check = next;
  udp_send_now();
}

/* Slots the liveness thread fills with probers not met yet (rank + 1; a collision loses one,
 * whose next probe comes again). */
enum { PROBED_SLOTS = 64 };
_Atomic int udp_probed;
static _Atomic int probed_slot[PROBED_SLOTS];

void udp_ask_to_meet(int peer) {
  atomic_store_explicit(&probed_slot[peer % PROBED_SLOTS], peer + 1, memory_order_relaxed);
  atomic_store_explicit(&udp_probed, 1, memory_order_release);
}

void udp_meet_probers(void) {
  atomic_store_explicit(&udp_probed, 0, memory_order_relaxed);
  atomic_thread_fence(memory_order_seq_cst);
  for (int i = 0; i < PROBED_SLOTS; i++) {
    int peer = atomic_exchange_explicit(&probed_slot[i], 0, memory_order_acquire) - 1;
    if (peer >= 0 && !udp_peer(peer)) udp_meet(peer);
  }
}

/* ---- delivery ------------------------------------------------------------------------------- */
static bool bad(const char *why, int src) {
  static int told;
  if (told++ < 3) gasneti_warning("udp: dropped a malformed message from rank %d (%s)", src, why);
  return false;
}

/* Runs one message; false when the rest of its packet cannot be trusted. */
static bool run_message(int src, udp_msg_hdr_t *m, const uint8_t *end) {
  if (m->category > GASNETI_AM_LONG || m->nargs > 16) return bad("bad category or arguments", src);
  const uint8_t *args = (const uint8_t *)(m + 1);
  const uint8_t *payload = args + udp_args_bytes(m->nargs);
  if (payload > end || m->chunk > (uint32_t)(end - payload)) return bad("overruns its datagram", src);
  bool reply = m->flags & UDP_MSG_REPLY;
  gasneti_am_t am = {.category = m->category, .handler = m->handler, .nargs = m->nargs,
                     .flags = m->flags & (GASNETI_AM_FRAG | GASNETI_AM_TAIL), .nbytes = m->nbytes,
                     .chunk = m->chunk, .args = (const gasnet_handlerarg_t *)args,
                     .payload = payload, .dst = m->dst};
  if (m->category == GASNETI_AM_MEDIUM && m->chunk < m->nbytes) { /* reassembly */
    if (m->nbytes > GASNETC_MAX_MEDIUM) return bad("Medium too large", src);
    udp_peer_t *p = udp_peer(src);
    uint8_t **buf = &p->medium[reply];
    uint32_t *got = &p->medium_got[reply];
    if (!*buf) *buf = gasneti_malloc(GASNETC_MAX_MEDIUM);
    if (*got + m->chunk > m->nbytes) return bad("Medium pieces overrun it", src);
    memcpy(*buf + *got, payload, m->chunk);
    *got += m->chunk;
    if (m->flags & UDP_MSG_MEDPART) return true;
    if (*got != m->nbytes) return bad("Medium pieces missing", src);
    am.payload = *buf;
    am.chunk = m->nbytes;
    *got = 0;
  } else if (m->category == GASNETI_AM_LONG) {
    uint64_t span = (m->flags & GASNETI_AM_FRAG) ? m->chunk : m->nbytes;
    if (!gasneti_in_segment(gasneti_mynode, (void *)(uintptr_t)m->dst, span))
      return bad("Long outside this rank's segment", src);
    if (m->chunk > m->nbytes) return bad("Long piece larger than the Long", src);
    if (m->flags & GASNETI_AM_FRAG) {
      gasneti_am_deliver(NULL, &am); /* a copy into place; no handler runs */
      return true;
    }
  }
  gasneti_token_t token = {.src = (gasnet_node_t)src, .is_request = !reply};
  gasneti_am_deliver(&token, &am);
  udp_lock_take();
  if (reply) {
    gasneti_credit_returned(&udp.credits, src, 1);
  } else if (!token.replied) { /* an implicit reply: the credit is owed */
    gasneti_credit_owe(&udp.credits, src);
    if (gasneti_credit_overdue(&udp.credits, src)) udp_mark_dirty(src);
  }
  udp_lock_drop();
  return true;
}

static void run_packet(int src, uint8_t *data, uint32_t len) {
  const uint8_t *end = data + len;
  udp_pkt_hdr_t *h = (udp_pkt_hdr_t *)data;
  uint8_t *at = data + sizeof *h;
  for (int i = 0; i < h->nmsgs; i++) {
    if ((size_t)(end - at) < sizeof(udp_msg_hdr_t)) {
      bad("overruns its datagram", src);
      return;
    }
    udp_msg_hdr_t *m = (udp_msg_hdr_t *)at;
    if (!run_message(src, m, end)) return;
    at += udp_msg_bytes(m->nargs, m->chunk);
  }
}

int udp_deliver_ready(void) {
  int ran = 0;
  for (int budget = 64; budget > 0 && !gasneti_poll_stop; budget--) {
    udp_lock_take();
    if (!nready) {
      udp_lock_drop();
      break;
    }
    int src = ready_peers[0];
    udp_pktq_t *q = &udp_peer(src)->ready;
    udp_pkt_t pkt = q->items[q->head];
    q->head = (q->head + 1) % q->cap;
    if (--q->count == 0) { /* done with this peer for now */
      in_ready[src] = false;
      ready_peers[0] = ready_peers[--nready];
    }
    udp_lock_drop();
    run_packet(src, pkt.data, pkt.len);
    ran += ((udp_pkt_hdr_t *)pkt.data)->nmsgs;
    udp_lock_take();
    udp_packet_put(pkt.data);
    udp_lock_drop();
  }
  return ran;
}

void udp_recv_init(void) {
  ready_peers = gasneti_calloc(gasneti_nodes, sizeof *ready_peers);
  in_ready = gasneti_calloc(gasneti_nodes, sizeof *in_ready);
  scratch = gasneti_malloc(UDP_BLOCK);
}
