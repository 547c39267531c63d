/* ex_system.c: GASNet-EX's gex_System_* queries (the job, its hosts and its neighbourhoods,
 * which are this runtime's supernodes) and memory kinds (host memory only). */
#include "ex_internal.h"
#include <gasnet_mk.h>

static void need_init(const char *what) {
  if (!gasneti_init_done) gasneti_fatalerror("%s called before gex_Client_Init (or gasnet_init)", what);
}

gex_Rank_t gex_System_QueryJobRank(void) {
  need_init("gex_System_QueryJobRank");
  return gasneti_mynode;
}

gex_Rank_t gex_System_QueryJobSize(void) {
  need_init("gex_System_QueryJobSize");
  return gasneti_nodes;
}

/* A set's members as gex_RankInfo_t (one gex_Rank_t each), made once: peers are ascending, as
 * the specification wants them. */
static gex_RankInfo_t *info_of(const gasnet_node_t *peers, int n) {
  gex_Rank_t *ranks = gasneti_malloc((size_t)n * sizeof *ranks);
  for (int i = 0; i < n; i++) ranks[i] = peers[i];
  _Static_assert(sizeof(gex_RankInfo_t) == sizeof(gex_Rank_t), "one job rank per entry");
  return (gex_RankInfo_t *)(void *)ranks;
}

void gex_System_QueryNbrhdInfo(gex_RankInfo_t **info_p, gex_Rank_t *info_count_p,
                               gex_Rank_t *my_info_index_p) {
  need_init("gex_System_QueryNbrhdInfo");
  static gex_RankInfo_t *info;
  if (info_p) {
    if (!info) info = info_of(gasneti_snode_peers, gasneti_snode_size);
    *info_p = info;
  }
  if (info_count_p) *info_count_p = (gex_Rank_t)gasneti_snode_size;
  if (my_info_index_p) *my_info_index_p = (gex_Rank_t)gasneti_snode_index;
}

void gex_System_QueryHostInfo(gex_RankInfo_t **info_p, gex_Rank_t *info_count_p,
                              gex_Rank_t *my_info_index_p) {
  need_init("gex_System_QueryHostInfo");
  static gex_RankInfo_t *info;
  if (info_p) {
    if (!info) info = info_of(gasneti_host_peers, gasneti_host_size);
    *info_p = info;
  }
  if (info_count_p) *info_count_p = (gex_Rank_t)gasneti_host_size;
  if (my_info_index_p) *my_info_index_p = (gex_Rank_t)gasneti_host_index;
}

void gex_System_QueryMyPosition(gex_Rank_t *nbrhd_set_size, gex_Rank_t *nbrhd_set_rank,
                                gex_Rank_t *host_set_size, gex_Rank_t *host_set_rank) {
  need_init("gex_System_QueryMyPosition");
  if (nbrhd_set_size) *nbrhd_set_size = gasneti_supernode_count;
  if (nbrhd_set_rank) *nbrhd_set_rank = gasneti_supernode_of[gasneti_mynode];
  if (host_set_size) *host_set_size = gasneti_host_count;
  if (host_set_rank) *host_set_rank = gasneti_host_of[gasneti_mynode];
}

/* ---- memory kinds ---------------------------------------------------------------------------- */
static const char *class_name(gex_MK_Class_t c) {
  switch (c) {
    case GEX_MK_CLASS_HOST: return "GEX_MK_CLASS_HOST";
    case GEX_MK_CLASS_CUDA_UVA: return "GEX_MK_CLASS_CUDA_UVA";
    case GEX_MK_CLASS_HIP: return "GEX_MK_CLASS_HIP";
    case GEX_MK_CLASS_ZE: return "GEX_MK_CLASS_ZE";
  }
  return "an unknown class";
}

int gex_MK_Create(gex_MK_t *memkind_p, gex_Client_t client, const gex_MK_Create_args_t *args,
                  gex_Flags_t flags) {
  gasneti_ex_check_client("gex_MK_Create", client);
  if (!memkind_p || !args) {
    gasneti_ex_error("gex_MK_Create: memkind_p and args must not be NULL");
    return GASNET_ERR_BAD_ARG;
  }
  if (flags || args->gex_flags) {
    gasneti_ex_error("gex_MK_Create: flags must be 0");
    return GASNET_ERR_BAD_ARG;
  }
  if (args->gex_class == GEX_MK_CLASS_HOST) {
    *memkind_p = GEX_MK_HOST;
    return GASNET_OK;
  }
  gasneti_ex_error("gex_MK_Create: memory kind class %s: this build supports host memory only "
                   "(GEX_MK_HOST; no accelerator support)", class_name(args->gex_class));
  return GASNET_ERR_RESOURCE;
}

void gex_MK_Destroy(gex_MK_t memkind, gex_Flags_t flags) {
  if (flags) gasneti_fatalerror("gex_MK_Destroy: flags 0x%x: must be 0", (unsigned)flags);
  if (memkind != GEX_MK_HOST)
    gasneti_fatalerror("gex_MK_Destroy: %p is not a memory kind gex_MK_Create gave", (void *)memkind);
}
