/* vis.c: moving a VIS transfer. Inside the caller's supernode every run is a memcpy through the
 * cross-mapping. Elsewhere small runs are packed into Medium AMs (gathered here, scattered by
 * the handler at the target; a get's reply is gathered there and scattered here) and large runs
 * go as contiguous puts/gets; all AMs are issued before waiting, so they pipeline.
 *
 * Packed payloads, all integers in host order (ranks of one job share an architecture):
 *   put request:  [data][dst u64, len u32]*n [n u32]
 *   get request:        [src u64, dst u64, len u32]*n [n u32]
 *   get reply:    [data][dst u64, len u32]*n [n u32]
 * The data comes first so a packer can gather it in one pass and append the entries after. */
#include "vis.h"

#include "rma/rma.h"

#define PTR_ARGS(p) (gasnet_handlerarg_t)(uint32_t)(uintptr_t)(p), \
                    (gasnet_handlerarg_t)(uint32_t)((uint64_t)(uintptr_t)(p) >> 32)
#define ARGS_PTR(lo, hi) ((void *)(uintptr_t)(((uint64_t)(uint32_t)(hi) << 32) | (uint32_t)(lo)))

enum { PUT_ENTRY = 12, GET_ENTRY = 20, TRAILER = 4 };

/* Runs at least this long are not worth packing: they go as contiguous transfers. */
static size_t big_run(void) { return gasnet_AMMaxMedium() / 4; }

/* Per thread, allocated on first use and kept: the packing buffer of the thread that sends
 * and the gathering buffer of the thread that answers a get (handlers send no requests, so
 * one thread never needs two of either at once). */
static GASNETI_TLS uint8_t *pack_buf, *pack_entries, *reply_buf;

static uint8_t *thread_buffer(uint8_t **slot) {
  if (GASNETI_UNLIKELY(!*slot)) *slot = gasneti_malloc(gasnet_AMMaxMedium());
  return *slot;
}

static void put_u64(uint8_t *p, uint64_t v) { memcpy(p, &v, 8); }
static void put_u32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }
static uint64_t get_u64(const uint8_t *p) { uint64_t v; memcpy(&v, p, 8); return v; }
static uint32_t get_u32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return v; }

/* The entries of a packed payload: n and where they start, checked against its size. */
static const uint8_t *entries_of(const char *what, const uint8_t *buf, size_t nbytes,
                                 size_t entry, uint32_t *n, size_t *data) {
  if (nbytes < TRAILER) gasneti_fatalerror("%s: a %zu-byte message has no entry count", what, nbytes);
  *n = get_u32(buf + nbytes - TRAILER);
  size_t meta = (size_t)*n * entry + TRAILER;
  if (meta > nbytes)
    gasneti_fatalerror("%s: %u entries do not fit a %zu-byte message", what, *n, nbytes);
  *data = nbytes - meta;
  return buf + *data;
}

/* ---- handlers -------------------------------------------------------------------------- */
static void scatter(const char *what, const uint8_t *buf, size_t nbytes) {
  uint32_t n;
  size_t data;
  const uint8_t *e = entries_of(what, buf, nbytes, PUT_ENTRY, &n, &data);
  size_t off = 0;
  for (uint32_t i = 0; i < n; i++, e += PUT_ENTRY) {
    uint32_t len = get_u32(e + 8);
    if (len > data - off) gasneti_fatalerror("%s: entry %u overruns the packed data", what, i);
    memcpy((void *)(uintptr_t)get_u64(e), buf + off, len);
    off += len;
  }
}

static void put_handler(gasnet_token_t t, void *buf, size_t nbytes, gasnet_handlerarg_t clo,
                        gasnet_handlerarg_t chi) {
  scatter("VIS put", buf, nbytes);
  gasneti_am_reply_internal(t, GASNETI_HANDLER_DONE, GASNETI_AM_SHORT, NULL, 0, NULL, 2,
                            (gasnet_handlerarg_t[]){clo, chi});
}

static void get_handler(gasnet_token_t t, void *buf, size_t nbytes, gasnet_handlerarg_t clo,
                        gasnet_handlerarg_t chi) {
  uint32_t n;
  size_t data;
  const uint8_t *e = entries_of("VIS get", buf, nbytes, GET_ENTRY, &n, &data);
  uint8_t *out = thread_buffer(&reply_buf);
  size_t max = gasnet_AMMaxMedium(), off = 0;
  uint8_t *entries = out + max - ((size_t)n * PUT_ENTRY + TRAILER); /* staged at the end */
  if ((size_t)n * PUT_ENTRY + TRAILER > max) gasneti_fatalerror("VIS get: %u entries", n);
  for (uint32_t i = 0; i < n; i++, e += GET_ENTRY) {
    uint32_t len = get_u32(e + 16);
    if (len > (size_t)(entries - out) - off)
      gasneti_fatalerror("VIS get: entry %u does not fit the reply", i);
    memcpy(out + off, (const void *)(uintptr_t)get_u64(e), len);
    put_u64(entries + (size_t)i * PUT_ENTRY, get_u64(e + 8));
    put_u32(entries + (size_t)i * PUT_ENTRY + 8, len);
    off += len;
  }
  put_u32(entries + (size_t)n * PUT_ENTRY, n);
  memmove(out + off, entries, (size_t)n * PUT_ENTRY + TRAILER);
  gasneti_am_reply_internal(t, GASNETI_HANDLER_VIS_GET_REPLY, GASNETI_AM_MEDIUM, out,
                            off + (size_t)n * PUT_ENTRY + TRAILER, NULL, 2,
                            (gasnet_handlerarg_t[]){clo, chi});
}

