/* ratomic.c: GASNet-EX's atomic domains (gasnet_ratomic.h): the objects, the checks every call
 * makes (a misuse is a fatal error naming the call), and where an operation runs. A target the
 * caller maps (itself, its shared-memory neighbourhood) is operated on at once, in the
 * caller's thread; any other is one AM request (the location, the operation and its operands
 * in arguments) whose handler operates on its own memory and answers with the old value: one
 * message each way, as a get of a word is. A domain needs nothing at the targets, so creating
 * one sends nothing. */
#include <stdlib.h>
#include <string.h>

#include "ex/ex_internal.h"
#include "ratomic_apply.h"
#include "rma/rma.h"

enum { AD_MAGIC = 0x44415845 /* "EXAD" */, AD_DESTROYED = 0x44414544 };

struct gasneti_ad_s {
  uint32_t magic;
  gex_TM_t tm;
  gex_DT_t dt;
  gex_OP_t ops;
  gex_Flags_t flags;
  void *cdata;
};

#define BITWISE_OPS (GEX_OP_AND | GEX_OP_FAND | GEX_OP_OR | GEX_OP_FOR | GEX_OP_XOR | GEX_OP_FXOR)
#define ALL_OPS ((gex_OP_t)(GEX_OP_GET << 1) - 1) /* every atomic operation (not USER) */
#define FETCHING_OPS (GEX_OP_FADD | GEX_OP_FMULT | GEX_OP_FMIN | GEX_OP_FMAX | GEX_OP_FSUB | \
                      GEX_OP_FINC | GEX_OP_FDEC | GEX_OP_FAND | GEX_OP_FOR | GEX_OP_FXOR |   \
                      GEX_OP_SWAP | GEX_OP_FCAS | GEX_OP_GET)
#define FAVOR_FLAGS (GEX_FLAG_AD_FAVOR_MY_RANK | GEX_FLAG_AD_FAVOR_MY_NBRHD | GEX_FLAG_AD_FAVOR_REMOTE)
#define OP_FLAGS (GEX_FLAG_IMMEDIATE | GEX_FLAG_AD_MY_RANK | GEX_FLAG_AD_MY_NBRHD | \
                  GEX_FLAG_AD_ACQ | GEX_FLAG_AD_REL | GEX_FLAG_RANK_IS_JOBRANK)

static const char *dt_name(gex_DT_t dt) {
  switch (dt) {
    case GEX_DT_I32: return "I32";
    case GEX_DT_U32: return "U32";
    case GEX_DT_I64: return "I64";
    case GEX_DT_U64: return "U64";
    case GEX_DT_FLT: return "FLT";
    case GEX_DT_DBL: return "DBL";
    default: return NULL;
  }
}

static const char *const op_names[] = {
    "ADD", "FADD", "MULT", "FMULT", "MIN", "FMIN", "MAX", "FMAX", "SUB", "FSUB", "INC", "FINC",
    "DEC", "FDEC", "AND", "FAND", "OR", "FOR", "XOR", "FXOR", "SET", "SWAP", "CAS", "FCAS", "GET"};

/* GEX_OP_<name> of the lowest operation in ops ("GEX_OP_?" for none). */
static const char *op_name(gex_OP_t ops, char *buf, size_t len) {
  for (unsigned i = 0; i < sizeof op_names / sizeof op_names[0]; i++)
    if (ops >> i & 1) {
      snprintf(buf, len, "GEX_OP_%s", op_names[i]);
      return buf;
    }
  snprintf(buf, len, "0x%x (no GEX_OP_* operation)", (unsigned)ops);
  return buf;
}

static gex_OP_t ops_of(gex_DT_t dt) {
  return dt == GEX_DT_FLT || dt == GEX_DT_DBL ? ALL_OPS & ~(gex_OP_t)BITWISE_OPS : ALL_OPS;
}

static struct gasneti_ad_s *check_ad(const char *what, gex_AD_t ad) {
  if (!ad) gasneti_fatalerror("%s: the atomic domain is GEX_AD_INVALID", what);
  if (ad->magic == AD_DESTROYED)
    gasneti_fatalerror("%s: the atomic domain %p was destroyed (gex_AD_Destroy)", what, (void *)ad);
  if (ad->magic != AD_MAGIC)
    gasneti_fatalerror("%s: %p is not an atomic domain (gex_AD_Create makes them)", what,
                       (void *)ad);
  return ad;
}

