/* udp_send.c: from AMs to datagrams. Messages to one peer are appended to its open data packet;
 * a client's request leaves at once (a lone message is never delayed), while replies and
 * credit returns produced within one poll travel together. A Medium or Long larger than the
 * room left is cut into pieces that fill datagrams; the piece that carries the handler's
 * arguments comes last. Credits bound requests in flight; the reliability layer's window and
 * GASNET_NETWORKDEPTH_TOTAL bound datagrams in flight. */
#include <string.h>
#include <time.h>

#include "udp_internal.h"

double udp_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void udp_mark_dirty(int peer) {
  udp_peer_t *p = udp_peer(peer);
  if (!p->dirty) {
    p->dirty = true;
    udp.dirty[udp.ndirty++] = peer;
  }
}

static void activate(int peer) {
  udp_peer_t *p = udp_peer(peer);
  if (!p->in_active) {
    p->in_active = true;
    udp.active[udp.nactive++] = peer;
  }
}

static void path_refused(void);

void udp_send_now(void) {
  if (udp.nout) udp_sock_send(&udp.sock, udp.out, udp.nout);
  udp.counts.datagrams_out += (uint64_t)udp.nout;
  for (int i = 0; i < udp.nout; i++) {
    const udp_out_t *o = &udp.out[i];
    udp.counts.bytes_out += o->len;
    if (udp_pool_owns(&udp.pool, o->buf)) udp_pool_put(&udp.pool, o->buf);
    else if (o->ext && udp_pool_owns(&udp.pool, o->ext)) /* a piece of a packet (UDP_PART) */
      udp_pool_put(&udp.pool, o->ext);
  }
  udp.nout = 0;
  udp.nacks = 0;
  if (udp.sock.refused_to) path_refused();
}

void udp_queue_out(int peer, const void *buf, uint32_t len) {
  if (udp.nout == udp.outcap) udp_send_now();
  udp.out[udp.nout++] = (udp_out_t){&udp_peer(peer)->addr, buf, len, len, NULL, 0};
}

/* A queued packet keeps its block until it is handed to the socket: an acknowledgement that
 * arrives in between (a fast retransmission queued, then acknowledged in the same receive
 * batch) must not let the block be filled anew, or the stale entry would carry the new
 * packet's sequence number with the old packet's length and payload, and be accepted. */
static void queue_pieces(int peer, uint8_t *block, uint32_t len, uint32_t fit);

void udp_queue_data(int peer, void *block, uint32_t len) {
  const udp_tail_t *t = udp_tail(block);
  if (len > udp_peer(peer)->dgram) { /* built before its path's MTU dropped */
    queue_pieces(peer, block, len, udp_peer(peer)->dgram);
    return;
  }
  if (udp.nout == udp.outcap) udp_send_now();
  udp_pool_ref(&udp.pool, block);
  if (!t->ext) {
    udp_queue_out(peer, block, len);
    return;
  }
  udp.out[udp.nout++] = (udp_out_t){&udp_peer(peer)->addr, block, len, t->head_len, t->ext,
                                    t->ext_len};
}

static void fill_header(udp_pkt_hdr_t *h, int peer, int type) {
  gasnetc_rel_ackinfo_t info = gasnetc_rel_ackinfo(&udp_peer(peer)->rel);
  h->tag = udp.tag;
  h->src = (uint16_t)gasneti_mynode;
  h->type = (uint8_t)type;
  h->ack = info.ack;
  h->sack = info.sack;
  h->code = (int32_t)gasnetc_rel_echo_pack(info); /* UDP_DATA, UDP_ACK; others overwrite it */
}

