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
/* Both in one word, for the inline paths: a supernode peer's offset, or GASNETI_PSHM_FAR (odd,
 * where offsets between mappings are whole pages) for any other rank and for every rank before
 * gasnet_attach. One load decides whether and where a transfer goes directly; two tables
 * cost a small-put loop four dependent loads per transfer, which the compiler must redo
 * after each store since the store might change them. */
extern uintptr_t *gasneti_pshm_direct;
#define GASNETI_PSHM_FAR ((uintptr_t)1)

/* Thread discovery needs no help: per-thread state is a thread-local variable. */
typedef void *gasnet_threadinfo_t;
#define GASNET_GET_THREADINFO() ((gasnet_threadinfo_t)0)
#define GASNET_POST_THREADINFO(info) ((void)(info))
#define GASNET_BEGIN_FUNCTION() ((void)0)

/* The network path (AMs, or RDMA where the conduit has it) and the bookkeeping (csrc/core/rma).
 * kind: what the caller must wait for; bulk: src need not be reusable when a put returns. */
enum { GASNETI_RMA_BLOCKING = 0, GASNETI_RMA_NB = 1, GASNETI_RMA_NBI = 2 };
void gasneti_rma_check(const char *what, gasnet_node_t node, const void *addr, size_t n);

#ifdef GASNETI_DEBUG
#define GASNETI_RMA_CHECK(what, node, addr, n) gasneti_rma_check(what, node, addr, n)
#else
#define GASNETI_RMA_CHECK(what, node, addr, n) ((void)0)
#endif

static inline void *gasneti_pshm_addr(gasnet_node_t node, const void *addr) {
  return (void *)((uintptr_t)addr + gasneti_pshm_offset[node]);
}
/* The same, given the rank's gasneti_pshm_direct entry (not GASNETI_PSHM_FAR). */
static inline void *gasneti_direct_addr(uintptr_t direct, const void *addr) {
  return (void *)((uintptr_t)addr + direct);
}

/* ---- word copies: one load and one store ---------------------------------------------------
 * A non-bulk transfer of 1, 2, 4 or 8 bytes whose target is naturally aligned is one store (a
 * get: one load of the source), whatever flags the client compiles with. Clients poll such
 * words as flags; a byte-wise or vectorised memcpy may write them in pieces or twice (glibc
 * writes 8 bytes as two overlapping stores), and a reader that resets the flag between the two
 * sees its reset undone. may_alias: the client's word may be of any type. */
typedef uint64_t __attribute__((may_alias)) gasneti_word64_t;
typedef uint32_t __attribute__((may_alias)) gasneti_word32_t;
typedef uint16_t __attribute__((may_alias)) gasneti_word16_t;
typedef union { uint64_t u64; uint32_t u32; uint16_t u16; uint8_t u8; unsigned char b[8]; }
    gasneti_word_t;

static inline int gasneti_is_word_size(size_t n) { return n == 8 || n == 4 || n == 2 || n == 1; }
static inline int gasneti_word_aligned(const void *p, size_t n) {
  return ((uintptr_t)p & (n - 1)) == 0;
}

/* n is a word size. An unaligned side is copied bytewise (no single access exists for it). */
static inline gasneti_word_t gasneti_word_load(const void *src, size_t n) {
  gasneti_word_t w = {0};
  if (!gasneti_word_aligned(src, n)) {
    memcpy(w.b, src, n);
    return w;
  }
  switch (n) {
    case 8: w.u64 = __atomic_load_n((const gasneti_word64_t *)src, __ATOMIC_RELAXED); break;
    case 4: w.u32 = __atomic_load_n((const gasneti_word32_t *)src, __ATOMIC_RELAXED); break;
    case 2: w.u16 = __atomic_load_n((const gasneti_word16_t *)src, __ATOMIC_RELAXED); break;
    default: w.u8 = __atomic_load_n((const uint8_t *)src, __ATOMIC_RELAXED); break;
  }
  return w;
}