static void get_reply_handler(gasnet_token_t t, void *buf, size_t nbytes, gasnet_handlerarg_t clo,
                              gasnet_handlerarg_t chi) {
  (void)t;
  scatter("VIS get reply", buf, nbytes);
  atomic_fetch_sub_explicit((_Atomic int64_t *)ARGS_PTR(clo, chi), 1, memory_order_release);
}

void gasneti_vis_am_init(void) {
  gasneti_register_internal_handler(GASNETI_HANDLER_VIS_PUT, (gasneti_handler_fn)put_handler);
  gasneti_register_internal_handler(GASNETI_HANDLER_VIS_GET, (gasneti_handler_fn)get_handler);
  gasneti_register_internal_handler(GASNETI_HANDLER_VIS_GET_REPLY,
                                    (gasneti_handler_fn)get_reply_handler);
}

/* ---- the transfers ---------------------------------------------------------------------- */
/* Strided inside the supernode: nested loops over the client's own counts, no walker (the
 * halo-exchange column is thousands of 8-byte pieces; a call per piece would dominate). */
#define STRIDED_LOOP(copy)                                                        \
  for (;;) {                                                                      \
    for (size_t i = 0; i < inner; i++) copy(d + i * dstride0, s + i * sstride0);  \
    size_t l = 1;                                                                 \
    for (; l < levels; l++) {                                                     \
      d += dststrides[l], s += srcstrides[l];                                     \
      if (++index[l] < count[l + 1]) break;                                       \
      d -= dststrides[l] * count[l + 1], s -= srcstrides[l] * count[l + 1];       \
      index[l] = 0;                                                               \
    }                                                                             \
    if (l >= levels) break;                                                       \
  }
#define COPY8(to, from) memcpy((to), (from), 8)
#define COPYN(to, from) memcpy((to), (from), piece)

void gasneti_vis_strided_direct(uint8_t *d, const size_t *dststrides, const uint8_t *s,
                                const size_t *srcstrides, const size_t *count, size_t levels) {
  for (size_t l = 0; l <= levels; l++)
    if (count[l] == 0) return;
  const size_t piece = count[0];
  if (levels == 0) {
    memcpy(d, s, piece);
    return;
  }
  const size_t inner = count[1], dstride0 = dststrides[0], sstride0 = srcstrides[0];
  size_t inline_index[8], *index = levels <= 8 ? inline_index : gasneti_calloc(levels, sizeof(size_t));
  for (size_t l = 0; l < levels; l++) index[l] = 0;
  if (piece == 8) STRIDED_LOOP(COPY8)
  else STRIDED_LOOP(COPYN)
  if (index != inline_index) free(index);
}

static void check_call(const char *what, gasnet_node_t node) {
  if (GASNETI_UNLIKELY(!gasneti_attach_done)) gasneti_fatalerror("%s before gasnet_attach", what);
  if (GASNETI_UNLIKELY(node >= gasneti_nodes))
    gasneti_fatalerror("%s to rank %d: the job has ranks 0..%d", what, (int)node,
                       (int)gasneti_nodes - 1);
}

/* A packed put being filled: data at the front of pack_buf, entries staged in pack_entries. */
typedef struct {
  gasnet_node_t node;
  gasneti_target_t *target;
  uint8_t *buf, *entries;
  size_t data, n, entry;
  gasnet_handler_t handler;
} packer_t;

static void packer_flush(packer_t *k) {
  if (k->n == 0) return;
  size_t meta = k->n * k->entry;
  uint8_t *out = k->buf + k->data;
  memcpy(out, k->entries, meta);
  put_u32(out + meta, (uint32_t)k->n);
  gasneti_target_add(k->target);
  gasneti_am_request_internal(k->node, k->handler, GASNETI_AM_MEDIUM, k->buf,
                              k->data + meta + TRAILER, NULL, 2,
                              (gasnet_handlerarg_t[]){PTR_ARGS(k->target->counter)});
  k->data = k->n = 0;
}