/* ---- the path's MTU ------------------------------------------------------------------------
 * Datagrams to a peer on another host are sized at start-up to the smaller of both ends' MTUs.
 * A path whose MTU drops mid-job (an interface lowered, a tunnel or a smaller switch port on
 * the way) no longer carries them, and the peer must not be declared unreachable for it:
 * - when this host's kernel refuses one (EMSGSIZE: this host's interface, or a route whose MTU
 *   an ICMP "fragmentation needed" from a router lowered), datagrams to that peer are re-sized
 *   at once (to the interface's new MTU, else to the next smaller common path size);
 * - when nothing says so (a switch drops a frame too large for its port without a word), a
 *   packet sent whole UDP_RESIZE_AFTER times in vain goes next in pieces of the next smaller
 *   common path size, one size smaller at each further try (udp_datagram_below), while small
 *   datagrams (acknowledgements, liveness probes) still pass. Once two packets in a row arrived
 *   only as pieces of one size, with no larger whole packet arriving in between, new packets
 *   to that peer are built that small. A packet lost three times to ordinary loss just goes in
 *   pieces once, which costs nothing but the cutting.
 * A packet built before its peer's size dropped keeps its sequence number: it travels as
 * pieces (UDP_PART) that the receiver puts together (udp_recv.c). IP fragmentation stays off:
 * one lost fragment loses every other, and a silent switch would drop unfragmented frames
 * anyway. While every datagram arrives none of this runs: the common path costs a comparison
 * per packet sent and one more peer field read per packet acknowledged, no system call. */
enum { UDP_RESIZE_AFTER = 3 };

/* New packets to peer are at most size bytes (never raised again in this job). */
static void narrow(int peer, uint32_t size, const char *why) {
  udp_peer_t *p = udp_peer(peer);
  if (size >= p->dgram) return;
  static bool told;
  if (!told) {
    told = true;
    gasneti_warning("udp: datagrams to rank %d on host %s no longer fit the path, whose MTU "
                    "dropped during the job (%s): from now on they are at most %u bytes instead "
                    "of %u (further changes are not reported)", peer, gasneti_host_name(peer),
                    why, size, p->dgram);
  }
  p->dgram = size;
  p->narrow_votes = 0;
}

static void path_refused(void) {
  const struct sockaddr_in *to = udp.sock.refused_to;
  uint32_t len = udp.sock.refused_len;
  udp.sock.refused_to = NULL;
  int mtu = udp_sock_mtu_now(&udp.sock);
  uint32_t fits = udp_datagram_limit(mtu, mtu, false);
  bool lowered = mtu < udp.sock.mtu;
  if (lowered) udp.sock.mtu = mtu;
  for (int i = 0; i < udp.nmet; i++) {
    int r = udp.met[i];
    udp_peer_t *p = udp_peer(r);
    if (lowered && p->other_host) narrow(r, fits, "this host's interface MTU was lowered");
    if (&p->addr == to && len <= p->dgram)
      narrow(r, udp_datagram_below(len), "the kernel refused a datagram as too large");
  }
}

/* Cuts a packet into pieces of at most fit bytes with their headers (UDP_PART), sent from the
 * packet's block. */
static void queue_pieces(int peer, uint8_t *block, uint32_t len, uint32_t fit) {
  udp_peer_t *p = udp_peer(peer);
  udp_tail_t *t = udp_tail(block);
  if (t->ext) { /* the payload sent from where it lies joins the rest: pieces are one run */
    memcpy(block + t->head_len, t->ext, t->ext_len);
    memset(block + t->head_len + t->ext_len, 0, len - t->head_len - t->ext_len);
    t->ext = NULL;
  }
  if (!t->cut) p->cut_in_flight++;
  t->cut = (uint16_t)fit;
  uint32_t piece = (fit - (uint32_t)sizeof(udp_pkt_hdr_t)) & ~(uint32_t)(UDP_PART_UNIT - 1);
  uint32_t seq = ((const udp_pkt_hdr_t *)block)->seq;
  for (uint32_t off = 0; off < len; off += piece) {
    uint32_t n = len - off < piece ? len - off : piece;
    if (udp.nout == udp.outcap) udp_send_now();
    udp_pkt_hdr_t *h = &udp.acks[udp.nacks++].h;
    *h = (udp_pkt_hdr_t){0};
    fill_header(h, peer, UDP_PART);
    h->seq = seq;
    h->whole = (uint16_t)len;
    h->code = (int32_t)off;
    udp_pool_ref(&udp.pool, block); /* udp_send_now drops it (the piece's ext) */
    udp.counts.pieces_out++;
    udp.out[udp.nout++] = (udp_out_t){&p->addr, h, (uint32_t)sizeof *h + n, sizeof *h,
                                      block + off, n};
  }
}

