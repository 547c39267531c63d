/* gasnetex.h: the GASNet-EX interface of this implementation (docs/api.md has what of the
 * GASNet-EX specification is here, per conduit): clients, endpoints, teams and segments; active
 * messages with local-completion control, immediate mode and negotiated payloads; RMA with
 * events and implicit-event (NBI) completion; the system's host and neighbourhood queries. It
 * runs on the same core as GASNet-1 (gasnet.h), whose calls every GASNet-EX client may use too
 * (gasnet_exit, gasnet_AMPoll, GASNET_BLOCKUNTIL, the barrier...). Clients define exactly one of
 * GASNET_SEQ, GASNET_PARSYNC or GASNET_PAR before including it.
 *
 * The EX objects are thin: the client, its one endpoint and the primordial team are what
 * gex_Client_Init (or gasnet_init) makes; a gex_TM_t names a team, and a gex_Rank_t a member of
 * it. The type of each handle and value of each constant are this implementation's own; clients
 * use only the names, as the specification says. */
#ifndef _INCLUDED_GASNETEX_H
#define _INCLUDED_GASNETEX_H

#ifndef _INCLUDED_GASNET_H
#define GASNETI_EX_CLIENT 1 /* gasnetex.h came first: gasnet_config.h gives the EX release */
#endif
#include <gasnet_basic.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- versions --------------------------------------------------------------------------- */
/* The GASNet-EX specification (docs/GASNet-EX.txt of the public GASNet-EX sources) this
 * header follows. GASNET_RELEASE_VERSION_* come from gasnet_config.h. */
#define GEX_SPEC_VERSION_MAJOR 0
#define GEX_SPEC_VERSION_MINOR 13

/* ---- basic types ------------------------------------------------------------------------ */
typedef uint32_t gex_Rank_t;       /* interoperable with gasnet_node_t: a value converts */
#define GEX_RANK_INVALID ((gex_Rank_t)0xFFFFFFFFu)
typedef uint32_t gex_Flags_t;
typedef gasnet_token_t gex_Token_t;
typedef gasnet_handler_t gex_AM_Index_t;
typedef gasnet_handlerarg_t gex_AM_Arg_t;
typedef void (*gex_AM_Fn_t)();
typedef gasnet_register_value_t gex_RMA_Value_t;
#define SIZEOF_GEX_RMA_VALUE_T SIZEOF_GASNET_REGISTER_VALUE_T
typedef void *gex_Addr_t;
typedef struct {
  void *gex_addr;
  size_t gex_len;
} gex_Memvec_t; /* the same layout as gasnet_memvec_t */

typedef struct gasneti_client_s *gex_Client_t;
typedef struct gasneti_segment_s *gex_Segment_t;
typedef struct gasneti_ep_s *gex_EP_t;
typedef struct gasneti_tm_s *gex_TM_t;
typedef uint32_t gex_EP_Index_t;
typedef struct {
  gex_Rank_t gex_rank;
  gex_EP_Index_t gex_ep_index;
} gex_EP_Location_t;
#define GEX_CLIENT_INVALID ((gex_Client_t)0)
#define GEX_SEGMENT_INVALID ((gex_Segment_t)0)
#define GEX_EP_INVALID ((gex_EP_t)0)
#define GEX_TM_INVALID ((gex_TM_t)0)
#define GASNET_MAXEPS 1

/* An event is a GASNet-1 handle (interoperable with gasnet_handle_t). */
typedef gasnet_handle_t gex_Event_t;
#define GEX_EVENT_INVALID ((gex_Event_t)0)
#define GEX_EVENT_NO_OP ((gex_Event_t)(uintptr_t)1)
#define GEX_EVENT_NOW ((gex_Event_t *)(uintptr_t)1)
#define GEX_EVENT_DEFER ((gex_Event_t *)(uintptr_t)2)
#define GEX_EVENT_GROUP ((gex_Event_t *)(uintptr_t)3)

