/* knob_api.h: the knob table, its value parsers, GASNET_IBV_PORTS specs and connect files.
 * Free of runtime state, so the runtime and gasnetrun's CFFI binding share one implementation.
 * The region between CFFI-BEGIN and CFFI-END is also the binding's cdef: plain declarations. */
#ifndef GASNETI_KNOB_API_H
#define GASNETI_KNOB_API_H

#include <stddef.h>
#include <stdint.h>

/* CFFI-BEGIN */
typedef enum {
  GASNETI_KNOB_BOOL,
  GASNETI_KNOB_INT,
  GASNETI_KNOB_SIZE,          /* bytes, optional K/M/G/T suffix (powers of 1024) */
  GASNETI_KNOB_DOUBLE,        /* decimal number */
  GASNETI_KNOB_FRACTION_SIZE, /* "2/3", "0.5" (fraction of memory, < 1) or a size "16G" */
  GASNETI_KNOB_SEGSIZE,       /* a FRACTION_SIZE with optional "/H" (per host) or "/P" */
  GASNETI_KNOB_ENUM,          /* one of the words in choices (case-insensitive) */
  GASNETI_KNOB_STRING,
  GASNETI_KNOB_LIST,          /* comma-separated words */
  GASNETI_KNOB_FILENAME,      /* a path; '%' is replaced by the rank */
  GASNETI_KNOB_PORTS          /* a GASNET_IBV_PORTS spec: "mlx5_0+mlx5_1:1,2" */
} gasneti_knob_type_t;

typedef enum { GASNETI_SCOPE_JOB, GASNETI_SCOPE_RANK } gasneti_knob_scope_t;

typedef struct {
  const char *name;     /* a family like GASNET_IBV_PORTS_<n> ends in "_<n>" */
  gasneti_knob_type_t type;
  const char *dflt;     /* as a user would write it; "" means computed, see doc */
  double min, max;      /* inclusive range of numeric values */
  const char *choices;  /* ENUM: words separated by '|' */
  const char *unit;
  gasneti_knob_scope_t scope;
  const char *conduits; /* comma-separated, or "all" */
  const char *doc;
  /* For gasnet-tune: whether sweeping the knob can pay off, the values worth trying
   * (comma-separated, in the knob's own syntax), and a constraint relating it to another knob
   * ("<=GASNET_X": never more than GASNET_X's value), or NULL. */
  int tunable;
  const char *sweep;
  const char *constraint;
} gasneti_knob_t;

size_t gasneti_knob_count(void);
const gasneti_knob_t *gasneti_knob_at(size_t index);
/* Exact names, and members of families ("GASNET_IBV_PORTS_3" finds GASNET_IBV_PORTS_<n>). */
const gasneti_knob_t *gasneti_knob_find(const char *name);
const char *gasneti_knob_type_name(gasneti_knob_type_t type);
const char *gasneti_knob_accepted_form(const gasneti_knob_t *knob);

/* Whether a value means "unset": empty or only white space (the runtime and gasnetrun agree). */
int gasneti_knob_blank(const char *text);

/* Parses text as the knob's value (name: the variable as the user spelled it, for messages;
 * NULL means the knob's own name). On success writes a canonical form to canon (the same from
 * every caller: tests compare C and Python through it) and returns 1; on failure writes a
 * message naming the knob, the value, what is wrong and the accepted form, and returns 0. */
int gasneti_knob_check(const gasneti_knob_t *knob, const char *name, const char *text,
                       char *canon, size_t canonlen, char *err, size_t errlen);

/* A parsed FRACTION_SIZE or SEGSIZE value. */
typedef struct {
  int is_fraction;  /* value is a fraction of physical memory, else bytes */
  double value;
  int per_host;     /* SEGSIZE "/H": shared by the host's ranks */
} gasneti_memsize_t;
int gasneti_parse_memsize(const char *text, int allow_scope, gasneti_memsize_t *out, char *err,
                          size_t errlen);

/* Bytes of segment one rank may have: GASNET_MAX_SEGSIZE and GASNET_PHYSMEM_MAX (either may
 * be NULL or blank for its default) applied to the host's memory, its free shared memory, the
 * number of ranks on it and the bytes its AM queues take (gasneti_pshm_host_bytes), less what
 * each rank pins besides its segment (pinned_bytes: ibv's buffers; 0 elsewhere);
 * page-aligned. 0 with a message in err when a value does not parse or nothing is left. */
uint64_t gasneti_segment_budget(const char *max_segsize, const char *physmem_max,
                                uint64_t host_memory, uint64_t shm_free, int ranks_on_host,
                                uint64_t queue_bytes, uint64_t pinned_bytes, char *err,
                                size_t errlen);

/* GASNET_EXITTIMEOUT, or min(_MAX, _MIN + _FACTOR * ranks); NULL means unset. -1 on error. */
double gasneti_exit_timeout_of(const char *timeout, const char *max, const char *min,
                               const char *factor, int ranks, char *err, size_t errlen);

/* How long ranks get to leave on their own after the first one left, before the launcher (or
 * the fork supervisor) sends SIGQUIT: ranks that end together need a moment to get there. */
double gasneti_exit_grace(double timeout);

/* '%' replaced by the rank (FILENAME knobs). */
int gasneti_expand_filename(const char *pattern, int rank, char *out, size_t outlen);

/* ---- GASNET_IBV_PORTS ---- */
typedef struct {
  char hca[64];
  int nports;      /* 0: the first active port */
  int ports[16];
} gasneti_port_entry_t;
/* Returns the number of entries (up to max), or -1 with a message naming the bad substring. */
int gasneti_parse_ports(const char *spec, gasneti_port_entry_t *out, int max, char *err,
                        size_t errlen);

/* ---- ibv: the buffers each rank registers, shared by the conduit and gasnetrun's plan ---- */
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
void gasneti_free(void *p);
/* CFFI-END */

#endif
