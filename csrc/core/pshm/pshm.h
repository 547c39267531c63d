/* pshm.h: the shared-memory supernode: one region per rank holding its incoming AM rings, its
 * outbox for payloads, its barrier slots and (in the host leader's) the host's exit word, plus
 * the cross-mapped segments of supernode peers. */
#ifndef GASNETI_PSHM_H
#define GASNETI_PSHM_H

#include <stdalign.h>
#include <stdatomic.h>
#include <stdint.h>

#include "am/am.h"
#include "pshm_layout.h"

/* ---- named shared-memory objects ---------------------------------------------------- */
/* For gasneti_name_tag (gasnet_internal.h): collective, before the first shared name. */
void gasneti_name_tag_init(void);
void gasneti_shm_name(char *buf, size_t len, char kind, int rank);
void *gasneti_shm_create(char kind, int rank, size_t size);
void *gasneti_shm_map(char kind, int rank, size_t size);
void gasneti_shm_unlink(char kind, int rank);
/* Removes whatever a job left in /dev/shm on this host (supervisors, after the last rank). */
void gasneti_shm_cleanup_job(const char *jobid);

/* ---- messages ----------------------------------------------------------------------- */
/* One slot of a ring. A slot is valid when its stamp equals the receiver's count + 1, so a
 * one-line message costs one cache-line transfer. Payloads that do not fit inline travel in
 * the sender's outbox; the receiver marks them done once the handler returned. */
enum {
  GASNETI_SLOT_INLINE = 0x10, /* payload follows the args inside the slot */
  GASNETI_SLOT_OUTBOX = 0x20, /* payload in the sender's outbox at offset aux */
};

typedef struct {
  _Atomic uint32_t stamp; /* written last */
  uint8_t handler, category, flags, nargs;
  uint32_t nbytes, chunk;
  uint64_t dst, aux;
  gasnet_handlerarg_t args[16];
  uint8_t inline_data[GASNETI_PSHM_SLOT_BYTES - 96];
} gasneti_slot_t;
_Static_assert(sizeof(gasneti_slot_t) == GASNETI_PSHM_SLOT_BYTES, "slot layout");

typedef struct {
  alignas(GASNETI_CACHELINE) _Atomic uint32_t acked; /* messages the receiver consumed */
} gasneti_ring_ctl_t;
_Static_assert(sizeof(gasneti_ring_ctl_t) == GASNETI_PSHM_RING_CTL_BYTES, "ring control");

typedef struct {
  _Atomic uint32_t done; /* set by the receiver once the payload is no longer needed */
  uint32_t size;         /* bytes of this chunk, header included */
  uint8_t pad[GASNETI_PSHM_CHUNK_HDR_BYTES - 8];
} gasneti_chunk_hdr_t;

/* ---- per-rank region ------------------------------------------------------------------ */
#define GASNETI_EXIT_NONE INT32_MIN
/* Posted by a conduit that keeps GASNET_EXITTIMEOUT itself (mpi: no agent of ours runs beside
 * its ranks): a rank still at work that long after a peer finished leaves with code 1, saying
 * so, as gasnetrun names the ranks its agents end at the timeout. */
#define GASNETI_EXIT_TIMEDOUT (INT32_MIN + 1)

typedef struct {
  alignas(GASNETI_CACHELINE) _Atomic uint32_t phase;
  int32_t id, flags;
} gasneti_barrier_slot_t;

typedef struct {
  alignas(GASNETI_CACHELINE) _Atomic int32_t exit_code; /* read in the host leader's region */
  _Atomic uint32_t exit_phase; /* the latest barrier a rank that ended the job had passed */
  alignas(GASNETI_CACHELINE) gasneti_barrier_slot_t notify[2];  /* by barrier phase parity */
  alignas(GASNETI_CACHELINE) gasneti_barrier_slot_t release[2]; /* supernode leader's result */
  /* Set while the rank may be asleep (wake.h); its own line: senders read it after each
   * message, and only a sleeper and the one writer that wakes it write it. */
  alignas(GASNETI_CACHELINE) _Atomic uint32_t sleeping;
  _Atomic uint32_t host_sleeps; /* in the host leader's: some rank of the host may sleep */
} gasneti_region_t;
_Static_assert(sizeof(gasneti_region_t) <= GASNETI_PSHM_HEADER_BYTES, "region header");

extern gasneti_region_t **gasneti_regions; /* by host-local index */
extern gasneti_region_t *gasneti_host_leader_region;

/* Create, cross-map and unlink the regions of this host's ranks (gasnet_init). */
void gasneti_pshm_init(void);
/* Cross-map the segments of supernode peers (gasnet_attach). */
void gasneti_pshm_attach_segments(void);
/* Serve incoming rings; which is GASNETI_POLL_*. Returns how many messages ran. */
int gasneti_pshm_poll(int which);
/* Sending lives in queue.h (its fast path is inline). */

#endif
