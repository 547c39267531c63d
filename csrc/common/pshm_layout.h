/* pshm_layout.h: how big a host's shared AM queues are for a given number of ranks on it.
 * Free of runtime state: the runtime lays out its regions with it and gasnetrun (through the
 * CFFI binding) shows and checks each host's shared-memory need with the same numbers. */
#ifndef GASNETI_PSHM_LAYOUT_H
#define GASNETI_PSHM_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

/* CFFI-BEGIN */
typedef struct {
  uint32_t slots;        /* message slots per (sender, receiver, kind) ring */
  int doorbells;         /* receivers find work through doorbells (else by checking each ring) */
  size_t ring_bytes;     /* one ring: its control line and its slots */
  size_t summary_bytes;  /* one kind's summary words (one per group of 64 senders) */
  size_t doorbell_bytes; /* one kind's summary words and doorbell bytes in a region */
  size_t outbox_bytes;   /* a rank's buffer, per kind, for payloads that do not fit in a slot */
  size_t doorbell_off, rings_off, outbox_off;
  size_t region_bytes;   /* one rank's region, page-aligned */
} gasneti_pshm_layout_t;

/* The layout of each region on a host of host_ranks ranks (1..65535). */
void gasneti_pshm_layout(int host_ranks, gasneti_pshm_layout_t *out);
/* Shared memory a host of host_ranks ranks needs for its AM queues (all its regions). */
uint64_t gasneti_pshm_host_bytes(int host_ranks);
/* CFFI-END */

/* Fixed sizes the runtime's structures are checked against (pshm.h). */
#define GASNETI_PSHM_SLOT_BYTES 128
#define GASNETI_PSHM_HEADER_BYTES 1024 /* exit word and barrier slots */
#define GASNETI_PSHM_RING_CTL_BYTES 64  /* the receiver's "consumed" counter */
#define GASNETI_PSHM_CHUNK_HDR_BYTES 64 /* before each payload in an outbox */
/* Up to this many ranks per host, receivers check each ring; beyond, doorbells (queue.c). */
#define GASNETI_PSHM_GROUP 64 /* senders per summary word */
#define GASNETI_PSHM_DIRECT_POLL_MAX 4

#endif
