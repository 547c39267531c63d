/* gasnet_extended.h: the GASNet-1 extended API (put/get/memset, handles, implicit-handle
 * operations, access regions, value forms). Included by gasnet.h; not for direct inclusion.
 * Peers in the caller's supernode are reached inline through the cross-mapped segment; other
 * peers through the AM-based implementation in csrc/core/rma. */
#ifndef GASNET_EXTENDED_H
#define GASNET_EXTENDED_H

#include <string.h>

typedef struct gasneti_op *gasnet_handle_t;
#define GASNET_INVALID_HANDLE ((gasnet_handle_t)0)
typedef struct gasneti_valget *gasnet_valget_handle_t;

/* Per rank: whether it is in the caller's supernode, and the offset that maps an address in its
 * segment into this process (set by gasnet_attach). */
extern uint8_t *gasneti_pshm_reach;
extern uintptr_t *gasneti_pshm_offset;

/* Thread discovery needs no help: per-thread state is a thread-local variable. */
typedef void *gasnet_threadinfo_t;
#define GASNET_GET_THREADINFO() ((gasnet_threadinfo_t)0)
#define GASNET_POST_THREADINFO(info) ((void)(info))
#define GASNET_BEGIN_FUNCTION() ((void)0)

/* The AM path and the bookkeeping (csrc/core/rma). kind: what the caller must wait for. */
enum { GASNETI_RMA_BLOCKING = 0, GASNETI_RMA_NB = 1, GASNETI_RMA_NBI = 2 };
gasnet_handle_t gasneti_put_am(gasnet_node_t node, void *dest, const void *src, size_t n, int kind);
gasnet_handle_t gasneti_get_am(void *dest, gasnet_node_t node, const void *src, size_t n, int kind);
gasnet_handle_t gasneti_memset_am(gasnet_node_t node, void *dest, int val, size_t n, int kind);
void gasneti_rma_check(const char *what, gasnet_node_t node, const void *addr, size_t n);

#ifdef GASNETI_DEBUG
#define GASNETI_RMA_CHECK(what, node, addr, n) gasneti_rma_check(what, node, addr, n)
#else
#define GASNETI_RMA_CHECK(what, node, addr, n) ((void)(what))
#endif

static inline void *gasneti_pshm_addr(gasnet_node_t node, const void *addr) {
  return (void *)((uintptr_t)addr + gasneti_pshm_offset[node]);
}

/* ---- one shape for every form: direct when reachable, else the AM path ------------------ */
static inline gasnet_handle_t gasneti_put(const char *what, gasnet_node_t node, void *dest,
                                          const void *src, size_t n, int kind) {
  GASNETI_RMA_CHECK(what, node, dest, n);
  if (__builtin_expect(gasneti_pshm_reach[node], 1)) {
    memcpy(gasneti_pshm_addr(node, dest), src, n);
    return GASNET_INVALID_HANDLE;
  }
  return gasneti_put_am(node, dest, src, n, kind);
}

static inline gasnet_handle_t gasneti_get(const char *what, void *dest, gasnet_node_t node,
                                          const void *src, size_t n, int kind) {
  GASNETI_RMA_CHECK(what, node, src, n);
  if (__builtin_expect(gasneti_pshm_reach[node], 1)) {
    memcpy(dest, gasneti_pshm_addr(node, src), n);
    return GASNET_INVALID_HANDLE;
  }
  return gasneti_get_am(dest, node, src, n, kind);
}

static inline gasnet_handle_t gasneti_memset(const char *what, gasnet_node_t node, void *dest,
                                             int val, size_t n, int kind) {
  GASNETI_RMA_CHECK(what, node, dest, n);
  if (__builtin_expect(gasneti_pshm_reach[node], 1)) {
    memset(gasneti_pshm_addr(node, dest), val, n);
    return GASNET_INVALID_HANDLE;
  }
  return gasneti_memset_am(node, dest, val, n, kind);
}