/* Room for one more entry with `take` bytes of data in this message (reply_data: a get's
 * reply also carries the data and put-sized entries). */
static size_t packer_room(const packer_t *k, bool is_get, size_t reply_data) {
  size_t max = gasnet_AMMaxMedium();
  if (is_get) {
    size_t request = (k->n + 1) * GET_ENTRY + TRAILER;
    size_t reply = reply_data + (k->n + 1) * PUT_ENTRY + TRAILER;
    return request > max || reply >= max ? 0 : max - reply;
  }
  size_t used = k->data + (k->n + 1) * PUT_ENTRY + TRAILER;
  return used >= max ? 0 : max - used;
}

gasnet_handle_t gasneti_vis_put(const char *what, gasnet_node_t node, gasneti_vis_pair_t *p,
                                int kind) {
  check_call(what, node);
  gasneti_vis_pair_start(p, what);
  uint8_t *d, *s;
  size_t len;
  if (gasneti_pshm_reach[node]) {
    while (gasneti_vis_pair_next(p, &d, &s, &len, SIZE_MAX)) {
      GASNETI_RMA_CHECK(what, node, d, len);
      memcpy(gasneti_pshm_addr(node, d), s, len);
    }
    gasneti_vis_pair_end(p);
    if (node != gasneti_mynode) gasneti_wake_peer(gasneti_host_local[node]); /* wake.h */
    return GASNET_INVALID_HANDLE;
  }
  gasneti_target_t target;
  gasneti_target_open(&target, kind, true);
  packer_t k = {.node = node, .target = &target, .buf = thread_buffer(&pack_buf),
                .entries = thread_buffer(&pack_entries), .entry = PUT_ENTRY,
                .handler = GASNETI_HANDLER_VIS_PUT};
  const size_t big = big_run();
  while (gasneti_vis_pair_next(p, &d, &s, &len, SIZE_MAX)) {
    GASNETI_RMA_CHECK(what, node, d, len);
    if (len >= big) {
      gasneti_put_am_counted(node, d, s, len, target.counter, true); /* VIS puts are bulk */
      continue;
    }
    while (len) {
      size_t room = packer_room(&k, false, 0);
      if (room == 0) {
        packer_flush(&k);
        continue;
      }
      size_t take = len < room ? len : room;
      memcpy(k.buf + k.data, s, take);
      put_u64(k.entries + k.n * PUT_ENTRY, (uint64_t)(uintptr_t)d);
      put_u32(k.entries + k.n * PUT_ENTRY + 8, (uint32_t)take);
      k.data += take, k.n++;
      d += take, s += take, len -= take;
    }
  }
  packer_flush(&k);
  gasneti_vis_pair_end(p);
  return gasneti_target_close(&target, kind);
}

gasnet_handle_t gasneti_vis_get(const char *what, gasnet_node_t node, gasneti_vis_pair_t *p,
                                int kind) {
  check_call(what, node);
  gasneti_vis_pair_start(p, what);
  uint8_t *d, *s;
  size_t len;
  if (gasneti_pshm_reach[node]) {
    while (gasneti_vis_pair_next(p, &d, &s, &len, SIZE_MAX)) {
      GASNETI_RMA_CHECK(what, node, s, len);
      memcpy(d, gasneti_pshm_addr(node, s), len);
    }
    gasneti_vis_pair_end(p);
    return GASNET_INVALID_HANDLE;
  }
  gasneti_target_t target;
  gasneti_target_open(&target, kind, false);
  /* A get request carries only entries; reply_data counts the bytes its reply will carry. */
  packer_t k = {.node = node, .target = &target, .buf = thread_buffer(&pack_buf),
                .entries = thread_buffer(&pack_entries), .entry = GET_ENTRY,
                .handler = GASNETI_HANDLER_VIS_GET};
  size_t reply_data = 0;
  const size_t big = big_run();
  while (gasneti_vis_pair_next(p, &d, &s, &len, SIZE_MAX)) {
    GASNETI_RMA_CHECK(what, node, s, len);
    if (len >= big) {
      gasneti_get_am_counted(d, node, s, len, target.counter);
      continue;
    }
    while (len) {
      size_t room = packer_room(&k, true, reply_data);
      if (room == 0) {
        packer_flush(&k);
        reply_data = 0;
        continue;
      }
      size_t take = len < room ? len : room;
      uint8_t *e = k.entries + k.n * GET_ENTRY;
      put_u64(e, (uint64_t)(uintptr_t)s);
      put_u64(e + 8, (uint64_t)(uintptr_t)d);
      put_u32(e + 16, (uint32_t)take);
      k.n++, reply_data += take;
      d += take, s += take, len -= take;
    }
  }
  packer_flush(&k);
  gasneti_vis_pair_end(p);
  return gasneti_target_close(&target, kind);
}