static inline void gasneti_word_store(void *dst, gasneti_word_t w, size_t n) {
  if (!gasneti_word_aligned(dst, n)) {
    memcpy(dst, w.b, n);
    return;
  }
  switch (n) {
    case 8: __atomic_store_n((gasneti_word64_t *)dst, w.u64, __ATOMIC_RELAXED); break;
    case 4: __atomic_store_n((gasneti_word32_t *)dst, w.u32, __ATOMIC_RELAXED); break;
    case 2: __atomic_store_n((gasneti_word16_t *)dst, w.u16, __ATOMIC_RELAXED); break;
    default: __atomic_store_n((uint8_t *)dst, w.u8, __ATOMIC_RELAXED); break;
  }
}

/* A copy that is one load and one store for word sizes, memcpy otherwise. The word stays in a
 * register of its own width (a union would go through the stack, which costs the small-put
 * loops of clients a store and a reload per transfer). */
#define GASNETI_COPY_WORD(T, W)                                                                \
  do {                                                                                       \
    T v_;                                                                                    \
    if (__builtin_expect(gasneti_word_aligned(src, W), 1))                                   \
      v_ = __atomic_load_n((const T *)src, __ATOMIC_RELAXED);                                \
    else                                                                                     \
      memcpy(&v_, src, W);                                                                   \
    if (__builtin_expect(gasneti_word_aligned(dst, W), 1))                                   \
      __atomic_store_n((T *)dst, v_, __ATOMIC_RELAXED);                                      \
    else                                                                                     \
      memcpy(dst, &v_, W);                                                                   \
  } while (0)
/* 8 bytes first: the common word (a double, a pointer, a 64-bit counter) takes no jump. */
static inline void gasneti_copy(void *dst, const void *src, size_t n) {
  if (__builtin_expect(n == 8, 1)) GASNETI_COPY_WORD(gasneti_word64_t, 8);
  else if (n == 4) GASNETI_COPY_WORD(gasneti_word32_t, 4);
  else if (n == 2) GASNETI_COPY_WORD(gasneti_word16_t, 2);
  else if (n == 1)
    __atomic_store_n((uint8_t *)dst, __atomic_load_n((const uint8_t *)src, __ATOMIC_RELAXED),
                     __ATOMIC_RELAXED);
  else memcpy(dst, src, n);
}
#undef GASNETI_COPY_WORD

/* ---- tracing and statistics (csrc/core/trace) ---------------------------------------------
 * Every put, get and memset form has a number (the library names it in traces and statistics
 * with GASNet's names: PUT_NB, GET_BULK, ...), and every public call is also a macro that
 * passes the client's file and line (GASNETI_SRCLOC) to the library. The inline fast paths
 * below pay nothing for it: a rank that traces or collects statistics keeps every peer "far"
 * (gasneti_pshm_direct), so its transfers all reach the library, which records them and then
 * copies directly where it may. */
enum {
  GASNETI_OP_PUT, GASNETI_OP_PUT_BULK, GASNETI_OP_PUT_NB, GASNETI_OP_PUT_NB_BULK,
  GASNETI_OP_PUT_NBI, GASNETI_OP_PUT_NBI_BULK, GASNETI_OP_PUT_VAL, GASNETI_OP_PUT_NB_VAL,
  GASNETI_OP_PUT_NBI_VAL, GASNETI_OP_MEMSET, GASNETI_OP_MEMSET_NB, GASNETI_OP_MEMSET_NBI,
  GASNETI_OP_GET, GASNETI_OP_GET_BULK, GASNETI_OP_GET_NB, GASNETI_OP_GET_NB_BULK,
  GASNETI_OP_GET_NBI, GASNETI_OP_GET_NBI_BULK, GASNETI_OP_GET_VAL, GASNETI_OP_GET_NB_VAL,
  GASNETI_OP_COUNT
};
/* The public name of an operation ("gasnet_put_nb"), for argument checks. */
const char *gasneti_op_api_name(int op);
/* The library's entries for what the inline paths do not serve (loc: "file:line" or NULL). */
gasnet_handle_t gasneti_put_at(const char *loc, int op, gasnet_node_t node, void *dest,
                               const void *src, size_t n, int kind, int bulk);
gasnet_handle_t gasneti_get_at(const char *loc, int op, void *dest, gasnet_node_t node,
                               const void *src, size_t n, int kind);
gasnet_handle_t gasneti_memset_at(const char *loc, int op, gasnet_node_t node, void *dest, int val,
                                  size_t n, int kind);