/* An acknowledged packet that had been cut tells what size the path carries; a larger one that
 * went whole tells that the path carries more than that. */
static void path_evidence(int peer, const udp_tail_t *t) {
  udp_peer_t *p = udp_peer(peer);
  if (!t->cut) {
    if (t->len > p->narrow_to) p->narrow_votes = 0;
    return;
  }
  p->cut_in_flight--;
  if (t->cut != p->narrow_to) p->narrow_to = t->cut, p->narrow_votes = 0;
  if (++p->narrow_votes >= 2) narrow(peer, t->cut, "larger datagrams to it vanish on the way");
}

/* ---- reliability callbacks -------------------------------------------------------------- */
void udp_release(void *ctx, void *buf) {
  int peer = (int)(intptr_t)ctx;
  const udp_peer_t *p = udp_peer(peer);
  if (p->cut_in_flight | p->narrow_votes) path_evidence(peer, udp_tail(buf));
  udp_pool_put(&udp.pool, buf);
  udp.in_flight--;
}

void udp_drop_sent(void *buf) {
  udp_pool_put(&udp.pool, buf);
  udp.in_flight--;
}

/* Sends a datagram again, with up-to-date acknowledgements (its sequence number and returned
 * credits stay: the receiver counts them once, whichever copy arrives first); after
 * UDP_RESIZE_AFTER tries in vain, in pieces, smaller at each further try (see above). */
void udp_resend(void *ctx, void *buf, uint32_t len, unsigned copy) {
  int peer = (int)(intptr_t)ctx;
  udp_peer_t *p = udp_peer(peer);
  udp_tail_t *t = udp_tail(buf);
  if (t->resends < UINT16_MAX) t->resends++;
  fill_header(buf, peer, UDP_DATA);
  ((udp_pkt_hdr_t *)buf)->whole = (uint16_t)copy;
  uint32_t fit = p->dgram;
  if (p->other_host && t->resends >= UDP_RESIZE_AFTER)
    for (int step = t->resends - UDP_RESIZE_AFTER; step >= 0 && fit > UDP_MIN_PATH_PAYLOAD;
         step--)
      fit = udp_datagram_below(fit < len ? fit : len);
  if (len > fit) queue_pieces(peer, buf, len, fit);
  else udp_queue_data(peer, buf, len); /* a payload sent from where it lies is still there */
}

/* ---- data packets ------------------------------------------------------------------------- */
bool udp_open_packet(int peer) {
  udp_peer_t *p = udp_peer(peer);
  if (!gasnetc_rel_window_open(&p->rel) || udp.in_flight >= udp.depth_total) return false;
  /* Sending leaves receiving its blocks (a receive batch and a few more): a rank whose
   * unacknowledged packets took them all could no longer take the peers' packets that carry
   * the acknowledgements it waits for (GASNET_NETWORKDEPTH_TOTAL above the pool). */
  if (udp.pool.nfree <= UDP_RX_BATCH + 8) return false;
  uint8_t *buf = udp_pool_get(&udp.pool);
  if (!buf) return false;
  udp.in_flight++; /* counted from now: the window check above stays true until the flush */
  memset(buf, 0, sizeof(udp_pkt_hdr_t));
  *udp_tail(buf) = (udp_tail_t){0};
  p->open = buf;
  p->open_len = sizeof(udp_pkt_hdr_t);
  udp_mark_dirty(peer);
  return true;
}

/* Sends peer's open data packet (even an empty one when force: it carries credits). */
void udp_flush_peer(int peer, bool force) {
  udp_peer_t *p = udp_peer(peer);
  if (!p->open) return;
  udp_pkt_hdr_t *h = (udp_pkt_hdr_t *)p->open;
  if (!h->nmsgs && !force) return;
  fill_header(h, peer, UDP_DATA);
  h->credits = (uint16_t)gasneti_credit_collect(&udp.credits, peer);
  h->seq = gasnetc_rel_send(&p->rel, p->open, p->open_len, udp_now(), &udp.timeouts);
  udp_tail(p->open)->len = p->open_len;
  udp_queue_data(peer, p->open, p->open_len);
  if (udp.next_check < 0) udp.next_check = udp_now() + gasnetc_rel_rto(&p->rel, &udp.timeouts);
  activate(peer);
  p->unacked = 0;
  p->open = NULL;
}

