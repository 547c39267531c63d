/* gasnet_coll.h: GASNet-1 collectives: broadcast, scatter, gather, gather_all, exchange and
 * reduce, each blocking or non-blocking (synchronized with gasnet_coll_wait_sync / _try_sync),
 * single- or multiple-address (the M forms), over the team of all ranks (GASNET_TEAM_ALL) or a
 * team gasnet_coll_team_split made, and team barriers. gasnet.h includes it (as GASNet 1.x's
 * does); clients call gasnet_coll_init once, after gasnet_attach.
 *
 * Every rank calls the same collectives in the same order with the same flags and sizes.
 * flags: exactly one GASNET_COLL_IN_* and one GASNET_COLL_OUT_* synchronization flag and
 * exactly one of GASNET_COLL_SINGLE (every rank passes the same addresses; M lists have one
 * entry per image) or GASNET_COLL_LOCAL (each rank passes only its own; M lists have one
 * entry). One image per rank (gasnet_coll_init's images is NULL). On a split team, images
 * are the team's ranks (0..gasnet_coll_team_size - 1). */
#ifndef GASNET_COLL_H
#define GASNET_COLL_H

#include <gasnetex.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef uint32_t gasnet_image_t;
typedef struct gasneti_coll_team *gasnet_team_handle_t;
typedef gasnet_team_handle_t gasnete_coll_team_t;
extern gasnet_team_handle_t gasneti_coll_team_all;
#define GASNET_TEAM_ALL gasneti_coll_team_all

/* GASNet's thread-information arguments of its gasnete_* entry points: empty here, since
 * per-thread state is thread-local (a client calling gasnete_* directly writes them as it
 * would for GASNet). */
#define GASNETE_THREAD_FARG
#define GASNETE_THREAD_FARG_ALONE void
#define GASNETE_THREAD_GET
#define GASNETE_THREAD_GET_ALONE
#define GASNETE_THREAD_PASS
#define GASNETE_THREAD_PASS_ALONE
typedef struct gasneti_coll_op *gasnet_coll_handle_t;
#define GASNET_COLL_INVALID_HANDLE ((gasnet_coll_handle_t)0)

#define GASNET_COLL_IN_NOSYNC (1 << 0)
#define GASNET_COLL_IN_MYSYNC (1 << 1)
#define GASNET_COLL_IN_ALLSYNC (1 << 2)
#define GASNET_COLL_OUT_NOSYNC (1 << 3)
#define GASNET_COLL_OUT_MYSYNC (1 << 4)
#define GASNET_COLL_OUT_ALLSYNC (1 << 5)
#define GASNET_COLL_SYNC_FLAG_MASK 0x3F
#define GASNET_COLL_SINGLE (1 << 6)
#define GASNET_COLL_LOCAL (1 << 7)
#define GASNET_COLL_AGGREGATE (1 << 8)
#define GASNET_COLL_FIXED_THREADS_PER_NODE (1 << 9)
#define GASNET_COLL_DST_IN_SEGMENT (1 << 10)
#define GASNET_COLL_SRC_IN_SEGMENT (1 << 11)
/* Hints of GASNet's autotuner and its scan operations: accepted, and change nothing here. */
#define GASNET_COLL_REDUCE_OP_SUM (1 << 12)
#define GASNET_COLL_REDUCE_OP_MAX (1 << 13)
#define GASNET_COLL_REDUCE_OP_MIN (1 << 14)
#define GASNET_COLL_REDUCE_OP_CUSTOM (1 << 15)
#define GASNET_COLL_INCLUSIVE_SCAN (1 << 16)
#define GASNET_COLL_EXCLUSIVE_SCAN (1 << 17)
#define GASNET_COLL_DISABLE_AUTOTUNE (1 << 18)
#define GASNET_COLL_NO_IMAGES (1 << 19)