/* ---- flags -------------------------------------------------------------------------------- */
/* Point-to-point communication. */
#define GEX_FLAG_IMMEDIATE ((gex_Flags_t)0x1)
#define GEX_FLAG_LC_COPY_YES ((gex_Flags_t)0x2)
/* gex_AM_Prepare*: its Commit, too, returns non-zero rather than wait (see gasneti_ex_AMCommit). */
#define GEX_FLAG_IMMEDIATE_COMMIT ((gex_Flags_t)0x8)
#define GEX_FLAG_LC_COPY_NO ((gex_Flags_t)0x4)
#define GEX_FLAG_SELF_SEG_UNKNOWN ((gex_Flags_t)0x10)
#define GEX_FLAG_SELF_SEG_SOME ((gex_Flags_t)0x20)
#define GEX_FLAG_SELF_SEG_BOUND ((gex_Flags_t)0x40)
#define GEX_FLAG_SELF_SEG_OFFSET ((gex_Flags_t)0x80)
#define GEX_FLAG_PEER_SEG_UNKNOWN ((gex_Flags_t)0x100)
#define GEX_FLAG_PEER_SEG_SOME ((gex_Flags_t)0x200)
#define GEX_FLAG_PEER_SEG_BOUND ((gex_Flags_t)0x400)
#define GEX_FLAG_PEER_SEG_OFFSET ((gex_Flags_t)0x800)
#define GEX_FLAG_AD_MY_RANK ((gex_Flags_t)0x1000)
#define GEX_FLAG_AD_MY_NBRHD ((gex_Flags_t)0x2000)
#define GEX_FLAG_AD_ACQ ((gex_Flags_t)0x4000)
#define GEX_FLAG_AD_REL ((gex_Flags_t)0x8000)
#define GEX_FLAG_AD_FAVOR_MY_RANK ((gex_Flags_t)0x10000)
#define GEX_FLAG_AD_FAVOR_MY_NBRHD ((gex_Flags_t)0x20000)
#define GEX_FLAG_AD_FAVOR_REMOTE ((gex_Flags_t)0x40000)
#define GEX_FLAG_RANK_IS_JOBRANK ((gex_Flags_t)0x80000)
#define GEX_FLAG_AM_PREPARE_LEAST_CLIENT ((gex_Flags_t)0x100000)
#define GEX_FLAG_AM_PREPARE_LEAST_ALLOC ((gex_Flags_t)0x200000)
#define GEX_FLAG_ENABLE_LEAF_LC ((gex_Flags_t)0x400000)
/* Team construction. */
#define GEX_FLAG_TM_GLOBAL_SCRATCH ((gex_Flags_t)0x1000000)
#define GEX_FLAG_TM_LOCAL_SCRATCH ((gex_Flags_t)0x2000000)
#define GEX_FLAG_TM_SYMMETRIC_SCRATCH ((gex_Flags_t)0x4000000)
#define GEX_FLAG_TM_NO_SCRATCH ((gex_Flags_t)0x8000000)
#define GEX_FLAG_TM_SCRATCH_SIZE_MIN ((gex_Flags_t)0x10000000)
#define GEX_FLAG_TM_SCRATCH_SIZE_RECOMMENDED ((gex_Flags_t)0x20000000)
#define GEX_FLAG_SCRATCH_SEG_OFFSET ((gex_Flags_t)0x40000000)
#define GEX_FLAG_GLOBALLY_QUIESCED ((gex_Flags_t)0x1)
/* gex_Client_Init: the client also uses GASNet-1's calls (gasnet.h). */
#define GEX_FLAG_USES_GASNET1 ((gex_Flags_t)0x80000000u)
/* Handler registration (gex_AM_Entry_t's gex_flags): one category, one direction. */
#define GEX_FLAG_AM_SHORT ((gex_Flags_t)0x1)
#define GEX_FLAG_AM_MEDIUM ((gex_Flags_t)0x2)
#define GEX_FLAG_AM_LONG ((gex_Flags_t)0x4)
#define GEX_FLAG_AM_MEDLONG ((gex_Flags_t)0x6)
#define GEX_FLAG_AM_REQUEST ((gex_Flags_t)0x8)
#define GEX_FLAG_AM_REPLY ((gex_Flags_t)0x10)
#define GEX_FLAG_AM_REQREP ((gex_Flags_t)0x18)
/* Endpoint capabilities and hints (only the primordial endpoint exists here). */
typedef uint32_t gex_EP_Capabilities_t;
#define GEX_EP_CAPABILITY_RMA ((gex_EP_Capabilities_t)0x1)
#define GEX_EP_CAPABILITY_AM ((gex_EP_Capabilities_t)0x2)
#define GEX_EP_CAPABILITY_VIS ((gex_EP_Capabilities_t)0x4)
#define GEX_EP_CAPABILITY_COLL ((gex_EP_Capabilities_t)0x8)
#define GEX_EP_CAPABILITY_AD ((gex_EP_Capabilities_t)0x10)
#define GEX_EP_CAPABILITY_ALL ((gex_EP_Capabilities_t)0x1f)
#define GEX_FLAG_HINT_ACCEL_AD ((gex_Flags_t)0x1)
#define GEX_FLAG_HINT_ACCEL_COLL ((gex_Flags_t)0x2)
#define GEX_FLAG_HINT_ACCEL_ALL ((gex_Flags_t)0x3)

/* Event categories (gex_NBI_Test/Wait, gex_Event_QueryLeaf). */
typedef uint32_t gex_EC_t;
#define GEX_EC_GET ((gex_EC_t)0x1)
#define GEX_EC_PUT ((gex_EC_t)0x2)
#define GEX_EC_AM ((gex_EC_t)0x4)
#define GEX_EC_LC ((gex_EC_t)0x8)
#define GEX_EC_RMW ((gex_EC_t)0x10)
#define GEX_EC_ALL ((gex_EC_t)0xffff)

/* Data types and operations of atomics and reductions: any of them OR together without loss. */
typedef uint32_t gex_DT_t;
#define GEX_DT_I32 ((gex_DT_t)0x1)
#define GEX_DT_U32 ((gex_DT_t)0x2)
#define GEX_DT_I64 ((gex_DT_t)0x4)
#define GEX_DT_U64 ((gex_DT_t)0x8)
#define GEX_DT_FLT ((gex_DT_t)0x10)
#define GEX_DT_DBL ((gex_DT_t)0x20)
#define GEX_DT_USER ((gex_DT_t)0x40)
/* Each non-fetching operation's bit is its fetching twin's shifted right by one. */
typedef uint32_t gex_OP_t;
#define GEX_OP_ADD ((gex_OP_t)0x1)
#define GEX_OP_FADD ((gex_OP_t)0x2)
#define GEX_OP_MULT ((gex_OP_t)0x4)
#define GEX_OP_FMULT ((gex_OP_t)0x8)
#define GEX_OP_MIN ((gex_OP_t)0x10)
#define GEX_OP_FMIN ((gex_OP_t)0x20)
#define GEX_OP_MAX ((gex_OP_t)0x40)
#define GEX_OP_FMAX ((gex_OP_t)0x80)
#define GEX_OP_SUB ((gex_OP_t)0x100)
#define GEX_OP_FSUB ((gex_OP_t)0x200)
#define GEX_OP_INC ((gex_OP_t)0x400)
#define GEX_OP_FINC ((gex_OP_t)0x800)
#define GEX_OP_DEC ((gex_OP_t)0x1000)
#define GEX_OP_FDEC ((gex_OP_t)0x2000)
#define GEX_OP_AND ((gex_OP_t)0x4000)
#define GEX_OP_FAND ((gex_OP_t)0x8000)
#define GEX_OP_OR ((gex_OP_t)0x10000)
#define GEX_OP_FOR ((gex_OP_t)0x20000)
#define GEX_OP_XOR ((gex_OP_t)0x40000)
#define GEX_OP_FXOR ((gex_OP_t)0x80000)
#define GEX_OP_SET ((gex_OP_t)0x100000)
#define GEX_OP_SWAP ((gex_OP_t)0x200000)
#define GEX_OP_CAS ((gex_OP_t)0x400000)
#define GEX_OP_FCAS ((gex_OP_t)0x800000)
#define GEX_OP_CSWAP GEX_OP_FCAS
#define GEX_OP_GET ((gex_OP_t)0x1000000)
#define GEX_OP_USER ((gex_OP_t)0x2000000)
#define GEX_OP_USER_NC ((gex_OP_t)0x4000000)
#define GEX_OP_TO_FETCHING(op) ((gex_OP_t)((op) << 1))
#define GEX_OP_TO_NONFETCHING(op) ((gex_OP_t)((op) >> 1))

