/* coll.h: the collectives' engine (coll.c) under the public calls (coll_api.c). */
#ifndef GASNETI_COLL_H
#define GASNETI_COLL_H

#include "am/am.h"
#include "gasnet_internal.h"

#include <gasnet_coll.h>

/* A team barrier under way or done (coll_team.c). */
typedef struct {
  gasnet_coll_handle_t op;
  gasneti_barrier_vote_t *votes; /* non-NULL between notify and a successful wait/try */
  gasneti_barrier_vote_t result;
} gasneti_coll_barrier_t;

/* A team: GASNET_TEAM_ALL, or one gasnet_coll_team_split made (coll_team.c). Its members are
 * numbered 0..size-1; collectives on it number images by them. */
struct gasneti_coll_team {
  uint64_t id;               /* the same on every member; 0 for GASNET_TEAM_ALL */
  int size, myrank;          /* members, and this rank's number among them (-1: by thread) */
  gasnet_node_t *rank2node;  /* member -> job rank (NULL: the identity, GASNET_TEAM_ALL) */
  int *node2rank;            /* job rank -> member, or -1 (NULL: the identity); with several
                              * images per rank, its first image */
  uint32_t *next_op;         /* per member of this rank: operations it started on the team */
  uint32_t splits;           /* gasnet_coll_team_split calls on it so far */
  gasneti_coll_barrier_t barrier;
};
typedef struct gasneti_coll_team gasneti_coll_team_t;

static inline gasnet_node_t gasneti_coll_team_node(const gasneti_coll_team_t *team, int member) {
  return team->rank2node ? team->rank2node[member] : (gasnet_node_t)member;
}
/* The calling thread's member number: its image when gasnet_coll_init gave this rank several
 * (GASNET_TEAM_ALL's members are then images, node-major), else the rank's. */
int gasneti_coll_team_me(const gasneti_coll_team_t *team);
/* Whether GASNET_TEAM_ALL's members are images of several threads per rank. */
bool gasneti_coll_images(void);
/* Fatal unless team is GASNET_TEAM_ALL or a team the caller belongs to. */
void gasneti_coll_team_check(const char *what, gasnet_team_handle_t team);
void gasneti_coll_team_all_init(gasneti_coll_team_t *all);
bool gasneti_coll_initialized(void);

enum { GASNETI_COLL_BROADCAST, GASNETI_COLL_SCATTER, GASNETI_COLL_GATHER,
       GASNETI_COLL_GATHER_ALL, GASNETI_COLL_EXCHANGE, GASNETI_COLL_REDUCE };

/* One collective: its arguments resolved to this rank's addresses, and its progress. */
struct gasneti_coll_op {
  gasneti_coll_team_t *team;
  int me; /* the member that started it (set by gasneti_coll_start) */
  int kind, flags;
  int root; /* broadcast/scatter: the source image; gather/reduce: the destination image */
  uint8_t *dst;
  const uint8_t *src;
  size_t nbytes; /* one block (reduce: elem_size * elem_count) */
  size_t elem_size, elem_count;
  gasnet_coll_fn_handle_t fn;
  int fn_arg;
  /* progress (coll.c) */
  uint32_t index;
  int stage, dstate, bstate, phase;
  uint8_t *acc;
  struct gasneti_coll_op *next;
};
typedef struct gasneti_coll_op gasneti_coll_op_t;

void gasneti_coll_am_init(void);
/* Fatal errors for a call the rules forbid, naming the call and what is wrong. */
void gasneti_coll_check(const char *what, gasnet_team_handle_t team, int flags, int root);
void gasneti_coll_reduce_check(const char *what, size_t blksz, size_t offset,
                               gasnet_coll_fn_handle_t func);
/* Starts the operation described by args (copied) and advances it as far as it can go. */
gasnet_coll_handle_t gasneti_coll_start(const gasneti_coll_op_t *args);

#endif
