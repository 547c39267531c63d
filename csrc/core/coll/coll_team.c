/* coll_team.c: teams of the collectives (gasnet_coll_team_split and the maps between team and
 * job ranks) and team barriers; GASNet's autotuner entry points, which do nothing here. */
#include "coll.h"

void gasneti_coll_team_all_init(gasneti_coll_team_t *all) {
  all->size = (int)gasneti_nodes;
  all->myrank = (int)gasneti_mynode;
}

/* Every team this rank was given, so that a handle can be checked before it is used. */
static gasneti_coll_team_t **teams;
static size_t nteams;

void gasneti_coll_team_check(const char *what, gasnet_team_handle_t team) {
  if (team == GASNET_TEAM_ALL) return;
  for (size_t i = 0; i < nteams; i++)
    if (teams[i] == team) return;
  gasneti_fatalerror("%s: team %p is neither GASNET_TEAM_ALL nor a team gasnet_coll_team_split "
                     "gave this rank", what, (void *)team);
}

static void check_call(const char *what, gasnet_team_handle_t team) {
  if (!gasneti_coll_initialized()) gasneti_fatalerror("%s before gasnet_coll_init", what);
  if (gasneti_am_context != GASNETI_CTX_CLIENT)
    gasneti_fatalerror("%s called from an AM handler (collectives may not be)", what);
  gasneti_coll_team_check(what, team);
}

/* A team's id: the same on every member (all of them computed it from the same parent, split
 * count and color) and, with 64 mixed bits, distinct from every other team's. */
static uint64_t team_id(uint64_t parent, uint32_t split, uint32_t color) {
  uint64_t x = parent ^ ((uint64_t)split << 32 | color) ^ 0x9e3779b97f4a7c15u;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9u;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebu;
  x ^= x >> 31;
  return x ? x : 1; /* 0 is GASNET_TEAM_ALL's */
}

gasnet_team_handle_t gasnete_coll_team_split(gasnete_coll_team_t parent, gasnet_node_t color,
                                             gasnet_node_t relrank, void *clientdata) {
  (void)clientdata;
  check_call("gasnet_coll_team_split", parent);
  if (parent == GASNET_TEAM_ALL && gasneti_coll_images())
    gasneti_fatalerror("gasnet_coll_team_split of GASNET_TEAM_ALL with several images per rank: "
                       "teams are of ranks here (split with gasnet_coll_init's images NULL)");
  int n = parent->size;
  uint32_t mine[2] = {color, relrank}, *all = gasneti_malloc((size_t)n * sizeof mine);
  gasnet_coll_gather_all(parent, all, mine, sizeof mine,
                         GASNET_COLL_LOCAL | GASNET_COLL_IN_NOSYNC | GASNET_COLL_OUT_NOSYNC);
  gasneti_coll_team_t *team = gasneti_calloc(1, sizeof *team);
  for (int j = 0; j < n; j++) team->size += all[2 * j] == color;
  team->rank2node = gasneti_malloc((size_t)team->size * sizeof *team->rank2node);
  team->node2rank = gasneti_malloc(gasneti_nodes * sizeof *team->node2rank);
  for (int r = 0; r < (int)gasneti_nodes; r++) team->node2rank[r] = -1;
  uint8_t *taken = gasneti_calloc((size_t)team->size, 1);
  for (int j = 0; j < n; j++) {
    if (all[2 * j] != color) continue;
    uint32_t rel = all[2 * j + 1];
    gasnet_node_t node = gasneti_coll_team_node(parent, j);
    if (rel >= (uint32_t)team->size || taken[rel])
      gasneti_fatalerror("gasnet_coll_team_split: rank %d gave color %u and relrank %u: the "
                         "relranks of one color must be 0..%d (its member count less one), "
                         "each given once", (int)node, (unsigned)color, (unsigned)rel,
                         team->size - 1);
    taken[rel] = 1;
    team->rank2node[rel] = node;
    team->node2rank[node] = (int)rel;
  }
  free(taken);
  free(all);
  team->myrank = (int)relrank;
  team->next_op = gasneti_calloc(1, sizeof *team->next_op);
  team->id = team_id(parent->id, parent->splits++, color);
  teams = realloc(teams, (nteams + 1) * sizeof *teams);
  if (!teams) gasneti_fatalerror("out of memory for a team");
  teams[nteams++] = team;
  return team;
}

gasnet_node_t gasnete_coll_team_rank2node(gasnete_coll_team_t team, int rank) {
  gasneti_coll_team_check("gasnet_coll_team_rank2node", team);
  if (rank < 0 || rank >= team->size)
    gasneti_fatalerror("gasnet_coll_team_rank2node: rank %d is not in the team (ranks 0..%d)",
                       rank, team->size - 1);
  return gasneti_coll_team_node(team, rank);
}

gasnet_node_t gasnete_coll_team_node2rank(gasnete_coll_team_t team, gasnet_node_t node) {
  gasneti_coll_team_check("gasnet_coll_team_node2rank", team);
  int rank = node >= gasneti_nodes ? -1 : team->node2rank ? team->node2rank[node] : (int)node;
  if (rank < 0)
    gasneti_fatalerror("gasnet_coll_team_node2rank: rank %d of the job is not a member of the "
                       "team", (int)node);
  return (gasnet_node_t)rank;
}

