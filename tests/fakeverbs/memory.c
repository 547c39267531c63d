/* memory.c: protection domains, memory regions (keys in the fabric's directory, so peers can
 * check an rkey), and address handles. Registration pins nothing, but it counts what it would
 * pin: FAKEVERBS_PIN_LIMIT (bytes, optional K/M/G) makes registration fail with ENOMEM
 * beyond it, as an HCA does when the memlock limit or memory runs out. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fv_internal.h"

static _Atomic uint64_t pinned;

static uint64_t pin_limit(void) {
  const char *s = getenv("FAKEVERBS_PIN_LIMIT");
  if (!s || !*s) return UINT64_MAX;
  char *end;
  uint64_t v = strtoull(s, &end, 10);
  switch (*end) {
    case 'k': case 'K': v <<= 10; break;
    case 'm': case 'M': v <<= 20; break;
    case 'g': case 'G': v <<= 30; break;
    default: break;
  }
  return v;
}

struct ibv_pd *ibv_alloc_pd(struct ibv_context *context) {
  fv_pd_t *pd = calloc(1, sizeof *pd);
  if (!pd) {
    errno = ENOMEM;
    return NULL;
  }
  pd->pd.context = context;
  pd->id = fv_pd_new();
  pd->pd.handle = pd->id;
  return &pd->pd;
}

int ibv_dealloc_pd(struct ibv_pd *pd) {
  free(pd);
  return 0;
}

#undef ibv_reg_mr
struct ibv_mr *ibv_reg_mr(struct ibv_pd *pd, void *addr, size_t length, int access) {
  fv_context_t *c = (fv_context_t *)pd->context;
  /* Remote write needs local write, as the specification requires. */
  if ((access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) &&
      !(access & IBV_ACCESS_LOCAL_WRITE)) {
    errno = EINVAL;
    return NULL;
  }
  if (length > c->fdev->attr.max_mr_size || (!addr && length)) {
    errno = EINVAL;
    return NULL;
  }
  if (!fv_fabric) { /* keys live in the fabric: without one nothing can be registered */
    errno = ENODEV;
    return NULL;
  }
  uint64_t now = atomic_fetch_add(&pinned, length) + length;
  if (now > pin_limit()) {
    atomic_fetch_sub(&pinned, length);
    errno = ENOMEM;
    return NULL;
  }
  struct ibv_mr *mr = calloc(1, sizeof *mr);
  uint32_t key = mr ? fv_mr_new(((fv_pd_t *)pd)->id, (uint32_t)access, (uint64_t)(uintptr_t)addr,
                                length) : 0;
  if (!key) {
    free(mr);
    atomic_fetch_sub(&pinned, length);
    errno = ENOMEM;
    return NULL;
  }
  *mr = (struct ibv_mr){.context = pd->context, .pd = pd, .addr = addr, .length = length,
                        .handle = key, .lkey = key, .rkey = key};
  return mr;
}

struct ibv_mr *ibv_reg_mr_iova2(struct ibv_pd *pd, void *addr, size_t length, uint64_t iova,
                                unsigned int access) {
  if (iova != (uint64_t)(uintptr_t)addr) { /* only identity-mapped regions are simulated */
    errno = EOPNOTSUPP;
    return NULL;
  }
  return ibv_reg_mr(pd, addr, length, (int)(access & ~IBV_ACCESS_OPTIONAL_RANGE));
}

int ibv_dereg_mr(struct ibv_mr *mr) {
  fv_mr_free(mr->lkey);
  atomic_fetch_sub(&pinned, mr->length);
  free(mr);
  return 0;
}

struct ibv_ah *ibv_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr) {
  fv_ah_t *ah = calloc(1, sizeof *ah);
  if (!ah) {
    errno = ENOMEM;
    return NULL;
  }
  ah->ah.context = pd->context;
  ah->ah.pd = pd;
  ah->attr = *attr;
  return &ah->ah;
}

int ibv_destroy_ah(struct ibv_ah *ah) {
  free(ah);
  return 0;
}