static void send_ack(int peer) {
  udp_peer(peer)->unacked = 0;
  udp.counts.acks_alone++;
  if (udp.nout == udp.outcap) udp_send_now();
  udp_pkt_hdr_t *h = &udp.acks[udp.nacks++].h;
  *h = (udp_pkt_hdr_t){0};
  fill_header(h, peer, UDP_ACK);
  udp_queue_out(peer, h, sizeof *h);
}

void udp_send_control(int peer, int type, int code) {
  if (udp.nout == udp.outcap) udp_send_now();
  udp_ctl_t *c = &udp.acks[udp.nacks++];
  *c = (udp_ctl_t){0};
  fill_header(&c->h, peer, type);
  c->h.code = code;
  if (type == UDP_EXIT) c->h.seq = gasneti_exit_phase();
  udp_ctl_seal(c);
  udp_queue_out(peer, c, sizeof *c);
}

/* Not through fill_header: the probe goes from this rank's liveness socket to the peer's,
 * whose thread reads no acknowledgements (taking the pending one here would lose it). A
 * probe the kernel cannot take now goes at the next look. */
void udp_send_ping(int peer) {
  udp_peer_t *p = udp_peer(peer);
  udp_ctl_t c = {.h = {.tag = udp.tag, .src = (uint16_t)gasneti_mynode, .type = UDP_PING,
                       .seq = ++p->ping_seq}};
  udp_ctl_seal(&c);
  udp.counts.probes_out++;
  (void)!sendto(udp_live_fd, &c, sizeof c, MSG_DONTWAIT, (const struct sockaddr *)&p->live_addr,
                sizeof p->live_addr);
}

/* End of a poll: every touched peer's open packet goes; owed credits beyond the slack go in
 * an otherwise empty packet; an acknowledgement goes alone only when no data packet carried
 * it within UDP_ACK_DELAY (the peer stays listed until then). */
void udp_flush_all(void) {
  /* Work on a snapshot: opening a packet for credits lists its peer again. */
  int n = udp.ndirty;
  int *list = udp.dirty;
  udp.dirty = udp.dirty_spare;
  udp.dirty_spare = list;
  udp.ndirty = 0;
  double now = -1;
  for (int i = 0; i < n; i++) {
    int peer = list[i];
    udp_peer_t *p = udp_peer(peer);
    p->dirty = false;
    if (p->finished) continue;
    udp_flush_peer(peer, false);
    if (gasneti_credit_overdue(&udp.credits, peer) && (p->open || udp_open_packet(peer)))
      udp_flush_peer(peer, true);
    /* ack_due is still set only when no packet carried the latest acknowledgement: a data
     * packet sent before the last arrival did not (skipping the acknowledgement then, as this
     * once did, left the peer to find it by a timeout and a needless copy). */
    if (p->rel.ack_due) {
      if (now < 0) now = udp_now();
      if (now >= p->ack_by) send_ack(peer);
      else udp_mark_dirty(peer); /* not yet: a data packet may still carry it */
    }
  }
  udp_send_now();
}

/* ---- from an AM to messages ------------------------------------------------------------------ */
typedef struct {
  uint32_t off; /* payload bytes already placed */
} progress_t;

/* Appends one message; a payload sent from where it lies (external) ends its packet, which
 * this then sends. */