/* Reduction functions: registered in gasnet_coll_init's table, named by their index. One call
 * combines element-wise, as GASNet's reference implementation calls them: results[i] =
 * left_operands[i] (op) right_operands[i] for i below result_count, with left_count ==
 * result_count == the reduce's elem_count; flags are the function's table flags and arg the
 * call's func_arg. A GASNET_COLL_NONCOMM function is always given the operands of lower ranks
 * on the left. */
typedef gasnet_handlerarg_t gasnet_coll_fn_handle_t;
typedef void (*gasnet_coll_reduce_fn_t)(void *results, size_t result_count,
                                        const void *left_operands, size_t left_count,
                                        const void *right_operands, size_t elem_size, int flags,
                                        int arg);
typedef struct {
  gasnet_coll_reduce_fn_t fnptr;
  unsigned int flags;
} gasnet_coll_fn_entry_t;
#define GASNET_COLL_AMSAFE (1 << 0)
#define GASNET_COLL_NONCOMM (1 << 1)

void gasnet_coll_init(const gasnet_image_t images[], gasnet_image_t my_image,
                      gasnet_coll_fn_entry_t fn_tbl[], size_t fn_count, int init_flags);
#define gasnete_coll_init(images, my_image, fn_tbl, fn_count, init_flags) \
  gasnet_coll_init(images, my_image, fn_tbl, fn_count, init_flags)

/* ---- teams ------------------------------------------------------------------------------ */
/* Collective over parent: the ranks that give the same color form a team, in which the caller
 * is rank relrank (relranks of one color must be 0..size-1, each once). clientdata is
 * GASNet's scratch space for the team (a gasnet_seginfo_t *); this implementation needs none
 * and ignores it. Every member gets the same team; a caller gets the team of its color. */
gasnet_team_handle_t gasnete_coll_team_split(gasnete_coll_team_t parent, gasnet_node_t color,
                                             gasnet_node_t relrank, void *clientdata);
/* The job rank of team rank rank, and the team rank of job rank node (a fatal error if node
 * is not a member); the number of members. */
gasnet_node_t gasnete_coll_team_rank2node(gasnete_coll_team_t team, int rank);
gasnet_node_t gasnete_coll_team_node2rank(gasnete_coll_team_t team, gasnet_node_t node);
gasnet_node_t gasnete_coll_team_size(gasnete_coll_team_t team);
#define gasnet_coll_team_split(parent, color, relrank, clientdata) \
  gasnete_coll_team_split(parent, color, relrank, clientdata GASNETE_THREAD_GET)
#define gasnet_coll_team_rank2node(team, rank) gasnete_coll_team_rank2node(team, rank)
#define gasnet_coll_team_node2rank(team, node) gasnete_coll_team_node2rank(team, node)
#define gasnet_coll_team_size(team) gasnete_coll_team_size(team)

/* Team barriers: gasnet_barrier_notify/wait/try/result over the team's members (on
 * GASNET_TEAM_ALL, the job's barrier itself), the same rules for names and flags.
 * GASNET_BARRIERFLAG_IMAGES is accepted (one image per rank: the caller speaks for it). */
void gasnete_coll_barrier_notify(gasnete_coll_team_t team, int id, int flags);
int gasnete_coll_barrier_wait(gasnete_coll_team_t team, int id, int flags);
int gasnete_coll_barrier_try(gasnete_coll_team_t team, int id, int flags);
int gasnete_coll_barrier(gasnete_coll_team_t team, int id, int flags);
int gasnete_coll_barrier_result(gasnete_coll_team_t team, int *id);
#define gasnet_coll_barrier_notify(team, id, flags) \
  gasnete_coll_barrier_notify(team, id, flags GASNETE_THREAD_GET)
#define gasnet_coll_barrier_wait(team, id, flags) \
  gasnete_coll_barrier_wait(team, id, flags GASNETE_THREAD_GET)
#define gasnet_coll_barrier_try(team, id, flags) \
  gasnete_coll_barrier_try(team, id, flags GASNETE_THREAD_GET)