/* ---- domains -------------------------------------------------------------------------------- */
void gex_AD_Create(gex_AD_t *ad_p, gex_TM_t tm, gex_DT_t dt, gex_OP_t ops, gex_Flags_t flags) {
  const char *what = "gex_AD_Create";
  if (!ad_p) gasneti_fatalerror("%s: ad_p is NULL", what);
  (void)gasneti_ex_tm(what, tm);
  if (!dt_name(dt))
    gasneti_fatalerror("%s: datatype 0x%x: accepted GEX_DT_I32, GEX_DT_U32, GEX_DT_I64, "
                       "GEX_DT_U64, GEX_DT_FLT or GEX_DT_DBL (one of them%s)", what, (unsigned)dt,
                       dt == GEX_DT_USER ? "; GEX_DT_USER is for reductions" : "");
  char buf[64];
  if (!ops || (ops & ~ALL_OPS))
    gasneti_fatalerror("%s: ops 0x%x: an OR of GEX_OP_* atomic operations (GEX_OP_USER and "
                       "GEX_OP_USER_NC are for reductions)", what, (unsigned)ops);
  if (ops & ~ops_of(dt))
    gasneti_fatalerror("%s: GEX_DT_%s has no %s (bitwise operations are for integer types)",
                       what, dt_name(dt), op_name(ops & ~ops_of(dt), buf, sizeof buf));
  if ((flags & ~(gex_Flags_t)FAVOR_FLAGS) || __builtin_popcount(flags & FAVOR_FLAGS) > 1)
    gasneti_fatalerror("%s: flags 0x%x: 0 or one of GEX_FLAG_AD_FAVOR_MY_RANK, "
                       "GEX_FLAG_AD_FAVOR_MY_NBRHD, GEX_FLAG_AD_FAVOR_REMOTE", what,
                       (unsigned)flags);
  struct gasneti_ad_s *ad = gasneti_malloc(sizeof *ad);
  *ad = (struct gasneti_ad_s){.magic = AD_MAGIC, .tm = tm, .dt = dt, .ops = ops, .flags = flags};
  *ad_p = ad;
}

/* The object stays, marked: a later call with the handle is told it was destroyed (a domain is
 * made a handful of times per job). */
void gex_AD_Destroy(gex_AD_t ad) { check_ad("gex_AD_Destroy", ad)->magic = AD_DESTROYED; }

gex_Flags_t gex_AD_QueryFlags(gex_AD_t ad) { return check_ad("gex_AD_QueryFlags", ad)->flags; }
gex_TM_t gex_AD_QueryTM(gex_AD_t ad) { return check_ad("gex_AD_QueryTM", ad)->tm; }
gex_DT_t gex_AD_QueryDT(gex_AD_t ad) { return check_ad("gex_AD_QueryDT", ad)->dt; }
gex_OP_t gex_AD_QueryOps(gex_AD_t ad) { return check_ad("gex_AD_QueryOps", ad)->ops; }
void gex_AD_SetCData(gex_AD_t ad, const void *val) {
  check_ad("gex_AD_SetCData", ad)->cdata = (void *)(uintptr_t)val;
}
void *gex_AD_QueryCData(gex_AD_t ad) { return check_ad("gex_AD_QueryCData", ad)->cdata; }

/* ---- the AM path ---------------------------------------------------------------------------- */
#define LO(x) (gasnet_handlerarg_t)(uint32_t)(x)
#define HI(x) (gasnet_handlerarg_t)(uint32_t)((uint64_t)(x) >> 32)
#define PLO(p) LO((uintptr_t)(p))
#define PHI(p) HI((uintptr_t)(p))
#define PTR(lo, hi) ((void *)(uintptr_t)(((uint64_t)(uint32_t)(hi) << 32) | (uint32_t)(lo)))
#define U64(lo, hi) (((uint64_t)(uint32_t)(hi) << 32) | (uint32_t)(lo))

static uint64_t val_bits(gasneti_ad_val_t v) {
  uint64_t b = 0;
  memcpy(&b, &v, sizeof v < sizeof b ? sizeof v : sizeof b);
  return b;
}
static gasneti_ad_val_t bits_val(uint64_t b) {
  gasneti_ad_val_t v;
  memcpy(&v, &b, sizeof v);
  return v;
}

