/* ofi_wire.h: what travels between ranks of the ofi conduit in a message (fi_send/fi_inject
 * into one of the receives the peer keeps posted): a header, the arguments, then (Medium,
 * packed Long) the payload, padded to 8 bytes; each receive buffer starts on a cache line, so
 * a handler's payload is 8-byte aligned. Control messages (credits returned alone, exit
 * and "finished" notices) are headers with the CTRL flag. Both ends run the same build, so
 * fields are in host byte order. Tests and tools that forge or read messages include this. */
#ifndef GASNETC_OFI_WIRE_H
#define GASNETC_OFI_WIRE_H

#include <stdint.h>

enum {
  OFI_MSG_REPLY = 0x80,  /* a reply (returns the request's credit) */
  OFI_MSG_PACKED = 0x40, /* a Long whose payload follows the arguments (copied into place) */
  OFI_MSG_CTRL = 0x20,   /* runtime traffic: no handler (see ctrl) */
};

enum {
  OFI_CTRL_CREDITS = 1,  /* credits returned alone (a hidden reply) */
  OFI_CTRL_EXIT = 2,     /* the sender's rank ended the job with code (best effort) */
  OFI_CTRL_FIN = 3,      /* the sender returned from main: send it nothing more */
};

typedef struct {
  uint8_t category, handler, nargs, flags;
  uint16_t credits; /* returned to the receiver with this message */
  uint8_t ctrl;     /* OFI_MSG_CTRL: which control message */
  uint8_t pad;
  uint32_t src;     /* the sender's rank */
  uint32_t nbytes;  /* payload the handler sees (a Long: the whole of it) */
  uint32_t chunk;   /* payload bytes in this message (before padding); OFI_CTRL_EXIT: the
                     * job's exit code */
  uint32_t phase;   /* OFI_CTRL_EXIT: the last barrier the job's enders had passed */
  uint64_t dst;     /* Long: where the payload is (or goes) in the receiver's segment */
  /* then nargs arguments, padded to 8 bytes, then the payload */
} ofi_msg_t;
_Static_assert(sizeof(ofi_msg_t) == 32, "message header");

static inline uint32_t ofi_msg_head(int nargs) {
  return ((uint32_t)sizeof(ofi_msg_t) + 4u * (uint32_t)nargs + 7u) & ~7u;
}
static inline uint32_t ofi_msg_bytes(int nargs, uint32_t chunk) {
  return ofi_msg_head(nargs) + ((chunk + 7u) & ~7u);
}

/* What each rank tells the others at start-up (through the bootstrap): the providers it can
 * use, each as a hash of its name (a rank maps the agreed hash back to its own name: 64 bytes
 * a rank instead of the names), then its card: its endpoint's address and, on every provider
 * but shm, its segment (the card is made at attach and looked up on first contact). */
enum { OFI_OFFERS_MAX = 16, OFI_ADDR_MAX = 248 };
typedef struct {
  uint32_t hash[OFI_OFFERS_MAX]; /* in libfabric's order; 0: no more */
} ofi_offer_t;
typedef struct {
  uint64_t base, size, key;
} ofi_segcard_t;
typedef struct {
  uint32_t addrlen;
  uint32_t has_seg; /* seg is this rank's segment (else it comes in an exchange at attach) */
  ofi_segcard_t seg;
  uint8_t addr[OFI_ADDR_MAX];
} ofi_card_t;

#endif