#define gasnet_coll_barrier(team, id, flags) gasnete_coll_barrier(team, id, flags GASNETE_THREAD_GET)
#define gasnet_coll_barrier_result(team, id) gasnete_coll_barrier_result(team, id GASNETE_THREAD_GET)

/* GASNet's autotuner state and profile: it writes them only when built to search or profile
 * (GASNET_COLL_ENABLE_SEARCH / _PROFILE); there is no autotuner here, so they do nothing. */
void gasnete_coll_loadTuningState(char *filename, gasnete_coll_team_t team);
void gasnete_coll_dumpTuningState(char *filename, gasnete_coll_team_t team);
void gasnete_coll_dumpProfile(char *filename, gasnete_coll_team_t team);
#define gasnet_coll_loadTuningState(filename, team) gasnete_coll_loadTuningState(filename, team)
#define gasnet_coll_dumpTuningState(filename, team) gasnete_coll_dumpTuningState(filename, team)
#define gasnet_coll_dumpProfile(filename, team) gasnete_coll_dumpProfile(filename, team)

/* ---- synchronization ------------------------------------------------------------------- */
void gasnet_coll_wait_sync(gasnet_coll_handle_t handle);
int gasnet_coll_try_sync(gasnet_coll_handle_t handle);
void gasnet_coll_wait_sync_all(gasnet_coll_handle_t *handles, size_t numhandles);
void gasnet_coll_wait_sync_some(gasnet_coll_handle_t *handles, size_t numhandles);
int gasnet_coll_try_sync_all(gasnet_coll_handle_t *handles, size_t numhandles);
int gasnet_coll_try_sync_some(gasnet_coll_handle_t *handles, size_t numhandles);

/* ---- data movement (nbytes: one block; src/dst of n blocks where the operation has n) ---- */
gasnet_coll_handle_t gasnet_coll_broadcast_nb(gasnet_team_handle_t team, void *dst,
                                              gasnet_image_t srcimage, void *src, size_t nbytes,
                                              int flags);
gasnet_coll_handle_t gasnet_coll_broadcastM_nb(gasnet_team_handle_t team, void *const dstlist[],
                                               gasnet_image_t srcimage, void *src, size_t nbytes,
                                               int flags);
gasnet_coll_handle_t gasnet_coll_scatter_nb(gasnet_team_handle_t team, void *dst,
                                            gasnet_image_t srcimage, void *src, size_t nbytes,
                                            int flags);
gasnet_coll_handle_t gasnet_coll_scatterM_nb(gasnet_team_handle_t team, void *const dstlist[],
                                             gasnet_image_t srcimage, void *src, size_t nbytes,
                                             int flags);
gasnet_coll_handle_t gasnet_coll_gather_nb(gasnet_team_handle_t team, gasnet_image_t dstimage,
                                           void *dst, void *src, size_t nbytes, int flags);
gasnet_coll_handle_t gasnet_coll_gatherM_nb(gasnet_team_handle_t team, gasnet_image_t dstimage,
                                            void *dst, void *const srclist[], size_t nbytes,
                                            int flags);
gasnet_coll_handle_t gasnet_coll_gather_all_nb(gasnet_team_handle_t team, void *dst, void *src,
                                               size_t nbytes, int flags);
gasnet_coll_handle_t gasnet_coll_gather_allM_nb(gasnet_team_handle_t team, void *const dstlist[],
                                                void *const srclist[], size_t nbytes, int flags);
gasnet_coll_handle_t gasnet_coll_exchange_nb(gasnet_team_handle_t team, void *dst, void *src,
                                             size_t nbytes, int flags);
gasnet_coll_handle_t gasnet_coll_exchangeM_nb(gasnet_team_handle_t team, void *const dstlist[],
                                              void *const srclist[], size_t nbytes, int flags);