gasnet_node_t gasnete_coll_team_size(gasnete_coll_team_t team) {
  gasneti_coll_team_check("gasnet_coll_team_size", team);
  return (gasnet_node_t)team->size;
}

/* ---- team barriers: every member's (id, flags) gathered to all, combined as the job's barrier
 * combines them. On GASNET_TEAM_ALL it is the job's barrier itself, unless the rank has several
 * images and the call says GASNET_BARRIERFLAG_IMAGES: then every image calls, and each thread
 * keeps its own barrier state. ------------------------------------------------------------- */
enum { IMAGES = GASNET_BARRIERFLAG_IMAGES };

typedef gasneti_coll_barrier_t barrier_state_t;
static GASNETI_TLS barrier_state_t image_barrier;
static GASNETI_TLS bool image_barrier_last; /* this thread's last ALL barrier was of images */

/* The state of the barrier on team, or NULL when it is the job's barrier. */
static barrier_state_t *state_of(gasnete_coll_team_t team, int flags) {
  if (team != GASNET_TEAM_ALL) return &team->barrier;
  image_barrier_last = gasneti_coll_images() && (flags & IMAGES);
  return image_barrier_last ? &image_barrier : NULL;
}

void gasnete_coll_barrier_notify(gasnete_coll_team_t team, int id, int flags) {
  barrier_state_t *b = state_of(team, flags);
  if (!b) {
    gasnet_barrier_notify(id, flags & ~IMAGES);
    return;
  }
  check_call("gasnet_coll_barrier_notify", team);
  if (b->votes)
    gasneti_fatalerror("gasnet_coll_barrier_notify called twice on a team without a wait");
  gasneti_barrier_vote_t mine = gasneti_barrier_vote(id, flags);
  b->votes = gasneti_malloc((size_t)team->size * sizeof mine);
  b->op = gasnet_coll_gather_all_nb(team, b->votes, &mine, sizeof mine,
                                    GASNET_COLL_LOCAL | GASNET_COLL_IN_NOSYNC |
                                        GASNET_COLL_OUT_NOSYNC);
}

static int finish(gasnete_coll_team_t team, barrier_state_t *b, int id, int flags) {
  gasneti_barrier_vote_t agreed = {1, 0, 0};
  for (int i = 0; i < team->size; i++) agreed = gasneti_barrier_combine(agreed, b->votes[i]);
  free(b->votes);
  b->votes = NULL;
  b->result = agreed;
  return gasneti_barrier_judge(agreed, id, flags);
}

static void check_notified(const char *what, gasnete_coll_team_t team, barrier_state_t *b) {
  check_call(what, team);
  if (!b->votes) gasneti_fatalerror("%s without a preceding notify on the team", what);
}

int gasnete_coll_barrier_wait(gasnete_coll_team_t team, int id, int flags) {
  barrier_state_t *b = state_of(team, flags);
  if (!b) return gasnet_barrier_wait(id, flags & ~IMAGES);
  check_notified("gasnet_coll_barrier_wait", team, b);
  gasnet_coll_wait_sync(b->op);
  return finish(team, b, id, flags);
}

int gasnete_coll_barrier_try(gasnete_coll_team_t team, int id, int flags) {
  barrier_state_t *b = state_of(team, flags);
  if (!b) return gasnet_barrier_try(id, flags & ~IMAGES);
  check_notified("gasnet_coll_barrier_try", team, b);
  if (gasnet_coll_try_sync(b->op) != GASNET_OK) {
    gasneti_wait_yield(); /* the caller loops on try: yield, but a try never sleeps */
    return GASNET_ERR_NOT_READY;
  }
  return finish(team, b, id, flags);
}

int gasnete_coll_barrier(gasnete_coll_team_t team, int id, int flags) {
  gasnete_coll_barrier_notify(team, id, flags);
  return gasnete_coll_barrier_wait(team, id, flags);
}

/* After a job barrier, the job barrier's result; after an image barrier, this thread's. */
int gasnete_coll_barrier_result(gasnete_coll_team_t team, int *id) {
  barrier_state_t *b = team != GASNET_TEAM_ALL ? &team->barrier
                       : image_barrier_last ? &image_barrier : NULL;
  if (!b) return gasnet_barrier_result(id);
  gasneti_coll_team_check("gasnet_coll_barrier_result", team);
  if (id) *id = b->result.anon ? 0 : b->result.id;
  return b->result.anon ? GASNET_BARRIERFLAG_ANONYMOUS : 0;
}

/* ---- GASNet's autotuner ---------------------------------------------------------------------- */
void gasnete_coll_loadTuningState(char *filename, gasnete_coll_team_t team) {
  (void)filename, (void)team;
}
void gasnete_coll_dumpTuningState(char *filename, gasnete_coll_team_t team) {
  (void)filename, (void)team;
}
void gasnete_coll_dumpProfile(char *filename, gasnete_coll_team_t team) {
  (void)filename, (void)team;
}