/* ---- memory kinds ------------------------------------------------------------------------ */
typedef struct gasneti_mk_s *gex_MK_t;
#define GEX_MK_INVALID ((gex_MK_t)0)
#define GEX_MK_HOST ((gex_MK_t)(uintptr_t)1)

/* ---- client data -------------------------------------------------------------------------- */
void gex_Client_SetCData(gex_Client_t client, const void *val);
void *gex_Client_QueryCData(gex_Client_t client);
void gex_Segment_SetCData(gex_Segment_t seg, const void *val);
void *gex_Segment_QueryCData(gex_Segment_t seg);
void gex_TM_SetCData(gex_TM_t tm, const void *val);
void *gex_TM_QueryCData(gex_TM_t tm);
void gex_EP_SetCData(gex_EP_t ep, const void *val);
void *gex_EP_QueryCData(gex_EP_t ep);

/* ---- clients, segments, endpoints, teams ----------------------------------------------------- */
/* Collective over the job; once per process; an implicit barrier before it returns. argc and
 * argv may both be NULL. flags: 0 or GEX_FLAG_USES_GASNET1. */
int gex_Client_Init(gex_Client_t *client_p, gex_EP_t *ep_p, gex_TM_t *tm_p, const char *clientName,
                    int *argc, char ***argv, gex_Flags_t flags);
gex_Flags_t gex_Client_QueryFlags(gex_Client_t client);
const char *gex_Client_QueryName(gex_Client_t client);

/* Collective over the primordial team: creates and binds this rank's segment (size: a non-zero
 * multiple of GASNET_PAGESIZE up to gasnet_getMaxLocalSegmentSize()); once per process. The
 * network comes up with it: communication starts after it (docs/api.md). */
int gex_Segment_Attach(gex_Segment_t *segment_p, gex_TM_t tm, uintptr_t size);
gex_Client_t gex_Segment_QueryClient(gex_Segment_t seg);
gex_Flags_t gex_Segment_QueryFlags(gex_Segment_t seg);
void *gex_Segment_QueryAddr(gex_Segment_t seg);
uintptr_t gex_Segment_QuerySize(gex_Segment_t seg);
/* The bound segment of (tm, rank): its address in its owner, in this process (NULL when not
 * mapped here) and its size; non-zero when that endpoint has none. */
int gex_Segment_QueryBound(gex_TM_t tm, gex_Rank_t rank, void **owneraddr_p, void **localaddr_p,
                           uintptr_t *size_p);
/* The same, as an event (complete when it returns: the addresses are known locally). A rank
 * with no segment yet gives NULL and 0. */
gex_Event_t gex_EP_QueryBoundSegmentNB(gex_TM_t tm, gex_Rank_t rank, void **owneraddr_p,
                                       void **localaddr_p, uintptr_t *size_p, gex_Flags_t flags);
/* Segments of one's own memory and other kinds are not supported here: GASNET_ERR_RESOURCE. */
int gex_Segment_Create(gex_Segment_t *segment_p, gex_Client_t client, gex_Addr_t address,
                       uintptr_t length, gex_MK_t kind, gex_Flags_t flags);

gex_Client_t gex_EP_QueryClient(gex_EP_t ep);
gex_Flags_t gex_EP_QueryFlags(gex_EP_t ep);
gex_Segment_t gex_EP_QuerySegment(gex_EP_t ep);
gex_EP_Index_t gex_EP_QueryIndex(gex_EP_t ep);
int gex_EP_PublishBoundSegment(gex_TM_t tm, gex_EP_t *eps, size_t num_eps, gex_Flags_t flags);

gex_Client_t gex_TM_QueryClient(gex_TM_t tm);
gex_EP_t gex_TM_QueryEP(gex_TM_t tm);
gex_Flags_t gex_TM_QueryFlags(gex_TM_t tm);
gex_Rank_t gex_TM_QueryRank(gex_TM_t tm);
gex_Rank_t gex_TM_QuerySize(gex_TM_t tm);
gex_Rank_t gex_TM_TranslateRankToJobrank(gex_TM_t tm, gex_Rank_t rank);
gex_Rank_t gex_TM_TranslateJobrankToRank(gex_TM_t tm, gex_Rank_t jobrank);
gex_EP_Location_t gex_TM_TranslateRankToEP(gex_TM_t tm, gex_Rank_t rank, gex_Flags_t flags);

/* A GASNet-1 program (gasnet_init/attach, or gex_Client_Init with GEX_FLAG_USES_GASNET1)
 * reaching the EX objects; any output may be NULL. */
void gasnet_QueryGexObjects(gex_Client_t *client_p, gex_EP_t *endpoint_p, gex_TM_t *tm_p,
                            gex_Segment_t *segment_p);

/* ---- the system: job, hosts and neighbourhoods (shared-memory supernodes) -------------------- */
gex_Rank_t gex_System_QueryJobRank(void);
gex_Rank_t gex_System_QueryJobSize(void);
int gex_System_GetVerboseErrors(void);
void gex_System_SetVerboseErrors(int enable);
typedef const struct {
  gex_Rank_t gex_jobrank;
} gex_RankInfo_t;
void gex_System_QueryNbrhdInfo(gex_RankInfo_t **info_p, gex_Rank_t *info_count_p,
                               gex_Rank_t *my_info_index_p);
