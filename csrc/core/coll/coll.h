/* coll.h: the collectives' engine (coll.c) under the public calls (coll_api.c). */
#ifndef GASNETI_COLL_H
#define GASNETI_COLL_H

#include "am/am.h"
#include "gasnet_internal.h"

#include <gasnet_coll.h>

enum { GASNETI_COLL_BROADCAST, GASNETI_COLL_SCATTER, GASNETI_COLL_GATHER,
       GASNETI_COLL_GATHER_ALL, GASNETI_COLL_EXCHANGE, GASNETI_COLL_REDUCE };

/* One collective: its arguments resolved to this rank's addresses, and its progress. */
struct gasneti_coll_op {
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
