/* ibv_plan.h: what the ibv conduit and gasnetrun's ibv planning (launch/) share, free of
 * runtime state: GASNET_IBV_PORTS specs, the buffers each rank registers (so PHYSMEM budgets
 * agree), and connect files. The region between CFFI-BEGIN and CFFI-END is also the CFFI
 * binding's cdef: plain declarations. */
#ifndef GASNETC_IBV_PLAN_H
#define GASNETC_IBV_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "knob_api.h"

/* CFFI-BEGIN */
/* ---- GASNET_IBV_PORTS ---- */
typedef struct {
  char hca[64];
  int nports;      /* 0: the first active port */
  int ports[16];
} gasneti_port_entry_t;
/* Returns the number of entries (up to max), or -1 with a message naming the bad substring. */
int gasneti_parse_ports(const char *spec, gasneti_port_entry_t *out, int max, char *err,
                        size_t errlen);

/* ---- the buffers each rank registers, shared by the conduit and gasnetrun's plan ---- */
enum {
  GASNETI_IBV_BUFSZ = 4224,       /* one AM buffer: the largest header and a 4096-byte Medium */
  GASNETI_IBV_BOUNCE_SZ = 65536,  /* a bounce block for RDMA from or to unregistered memory */
  GASNETI_IBV_BOUNCE_COUNT = 32,
  GASNETI_IBV_UD_BUFSZ = 128,     /* a connection handshake datagram */
  GASNETI_IBV_UD_RBUFS = 256,
  GASNETI_IBV_UD_SBUFS = 64
};
typedef struct {
  int use_srq;          /* 1: one shared receive queue per HCA */
  int rq_depth;         /* receive buffers per peer's queue pair without SRQ: 2 x credits + 2 */
  int rbufs;            /* AM receive buffers of the rank */
  int bbufs;            /* AM send buffers (and small bounce buffers) */
  int depth_total;      /* work requests in flight from the rank */
  uint64_t pool_bytes;  /* everything the rank registers besides its segment */
} gasneti_ibv_plan_t;
/* From the job size, the ranks outside the rank's supernode and GASNET_AM_CREDITS_PP,
 * GASNET_RBUF_COUNT, GASNET_BBUF_COUNT, GASNET_USE_SRQ (-1 auto: SRQ when per-peer queues would
 * need more buffers than GASNET_RBUF_COUNT; 0 never; n: jobs of n ranks or more),
 * GASNET_NETWORKDEPTH_PP and _TOTAL (0: PP x remote peers). Returns 1. */
int gasneti_ibv_plan(int nranks, int remote_peers, int credits_pp, int rbuf_count, int bbuf_count,
                     int use_srq, int depth_pp, int depth_total, gasneti_ibv_plan_t *out);

/* ---- connect files ---- */
typedef struct {
  int size;        /* from a "size:" line, or -1 */
  int nedges;
  int capacity;
  int32_t *edges;  /* pairs (a, b) with a < b, as read; duplicates possible */
} gasneti_conngraph_t;
/* Parses connect-file text. job_size (>0) is checked against a "size:" line and bounds node
 * numbers. Errors name the file, line and column. Returns 1, or 0 with err set. */
int gasneti_connectfile_parse(const char *text, const char *filename, int job_size,
                              gasneti_conngraph_t *out, char *err, size_t errlen);
/* Writes graph g of size nodes in base (2..36); returns malloc'ed text or NULL. */
char *gasneti_connectfile_write(const gasneti_conngraph_t *g, int nodes, int base);
int gasneti_conngraph_add(gasneti_conngraph_t *g, int a, int b);
void gasneti_conngraph_free(gasneti_conngraph_t *g);
/* CFFI-END */

/* The value form of GASNET_IBV_PORTS and GASNET_IBV_PORTS_<n> in the knob table. */
extern const gasneti_knob_syntax_t gasnetc_ibv_ports_syntax;

#endif