/* ---- one shape for every form: direct when reachable, else the library ------------------ */
static inline gasnet_handle_t gasneti_put(const char *loc, int op, gasnet_node_t node, void *dest,
                                          const void *src, size_t n, int kind, int bulk) {
  GASNETI_RMA_CHECK(gasneti_op_api_name(op), node, dest, n);
  uintptr_t direct = gasneti_pshm_direct[node];
  if (__builtin_expect(direct != GASNETI_PSHM_FAR, 1)) {
    if (bulk) memcpy(gasneti_direct_addr(direct, dest), src, n);
    else gasneti_copy(gasneti_direct_addr(direct, dest), src, n);
    return GASNET_INVALID_HANDLE;
  }
  return gasneti_put_at(loc, op, node, dest, src, n, kind, bulk);
}

static inline gasnet_handle_t gasneti_get(const char *loc, int op, void *dest, gasnet_node_t node,
                                          const void *src, size_t n, int kind, int bulk) {
  GASNETI_RMA_CHECK(gasneti_op_api_name(op), node, src, n);
  uintptr_t direct = gasneti_pshm_direct[node];
  if (__builtin_expect(direct != GASNETI_PSHM_FAR, 1)) {
    if (bulk) memcpy(dest, gasneti_direct_addr(direct, src), n);
    else gasneti_copy(dest, gasneti_direct_addr(direct, src), n);
    return GASNET_INVALID_HANDLE;
  }
  return gasneti_get_at(loc, op, dest, node, src, n, kind);
}

static inline gasnet_handle_t gasneti_memset(const char *loc, int op, gasnet_node_t node,
                                             void *dest, int val, size_t n, int kind) {
  GASNETI_RMA_CHECK(gasneti_op_api_name(op), node, dest, n);
  uintptr_t direct = gasneti_pshm_direct[node];
  if (__builtin_expect(direct != GASNETI_PSHM_FAR, 1)) {
    memset(gasneti_direct_addr(direct, dest), val, n);
    return GASNET_INVALID_HANDLE;
  }
  return gasneti_memset_at(loc, op, node, dest, val, n, kind);
}

/* The public forms: functions (whose address a client may take) and, after them, macros of
 * the same names that add the caller's source line. */
#define GASNETI_PUT_FORM(name, OP, kind, bulk)                                                 \
  static inline void name(gasnet_node_t node, void *dest, void *src, size_t nbytes) {         \
    gasneti_put((const char *)0, OP, node, dest, src, nbytes, kind, bulk);                   \
  }
#define GASNETI_PUT_NB_FORM(name, OP, bulk)                                                    \
  static inline gasnet_handle_t name(gasnet_node_t node, void *dest, void *src, size_t nbytes) { \
    return gasneti_put((const char *)0, OP, node, dest, src, nbytes, GASNETI_RMA_NB, bulk);  \
  }
#define GASNETI_GET_FORM(name, OP, kind, bulk)                                                 \
  static inline void name(void *dest, gasnet_node_t node, void *src, size_t nbytes) {         \
    gasneti_get((const char *)0, OP, dest, node, src, nbytes, kind, bulk);                   \
  }
#define GASNETI_GET_NB_FORM(name, OP, bulk)                                                    \
  static inline gasnet_handle_t name(void *dest, gasnet_node_t node, void *src, size_t nbytes) { \
    return gasneti_get((const char *)0, OP, dest, node, src, nbytes, GASNETI_RMA_NB, bulk);  \
  }

/* ---- blocking ------------------------------------------------------------------------ */
GASNETI_PUT_FORM(gasnet_put, GASNETI_OP_PUT, GASNETI_RMA_BLOCKING, 0)
GASNETI_PUT_FORM(gasnet_put_bulk, GASNETI_OP_PUT_BULK, GASNETI_RMA_BLOCKING, 1)
GASNETI_GET_FORM(gasnet_get, GASNETI_OP_GET, GASNETI_RMA_BLOCKING, 0)
GASNETI_GET_FORM(gasnet_get_bulk, GASNETI_OP_GET_BULK, GASNETI_RMA_BLOCKING, 1)
static inline void gasnet_memset(gasnet_node_t node, void *dest, int val, size_t nbytes) {
  gasneti_memset((const char *)0, GASNETI_OP_MEMSET, node, dest, val, nbytes, GASNETI_RMA_BLOCKING);
}
#define gasnet_put(node, dest, src, n) \
  ((void)gasneti_put(GASNETI_SRCLOC, GASNETI_OP_PUT, node, dest, src, n, GASNETI_RMA_BLOCKING, 0))