void gex_System_QueryHostInfo(gex_RankInfo_t **info_p, gex_Rank_t *info_count_p,
                              gex_Rank_t *my_info_index_p);
void gex_System_QueryMyPosition(gex_Rank_t *nbrhd_set_size, gex_Rank_t *nbrhd_set_rank,
                                gex_Rank_t *host_set_size, gex_Rank_t *host_set_rank);

/* ---- handler-safe locks: GASNet-1's ---------------------------------------------------------- */
typedef gasnet_hsl_t gex_HSL_t;
#define GEX_HSL_INITIALIZER GASNET_HSL_INITIALIZER
#define gex_HSL_Init(hsl) gasnet_hsl_init(hsl)
#define gex_HSL_Destroy(hsl) gasnet_hsl_destroy(hsl)
#define gex_HSL_Lock(hsl) gasnet_hsl_lock(hsl)
#define gex_HSL_Unlock(hsl) gasnet_hsl_unlock(hsl)
#define gex_HSL_Trylock(hsl) gasnet_hsl_trylock(hsl)

/* ---- active messages: registration and limits --------------------------------------------- */
/* Client indices are 128..255 (0: let the runtime choose: the highest one still free). */
#define GEX_AM_INDEX_BASE 128
#ifdef GASNETC_HIDDEN_AM_CONCURRENCY
#define GASNET_HIDDEN_AM_CONCURRENCY_LEVEL GASNETC_HIDDEN_AM_CONCURRENCY
#else
#define GASNET_HIDDEN_AM_CONCURRENCY_LEVEL 0
#endif
typedef struct {
  gex_AM_Index_t gex_index; /* 0, or GEX_AM_INDEX_BASE..255 */
  gex_AM_Fn_t gex_fnptr;
  gex_Flags_t gex_flags;    /* one GEX_FLAG_AM_{SHORT,MEDIUM,LONG,MEDLONG} | one _REQUEST/_REPLY/_REQREP */
  unsigned int gex_nargs;   /* 0..16: the arguments every message to it carries */
  const void *gex_cdata;
  const char *gex_name;
} gex_AM_Entry_t;
/* Not collective; may be called several times; an index is taken once per endpoint. */
int gex_EP_RegisterHandlers(gex_EP_t ep, gex_AM_Entry_t *table, size_t numentries);

/* Limits: the same for every pair of ranks, argument count and lc_opt on a conduit (the core
 * cuts Longs to what a conduit carries; a Medium's limit is the conduit's), so each query
 * returns the conduit's figure; with GEX_FLAG_AM_PREPARE_LEAST_* the largest least_payload,
 * which is the same figure. */
#define gex_AM_MaxArgs() ((unsigned int)16)
size_t gex_AM_MaxRequestLong(gex_TM_t tm, gex_Rank_t other_rank, const gex_Event_t *lc_opt,
                             gex_Flags_t flags, unsigned int numargs);
size_t gex_AM_MaxReplyLong(gex_TM_t tm, gex_Rank_t other_rank, const gex_Event_t *lc_opt,
                           gex_Flags_t flags, unsigned int numargs);
size_t gex_AM_MaxRequestMedium(gex_TM_t tm, gex_Rank_t other_rank, const gex_Event_t *lc_opt,
                               gex_Flags_t flags, unsigned int numargs);
size_t gex_AM_MaxReplyMedium(gex_TM_t tm, gex_Rank_t other_rank, const gex_Event_t *lc_opt,
                             gex_Flags_t flags, unsigned int numargs);
size_t gex_Token_MaxReplyLong(gex_Token_t token, const gex_Event_t *lc_opt, gex_Flags_t flags,
                              unsigned int numargs);
size_t gex_Token_MaxReplyMedium(gex_Token_t token, const gex_Event_t *lc_opt, gex_Flags_t flags,
                                unsigned int numargs);
#define gex_AM_LUBRequestLong() ((size_t)GASNETC_MAX_LONG)
#define gex_AM_LUBReplyLong() ((size_t)GASNETC_MAX_LONG)
#define gex_AM_LUBRequestMedium() ((size_t)GASNETC_MAX_MEDIUM)
#define gex_AM_LUBReplyMedium() ((size_t)GASNETC_MAX_MEDIUM)

/* What a handler may learn of the message it runs for. */
typedef struct {
  gex_Rank_t gex_srcrank;
  gex_EP_t gex_ep;
  const gex_AM_Entry_t *gex_entry;
  int gex_is_req;
  int gex_is_long;
} gex_Token_Info_t;
typedef uint32_t gex_TI_t;
#define GEX_TI_SRCRANK ((gex_TI_t)0x1)
#define GEX_TI_EP ((gex_TI_t)0x2)
#define GEX_TI_ENTRY ((gex_TI_t)0x4)
#define GEX_TI_IS_REQ ((gex_TI_t)0x8)
#define GEX_TI_IS_LONG ((gex_TI_t)0x10)
#define GEX_TI_ALL ((gex_TI_t)0x1f)
gex_TI_t gex_Token_Info(gex_Token_t token, gex_Token_Info_t *info, gex_TI_t mask);

/* ---- team ranks --------------------------------------------------------------------------- */
/* What the inline paths read of a team (its first member): per team rank, the offset that maps
 * an address of that rank's segment into this process, or GASNETI_PSHM_FAR (gasnet_extended.h:
 * the primordial team's is gasneti_pshm_direct itself), and the rank's job rank (NULL: the
 * identity). A put to the primordial team thus costs what gasnet_put costs: one table, one
 * entry. */
