/* pshm_layout.c: the sizes of a host's shared AM queues. Rings exist per (sender, receiver,
 * kind) but are small and shrink as ranks grow; payloads go through two outboxes per sender
 * (requests and replies apart, so replies never wait behind requests that cannot drain), so a
 * host of 128 ranks needs about 200 MiB in all (it needed 6.3 GiB with 200 KiB per ring). */
#include "pshm_layout.h"

enum { PAGE = 4096, LINE = 64, OUTBOX = 256 * 1024 };

static size_t align_up(size_t x, size_t a) { return (x + a - 1) / a * a; }

static uint32_t slots_for(int n) {
  if (n <= 16) return 64;
  if (n <= 128) return 32;
  if (n <= 256) return 16;
  return 8;
}

void gasneti_pshm_layout(int host_ranks, gasneti_pshm_layout_t *out) {
  size_t n = host_ranks > 0 ? (size_t)host_ranks : 1;
  out->slots = slots_for((int)n);
  out->doorbells = n > GASNETI_PSHM_DIRECT_POLL_MAX;
  out->ring_bytes = GASNETI_PSHM_RING_CTL_BYTES + (size_t)out->slots * GASNETI_PSHM_SLOT_BYTES;
  size_t groups = (n + GASNETI_PSHM_GROUP - 1) / GASNETI_PSHM_GROUP;
  /* A summary word per group of senders, then one doorbell byte per sender. */
  out->summary_bytes = out->doorbells ? align_up(groups * 8, LINE) : 0;
  out->doorbell_bytes = out->doorbells ? out->summary_bytes + align_up(n, LINE) : 0;
  out->outbox_bytes = OUTBOX;
  out->doorbell_off = GASNETI_PSHM_HEADER_BYTES;
  out->rings_off = out->doorbell_off + 2 * out->doorbell_bytes;
  out->outbox_off = out->rings_off + 2 * n * out->ring_bytes;
  out->region_bytes = align_up(out->outbox_off + 2 * out->outbox_bytes, PAGE);
}

uint64_t gasneti_pshm_host_bytes(int host_ranks) {
  gasneti_pshm_layout_t l;
  gasneti_pshm_layout(host_ranks, &l);
  return (uint64_t)l.region_bytes * (uint64_t)(host_ranks > 0 ? host_ranks : 1);
}