#define gasnet_put_bulk(node, dest, src, n)                                                  \
  ((void)gasneti_put(GASNETI_SRCLOC, GASNETI_OP_PUT_BULK, node, dest, src, n,               \
                     GASNETI_RMA_BLOCKING, 1))
#define gasnet_get(dest, node, src, n) \
  ((void)gasneti_get(GASNETI_SRCLOC, GASNETI_OP_GET, dest, node, src, n, GASNETI_RMA_BLOCKING, 0))
#define gasnet_get_bulk(dest, node, src, n)                                                  \
  ((void)gasneti_get(GASNETI_SRCLOC, GASNETI_OP_GET_BULK, dest, node, src, n,               \
                     GASNETI_RMA_BLOCKING, 1))
#define gasnet_memset(node, dest, val, n)                                                    \
  ((void)gasneti_memset(GASNETI_SRCLOC, GASNETI_OP_MEMSET, node, dest, val, n,              \
                        GASNETI_RMA_BLOCKING))

/* ---- explicit handle ------------------------------------------------------------------- */
GASNETI_PUT_NB_FORM(gasnet_put_nb, GASNETI_OP_PUT_NB, 0)
GASNETI_PUT_NB_FORM(gasnet_put_nb_bulk, GASNETI_OP_PUT_NB_BULK, 1)
GASNETI_GET_NB_FORM(gasnet_get_nb, GASNETI_OP_GET_NB, 0)
GASNETI_GET_NB_FORM(gasnet_get_nb_bulk, GASNETI_OP_GET_NB_BULK, 1)
static inline gasnet_handle_t gasnet_memset_nb(gasnet_node_t node, void *dest, int val,
                                               size_t nbytes) {
  return gasneti_memset((const char *)0, GASNETI_OP_MEMSET_NB, node, dest, val, nbytes,
                        GASNETI_RMA_NB);
}
#define gasnet_put_nb(node, dest, src, n) \
  gasneti_put(GASNETI_SRCLOC, GASNETI_OP_PUT_NB, node, dest, src, n, GASNETI_RMA_NB, 0)
#define gasnet_put_nb_bulk(node, dest, src, n) \
  gasneti_put(GASNETI_SRCLOC, GASNETI_OP_PUT_NB_BULK, node, dest, src, n, GASNETI_RMA_NB, 1)
#define gasnet_get_nb(dest, node, src, n) \
  gasneti_get(GASNETI_SRCLOC, GASNETI_OP_GET_NB, dest, node, src, n, GASNETI_RMA_NB, 0)
#define gasnet_get_nb_bulk(dest, node, src, n) \
  gasneti_get(GASNETI_SRCLOC, GASNETI_OP_GET_NB_BULK, dest, node, src, n, GASNETI_RMA_NB, 1)
#define gasnet_memset_nb(node, dest, val, n) \
  gasneti_memset(GASNETI_SRCLOC, GASNETI_OP_MEMSET_NB, node, dest, val, n, GASNETI_RMA_NB)

/* Synchronization: an operation that completed when issued (every direct one) has no handle,
 * so the inline part below is all it costs; the library waits for the others, and records
 * every sync of a rank that traces (gasneti_trace_active: one load, only where the inline
 * part would have returned at once). */