/* ---- blocking ------------------------------------------------------------------------ */
static inline void gasnet_put(gasnet_node_t node, void *dest, void *src, size_t nbytes) {
  gasneti_put("gasnet_put", node, dest, src, nbytes, GASNETI_RMA_BLOCKING);
}
static inline void gasnet_put_bulk(gasnet_node_t node, void *dest, void *src, size_t nbytes) {
  gasneti_put("gasnet_put_bulk", node, dest, src, nbytes, GASNETI_RMA_BLOCKING);
}
static inline void gasnet_get(void *dest, gasnet_node_t node, void *src, size_t nbytes) {
  gasneti_get("gasnet_get", dest, node, src, nbytes, GASNETI_RMA_BLOCKING);
}
static inline void gasnet_get_bulk(void *dest, gasnet_node_t node, void *src, size_t nbytes) {
  gasneti_get("gasnet_get_bulk", dest, node, src, nbytes, GASNETI_RMA_BLOCKING);
}
static inline void gasnet_memset(gasnet_node_t node, void *dest, int val, size_t nbytes) {
  gasneti_memset("gasnet_memset", node, dest, val, nbytes, GASNETI_RMA_BLOCKING);
}

/* ---- explicit handle ------------------------------------------------------------------- */
static inline gasnet_handle_t gasnet_put_nb(gasnet_node_t node, void *dest, void *src,
                                            size_t nbytes) {
  return gasneti_put("gasnet_put_nb", node, dest, src, nbytes, GASNETI_RMA_NB);
}
static inline gasnet_handle_t gasnet_put_nb_bulk(gasnet_node_t node, void *dest, void *src,
                                                 size_t nbytes) {
  return gasneti_put("gasnet_put_nb_bulk", node, dest, src, nbytes, GASNETI_RMA_NB);
}
static inline gasnet_handle_t gasnet_get_nb(void *dest, gasnet_node_t node, void *src,
                                            size_t nbytes) {
  return gasneti_get("gasnet_get_nb", dest, node, src, nbytes, GASNETI_RMA_NB);
}
static inline gasnet_handle_t gasnet_get_nb_bulk(void *dest, gasnet_node_t node, void *src,
                                                 size_t nbytes) {
  return gasneti_get("gasnet_get_nb_bulk", dest, node, src, nbytes, GASNETI_RMA_NB);
}
static inline gasnet_handle_t gasnet_memset_nb(gasnet_node_t node, void *dest, int val,
                                               size_t nbytes) {
  return gasneti_memset("gasnet_memset_nb", node, dest, val, nbytes, GASNETI_RMA_NB);
}

void gasnet_wait_syncnb(gasnet_handle_t handle);
int gasnet_try_syncnb(gasnet_handle_t handle);
void gasnet_wait_syncnb_all(gasnet_handle_t *handles, size_t numhandles);
void gasnet_wait_syncnb_some(gasnet_handle_t *handles, size_t numhandles);
int gasnet_try_syncnb_all(gasnet_handle_t *handles, size_t numhandles);
int gasnet_try_syncnb_some(gasnet_handle_t *handles, size_t numhandles);

/* ---- implicit handle ------------------------------------------------------------------- */
static inline void gasnet_put_nbi(gasnet_node_t node, void *dest, void *src, size_t nbytes) {
  gasneti_put("gasnet_put_nbi", node, dest, src, nbytes, GASNETI_RMA_NBI);
}
static inline void gasnet_put_nbi_bulk(gasnet_node_t node, void *dest, void *src, size_t nbytes) {
  gasneti_put("gasnet_put_nbi_bulk", node, dest, src, nbytes, GASNETI_RMA_NBI);
}
static inline void gasnet_get_nbi(void *dest, gasnet_node_t node, void *src, size_t nbytes) {
  gasneti_get("gasnet_get_nbi", dest, node, src, nbytes, GASNETI_RMA_NBI);
}
static inline void gasnet_get_nbi_bulk(void *dest, gasnet_node_t node, void *src, size_t nbytes) {
  gasneti_get("gasnet_get_nbi_bulk", dest, node, src, nbytes, GASNETI_RMA_NBI);
}
static inline void gasnet_memset_nbi(gasnet_node_t node, void *dest, int val, size_t nbytes) {
  gasneti_memset("gasnet_memset_nbi", node, dest, val, nbytes, GASNETI_RMA_NBI);
}

void gasnet_wait_syncnbi_puts(void);
void gasnet_wait_syncnbi_gets(void);
void gasnet_wait_syncnbi_all(void);
int gasnet_try_syncnbi_puts(void);
int gasnet_try_syncnbi_gets(void);
int gasnet_try_syncnbi_all(void);
void gasnet_begin_nbi_accessregion(void);
gasnet_handle_t gasnet_end_nbi_accessregion(void);