/* Request: location (2), operation, datatype, operands (2 + 2), result_p (2), counter (2). */
static void op_handler(gasnet_token_t t, gasnet_handlerarg_t alo, gasnet_handlerarg_t ahi,
                       gasnet_handlerarg_t op, gasnet_handlerarg_t dt, gasnet_handlerarg_t x1lo,
                       gasnet_handlerarg_t x1hi, gasnet_handlerarg_t x2lo,
                       gasnet_handlerarg_t x2hi, gasnet_handlerarg_t rlo, gasnet_handlerarg_t rhi,
                       gasnet_handlerarg_t clo, gasnet_handlerarg_t chi) {
  void *addr = PTR(alo, ahi);
  size_t size = gasneti_ad_dt_size((gex_DT_t)dt);
  /* The initiator checked both against this rank's segment; a datagram that says otherwise
   * is not one of this job's (or memory was corrupted): refuse it rather than write there. */
  if (!size || !gasneti_in_segment(gasneti_mynode, addr, size) || (uintptr_t)addr % size ||
      __builtin_popcount((uint32_t)op) != 1 || ((gex_OP_t)op & ~ops_of((gex_DT_t)dt)))
    gasneti_fatalerror("an atomic operation (0x%x on datatype 0x%x) arrived for %p, which is "
                       "no aligned location of this rank's segment", (unsigned)op, (unsigned)dt,
                       addr);
  gasneti_ad_val_t old = gasneti_ad_apply((gex_DT_t)dt, (gex_OP_t)op, addr,
                                          bits_val(U64(x1lo, x1hi)), bits_val(U64(x2lo, x2hi)));
  uint64_t b = val_bits(old);
  gasneti_am_reply_internal(t, GASNETI_HANDLER_AD_DONE, GASNETI_AM_SHORT, NULL, 0, NULL, 7,
                            (gasnet_handlerarg_t[]){LO(b), HI(b), (gasnet_handlerarg_t)size,
                                                    rlo, rhi, clo, chi});
}

/* Reply: the old value (2), its size, result_p (2), counter (2). */
static void done_handler(gasnet_token_t t, gasnet_handlerarg_t vlo, gasnet_handlerarg_t vhi,
                         gasnet_handlerarg_t size, gasnet_handlerarg_t rlo,
                         gasnet_handlerarg_t rhi, gasnet_handlerarg_t clo,
                         gasnet_handlerarg_t chi) {
  (void)t;
  void *result = PTR(rlo, rhi);
  if (result) {
    gasneti_ad_val_t v = bits_val(U64(vlo, vhi));
    memcpy(result, &v, size == 4 ? 4 : 8);
  }
  atomic_fetch_sub_explicit((_Atomic int64_t *)PTR(clo, chi), 1, memory_order_release);
}

void gasneti_ratomic_init(void) {
  gasneti_register_internal_handler(GASNETI_HANDLER_AD_OP, (gasneti_handler_fn)op_handler);
  gasneti_register_internal_handler(GASNETI_HANDLER_AD_DONE, (gasneti_handler_fn)done_handler);
}

/* ---- operations ------------------------------------------------------------------------------ */
/* The call's name, for messages (a table: no formatting on the fast path). */
static const char *call_name(int kind, gex_DT_t dt) {
  static const char *const nb[] = {"gex_AD_OpNB_I32", "gex_AD_OpNB_U32", "gex_AD_OpNB_I64",
                                   "gex_AD_OpNB_U64", "gex_AD_OpNB_FLT", "gex_AD_OpNB_DBL"};
  static const char *const nbi[] = {"gex_AD_OpNBI_I32", "gex_AD_OpNBI_U32", "gex_AD_OpNBI_I64",
                                    "gex_AD_OpNBI_U64", "gex_AD_OpNBI_FLT", "gex_AD_OpNBI_DBL"};
  int i = __builtin_ctz(dt | 0x80u); /* GEX_DT_I32 is bit 0 ... GEX_DT_DBL bit 5 */
  if (i > 5) return kind == GASNETI_RMA_NB ? "gex_AD_OpNB" : "gex_AD_OpNBI";
  return kind == GASNETI_RMA_NB ? nb[i] : nbi[i];
}

/* What an NBI operation counts on: the open access region, else its event category's counter
 * (SET is a put, GET a get, the rest read-modify-writes: gex_NBI_Wait's GEX_EC_*). */
static _Atomic int64_t *nbi_counter(gex_OP_t op) {
  gasneti_op_t *region = gasneti_rma_td.region;
  if (region) return &region->pending;
  return op == GEX_OP_SET ? GASNETI_NBI_PUTS : op == GEX_OP_GET ? GASNETI_NBI_GETS
                                                                : GASNETI_NBI_RMWS;
}