void gasneti_wait_syncnb(const char *loc, gasnet_handle_t handle);
int gasneti_try_syncnb(const char *loc, gasnet_handle_t handle);
void gasneti_wait_syncnb_all(const char *loc, gasnet_handle_t *handles, size_t numhandles);
static inline void gasneti_wait_syncnb_at(const char *loc, gasnet_handle_t handle) {
  if (handle != GASNET_INVALID_HANDLE || __builtin_expect(gasneti_trace_active, 0))
    gasneti_wait_syncnb(loc, handle);
}
static inline int gasneti_try_syncnb_at(const char *loc, gasnet_handle_t handle) {
  if (handle != GASNET_INVALID_HANDLE || __builtin_expect(gasneti_trace_active, 0))
    return gasneti_try_syncnb(loc, handle);
  return GASNET_OK;
}
static inline void gasnet_wait_syncnb(gasnet_handle_t handle) {
  gasneti_wait_syncnb_at((const char *)0, handle);
}
static inline int gasnet_try_syncnb(gasnet_handle_t handle) {
  return gasneti_try_syncnb_at((const char *)0, handle);
}
#define gasnet_wait_syncnb(h) gasneti_wait_syncnb_at(GASNETI_SRCLOC, h)
#define gasnet_try_syncnb(h) gasneti_try_syncnb_at(GASNETI_SRCLOC, h)
/* Operations of the process not yet synchronized (every live handle, access region and value
 * get; csrc/core/rma counts them). While it is zero, every handle a client holds is
 * GASNET_INVALID_HANDLE, so syncing an array of them is one load, not a pass over the array
 * (which cost a window of 16 direct puts a third of its rate). A debug build still reads the
 * array, to catch a handle synchronized twice. Otherwise one pass that ORs the handles (no
 * branch per handle): direct operations leave an array of GASNET_INVALID_HANDLE. */
extern int64_t gasneti_ops_live;
static inline void gasneti_wait_syncnb_all_at(const char *loc, gasnet_handle_t *handles,
                                              size_t numhandles) {
  if (__builtin_expect(gasneti_trace_active, 0)) {
    gasneti_wait_syncnb_all(loc, handles, numhandles);
    return;
  }
#ifndef GASNETI_DEBUG
  if (__atomic_load_n(&gasneti_ops_live, __ATOMIC_RELAXED) == 0) return;
#endif
  uintptr_t pending = 0;
  for (size_t i = 0; i < numhandles; i++) pending |= (uintptr_t)handles[i];
  if (pending != (uintptr_t)GASNET_INVALID_HANDLE) gasneti_wait_syncnb_all(loc, handles, numhandles);
}
static inline void gasnet_wait_syncnb_all(gasnet_handle_t *handles, size_t numhandles) {
  gasneti_wait_syncnb_all_at((const char *)0, handles, numhandles);
}
#define gasnet_wait_syncnb_all(h, n) gasneti_wait_syncnb_all_at(GASNETI_SRCLOC, h, n)
void gasnet_wait_syncnb_some(gasnet_handle_t *handles, size_t numhandles);
int gasnet_try_syncnb_all(gasnet_handle_t *handles, size_t numhandles);
int gasnet_try_syncnb_some(gasnet_handle_t *handles, size_t numhandles);
/* GASNet 1.x extensions: the try forms without the poll (the caller polls when it chooses). */
int gasneti_try_syncnb_nopoll(gasnet_handle_t handle);
static inline int gasnet_try_syncnb_nopoll(gasnet_handle_t handle) {
  return handle == GASNET_INVALID_HANDLE ? GASNET_OK : gasneti_try_syncnb_nopoll(handle);
}
int gasnet_try_syncnb_all_nopoll(gasnet_handle_t *handles, size_t numhandles);
int gasnet_try_syncnb_some_nopoll(gasnet_handle_t *handles, size_t numhandles);

/* ---- implicit handle ------------------------------------------------------------------- */
GASNETI_PUT_FORM(gasnet_put_nbi, GASNETI_OP_PUT_NBI, GASNETI_RMA_NBI, 0)
GASNETI_PUT_FORM(gasnet_put_nbi_bulk, GASNETI_OP_PUT_NBI_BULK, GASNETI_RMA_NBI, 1)
GASNETI_GET_FORM(gasnet_get_nbi, GASNETI_OP_GET_NBI, GASNETI_RMA_NBI, 0)
GASNETI_GET_FORM(gasnet_get_nbi_bulk, GASNETI_OP_GET_NBI_BULK, GASNETI_RMA_NBI, 1)
static inline void gasnet_memset_nbi(gasnet_node_t node, void *dest, int val, size_t nbytes) {
  gasneti_memset((const char *)0, GASNETI_OP_MEMSET_NBI, node, dest, val, nbytes, GASNETI_RMA_NBI);
}
#define gasnet_put_nbi(node, dest, src, n) \
  ((void)gasneti_put(GASNETI_SRCLOC, GASNETI_OP_PUT_NBI, node, dest, src, n, GASNETI_RMA_NBI, 0))