void udp_append(int peer, const gasneti_am_t *am, bool reply, uint8_t flags, bool with_args,
                uint32_t chunk, const uint8_t *payload, uint64_t dst, bool external) {
  udp_peer_t *p = udp_peer(peer);
  udp_msg_hdr_t *m = (udp_msg_hdr_t *)(p->open + p->open_len);
  int nargs = with_args ? am->nargs : 0;
  *m = (udp_msg_hdr_t){.category = am->category, .handler = am->handler, .nargs = (uint8_t)nargs,
                       .flags = (uint8_t)(flags | (reply ? UDP_MSG_REPLY : 0)),
                       .nbytes = am->nbytes, .chunk = chunk, .dst = dst};
  uint8_t *at = (uint8_t *)(m + 1);
  if (nargs) memcpy(at, am->args, 4u * (uint32_t)nargs);
  at += udp_args_bytes(nargs);
  if (external) *udp_tail(p->open) = (udp_tail_t){.ext = payload, .ext_len = chunk,
                                                  .head_len = (uint32_t)(at - p->open)};
  else if (chunk && payload != at) memcpy(at, payload, chunk); /* (in place: udp_np.c) */
  p->open_len += udp_msg_bytes(nargs, chunk);
  ((udp_pkt_hdr_t *)p->open)->nmsgs++;
  if (external) udp_flush_peer(peer, false);
}

/* A payload (piece) whose source stays as it is until acknowledged goes from there. */
static bool external(const gasneti_am_t *am, uint32_t chunk) {
  return (am->flags & GASNETI_AM_STABLE) && chunk >= UDP_EXT_MIN;
}

/* Places as much of the AM as window and buffers allow; true once all of it is placed. */
static bool place(int peer, const gasneti_am_t *am, bool reply, progress_t *pr) {
  udp_peer_t *p = udp_peer(peer);
  uint32_t total = am->category == GASNETI_AM_SHORT ? 0 : am->nbytes;
  const uint8_t *src = am->payload;
  for (;;) {
    if (!p->open && !udp_open_packet(peer)) return false;
    udp_pkt_hdr_t *h = (udp_pkt_hdr_t *)p->open;
    /* (none when the peer's datagrams shrank under an open packet: it goes, then a fresh one) */
    uint32_t room = p->dgram > p->open_len ? p->dgram - p->open_len : 0;
    uint32_t left = total - pr->off;
    if (h->nmsgs < 255 && udp_msg_bytes(am->nargs, left) <= room) { /* the last (or only) part */
      if (p->medium_owner[reply] == pr) p->medium_owner[reply] = NULL; /* its last piece */
      uint8_t flags = 0;
      uint64_t dst = am->dst;
      if (am->category == GASNETI_AM_LONG && left) flags = GASNETI_AM_TAIL;
      udp_append(peer, am, reply, flags, true, left, src + pr->off, dst, external(am, left));
      pr->off = total;
      return true;
    }
    uint32_t piece = room > sizeof(udp_msg_hdr_t) ? (room - (uint32_t)sizeof(udp_msg_hdr_t)) & ~7u
                                                  : 0;
    if (h->nmsgs == 255 || piece < 256 || am->category == GASNETI_AM_SHORT) {
      udp_flush_peer(peer, false); /* too little room here: a fresh datagram */
      continue;
    }
    if (piece > left) piece = left;
    /* A Medium's leading piece never holds all of it: the message with the arguments must
     * carry the rest, or the receiver would take the piece (whole, without arguments) for a
     * Medium of its own (the room fitted the payload but not the arguments too). */
    if (am->category == GASNETI_AM_MEDIUM && piece == left && left > 0) piece = left - 1;
    if (am->category == GASNETI_AM_MEDIUM) {
      /* The receiver reassembles one Medium per kind at a time: another thread's pieces to
       * this peer (PAR) go first, whole. */
      if (p->medium_owner[reply] && p->medium_owner[reply] != pr) return false;
      p->medium_owner[reply] = pr;
    }
    if (am->category == GASNETI_AM_LONG)
      udp_append(peer, am, reply, GASNETI_AM_FRAG, false, piece, src + pr->off,
                 am->dst + pr->off, external(am, piece));
    else
      udp_append(peer, am, reply, UDP_MSG_MEDPART, false, piece, src + pr->off, 0,
                 external(am, piece));
    pr->off += piece;
    udp_flush_peer(peer, false); /* this datagram is full */
  }
}

/* Waiting for credits or window: a poll that is not the client's (its epoch stays). */
GASNETI_TLS int udp_send_waiting;
int udp_serve_waiting(int which) {
  udp_send_waiting++;
  int ran = gasneti_poll(which);
  udp_send_waiting--;
  return ran;
}