typedef struct {
  uintptr_t *gasneti_direct;
  const gex_Rank_t *gasneti_to_job;
} gasneti_tm_view_t;
#define GASNETI_TM_VIEW(tm) ((const gasneti_tm_view_t *)(const void *)(tm))
static inline gasnet_node_t gasneti_tm_jobrank(gex_TM_t tm, gex_Rank_t rank) {
  const gex_Rank_t *map = GASNETI_TM_VIEW(tm)->gasneti_to_job;
  return (gasnet_node_t)(map ? map[rank] : rank);
}
/* A team rank's direct offset. The primordial team's table is gasneti_pshm_direct, read as
 * gasnet_put reads it: a client that keeps its team in memory pays a comparison of the handle,
 * not one more load before the table's. */
extern struct gasneti_tm_s gasneti_ex_tm0;
static inline uintptr_t gasneti_tm_direct(gex_TM_t tm, gex_Rank_t rank) {
  if (__builtin_expect(tm == &gasneti_ex_tm0, 1)) return gasneti_pshm_direct[rank];
  return GASNETI_TM_VIEW(tm)->gasneti_direct[rank];
}
/* A team rank's job rank checked (a rank outside the team is a fatal error naming the call):
 * an AM's destination. A primordial team's rank that fits a gasnet_node_t goes as it is (the
 * AM's own checks compare it with the job's size); anything else is the library's to check. */
gasnet_node_t gasneti_ex_jobrank(const char *what, gex_TM_t tm, gex_Rank_t rank);
static inline gasnet_node_t gasneti_ex_dest(const char *what, gex_TM_t tm, gex_Rank_t rank) {
  if (__builtin_expect(tm == &gasneti_ex_tm0 && rank <= 0xFFFFu, 1)) return (gasnet_node_t)rank;
  return gasneti_ex_jobrank(what, tm, rank);
}

/* ---- active messages: sending -------------------------------------------------------------- */
/* Fixed payload: gex_AM_{Request,Reply}{Short,Medium,Long}M for M = 0..16 arguments, and the
 * forms without M that count the arguments (gasnet_ex_am_macros.h). Each returns 0, or
 * non-zero only when GEX_FLAG_IMMEDIATE was given and the message would have had to wait for
 * a credit or a buffer (nothing was sent). A payload is copied or sent before the call returns
 * (local completion is immediate: an lc_opt event is set to GEX_EVENT_INVALID). The library's
 * entries take the caller's "file:line" (loc) for traces. */
int gasneti_ex_AMRequestShort(const char *loc, gasnet_node_t dest, gex_AM_Index_t handler,
                              gex_Flags_t flags, int nargs, const gex_AM_Arg_t *args);
int gasneti_ex_AMRequestMedium(const char *loc, gasnet_node_t dest, gex_AM_Index_t handler,
                               const void *source_addr, size_t nbytes, gex_Event_t *lc_opt,
                               gex_Flags_t flags, int nargs, const gex_AM_Arg_t *args);
int gasneti_ex_AMRequestLong(const char *loc, gasnet_node_t dest, gex_AM_Index_t handler,
                             const void *source_addr, size_t nbytes, void *dest_addr,
                             gex_Event_t *lc_opt, gex_Flags_t flags, int nargs,
                             const gex_AM_Arg_t *args);
int gasneti_ex_AMReplyShort(const char *loc, gex_Token_t token, gex_AM_Index_t handler,
                            gex_Flags_t flags, int nargs, const gex_AM_Arg_t *args);
int gasneti_ex_AMReplyMedium(const char *loc, gex_Token_t token, gex_AM_Index_t handler,
                             const void *source_addr, size_t nbytes, gex_Event_t *lc_opt,
                             gex_Flags_t flags, int nargs, const gex_AM_Arg_t *args);
int gasneti_ex_AMReplyLong(const char *loc, gex_Token_t token, gex_AM_Index_t handler,
                           const void *source_addr, size_t nbytes, void *dest_addr,
                           gex_Event_t *lc_opt, gex_Flags_t flags, int nargs,
                           const gex_AM_Arg_t *args);

/* Negotiated payload: Prepare reserves what a message needs and returns where its payload goes
 * (the client's buffer, or one of the runtime's: to a neighbourhood peer the message's own
 * place in shared memory, and on conduits that say GASNET_NATIVE_NP_ALLOC_* the network's send
 * buffer), then the client writes it and Commit sends it. Between the two the client may make
 * no communication call; pairs do not nest; both run on one thread. */
typedef struct gasneti_srcdesc_s *gex_AM_SrcDesc_t;
#define GEX_AM_SRCDESC_NO_OP ((gex_AM_SrcDesc_t)0)
void *gex_AM_SrcDescAddr(gex_AM_SrcDesc_t sd);
size_t gex_AM_SrcDescSize(gex_AM_SrcDesc_t sd);
#define gex_AM_PrepareRequestMedium(tm, rank, buf, least, most, lc_opt, flags, numargs)        \
  gasneti_ex_AMPrepareRequest(GASNETI_SRCLOC, 1, tm, rank, buf, least, most, (void *)0, lc_opt, \
                              flags, numargs)
#define gex_AM_PrepareRequestLong(tm, rank, buf, least, most, dest_addr, lc_opt, flags, numargs) \
  gasneti_ex_AMPrepareRequest(GASNETI_SRCLOC, 2, tm, rank, buf, least, most, dest_addr, lc_opt, \
                              flags, numargs)
#define gex_AM_PrepareReplyMedium(token, buf, least, most, lc_opt, flags, numargs)               \
  gasneti_ex_AMPrepareReply(GASNETI_SRCLOC, 1, token, buf, least, most, (void *)0, lc_opt,     \
                            flags, numargs)
#define gex_AM_PrepareReplyLong(token, buf, least, most, dest_addr, lc_opt, flags, numargs)     \
  gasneti_ex_AMPrepareReply(GASNETI_SRCLOC, 2, token, buf, least, most, dest_addr, lc_opt,     \
                            flags, numargs)