#define gasnet_put_nbi_bulk(node, dest, src, n)                                              \
  ((void)gasneti_put(GASNETI_SRCLOC, GASNETI_OP_PUT_NBI_BULK, node, dest, src, n,           \
                     GASNETI_RMA_NBI, 1))
#define gasnet_get_nbi(dest, node, src, n) \
  ((void)gasneti_get(GASNETI_SRCLOC, GASNETI_OP_GET_NBI, dest, node, src, n, GASNETI_RMA_NBI, 0))
#define gasnet_get_nbi_bulk(dest, node, src, n)                                              \
  ((void)gasneti_get(GASNETI_SRCLOC, GASNETI_OP_GET_NBI_BULK, dest, node, src, n,           \
                     GASNETI_RMA_NBI, 1))
#define gasnet_memset_nbi(node, dest, val, n)                                                \
  ((void)gasneti_memset(GASNETI_SRCLOC, GASNETI_OP_MEMSET_NBI, node, dest, val, n,          \
                        GASNETI_RMA_NBI))
#undef GASNETI_PUT_FORM
#undef GASNETI_PUT_NB_FORM
#undef GASNETI_GET_FORM
#undef GASNETI_GET_NB_FORM

/* Per client thread: implicit-handle operations still in flight over AMs (csrc/core/rma
 * counts them; direct ones complete when issued and are never counted). Read here so that
 * syncing nothing costs one load. */
typedef struct {
  int64_t puts_out, gets_out;
  int64_t rmws_out; /* GASNet-EX remote atomics other than SET and GET (GEX_EC_RMW) */
} gasneti_nbi_counts_t;
#if defined(GASNET_PAR) || defined(GASNET_PARSYNC)
#ifdef __cplusplus
extern thread_local gasneti_nbi_counts_t gasneti_nbi_counts;
#else
extern _Thread_local gasneti_nbi_counts_t gasneti_nbi_counts;
#endif
#else
extern gasneti_nbi_counts_t gasneti_nbi_counts;
#endif
/* which: 'P' (puts), 'G' (gets), 'A' (both): what the trace calls the sync. */
void gasneti_wait_nbi_counter(const char *loc, int which, int64_t *counter);
static inline void gasneti_wait_syncnbi_at(const char *loc, int which, int64_t *counter) {
  if (__atomic_load_n(counter, __ATOMIC_ACQUIRE) != 0 || __builtin_expect(gasneti_trace_active, 0))
    gasneti_wait_nbi_counter(loc, which, counter);
}
static inline void gasneti_wait_syncnbi_all_at(const char *loc) {
  if (__builtin_expect(gasneti_trace_active, 0)) {
    gasneti_wait_nbi_counter(loc, 'A', (int64_t *)0);
    return;
  }
  gasneti_wait_syncnbi_at(loc, 'P', &gasneti_nbi_counts.puts_out);
  gasneti_wait_syncnbi_at(loc, 'G', &gasneti_nbi_counts.gets_out);
}
static inline void gasnet_wait_syncnbi_puts(void) {
  gasneti_wait_syncnbi_at((const char *)0, 'P', &gasneti_nbi_counts.puts_out);
}
static inline void gasnet_wait_syncnbi_gets(void) {
  gasneti_wait_syncnbi_at((const char *)0, 'G', &gasneti_nbi_counts.gets_out);
}
static inline void gasnet_wait_syncnbi_all(void) { gasneti_wait_syncnbi_all_at((const char *)0); }
#define gasnet_wait_syncnbi_puts() \
  gasneti_wait_syncnbi_at(GASNETI_SRCLOC, 'P', &gasneti_nbi_counts.puts_out)
#define gasnet_wait_syncnbi_gets() \
  gasneti_wait_syncnbi_at(GASNETI_SRCLOC, 'G', &gasneti_nbi_counts.gets_out)
#define gasnet_wait_syncnbi_all() gasneti_wait_syncnbi_all_at(GASNETI_SRCLOC)
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

