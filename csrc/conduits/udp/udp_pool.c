/* udp_pool.c: the udp conduit's packet buffers: a fixed pool of 64 KiB blocks (datagrams being
 * filled, in flight until acknowledged, or received and not yet delivered), reference counted
 * because one GRO receive can hold several datagrams in one block. No allocation after init. */
#include <sys/mman.h>

#include "udp_internal.h"

bool udp_pool_init(udp_pool_t *p, uint32_t blocks) {
  size_t bytes = (size_t)blocks * UDP_BLOCK;
  void *base = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (base == MAP_FAILED) return false;
  p->base = base;
  p->blocks = blocks;
  p->refs = gasneti_calloc(blocks, sizeof *p->refs);
  p->free = gasneti_calloc(blocks, sizeof *p->free);
  for (uint32_t i = 0; i < blocks; i++) p->free[i] = blocks - 1 - i;
  p->nfree = blocks;
  return true;
}

static uint32_t block_of(const udp_pool_t *p, const void *anywhere) {
  return (uint32_t)(((const uint8_t *)anywhere - p->base) / UDP_BLOCK);
}

uint8_t *udp_pool_get(udp_pool_t *p) {
  if (!p->nfree) return NULL;
  uint32_t b = p->free[--p->nfree];
  p->refs[b] = 1;
  return p->base + (size_t)b * UDP_BLOCK;
}

void udp_pool_ref(udp_pool_t *p, const void *anywhere) { p->refs[block_of(p, anywhere)]++; }

void udp_pool_put(udp_pool_t *p, const void *anywhere) {
  uint32_t b = block_of(p, anywhere);
  if (--p->refs[b] == 0) p->free[p->nfree++] = b;
}
