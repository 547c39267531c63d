/* rma.h: what the extended API's pieces share: operations (explicit handles, access regions,
 * value gets), per-thread implicit-operation counters, and the internal AM handler indices. */
#ifndef GASNETI_RMA_H
#define GASNETI_RMA_H

#include "../gasnet_internal.h"

/* An explicit handle, an access region or a value get: a count of AMs still to complete. */
struct gasneti_op {
  _Atomic int64_t pending;
  gasnet_register_value_t value; /* value gets land here */
  struct gasneti_op *next;       /* free list */
};
typedef struct gasneti_op gasneti_op_t;
struct gasneti_valget {
  gasneti_op_t op;
};

/* Per client thread: a pool of operations (refilled in blocks, so issuing allocates nothing
 * in the steady state), implicit-operation counters, and the open access region. */
typedef struct {
  gasneti_op_t *free_ops;
  _Atomic int64_t puts_out, gets_out;
  gasneti_op_t *region;
} gasneti_rma_thread_t;

extern GASNETI_TLS gasneti_rma_thread_t gasneti_rma_td;

gasneti_op_t *gasneti_op_get(void);
void gasneti_op_put(gasneti_op_t *op);
/* Waits (serving AMs) until the counter reaches zero. */
void gasneti_wait_counter(_Atomic int64_t *counter);

enum {
  GASNETI_HANDLER_PUT = 2,        /* Long request: payload in place; replies DONE */
  GASNETI_HANDLER_DONE = 3,       /* Short reply: one AM of an operation completed */
  GASNETI_HANDLER_GET = 4,        /* Short request: answer with the data */
  GASNETI_HANDLER_GET_MEDIUM = 5, /* Medium reply: copy to the destination, then DONE */
  GASNETI_HANDLER_GET_LONG = 6,   /* Long reply: data already in place */
  GASNETI_HANDLER_MEMSET = 7,     /* Short request: memset; replies DONE */
};
void gasneti_rma_am_init(void);
/* A get over AMs whose chunks complete on this counter (value gets count on their op). */
void gasneti_get_am_counted(void *dest, gasnet_node_t node, const void *src, size_t n,
                            _Atomic int64_t *counter);

#endif