/* A value as the nbytes-wide word holding it, and back. */
static inline gasneti_word_t gasneti_value_word(gasnet_register_value_t value, size_t nbytes) {
  gasneti_word_t w = {0};
  switch (nbytes) {
    case 8: w.u64 = (uint64_t)value; break;
    case 4: w.u32 = (uint32_t)value; break;
    case 2: w.u16 = (uint16_t)value; break;
    case 1: w.u8 = (uint8_t)value; break;
    default: memcpy(w.b, gasneti_value_bytes(&value, nbytes), nbytes);
  }
  return w;
}

static inline gasnet_register_value_t gasneti_word_value(gasneti_word_t w, size_t nbytes) {
  switch (nbytes) {
    case 8: return w.u64;
    case 4: return w.u32;
    case 2: return w.u16;
    case 1: return w.u8;
    default: {
      gasnet_register_value_t v = 0;
      memcpy((void *)gasneti_value_bytes(&v, nbytes), w.b, nbytes);
      return v;
    }
  }
}

static inline gasnet_handle_t gasneti_put_val(const char *loc, int op, gasnet_node_t node,
                                              void *dest, gasnet_register_value_t value,
                                              size_t nbytes, int kind) {
  GASNETI_RMA_CHECK(gasneti_op_api_name(op), node, dest, nbytes);
  uintptr_t direct = gasneti_pshm_direct[node];
  if (__builtin_expect(direct != GASNETI_PSHM_FAR, 1)) {
    void *p = gasneti_direct_addr(direct, dest);
    if (gasneti_is_word_size(nbytes)) gasneti_word_store(p, gasneti_value_word(value, nbytes), nbytes);
    else memcpy(p, gasneti_value_bytes(&value, nbytes), nbytes);
    return GASNET_INVALID_HANDLE;
  }
  return gasneti_put_at(loc, op, node, dest, gasneti_value_bytes(&value, nbytes), nbytes, kind, 0);
}

static inline void gasnet_put_val(gasnet_node_t node, void *dest, gasnet_register_value_t value,
                                  size_t nbytes) {
  gasneti_put_val((const char *)0, GASNETI_OP_PUT_VAL, node, dest, value, nbytes,
                  GASNETI_RMA_BLOCKING);
}
static inline gasnet_handle_t gasnet_put_nb_val(gasnet_node_t node, void *dest,
                                                gasnet_register_value_t value, size_t nbytes) {
  return gasneti_put_val((const char *)0, GASNETI_OP_PUT_NB_VAL, node, dest, value, nbytes,
                         GASNETI_RMA_NB);
}
static inline void gasnet_put_nbi_val(gasnet_node_t node, void *dest,
                                      gasnet_register_value_t value, size_t nbytes) {
  gasneti_put_val((const char *)0, GASNETI_OP_PUT_NBI_VAL, node, dest, value, nbytes,
                  GASNETI_RMA_NBI);
}
#define gasnet_put_val(node, dest, value, n)                                                 \
  ((void)gasneti_put_val(GASNETI_SRCLOC, GASNETI_OP_PUT_VAL, node, dest, value, n,          \
                         GASNETI_RMA_BLOCKING))
#define gasnet_put_nb_val(node, dest, value, n) \
  gasneti_put_val(GASNETI_SRCLOC, GASNETI_OP_PUT_NB_VAL, node, dest, value, n, GASNETI_RMA_NB)
#define gasnet_put_nbi_val(node, dest, value, n)                                             \
  ((void)gasneti_put_val(GASNETI_SRCLOC, GASNETI_OP_PUT_NBI_VAL, node, dest, value, n,      \
                         GASNETI_RMA_NBI))

/* The nbytes-wide value at p (a local address: own memory or a PSHM mapping). */
static inline gasnet_register_value_t gasneti_load_value(const void *p, size_t nbytes) {
  if (gasneti_is_word_size(nbytes)) return gasneti_word_value(gasneti_word_load(p, nbytes), nbytes);
  gasnet_register_value_t v = 0;
  memcpy((void *)gasneti_value_bytes(&v, nbytes), p, nbytes);
  return v;
}

