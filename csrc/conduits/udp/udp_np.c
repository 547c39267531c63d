/* udp_np.c: negotiated-payload Mediums written in place (conduit.h: gasnetc_np_prepare): the
 * message's room is reserved in its peer's open data packet, the client writes the payload
 * there, and the commit completes the message and lets the packet go as any message's would.
 * A fixed-payload Medium costs the client a write into its own buffer and udp_send_am a copy
 * into the packet; this costs the write. Between the two, udp_lock stays held (PAR): the client
 * may make no GASNet call there. */
#include "udp_internal.h"

int gasnetc_np_prepare(gasnet_node_t dest, gasneti_token_t *reply_to, int nargs, size_t least,
                       size_t most, bool immediate, void **payload, size_t *size) {
  bool reply = reply_to != NULL;
  bool in_handler = gasneti_am_context != GASNETI_CTX_CLIENT;
  int which = (reply || in_handler) ? GASNETI_POLL_REPLIES : GASNETI_POLL_ALL;
  udp_peer_t *p = udp_peer(dest);
  if (!p) p = udp_meet(dest);
  /* One datagram's worth, or the core's buffer and udp_send_am's pieces. */
  uint32_t fits = p->dgram - (uint32_t)sizeof(udp_pkt_hdr_t) - udp_msg_bytes(nargs, 0);
  if (p->ended || least > fits) return GASNETC_NP_ELSEWHERE;
  size_t room = most < fits ? most : fits;
  if (!reply) { /* a request takes its credit now: the commit cannot wait */
    if (immediate) {
      int got = gasneti_credit_try(&udp.credits, UDP_LOCK, dest, &p->finished);
      if (got == 0) return GASNETC_NP_REFUSED;
      if (got < 0) return GASNETC_NP_ELSEWHERE; /* it returned from main: dropped there */
    } else if (!gasneti_credit_wait(&udp.credits, UDP_LOCK, dest, &p->finished,
                                    udp_serve_waiting, which)) {
      return GASNETC_NP_ELSEWHERE;
    }
  }
  for (;;) {
    udp_lock_take();
    if (p->finished) break;
    const udp_pkt_hdr_t *h = (const udp_pkt_hdr_t *)p->open;
    uint32_t need = udp_msg_bytes(nargs, (uint32_t)room);
    if (!p->medium_owner[reply]) { /* no other thread's Medium pieces under way to it */
      if (p->open && (h->nmsgs == 255 || p->open_len + need > p->dgram))
        udp_flush_peer(dest, false); /* too little room left in it: a fresh one */
      if (p->open || udp_open_packet(dest)) {
        *payload = p->open + p->open_len + sizeof(udp_msg_hdr_t) + udp_args_bytes(nargs);
        *size = room;
        return GASNETC_NP_OK; /* udp_lock stays held */
      }
    }
    if (immediate) break;
    udp_lock_drop();
    if (!udp_serve_waiting(which)) gasneti_wait_backoff();
  }
  if (!reply) gasneti_credit_returned(&udp.credits, dest, 1);
  udp_lock_drop();
  return p->finished ? GASNETC_NP_ELSEWHERE : GASNETC_NP_REFUSED;
}

void gasnetc_np_commit(gasnet_node_t dest, gasneti_token_t *reply_to, const gasneti_am_t *am) {
  udp_peer_t *p = udp_peer(dest);
  const uint8_t *payload = p->open + p->open_len + sizeof(udp_msg_hdr_t) + udp_args_bytes(am->nargs);
  udp_append(dest, am, reply_to != NULL, 0, true, am->chunk, payload, 0, false);
  udp_placed(dest, gasneti_am_context != GASNETI_CTX_CLIENT);
  udp_lock_drop();
}