gex_AM_SrcDesc_t gasneti_ex_AMPrepareRequest(const char *loc, int category, gex_TM_t tm,
                                             gex_Rank_t rank, const void *client_buf,
                                             size_t least_payload, size_t most_payload,
                                             void *dest_addr, gex_Event_t *lc_opt,
                                             gex_Flags_t flags, unsigned int numargs);
gex_AM_SrcDesc_t gasneti_ex_AMPrepareReply(const char *loc, int category, gex_Token_t token,
                                           const void *client_buf, size_t least_payload,
                                           size_t most_payload, void *dest_addr,
                                           gex_Event_t *lc_opt, gex_Flags_t flags,
                                           unsigned int numargs);
/* Commit: gex_AM_Commit{Request,Reply}{Medium,Long}M (gasnet_ex_am_macros.h). Non-zero only
 * for a Prepare given GEX_FLAG_IMMEDIATE_COMMIT whose message could not go without waiting:
 * nothing was sent and the descriptor is consumed (the client prepares again). */
int gasneti_ex_AMCommit(const char *loc, gex_AM_SrcDesc_t sd, int category, int is_reply,
                         gex_AM_Index_t handler, size_t nbytes, void *dest_addr, int nargs,
                         const gex_AM_Arg_t *args);
/* Requests and replies to neighbourhood peers always write a runtime buffer's payload in
 * place; on the network, conduits that define these do too. */
#ifdef GASNETC_NATIVE_NP_ALLOC_MEDIUM
#define GASNET_NATIVE_NP_ALLOC_REQ_MEDIUM 1
#define GASNET_NATIVE_NP_ALLOC_REP_MEDIUM 1
#endif

#include <gasnet_ex_am_macros.h>

/* ---- events --------------------------------------------------------------------------------- */
/* Test: 0 when complete (the event is consumed), non-zero otherwise; never polls. Wait: polls
 * until complete. GEX_EVENT_INVALID is always complete; GEX_EVENT_NO_OP is not an event. */
int gasneti_ex_event_test(gex_Event_t event);
void gasneti_ex_event_wait(const char *loc, gex_Event_t event);
static inline int gex_Event_Test(gex_Event_t event) {
  return event == GEX_EVENT_INVALID ? 0 : gasneti_ex_event_test(event);
}
static inline void gex_Event_Wait(gex_Event_t event) {
  if (event != GEX_EVENT_INVALID || __builtin_expect(gasneti_trace_active, 0))
    gasneti_ex_event_wait((const char *)0, event);
}
#define gex_Event_Wait(event) gasneti_ex_event_wait_at(GASNETI_SRCLOC, event)
static inline void gasneti_ex_event_wait_at(const char *loc, gex_Event_t event) {
  if (event != GEX_EVENT_INVALID || __builtin_expect(gasneti_trace_active, 0))
    gasneti_ex_event_wait(loc, event);
}
int gex_Event_TestSome(gex_Event_t *pevent, size_t numevents, gex_Flags_t flags);
void gex_Event_WaitSome(gex_Event_t *pevent, size_t numevents, gex_Flags_t flags);
int gex_Event_TestAll(gex_Event_t *pevent, size_t numevents, gex_Flags_t flags);
void gex_Event_WaitAll(gex_Event_t *pevent, size_t numevents, gex_Flags_t flags);
/* Local completion of an operation happens here when it is issued (a put's source is reusable,
 * or the operation keeps it until it completes): a leaf is always GEX_EVENT_INVALID. */
gex_Event_t gex_Event_QueryLeaf(gex_Event_t root, gex_EC_t event_category);

/* Implicit-event operations: GEX_EC_GET, _PUT (and GEX_EC_RMW when atomics come) are what
 * is still in flight on this thread; GEX_EC_AM and GEX_EC_LC are complete when issued. */
int gex_NBI_Test(gex_EC_t event_mask, gex_Flags_t flags);
void gex_NBI_Wait(gex_EC_t event_mask, gex_Flags_t flags);
void gex_NBI_BeginAccessRegion(gex_Flags_t flags);
gex_Event_t gex_NBI_EndAccessRegion(gex_Flags_t flags);

/* ---- RMA ------------------------------------------------------------------------------------- */
/* The EX name of an RMA operation (GASNETI_OP_*: "gex_RMA_PutNB"), for argument checks. */
const char *gasneti_ex_op_name(int op);
#ifdef GASNETI_DEBUG
void gasneti_ex_rank_check(const char *what, gex_TM_t tm, gex_Rank_t rank);
#define GASNETI_EX_RANK_CHECK(what, tm, rank) gasneti_ex_rank_check(what, tm, rank)
#else
#define GASNETI_EX_RANK_CHECK(what, tm, rank) ((void)0)
#endif

/* lc_opt: NOW, DEFER, GROUP, or an event to set (GEX_EVENT_INVALID: done when issued). */
static inline int gasneti_ex_lc_is_event(gex_Event_t *lc_opt) { return (uintptr_t)lc_opt > 3; }

/* The library's part: the network path and what a traced rank records (loc: "file:line"); NB
 * forms return the event. GEX_FLAG_IMMEDIATE is a permission the RMA calls do not use (they
 * wait for flow control on the network path as they must): the int forms return 0. */
gex_Event_t gasneti_ex_put(const char *loc, int op, gex_TM_t tm, gex_Rank_t rank, void *dest,
                           const void *src, size_t n, int kind, gex_Event_t *lc_opt,
                           gex_Flags_t flags);
gex_Event_t gasneti_ex_get(const char *loc, int op, void *dest, gex_TM_t tm, gex_Rank_t rank,
                           const void *src, size_t n, int kind, gex_Flags_t flags);

#ifdef GASNETI_DEBUG
#define GASNETI_EX_RMA_CHECK(op, tm, rank, addr, n)                         \
  do {                                                                      \
    GASNETI_EX_RANK_CHECK(gasneti_ex_op_name(op), tm, rank);                \
    GASNETI_RMA_CHECK(gasneti_ex_op_name(op), gasneti_tm_jobrank(tm, rank), addr, n); \
  } while (0)