static inline gasnet_register_value_t gasneti_get_val_at(const char *loc, gasnet_node_t node,
                                                         void *src, size_t nbytes) {
  GASNETI_RMA_CHECK("gasnet_get_val", node, src, nbytes);
  uintptr_t direct = gasneti_pshm_direct[node];
  if (__builtin_expect(direct != GASNETI_PSHM_FAR, 1))
    return gasneti_load_value(gasneti_direct_addr(direct, src), nbytes);
  gasnet_register_value_t v = 0;
  gasneti_get_at(loc, GASNETI_OP_GET_VAL, (void *)gasneti_value_bytes(&v, nbytes), node, src,
                 nbytes, GASNETI_RMA_BLOCKING);
  return v;
}
static inline gasnet_register_value_t gasnet_get_val(gasnet_node_t node, void *src,
                                                     size_t nbytes) {
  return gasneti_get_val_at((const char *)0, node, src, nbytes);
}
#define gasnet_get_val(node, src, n) gasneti_get_val_at(GASNETI_SRCLOC, node, src, n)

/* A value get from a supernode peer needs no state: its handle is the PSHM address with the
 * top bit set and the width in bits 56..62, and the load happens at sync (a get may complete
 * any time before its sync returns). Other value gets are library operations. */
gasnet_valget_handle_t gasneti_get_nb_val(const char *loc, gasnet_node_t node, void *src,
                                          size_t nbytes);
gasnet_register_value_t gasneti_wait_syncnb_valget(const char *loc, gasnet_valget_handle_t handle);
#if UINTPTR_MAX == 0xFFFFFFFFFFFFFFFFu
#define GASNETI_VALGET_DIRECT ((uintptr_t)1 << 63)
#define GASNETI_VALGET_ADDR_MASK (((uintptr_t)1 << 56) - 1)
static inline gasnet_valget_handle_t gasneti_get_nb_val_at(const char *loc, gasnet_node_t node,
                                                           void *src, size_t nbytes) {
  GASNETI_RMA_CHECK("gasnet_get_nb_val", node, src, nbytes);
  uintptr_t direct = gasneti_pshm_direct[node];
  if (__builtin_expect(direct != GASNETI_PSHM_FAR, 1)) {
    uintptr_t p = (uintptr_t)gasneti_direct_addr(direct, src);
    if (__builtin_expect((p & ~GASNETI_VALGET_ADDR_MASK) == 0 && nbytes - 1 < 8, 1))
      return (gasnet_valget_handle_t)(GASNETI_VALGET_DIRECT | ((uintptr_t)nbytes << 56) | p);
  }
  return gasneti_get_nb_val(loc, node, src, nbytes);
}
/* A rank that traces never makes direct value-get handles (every peer is far for it). */
static inline gasnet_register_value_t gasneti_wait_syncnb_valget_at(const char *loc,
                                                                    gasnet_valget_handle_t handle) {
  uintptr_t h = (uintptr_t)handle;
  if (__builtin_expect(h & GASNETI_VALGET_DIRECT, 1))
    return gasneti_load_value((const void *)(h & GASNETI_VALGET_ADDR_MASK), (h >> 56) & 0x7f);
  return gasneti_wait_syncnb_valget(loc, handle);
}
#else
static inline gasnet_valget_handle_t gasneti_get_nb_val_at(const char *loc, gasnet_node_t node,
                                                           void *src, size_t nbytes) {
  return gasneti_get_nb_val(loc, node, src, nbytes);
}
static inline gasnet_register_value_t gasneti_wait_syncnb_valget_at(const char *loc,
                                                                    gasnet_valget_handle_t handle) {
  return gasneti_wait_syncnb_valget(loc, handle);
}
#endif
static inline gasnet_valget_handle_t gasnet_get_nb_val(gasnet_node_t node, void *src,
                                                       size_t nbytes) {
  return gasneti_get_nb_val_at((const char *)0, node, src, nbytes);
}
static inline gasnet_register_value_t gasnet_wait_syncnb_valget(gasnet_valget_handle_t handle) {
  return gasneti_wait_syncnb_valget_at((const char *)0, handle);
}
#define gasnet_get_nb_val(node, src, n) gasneti_get_nb_val_at(GASNETI_SRCLOC, node, src, n)
#define gasnet_wait_syncnb_valget(h) gasneti_wait_syncnb_valget_at(GASNETI_SRCLOC, h)

#endif
