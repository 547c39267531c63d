/* coll_api.c: the public collective calls: each checks its arguments, resolves the addresses of
 * this rank (M forms: its entry of the list, by address mode) and starts the operation. */
#include "coll.h"

/* The calling image's entry of an M-form list: one entry per image of the team (SINGLE) or
 * one per image of this rank (LOCAL). */
static void *mine(gasnet_team_handle_t team, void *const list[], int flags) {
  int me = gasneti_coll_team_me(team);
  if (flags & GASNET_COLL_SINGLE) return list[me];
  gasnet_node_t node = gasneti_coll_team_node(team, me);
  return list[team->node2rank ? me - team->node2rank[node] : 0];
}

#define START(what, ...)                             \
  do {                                               \
    gasneti_coll_op_t a_ = {__VA_ARGS__};            \
    return gasneti_coll_start(&a_);                  \
  } while (0)

gasnet_coll_handle_t gasnet_coll_broadcast_nb(gasnet_team_handle_t team, void *dst,
                                              gasnet_image_t srcimage, void *src, size_t nbytes,
                                              int flags) {
  gasneti_coll_check("gasnet_coll_broadcast", team, flags, (int)srcimage);
  START(what, .team = team, .kind = GASNETI_COLL_BROADCAST, .flags = flags, .root = (int)srcimage, .dst = dst,
        .src = src, .nbytes = nbytes);
}

gasnet_coll_handle_t gasnet_coll_broadcastM_nb(gasnet_team_handle_t team, void *const dstlist[],
                                               gasnet_image_t srcimage, void *src, size_t nbytes,
                                               int flags) {
  gasneti_coll_check("gasnet_coll_broadcastM", team, flags, (int)srcimage);
  START(what, .team = team, .kind = GASNETI_COLL_BROADCAST, .flags = flags, .root = (int)srcimage,
        .dst = mine(team, dstlist, flags), .src = src, .nbytes = nbytes);
}

gasnet_coll_handle_t gasnet_coll_scatter_nb(gasnet_team_handle_t team, void *dst,
                                            gasnet_image_t srcimage, void *src, size_t nbytes,
                                            int flags) {
  gasneti_coll_check("gasnet_coll_scatter", team, flags, (int)srcimage);
  START(what, .team = team, .kind = GASNETI_COLL_SCATTER, .flags = flags, .root = (int)srcimage, .dst = dst,
        .src = src, .nbytes = nbytes);
}

gasnet_coll_handle_t gasnet_coll_scatterM_nb(gasnet_team_handle_t team, void *const dstlist[],
                                             gasnet_image_t srcimage, void *src, size_t nbytes,
                                             int flags) {
  gasneti_coll_check("gasnet_coll_scatterM", team, flags, (int)srcimage);
  START(what, .team = team, .kind = GASNETI_COLL_SCATTER, .flags = flags, .root = (int)srcimage,
        .dst = mine(team, dstlist, flags), .src = src, .nbytes = nbytes);
}

gasnet_coll_handle_t gasnet_coll_gather_nb(gasnet_team_handle_t team, gasnet_image_t dstimage,
                                           void *dst, void *src, size_t nbytes, int flags) {
  gasneti_coll_check("gasnet_coll_gather", team, flags, (int)dstimage);
  START(what, .team = team, .kind = GASNETI_COLL_GATHER, .flags = flags, .root = (int)dstimage, .dst = dst,
        .src = src, .nbytes = nbytes);
}

gasnet_coll_handle_t gasnet_coll_gatherM_nb(gasnet_team_handle_t team, gasnet_image_t dstimage,
                                            void *dst, void *const srclist[], size_t nbytes,
                                            int flags) {
  gasneti_coll_check("gasnet_coll_gatherM", team, flags, (int)dstimage);
  START(what, .team = team, .kind = GASNETI_COLL_GATHER, .flags = flags, .root = (int)dstimage, .dst = dst,
        .src = mine(team, srclist, flags), .nbytes = nbytes);
}

gasnet_coll_handle_t gasnet_coll_gather_all_nb(gasnet_team_handle_t team, void *dst, void *src,
                                               size_t nbytes, int flags) {
  gasneti_coll_check("gasnet_coll_gather_all", team, flags, 0);
  START(what, .team = team, .kind = GASNETI_COLL_GATHER_ALL, .flags = flags, .dst = dst, .src = src,
        .nbytes = nbytes);
}

gasnet_coll_handle_t gasnet_coll_gather_allM_nb(gasnet_team_handle_t team, void *const dstlist[],
                                                void *const srclist[], size_t nbytes, int flags) {
  gasneti_coll_check("gasnet_coll_gather_allM", team, flags, 0);
  START(what, .team = team, .kind = GASNETI_COLL_GATHER_ALL, .flags = flags, .dst = mine(team, dstlist, flags),
        .src = mine(team, srclist, flags), .nbytes = nbytes);
}

gasnet_coll_handle_t gasnet_coll_exchange_nb(gasnet_team_handle_t team, void *dst, void *src,
                                             size_t nbytes, int flags) {
  gasneti_coll_check("gasnet_coll_exchange", team, flags, 0);
  START(what, .team = team, .kind = GASNETI_COLL_EXCHANGE, .flags = flags, .dst = dst, .src = src,
        .nbytes = nbytes);
}

gasnet_coll_handle_t gasnet_coll_exchangeM_nb(gasnet_team_handle_t team, void *const dstlist[],
                                              void *const srclist[], size_t nbytes, int flags) {
  gasneti_coll_check("gasnet_coll_exchangeM", team, flags, 0);
  START(what, .team = team, .kind = GASNETI_COLL_EXCHANGE, .flags = flags, .dst = mine(team, dstlist, flags),
        .src = mine(team, srclist, flags), .nbytes = nbytes);
}

gasnet_coll_handle_t gasnet_coll_reduce_nb(gasnet_team_handle_t team, gasnet_image_t dstimage,
                                           void *dst, void *src, size_t src_blksz,
                                           size_t src_offset, size_t elem_size,
                                           size_t elem_count, gasnet_coll_fn_handle_t func,
                                           int func_arg, int flags) {
  gasneti_coll_check("gasnet_coll_reduce", team, flags, (int)dstimage);
  gasneti_coll_reduce_check("gasnet_coll_reduce", src_blksz, src_offset, func);
  START(what, .team = team, .kind = GASNETI_COLL_REDUCE, .flags = flags, .root = (int)dstimage, .dst = dst,
        .src = src, .nbytes = elem_size * elem_count, .elem_size = elem_size,
        .elem_count = elem_count, .fn = func, .fn_arg = func_arg);
}

gasnet_coll_handle_t gasnet_coll_reduceM_nb(gasnet_team_handle_t team, gasnet_image_t dstimage,
                                            void *dst, void *const srclist[], size_t src_blksz,
                                            size_t src_offset, size_t elem_size,
                                            size_t elem_count, gasnet_coll_fn_handle_t func,
                                            int func_arg, int flags) {
  gasneti_coll_check("gasnet_coll_reduceM", team, flags, (int)dstimage);
  gasneti_coll_reduce_check("gasnet_coll_reduceM", src_blksz, src_offset, func);
  START(what, .team = team, .kind = GASNETI_COLL_REDUCE, .flags = flags, .root = (int)dstimage, .dst = dst,
        .src = mine(team, srclist, flags), .nbytes = elem_size * elem_count, .elem_size = elem_size,
        .elem_count = elem_count, .fn = func, .fn_arg = func_arg);
}