/* Reduce: every rank contributes elem_count elements of elem_size bytes (src_blksz and
 * src_offset must be 0: the layout GASNet-1's implementation supports); dstimage receives
 * their element-wise reduction with table function func (func_arg is passed through). */
gasnet_coll_handle_t gasnet_coll_reduce_nb(gasnet_team_handle_t team, gasnet_image_t dstimage,
                                           void *dst, void *src, size_t src_blksz,
                                           size_t src_offset, size_t elem_size,
                                           size_t elem_count, gasnet_coll_fn_handle_t func,
                                           int func_arg, int flags);
gasnet_coll_handle_t gasnet_coll_reduceM_nb(gasnet_team_handle_t team, gasnet_image_t dstimage,
                                            void *dst, void *const srclist[], size_t src_blksz,
                                            size_t src_offset, size_t elem_size,
                                            size_t elem_count, gasnet_coll_fn_handle_t func,
                                            int func_arg, int flags);

/* The blocking forms: start, then wait. */
#define gasnet_coll_broadcast(team, dst, srcimage, src, nbytes, flags) \
  gasnet_coll_wait_sync(gasnet_coll_broadcast_nb(team, dst, srcimage, src, nbytes, flags))
#define gasnet_coll_broadcastM(team, dstlist, srcimage, src, nbytes, flags) \
  gasnet_coll_wait_sync(gasnet_coll_broadcastM_nb(team, dstlist, srcimage, src, nbytes, flags))
#define gasnet_coll_scatter(team, dst, srcimage, src, nbytes, flags) \
  gasnet_coll_wait_sync(gasnet_coll_scatter_nb(team, dst, srcimage, src, nbytes, flags))
#define gasnet_coll_scatterM(team, dstlist, srcimage, src, nbytes, flags) \
  gasnet_coll_wait_sync(gasnet_coll_scatterM_nb(team, dstlist, srcimage, src, nbytes, flags))
#define gasnet_coll_gather(team, dstimage, dst, src, nbytes, flags) \
  gasnet_coll_wait_sync(gasnet_coll_gather_nb(team, dstimage, dst, src, nbytes, flags))
#define gasnet_coll_gatherM(team, dstimage, dst, srclist, nbytes, flags) \
  gasnet_coll_wait_sync(gasnet_coll_gatherM_nb(team, dstimage, dst, srclist, nbytes, flags))
#define gasnet_coll_gather_all(team, dst, src, nbytes, flags) \
  gasnet_coll_wait_sync(gasnet_coll_gather_all_nb(team, dst, src, nbytes, flags))
#define gasnet_coll_gather_allM(team, dstlist, srclist, nbytes, flags) \
  gasnet_coll_wait_sync(gasnet_coll_gather_allM_nb(team, dstlist, srclist, nbytes, flags))
#define gasnet_coll_exchange(team, dst, src, nbytes, flags) \
  gasnet_coll_wait_sync(gasnet_coll_exchange_nb(team, dst, src, nbytes, flags))
#define gasnet_coll_exchangeM(team, dstlist, srclist, nbytes, flags) \
  gasnet_coll_wait_sync(gasnet_coll_exchangeM_nb(team, dstlist, srclist, nbytes, flags))
#define gasnet_coll_reduce(team, dstimage, dst, src, blksz, offset, esize, ecount, func, arg, \
                           flags)                                                            \
  gasnet_coll_wait_sync(gasnet_coll_reduce_nb(team, dstimage, dst, src, blksz, offset, esize, \
                                              ecount, func, arg, flags))
#define gasnet_coll_reduceM(team, dstimage, dst, srclist, blksz, offset, esize, ecount, func, \
                            arg, flags)                                                      \
  gasnet_coll_wait_sync(gasnet_coll_reduceM_nb(team, dstimage, dst, srclist, blksz, offset,  \
                                               esize, ecount, func, arg, flags))

#ifdef __cplusplus
}
#endif

#endif
