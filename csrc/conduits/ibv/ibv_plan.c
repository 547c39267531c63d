/* ibv_plan.c: how many buffers an ibv rank registers, and so how much of GASNET_PHYSMEM_MAX
 * is left for its segment. One arithmetic for the conduit and for gasnetrun's per-node plan. */
#include "ibv_plan.h"

int gasneti_ibv_plan(int nranks, int remote_peers, int credits_pp, int rbuf_count, int bbuf_count,
                     int use_srq, int depth_pp, int depth_total, gasneti_ibv_plan_t *out) {
  if (remote_peers < 0) remote_peers = 0;
  if (credits_pp < 1) credits_pp = 1;
  if (depth_pp < 1) depth_pp = 1;
  /* A peer's AM queue pair receives at most its requests (its credits) and the answers to ours
   * (our credits), the first word of the connection aside. */
  int rq_depth = 2 * credits_pp + 2;
  int srq;
  if (use_srq < 0) srq = (int64_t)remote_peers * rq_depth > rbuf_count;
  else if (use_srq == 0) srq = 0;
  else srq = nranks >= use_srq;
  int64_t per_peer = (int64_t)remote_peers * depth_pp;
  int64_t total = depth_total > 0 && depth_total < per_peer ? depth_total : per_peer;
  if (total < 1) total = 1;
  if (total > 65535) total = 65535;
  int64_t bbufs = bbuf_count > 0 && bbuf_count < total ? bbuf_count : total;
  if (bbufs < 16) bbufs = 16;
  int64_t rbufs = srq ? rbuf_count : (int64_t)remote_peers * rq_depth;
  uint64_t bytes = (uint64_t)(rbufs + bbufs) * GASNETI_IBV_BUFSZ +
                   (uint64_t)GASNETI_IBV_BOUNCE_COUNT * GASNETI_IBV_BOUNCE_SZ +
                   (uint64_t)GASNETI_IBV_UD_RBUFS * (GASNETI_IBV_UD_BUFSZ + 40) +
                   (uint64_t)GASNETI_IBV_UD_SBUFS * GASNETI_IBV_UD_BUFSZ;
  *out = (gasneti_ibv_plan_t){.use_srq = srq, .rq_depth = srq ? 0 : rq_depth, .rbufs = (int)rbufs,
                              .bbufs = (int)bbufs, .depth_total = (int)total,
                              .pool_bytes = (bytes + 4095) & ~(uint64_t)4095};
  return 1;
}