/* ---- register-value forms --------------------------------------------------------------- */
/* The nbytes low-order bytes of a value, in memory order for an nbytes-wide integer. */
static inline const void *gasneti_value_bytes(const gasnet_register_value_t *v, size_t nbytes) {
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  return (const char *)v + sizeof *v - nbytes;
#else
  (void)nbytes;
  return v;
#endif
}

static inline void gasneti_store_value(void *addr, gasnet_register_value_t value, size_t nbytes) {
  switch (nbytes) { /* single stores for the common widths */
    case 8: *(uint64_t *)addr = (uint64_t)value; break;
    case 4: *(uint32_t *)addr = (uint32_t)value; break;
    case 2: *(uint16_t *)addr = (uint16_t)value; break;
    case 1: *(uint8_t *)addr = (uint8_t)value; break;
    default: memcpy(addr, gasneti_value_bytes(&value, nbytes), nbytes);
  }
}

static inline gasnet_register_value_t gasneti_load_value(const void *addr, size_t nbytes) {
  switch (nbytes) {
    case 8: return *(const uint64_t *)addr;
    case 4: return *(const uint32_t *)addr;
    case 2: return *(const uint16_t *)addr;
    case 1: return *(const uint8_t *)addr;
    default: {
      gasnet_register_value_t v = 0;
      memcpy((void *)gasneti_value_bytes(&v, nbytes), addr, nbytes);
      return v;
    }
  }
}

static inline gasnet_handle_t gasneti_put_val(const char *what, gasnet_node_t node, void *dest,
                                              gasnet_register_value_t value, size_t nbytes,
                                              int kind) {
  GASNETI_RMA_CHECK(what, node, dest, nbytes);
  if (__builtin_expect(gasneti_pshm_reach[node], 1)) {
    /* Value puts target naturally aligned words in practice; memcpy keeps odd cases legal. */
    void *p = gasneti_pshm_addr(node, dest);
    if (((uintptr_t)p & (nbytes - 1)) == 0) gasneti_store_value(p, value, nbytes);
    else memcpy(p, gasneti_value_bytes(&value, nbytes), nbytes);
    return GASNET_INVALID_HANDLE;
  }
  return gasneti_put_am(node, dest, gasneti_value_bytes(&value, nbytes), nbytes, kind);
}

static inline void gasnet_put_val(gasnet_node_t node, void *dest, gasnet_register_value_t value,
                                  size_t nbytes) {
  gasneti_put_val("gasnet_put_val", node, dest, value, nbytes, GASNETI_RMA_BLOCKING);
}
static inline gasnet_handle_t gasnet_put_nb_val(gasnet_node_t node, void *dest,
                                                gasnet_register_value_t value, size_t nbytes) {
  return gasneti_put_val("gasnet_put_nb_val", node, dest, value, nbytes, GASNETI_RMA_NB);
}
static inline void gasnet_put_nbi_val(gasnet_node_t node, void *dest,
                                      gasnet_register_value_t value, size_t nbytes) {
  gasneti_put_val("gasnet_put_nbi_val", node, dest, value, nbytes, GASNETI_RMA_NBI);
}

static inline gasnet_register_value_t gasnet_get_val(gasnet_node_t node, void *src,
                                                     size_t nbytes) {
  GASNETI_RMA_CHECK("gasnet_get_val", node, src, nbytes);
  if (__builtin_expect(gasneti_pshm_reach[node], 1)) {
    const void *p = gasneti_pshm_addr(node, src);
    if (((uintptr_t)p & (nbytes - 1)) == 0) return gasneti_load_value(p, nbytes);
    gasnet_register_value_t v = 0;
    memcpy((void *)gasneti_value_bytes(&v, nbytes), p, nbytes);
    return v;
  }
  gasnet_register_value_t v = 0;
  gasneti_get_am((void *)gasneti_value_bytes(&v, nbytes), node, src, nbytes, GASNETI_RMA_BLOCKING);
  return v;
}

gasnet_valget_handle_t gasnet_get_nb_val(gasnet_node_t node, void *src, size_t nbytes);
gasnet_register_value_t gasnet_wait_syncnb_valget(gasnet_valget_handle_t handle);

#endif