gex_Event_t gasneti_ad_op(int kind, gex_AD_t handle, gex_DT_t dt, void *result_p,
                          gex_Rank_t tgt_rank, void *tgt_addr, gex_OP_t opcode,
                          gasneti_ad_val_t operand1, gasneti_ad_val_t operand2,
                          gex_Flags_t flags) {
  const char *what = call_name(kind, dt);
  char buf[64];
  struct gasneti_ad_s *ad = check_ad(what, handle);
  if (dt != ad->dt)
    gasneti_fatalerror("%s on an atomic domain of GEX_DT_%s (the call's type must be the "
                       "domain's)", what, dt_name(ad->dt));
  if (__builtin_popcount(opcode) != 1 || (opcode & ~ALL_OPS))
    gasneti_fatalerror("%s: opcode 0x%x: exactly one GEX_OP_* operation", what,
                       (unsigned)opcode);
  if (!(opcode & ad->ops))
    gasneti_fatalerror("%s: %s is not among the operations its domain was created with "
                       "(gex_AD_Create's ops)", what, op_name(opcode, buf, sizeof buf));
  if (flags & ~(gex_Flags_t)OP_FLAGS)
    gasneti_fatalerror("%s: flags 0x%x: an OR of GEX_FLAG_IMMEDIATE, GEX_FLAG_AD_MY_RANK or "
                       "GEX_FLAG_AD_MY_NBRHD, GEX_FLAG_AD_ACQ, GEX_FLAG_AD_REL and "
                       "GEX_FLAG_RANK_IS_JOBRANK", what, (unsigned)flags);
  if ((flags & GEX_FLAG_AD_MY_RANK) && (flags & GEX_FLAG_AD_MY_NBRHD))
    gasneti_fatalerror("%s: GEX_FLAG_AD_MY_RANK and GEX_FLAG_AD_MY_NBRHD together (at most one)",
                       what);
  if ((opcode & FETCHING_OPS) && !result_p)
    gasneti_fatalerror("%s: %s fetches a value, and result_p is NULL", what,
                       op_name(opcode, buf, sizeof buf));
  gasnet_node_t node;
  if (flags & GEX_FLAG_RANK_IS_JOBRANK) {
    if (tgt_rank >= gasneti_nodes)
      gasneti_fatalerror("%s to job rank %u of a job of %u (GEX_FLAG_RANK_IS_JOBRANK)", what,
                         (unsigned)tgt_rank, (unsigned)gasneti_nodes);
    node = (gasnet_node_t)tgt_rank;
  } else {
    node = gasneti_ex_jobrank(what, ad->tm, tgt_rank);
  }
  if ((flags & GEX_FLAG_AD_MY_RANK) && node != gasneti_mynode)
    gasneti_fatalerror("%s: GEX_FLAG_AD_MY_RANK, but the target is rank %u, not the caller",
                       what, (unsigned)tgt_rank);
  if ((flags & GEX_FLAG_AD_MY_NBRHD) && !gasneti_pshm_reach[node])
    gasneti_fatalerror("%s: GEX_FLAG_AD_MY_NBRHD, but rank %u (host %s) is not in the caller's "
                       "shared-memory neighbourhood", what, (unsigned)tgt_rank,
                       gasneti_host_name(node));
  size_t size = gasneti_ad_dt_size(dt);
  if (!gasneti_in_segment(node, tgt_addr, size) || (uintptr_t)tgt_addr % size)
    gasneti_fatalerror("%s: target %p is not a %zu-byte aligned location in rank %u's bound "
                       "segment", what, tgt_addr, size, (unsigned)tgt_rank);

  if (flags & GEX_FLAG_AD_REL) atomic_thread_fence(memory_order_release);
  uintptr_t direct = gasneti_pshm_direct[node];
  if (direct != GASNETI_PSHM_FAR) { /* done here and now: nothing to wait for */
    gasneti_ad_val_t old = gasneti_ad_apply(dt, opcode, gasneti_direct_addr(direct, tgt_addr),
                                            operand1, operand2);
    if (opcode & FETCHING_OPS) memcpy(result_p, &old, size);
    if (flags & GEX_FLAG_AD_ACQ) atomic_thread_fence(memory_order_acquire);
    return GEX_EVENT_INVALID;
  }
  /* GEX_FLAG_IMMEDIATE is a permission: the request waits for credits as RMA's do. */
  gasneti_op_t *op = NULL;
  _Atomic int64_t *counter;
  if (kind == GASNETI_RMA_NB) {
    op = gasneti_op_get();
    counter = &op->pending;
  } else {
    counter = nbi_counter(opcode);
  }
  atomic_fetch_add_explicit(counter, 1, memory_order_relaxed);
  uint64_t a = val_bits(operand1), b = val_bits(operand2);
  void *result = (opcode & FETCHING_OPS) ? result_p : NULL;
  gasneti_am_request_internal(node, GASNETI_HANDLER_AD_OP, GASNETI_AM_SHORT, NULL, 0, NULL, 12,
                              (gasnet_handlerarg_t[]){PLO(tgt_addr), PHI(tgt_addr),
                                                      (gasnet_handlerarg_t)opcode,
                                                      (gasnet_handlerarg_t)dt, LO(a), HI(a),
                                                      LO(b), HI(b), PLO(result), PHI(result),
                                                      PLO(counter), PHI(counter)});
  return op ? (gex_Event_t)op : GEX_EVENT_INVALID;
}