#else
#define GASNETI_EX_RMA_CHECK(op, tm, rank, addr, n) ((void)0)
#endif

static inline gex_Event_t gasneti_ex_put_inline(const char *loc, int op, gex_TM_t tm,
                                                gex_Rank_t rank, void *dest, const void *src,
                                                size_t n, int kind, gex_Event_t *lc_opt,
                                                gex_Flags_t flags) {
  GASNETI_EX_RMA_CHECK(op, tm, rank, dest, n);
  uintptr_t direct = gasneti_tm_direct(tm, rank);
  if (__builtin_expect(direct != GASNETI_PSHM_FAR, 1)) {
    gasneti_copy(gasneti_direct_addr(direct, dest), src, n);
    if (gasneti_ex_lc_is_event(lc_opt)) *lc_opt = GEX_EVENT_INVALID;
    return GEX_EVENT_INVALID;
  }
  return gasneti_ex_put(loc, op, tm, rank, dest, src, n, kind, lc_opt, flags);
}

static inline gex_Event_t gasneti_ex_get_inline(const char *loc, int op, gex_TM_t tm, void *dest,
                                                gex_Rank_t rank, const void *src, size_t n,
                                                int kind, gex_Flags_t flags) {
  GASNETI_EX_RMA_CHECK(op, tm, rank, src, n);
  uintptr_t direct = gasneti_tm_direct(tm, rank);
  if (__builtin_expect(direct != GASNETI_PSHM_FAR, 1)) {
    gasneti_copy(dest, gasneti_direct_addr(direct, src), n);
    return GEX_EVENT_INVALID;
  }
  return gasneti_ex_get(loc, op, dest, tm, rank, src, n, kind, flags);
}

static inline int gasneti_ex_put_blocking(const char *loc, gex_TM_t tm, gex_Rank_t rank, void *dest,
                                          const void *src, size_t n, gex_Flags_t flags) {
  gasneti_ex_put_inline(loc, GASNETI_OP_PUT, tm, rank, dest, src, n, GASNETI_RMA_BLOCKING,
                        GEX_EVENT_NOW, flags);
  return 0;
}
static inline int gasneti_ex_put_nbi(const char *loc, gex_TM_t tm, gex_Rank_t rank, void *dest,
                                     const void *src, size_t n, gex_Event_t *lc_opt,
                                     gex_Flags_t flags) {
  gasneti_ex_put_inline(loc, GASNETI_OP_PUT_NBI, tm, rank, dest, src, n, GASNETI_RMA_NBI, lc_opt,
                        flags);
  return 0;
}
static inline gex_Event_t gasneti_ex_put_nb(const char *loc, gex_TM_t tm, gex_Rank_t rank,
                                            void *dest, const void *src, size_t n,
                                            gex_Event_t *lc_opt, gex_Flags_t flags) {
  return gasneti_ex_put_inline(loc, GASNETI_OP_PUT_NB, tm, rank, dest, src, n, GASNETI_RMA_NB,
                               lc_opt, flags);
}
static inline int gasneti_ex_get_blocking(const char *loc, gex_TM_t tm, void *dest, gex_Rank_t rank,
                                          const void *src, size_t n, gex_Flags_t flags) {
  gasneti_ex_get_inline(loc, GASNETI_OP_GET, tm, dest, rank, src, n, GASNETI_RMA_BLOCKING, flags);
  return 0;
}
static inline int gasneti_ex_get_nbi(const char *loc, gex_TM_t tm, void *dest, gex_Rank_t rank,
                                     const void *src, size_t n, gex_Flags_t flags) {
  gasneti_ex_get_inline(loc, GASNETI_OP_GET_NBI, tm, dest, rank, src, n, GASNETI_RMA_NBI, flags);
  return 0;
}
static inline gex_Event_t gasneti_ex_get_nb(const char *loc, gex_TM_t tm, void *dest,
                                            gex_Rank_t rank, const void *src, size_t n,
                                            gex_Flags_t flags) {
  return gasneti_ex_get_inline(loc, GASNETI_OP_GET_NB, tm, dest, rank, src, n, GASNETI_RMA_NB,
                               flags);
}
/* The public calls: functions a client may take the address of, then macros of the same names
 * that pass the caller's source line. */
static inline int gex_RMA_PutBlocking(gex_TM_t tm, gex_Rank_t rank, void *dest, const void *src,
                                      size_t nbytes, gex_Flags_t flags) {
  return gasneti_ex_put_blocking((const char *)0, tm, rank, dest, src, nbytes, flags);
}
static inline int gex_RMA_PutNBI(gex_TM_t tm, gex_Rank_t rank, void *dest, const void *src,
                                 size_t nbytes, gex_Event_t *lc_opt, gex_Flags_t flags) {
  return gasneti_ex_put_nbi((const char *)0, tm, rank, dest, src, nbytes, lc_opt, flags);
}
static inline gex_Event_t gex_RMA_PutNB(gex_TM_t tm, gex_Rank_t rank, void *dest, const void *src,
                                        size_t nbytes, gex_Event_t *lc_opt, gex_Flags_t flags) {
  return gasneti_ex_put_nb((const char *)0, tm, rank, dest, src, nbytes, lc_opt, flags);
}
static inline int gex_RMA_GetBlocking(gex_TM_t tm, void *dest, gex_Rank_t rank, void *src,
                                      size_t nbytes, gex_Flags_t flags) {
  return gasneti_ex_get_blocking((const char *)0, tm, dest, rank, src, nbytes, flags);
}
static inline int gex_RMA_GetNBI(gex_TM_t tm, void *dest, gex_Rank_t rank, void *src,
                                 size_t nbytes, gex_Flags_t flags) {
  return gasneti_ex_get_nbi((const char *)0, tm, dest, rank, src, nbytes, flags);
}
static inline gex_Event_t gex_RMA_GetNB(gex_TM_t tm, void *dest, gex_Rank_t rank, void *src,
                                        size_t nbytes, gex_Flags_t flags) {
  return gasneti_ex_get_nb((const char *)0, tm, dest, rank, src, nbytes, flags);
}
#define gex_RMA_PutBlocking(tm, rank, dest, src, n, flags) \
  gasneti_ex_put_blocking(GASNETI_SRCLOC, tm, rank, dest, src, n, flags)