static void wait_a_little(int which) {
  if (!udp_serve_waiting(which)) gasneti_wait_backoff();
}

/* A message was placed in its peer's open packet (udp_lock held). A client's message leaves now
 * when its peer is idle, or when it is the first to that peer since the client last polled (a
 * barrier's or a round trip's: never delayed). The client's next ones before it polls again (a
 * flood) gather in the open datagram, which goes when full or at the next poll; in a handler
 * they go with the poll's other replies. */
void udp_placed(int dest, bool in_handler) {
  udp_peer_t *p = udp_peer(dest);
  if (!udp.coalesce || (!in_handler && (gasnetc_rel_in_flight(&p->rel) == 0 ||
                                        p->sent_in_epoch != udp.poll_epoch))) {
    p->sent_in_epoch = udp.poll_epoch;
    udp_flush_peer(dest, false);
    udp_send_now();
  }
}

/* Whether all of an immediate message can be placed now without waiting (udp_lock held): in
 * the open packet, or in as many new ones as window, depth and buffers allow at once. */
static bool fits_now(int peer, const gasneti_am_t *am, bool reply) {
  udp_peer_t *p = udp_peer(peer);
  uint32_t total = am->category == GASNETI_AM_SHORT ? 0 : am->nbytes;
  if (am->category == GASNETI_AM_MEDIUM && p->medium_owner[reply]) return false;
  if (p->open) {
    const udp_pkt_hdr_t *h = (const udp_pkt_hdr_t *)p->open;
    if (h->nmsgs < 255 && p->dgram > p->open_len &&
        udp_msg_bytes(am->nargs, total) <= p->dgram - p->open_len)
      return true;
  }
  /* New packets: the first carries the header and arguments, each holds at least this much. */
  uint32_t room = p->dgram - (uint32_t)sizeof(udp_pkt_hdr_t) - udp_msg_bytes(am->nargs, 0);
  uint32_t packets = 1 + (total > room ? (total - room + room - 1) / room + 1 : 0);
  return p->rel.window - gasnetc_rel_in_flight(&p->rel) >= packets &&
         udp.depth_total - udp.in_flight >= packets &&
         udp.pool.nfree > UDP_RX_BATCH + 8 + packets;
}

bool udp_send_am(gasnet_node_t dest, const gasneti_am_t *am, gasneti_token_t *reply_to) {
  bool reply = reply_to != NULL;
  bool immediate = am->flags & GASNETI_AM_IMMEDIATE;
  bool in_handler = gasneti_am_context != GASNETI_CTX_CLIENT;
  int which = (reply || in_handler) ? GASNETI_POLL_REPLIES : GASNETI_POLL_ALL;
  udp_peer_t *p = udp_peer(dest);
  if (!p) p = udp_meet(dest); /* first contact: its address from the spawner */
  if (p->ended) { /* it had exited when this rank met it: nobody will ever read this */
    udp_lock_take();
    bool tell = !p->told_ended;
    p->told_ended = true;
    udp_lock_drop();
    if (tell)
      gasneti_warning("udp: rank %d had already exited when this rank first sent to it: what "
                      "is sent to it is dropped", (int)dest);
    return true;
  }
  /* A request takes a credit, given back by its reply. */
  if (!reply) {
    if (immediate) {
      int got = gasneti_credit_try(&udp.credits, UDP_LOCK, dest, &p->finished);
      if (got <= 0) return got < 0;
    } else if (!gasneti_credit_wait(&udp.credits, UDP_LOCK, dest, &p->finished, udp_serve_waiting,
                                    which)) {
      return true;
    }
  }
  progress_t pr = {0};
  for (;;) {
    udp_lock_take();
    if (p->finished) { /* it returned from main: nobody will ever read this */
      udp_lock_drop();
      return true;
    }
    if (immediate && !fits_now(dest, am, reply)) {
      if (!reply) gasneti_credit_returned(&udp.credits, dest, 1);
      udp_lock_drop();
      return false;
    }
    immediate = false; /* placed in one go from here on */
    bool done = place(dest, am, reply, &pr);
    if (done) udp_placed(dest, in_handler);
    udp_lock_drop();
    if (done) return true;
    wait_a_little(which);
  }
}
