/* pshm.h: the shared-memory supernode: per-rank regions holding AM rings, barrier slots and
 * the host's exit word, plus the cross-mapped segments of supernode peers. */
#ifndef GASNETI_PSHM_H
#define GASNETI_PSHM_H

#include <stdalign.h>
#include <stdatomic.h>
#include <stdint.h>

#include "gasnet_internal.h"

/* ---- named shared-memory objects ---------------------------------------------------- */
void gasneti_shm_name(char *buf, size_t len, char kind, int rank);
void *gasneti_shm_create(char kind, int rank, size_t size);
void *gasneti_shm_map(char kind, int rank, size_t size);
void gasneti_shm_unlink(char kind, int rank);
/* Removes whatever a job left in /dev/shm on this host (supervisors, after the last rank). */
void gasneti_shm_cleanup_job(const char *jobid);

/* ---- AM rings ------------------------------------------------------------------------ */
/* One ring carries messages from one sender to one receiver, either requests or replies.
 * A slot is valid when its stamp equals the receiver's expected count + 1, so a one-line
 * message costs one cache-line transfer. Payloads that do not fit in the slot go to a
 * byte ring beside it. The receiver publishes what it consumed in its own cache line. */
#define GASNETI_RING_SLOTS 64
#define GASNETI_SLOT_BYTES 128
#define GASNETI_RING_PAYLOAD (192 * 1024) /* >= 2 * max medium: a wrap never starves */

enum {
  GASNETI_MSG_CAT_MASK = 0x03,  /* GASNETI_AM_SHORT / MEDIUM / LONG */
  GASNETI_MSG_INLINE = 0x04,    /* payload follows the args inside the slot */
  GASNETI_MSG_RINGPAY = 0x08,   /* payload in the byte ring, ending at slot.aux */
  GASNETI_MSG_LONGFRAG = 0x10,  /* copy the payload to addr; no handler runs */
  GASNETI_MSG_LONGCOPY = 0x20,  /* Long whose last chunk travels here: copy, then run */
};

typedef struct {
  _Atomic uint32_t stamp; /* written last */
  uint8_t handler;
  uint8_t flags;
  uint8_t nargs;
  uint8_t pad;
  uint32_t nbytes; /* what the handler sees */
  uint32_t chunk;  /* bytes carried by this message (payload length) */
  uint64_t addr;   /* Long: destination in the receiver's address space */
  uint64_t aux;    /* RINGPAY: end of the payload in the byte ring (monotonic) */
  gasnet_handlerarg_t args[16];
  uint8_t inline_data[GASNETI_SLOT_BYTES - 96];
} gasneti_slot_t;
_Static_assert(sizeof(gasneti_slot_t) == GASNETI_SLOT_BYTES, "slot layout");

typedef struct {
  alignas(GASNETI_CACHELINE) _Atomic uint32_t acked;  /* messages consumed */
  _Atomic uint64_t acked_payload;                     /* payload ring bytes released */
  alignas(GASNETI_CACHELINE) gasneti_slot_t slots[GASNETI_RING_SLOTS];
  alignas(GASNETI_CACHELINE) uint8_t payload[GASNETI_RING_PAYLOAD];
} gasneti_ring_t;

/* Sender's private view of a ring in a peer's region. */
typedef struct {
  gasneti_ring_t *ring;
  uint32_t sent;
  uint32_t acked_cache;
  uint64_t pay_head, pay_acked_cache;
  gasneti_spinlock_t lock; /* PAR: client threads may send to one peer at once */
} gasneti_ring_tx_t;

/* Receiver's private view of one of its own rings. */
typedef struct {
  gasneti_ring_t *ring;
  uint32_t received;
  uint64_t pay_done;
} gasneti_ring_rx_t;

typedef struct {
  uint8_t handler, flags, nargs;
  const gasnet_handlerarg_t *args;
  const void *payload; /* chunk bytes to carry (Medium payload, Long fragment) */
  uint32_t chunk;
  uint32_t nbytes;
  uint64_t addr;
} gasneti_msg_t;

/* false when the ring is full; the caller polls and retries. */
bool gasneti_ring_try_send(gasneti_ring_tx_t *tx, const gasneti_msg_t *msg);
/* Whether a message waits: the poll loop's check, kept inline because it runs on every poll. */
static inline bool gasneti_ring_ready(const gasneti_ring_rx_t *rx) {
  const gasneti_slot_t *s = &rx->ring->slots[rx->received % GASNETI_RING_SLOTS];
  return atomic_load_explicit(&s->stamp, memory_order_acquire) == rx->received + 1;
}
/* Runs the handlers of up to max waiting messages; returns how many ran. */
int gasneti_ring_drain(gasneti_ring_rx_t *rx, gasnet_node_t src, bool requests, int max);

/* ---- per-rank region ------------------------------------------------------------------ */
#define GASNETI_EXIT_NONE INT32_MIN

typedef struct {
  alignas(GASNETI_CACHELINE) _Atomic uint32_t phase;
  int32_t id, flags;
} gasneti_barrier_slot_t;

typedef struct {
  alignas(GASNETI_CACHELINE) _Atomic int32_t exit_code; /* read in the host leader's region */
  alignas(GASNETI_CACHELINE) gasneti_barrier_slot_t notify[2];  /* by barrier phase parity */
  alignas(GASNETI_CACHELINE) gasneti_barrier_slot_t release[2]; /* supernode leader's result */
  alignas(GASNETI_CACHELINE) gasneti_ring_t rings[];            /* [sender][request, reply] */
} gasneti_region_t;

extern gasneti_region_t **gasneti_regions; /* by host-local index */
extern gasneti_region_t *gasneti_host_leader_region;

static inline gasneti_ring_t *gasneti_region_ring(gasneti_region_t *r, int sender, int reply) {
  return &r->rings[sender * 2 + reply];
}

/* Create, cross-map and unlink the regions of this host's ranks (gasnet_init). */
void gasneti_pshm_init(void);
/* Cross-map the segments of supernode peers (gasnet_attach). */
void gasneti_pshm_attach_segments(void);
/* Serve incoming rings; which is GASNETI_POLL_*. */
int gasneti_pshm_poll(int which);
/* Blocking send to a host peer: serves this rank's own rings while the ring is full. */
void gasneti_pshm_send(int host_index, int reply, const gasneti_msg_t *msg);
/* Sender views: [reply][host-local index of the receiver]. */
extern gasneti_ring_tx_t *gasneti_tx[2];

#endif
