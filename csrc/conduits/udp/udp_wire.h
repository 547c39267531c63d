/* udp_wire.h: what travels in a datagram of the udp conduit. Every datagram starts with a
 * packet header (the job's tag, the sender, the reliability fields); a data packet then holds
 * one or more AM messages, 8-byte aligned. Both ends run the same build, so fields are in host
 * byte order. */
#ifndef GASNETC_UDP_WIRE_H
#define GASNETC_UDP_WIRE_H

#include <stdint.h>

enum {
  UDP_DATA = 1,     /* sequenced: AM messages and returned credits; acknowledged */
  UDP_ACK = 2,      /* acknowledgement only */
  UDP_EXIT = 3,     /* the sender's rank ended the job with code (best effort, repeated) */
  UDP_FINISHED = 4, /* the sender returned from main: do not wait for its acknowledgements */
  /* Liveness (see udp_conduit.c): a probe from a rank's liveness socket to a silent peer's,
   * and the answer its liveness thread sends back between the same two sockets whether or not
   * the application polls (so neither waits behind a backlog of data in the ranks' own
   * sockets). UDP_ALIVE's code is the answerer's count of socket reads (polls): unchanged
   * between two answers, it computes. Its ack is how far it has received the prober's stream
   * (in order): grown, it takes the prober's datagrams in and acknowledges late (a rank among
   * hundreds on a few cores); neither grown, it reads its socket and the prober's datagrams do
   * not reach it. Its sack is UDP_ALIVE_UNMET when the answerer has not met the prober yet
   * (udp_meet: it holds or dropped the prober's first datagrams while it looks ranks up, one
   * at a time): it lives and is busy, as one that computes. Its credits are the KiB waiting
   * unread in the answerer's own socket (at most 65535): not 0, it is behind on reading. */
  UDP_PING = 5,
  UDP_ALIVE = 6,
  /* A piece of a UDP_DATA packet that no longer fits its path whole (the path's MTU dropped
   * after it was built): seq is the packet's, code the offset of the piece in it (a multiple
   * of UDP_PART_UNIT), whole the packet's length; the piece's bytes follow the header. The
   * receiver puts the packet together and takes it as if it had come whole. Carries
   * acknowledgements, as every datagram does. */
  UDP_PART = 7,
};
enum { UDP_PART_UNIT = 64 };
enum { UDP_ALIVE_UNMET = 1 };

typedef struct {
  uint32_t tag;     /* the job's tag: datagrams of other jobs or other programs are dropped */
  uint16_t src;     /* sender's rank */
  uint8_t type;
  uint8_t nmsgs;    /* UDP_DATA: messages that follow */
  uint32_t seq;     /* UDP_DATA; UDP_EXIT: the last barrier the job's enders had passed */
  uint32_t ack;     /* cumulative acknowledgement of the receiver's stream to the sender */
  uint64_t sack;    /* selective acknowledgements (bit i: ack + 1 + i) */
  uint16_t credits; /* UDP_DATA: AM credits returned to the receiver */
  /* UDP_PART: the length of the packet it is a piece of; UDP_DATA: its copy number (0: first
   * sending, udp_rel.h) */
  uint16_t whole;
  /* UDP_EXIT: the exit code; UDP_PART: the piece's offset; UDP_DATA, UDP_ACK: the echo of the
   * last data packet received (gasnetc_rel_echo_pack) */
  int32_t code;
} udp_pkt_hdr_t;
_Static_assert(sizeof(udp_pkt_hdr_t) == 32, "packet header");

/* A control datagram (UDP_EXIT, UDP_FINISHED, UDP_PING, UDP_ALIVE): the header and a SipHash-2-4
 * MAC of it under the job's control key (udp.ctl_key), so that nobody outside the job can end
 * it, or make a dead rank look alive, by forging one; a control datagram without a valid MAC is
 * dropped. UDP_PING's seq is a per-peer count the answering UDP_ALIVE echoes: an old answer
 * replayed does not count. Data and acknowledgement datagrams are not authenticated (a MAC
 * over 64 KiB per datagram would cost more than the transfer); they are accepted only from the
 * sender rank's own address and port, with the job's tag, inside the receiver's sequence
 * window: forging one takes spoofing source addresses on the job's network (see README). */
typedef struct {
  udp_pkt_hdr_t h;
  uint64_t mac;
} udp_ctl_t;
_Static_assert(sizeof(udp_ctl_t) == 40, "control datagram");

/* Message flags (beyond GASNETI_AM_FRAG / GASNETI_AM_TAIL, which keep their values). */
enum {
  UDP_MSG_REPLY = 0x10,   /* a reply (returns the request's credit) */
  UDP_MSG_MEDPART = 0x20, /* a leading piece of a Medium that did not fit one datagram */
};

typedef struct {
  uint8_t category, handler, nargs, flags;
  uint32_t nbytes; /* what the handler sees */
  uint32_t chunk;  /* payload bytes in this message */
  uint32_t pad;
  uint64_t dst;    /* Long: where this message's payload goes */
  /* then nargs arguments, padded to 8 bytes, then the payload, padded to 8 bytes */
} udp_msg_hdr_t;
_Static_assert(sizeof(udp_msg_hdr_t) == 24, "message header");

static inline uint32_t udp_align8(uint32_t n) { return (n + 7u) & ~7u; }
static inline uint32_t udp_args_bytes(int nargs) { return udp_align8(4u * (uint32_t)nargs); }
static inline uint32_t udp_msg_bytes(int nargs, uint32_t chunk) {
  return (uint32_t)sizeof(udp_msg_hdr_t) + udp_args_bytes(nargs) + udp_align8(chunk);
}

#endif