#define gex_RMA_PutNBI(tm, rank, dest, src, n, lc_opt, flags) \
  gasneti_ex_put_nbi(GASNETI_SRCLOC, tm, rank, dest, src, n, lc_opt, flags)
#define gex_RMA_PutNB(tm, rank, dest, src, n, lc_opt, flags) \
  gasneti_ex_put_nb(GASNETI_SRCLOC, tm, rank, dest, src, n, lc_opt, flags)
#define gex_RMA_GetBlocking(tm, dest, rank, src, n, flags) \
  gasneti_ex_get_blocking(GASNETI_SRCLOC, tm, dest, rank, src, n, flags)
#define gex_RMA_GetNBI(tm, dest, rank, src, n, flags) \
  gasneti_ex_get_nbi(GASNETI_SRCLOC, tm, dest, rank, src, n, flags)
#define gex_RMA_GetNB(tm, dest, rank, src, n, flags) \
  gasneti_ex_get_nb(GASNETI_SRCLOC, tm, dest, rank, src, n, flags)

/* Value forms: nbytes is 1..SIZEOF_GEX_RMA_VALUE_T. */
static inline gex_RMA_Value_t gasneti_ex_get_val(const char *loc, gex_TM_t tm, gex_Rank_t rank,
                                                 void *src, size_t nbytes, gex_Flags_t flags) {
  (void)flags;
  GASNETI_EX_RANK_CHECK("gex_RMA_GetBlockingVal", tm, rank);
  return gasneti_get_val_at(loc, gasneti_tm_jobrank(tm, rank), src, nbytes);
}
static inline gex_Event_t gasneti_ex_put_val(const char *loc, int op, int kind, gex_TM_t tm,
                                             gex_Rank_t rank, void *dest, gex_RMA_Value_t value,
                                             size_t nbytes, gex_Flags_t flags) {
  (void)flags;
  GASNETI_EX_RANK_CHECK(gasneti_ex_op_name(op), tm, rank);
  return gasneti_put_val(loc, op, gasneti_tm_jobrank(tm, rank), dest, value, nbytes, kind);
}
static inline gex_RMA_Value_t gex_RMA_GetBlockingVal(gex_TM_t tm, gex_Rank_t rank, void *src,
                                                     size_t nbytes, gex_Flags_t flags) {
  return gasneti_ex_get_val((const char *)0, tm, rank, src, nbytes, flags);
}
static inline int gex_RMA_PutBlockingVal(gex_TM_t tm, gex_Rank_t rank, void *dest,
                                         gex_RMA_Value_t value, size_t nbytes, gex_Flags_t flags) {
  gasneti_ex_put_val((const char *)0, GASNETI_OP_PUT_VAL, GASNETI_RMA_BLOCKING, tm, rank, dest,
                     value, nbytes, flags);
  return 0;
}
static inline int gex_RMA_PutNBIVal(gex_TM_t tm, gex_Rank_t rank, void *dest,
                                    gex_RMA_Value_t value, size_t nbytes, gex_Flags_t flags) {
  gasneti_ex_put_val((const char *)0, GASNETI_OP_PUT_NBI_VAL, GASNETI_RMA_NBI, tm, rank, dest,
                     value, nbytes, flags);
  return 0;
}
static inline gex_Event_t gex_RMA_PutNBVal(gex_TM_t tm, gex_Rank_t rank, void *dest,
                                          gex_RMA_Value_t value, size_t nbytes, gex_Flags_t flags) {
  return gasneti_ex_put_val((const char *)0, GASNETI_OP_PUT_NB_VAL, GASNETI_RMA_NB, tm, rank, dest,
                            value, nbytes, flags);
}
#define gex_RMA_GetBlockingVal(tm, rank, src, n, flags) \
  gasneti_ex_get_val(GASNETI_SRCLOC, tm, rank, src, n, flags)
#define gex_RMA_PutBlockingVal(tm, rank, dest, value, n, flags)                             \
  ((void)gasneti_ex_put_val(GASNETI_SRCLOC, GASNETI_OP_PUT_VAL, GASNETI_RMA_BLOCKING, tm, rank, \
                            dest, value, n, flags),                                          \
   0)
#define gex_RMA_PutNBIVal(tm, rank, dest, value, n, flags)                                \
  ((void)gasneti_ex_put_val(GASNETI_SRCLOC, GASNETI_OP_PUT_NBI_VAL, GASNETI_RMA_NBI, tm, rank, \
                            dest, value, n, flags),                                        \
   0)
#define gex_RMA_PutNBVal(tm, rank, dest, value, n, flags) \
  gasneti_ex_put_val(GASNETI_SRCLOC, GASNETI_OP_PUT_NB_VAL, GASNETI_RMA_NB, tm, rank, dest, \
                     value, n, flags)

/* ---- the barrier (the one collective gasnetex.h declares; the others are gasnet_coll.h's) ---- */
/* Over the primordial team; one at a time per team, and never beside a GASNet-1 barrier. */
gex_Event_t gasneti_ex_barrier_nb(const char *loc, gex_TM_t tm, gex_Flags_t flags);
#define gex_Coll_BarrierNB(tm, flags) gasneti_ex_barrier_nb(GASNETI_SRCLOC, tm, flags)

#ifdef __cplusplus
}
#endif

/* Memory kinds: host memory only (no accelerator here). */
#include <gasnet_mk.h>

#endif /* _INCLUDED_GASNETEX_H */
