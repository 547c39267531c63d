/* ex_init.c: GASNet-EX's client, endpoint, primordial team and segment: gex_Client_Init,
 * gex_Segment_Attach, the objects' queries and client data, and the checks that a handle is
 * what its call takes. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "ex_internal.h"
#include "trace/trace.h"

struct gasneti_client_s gasneti_ex_client;
struct gasneti_ep_s gasneti_ex_ep;
struct gasneti_tm_s gasneti_ex_tm0;
struct gasneti_segment_s gasneti_ex_segment;
bool gasneti_ex_objects_made, gasneti_ex_made_by_gasnet1;

static int verbose_errors = 1;
int gex_System_GetVerboseErrors(void) { return verbose_errors; }
void gex_System_SetVerboseErrors(int enable) { verbose_errors = enable != 0; }

void gasneti_ex_error(const char *fmt, ...) {
  if (!verbose_errors) return;
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  gasneti_warning("%s", msg);
}

void gasneti_ex_objects_init(const char *name, gex_Flags_t flags) {
  gasneti_ex_client = (struct gasneti_client_s){.magic = GASNETI_EX_CLIENT_MAGIC, .flags = flags};
  snprintf(gasneti_ex_client.name, sizeof gasneti_ex_client.name, "%s", name);
  gasneti_ex_ep = (struct gasneti_ep_s){.magic = GASNETI_EX_EP_MAGIC};
  gasneti_ex_tm0 = (struct gasneti_tm_s){.view = {.gasneti_direct = gasneti_pshm_direct},
                                         .magic = GASNETI_EX_TM_MAGIC, .rank = gasneti_mynode,
                                         .size = gasneti_nodes};
  gasneti_ex_objects_made = true;
}

void gasneti_ex_segment_made(void) {
  gasneti_ex_segment = (struct gasneti_segment_s){.magic = GASNETI_EX_SEGMENT_MAGIC,
                                                  .addr = gasneti_seginfo[gasneti_mynode].addr,
                                                  .size = gasneti_seginfo[gasneti_mynode].size};
  gasneti_ex_ep.segment = &gasneti_ex_segment;
}

/* ---- handle checks ------------------------------------------------------------------------- */
static void before_init(const char *what) {
  gasneti_fatalerror("%s called before gex_Client_Init (or gasnet_init)", what);
}

struct gasneti_tm_s *gasneti_ex_tm(const char *what, gex_TM_t tm) {
  if (!gasneti_ex_objects_made) before_init(what);
  if (tm == GEX_TM_INVALID) gasneti_fatalerror("%s: the team is GEX_TM_INVALID", what);
  if (tm->magic != GASNETI_EX_TM_MAGIC)
    gasneti_fatalerror("%s: %p is not a team (not a gex_TM_t gex_Client_Init or a team call "
                       "gave this rank)", what, (void *)tm);
  return tm;
}

void gasneti_ex_check_ep(const char *what, gex_EP_t ep) {
  if (!gasneti_ex_objects_made) before_init(what);
  if (ep != &gasneti_ex_ep)
    gasneti_fatalerror("%s: %p is not an endpoint (a process has the one gex_Client_Init "
                       "gave it)", what, (void *)ep);
}

void gasneti_ex_check_client(const char *what, gex_Client_t client) {
  if (!gasneti_ex_objects_made) before_init(what);
  if (client != &gasneti_ex_client)
    gasneti_fatalerror("%s: %p is not a client (a process has the one gex_Client_Init gave "
                       "it)", what, (void *)client);
}

void gasneti_ex_check_segment(const char *what, gex_Segment_t seg) {
  if (!gasneti_ex_objects_made) before_init(what);
  if (seg != &gasneti_ex_segment || seg->magic != GASNETI_EX_SEGMENT_MAGIC)
    gasneti_fatalerror("%s: %p is not a segment (gex_Segment_Attach gives a process its one)",
                       what, (void *)seg);
}

gasnet_node_t gasneti_ex_jobrank(const char *what, gex_TM_t tm, gex_Rank_t rank) {
  struct gasneti_tm_s *t = gasneti_ex_tm(what, tm);
  if (rank >= t->size)
    gasneti_fatalerror("%s to rank %u of a team of %u (ranks 0..%u)", what, (unsigned)rank,
                       (unsigned)t->size, (unsigned)t->size - 1);
  return gasneti_tm_jobrank(tm, rank);
}

#ifdef GASNETI_DEBUG
void gasneti_ex_rank_check(const char *what, gex_TM_t tm, gex_Rank_t rank) {
  (void)gasneti_ex_jobrank(what, tm, rank);
}
#endif

/* ---- gex_Client_Init, gex_Segment_Attach ---------------------------------------------------- */
int gex_Client_Init(gex_Client_t *client_p, gex_EP_t *ep_p, gex_TM_t *tm_p, const char *clientName,
                    int *argc, char ***argv, gex_Flags_t flags) {
  if (gasneti_init_done) {
    gasneti_ex_error("gex_Client_Init: this process already has its client (from %s): a process "
                     "has one", gasneti_ex_made_by_gasnet1 ? "gasnet_init" : "gex_Client_Init");
    return GASNET_ERR_RESOURCE;
  }
  if (!client_p || !ep_p || !tm_p || !clientName) {
    gasneti_ex_error("gex_Client_Init: client_p, ep_p, tm_p and clientName must not be NULL");
    return GASNET_ERR_BAD_ARG;
  }
  if (flags & ~GEX_FLAG_USES_GASNET1) {
    gasneti_ex_error("gex_Client_Init: flags 0x%x: accepted 0 or GEX_FLAG_USES_GASNET1",
                     (unsigned)flags);
    return GASNET_ERR_BAD_ARG;
  }
  if ((argc == NULL) != (argv == NULL)) {
    gasneti_ex_error("gex_Client_Init: argc and argv are both given or both NULL");
    return GASNET_ERR_BAD_ARG;
  }
  gasneti_init_job(argc, argv);
  gasneti_ex_objects_init(clientName, flags);
  /* Under O only for an EX client: a GASNet-1 client's trace stays as GASNet-1 wrote it. */
  if (GASNETI_UNLIKELY(gasneti_trace_active))
    gasneti_trace_printf('O', NULL, "CLIENT_INIT name='%s' flags=0x%x rank %d of %d", clientName,
                         (unsigned)flags, (int)gasneti_mynode, (int)gasneti_nodes);
  gasneti_attach_runtime();
  gasneti_boot->barrier(); /* the specification's implicit barrier: every rank's handlers exist */
  *client_p = &gasneti_ex_client;
  *ep_p = &gasneti_ex_ep;
  *tm_p = &gasneti_ex_tm0;
  return GASNET_OK;
}

int gex_Segment_Attach(gex_Segment_t *segment_p, gex_TM_t tm, uintptr_t size) {
  gasneti_ex_tm("gex_Segment_Attach", tm);
  if (gasneti_attach_done) {
    gasneti_ex_error("gex_Segment_Attach: this process has its segment already (from %s): one "
                     "per process", gasneti_ex_made_by_gasnet1 ? "gasnet_attach" :
                                                                 "gex_Segment_Attach");
    return GASNET_ERR_RESOURCE;
  }
  if (tm != &gasneti_ex_tm0) {
    gasneti_ex_error("gex_Segment_Attach: the team must be the primordial one (gex_Client_Init's)");
    return GASNET_ERR_BAD_ARG;
  }
  if (!segment_p) {
    gasneti_ex_error("gex_Segment_Attach: segment_p must not be NULL");
    return GASNET_ERR_BAD_ARG;
  }
  if (size == 0 || size % GASNET_PAGESIZE) {
    gasneti_ex_error("gex_Segment_Attach: size %lu: expected a non-zero multiple of "
                     "GASNET_PAGESIZE (%d)", (unsigned long)size, GASNET_PAGESIZE);
    return GASNET_ERR_BAD_ARG;
  }
  if (size > gasneti_max_local_segment()) {
    gasneti_ex_error("gex_Segment_Attach: size %lu exceeds gasnet_getMaxLocalSegmentSize() = %lu "
                     "(raise GASNET_MAX_SEGSIZE or free shared memory)", (unsigned long)size,
                     (unsigned long)gasneti_max_local_segment());
    return GASNET_ERR_BAD_ARG;
  }
  gasneti_attach_network(size);
  if (GASNETI_UNLIKELY(gasneti_trace_active))
    gasneti_trace_printf('O', NULL, "SEGMENT_ATTACH %p, %lu bytes", gasneti_ex_segment.addr,
                         (unsigned long)gasneti_ex_segment.size);
  *segment_p = &gasneti_ex_segment;
  return GASNET_OK;
}

void gasnet_QueryGexObjects(gex_Client_t *client_p, gex_EP_t *endpoint_p, gex_TM_t *tm_p,
                            gex_Segment_t *segment_p) {
  if (!gasneti_ex_objects_made) before_init("gasnet_QueryGexObjects");
  if (client_p) *client_p = &gasneti_ex_client;
  if (endpoint_p) *endpoint_p = &gasneti_ex_ep;
  if (tm_p) *tm_p = &gasneti_ex_tm0;
  if (segment_p) *segment_p = gasneti_ex_ep.segment;
}

/* ---- queries and client data ---------------------------------------------------------------- */
gex_Flags_t gex_Client_QueryFlags(gex_Client_t client) {
  gasneti_ex_check_client("gex_Client_QueryFlags", client);
  return client->flags;
}
const char *gex_Client_QueryName(gex_Client_t client) {
  gasneti_ex_check_client("gex_Client_QueryName", client);
  return client->name;
}
void gex_Client_SetCData(gex_Client_t client, const void *val) {
  gasneti_ex_check_client("gex_Client_SetCData", client);
  client->cdata = (void *)(uintptr_t)val;
}
void *gex_Client_QueryCData(gex_Client_t client) {
  gasneti_ex_check_client("gex_Client_QueryCData", client);
  return client->cdata;
}

gex_Client_t gex_Segment_QueryClient(gex_Segment_t seg) {
  gasneti_ex_check_segment("gex_Segment_QueryClient", seg);
  return &gasneti_ex_client;
}
gex_Flags_t gex_Segment_QueryFlags(gex_Segment_t seg) {
  gasneti_ex_check_segment("gex_Segment_QueryFlags", seg);
  return 0;
}
void *gex_Segment_QueryAddr(gex_Segment_t seg) {
  gasneti_ex_check_segment("gex_Segment_QueryAddr", seg);
  return seg->addr;
}
uintptr_t gex_Segment_QuerySize(gex_Segment_t seg) {
  gasneti_ex_check_segment("gex_Segment_QuerySize", seg);
  return seg->size;
}
void gex_Segment_SetCData(gex_Segment_t seg, const void *val) {
  gasneti_ex_check_segment("gex_Segment_SetCData", seg);
  seg->cdata = (void *)(uintptr_t)val;
}
void *gex_Segment_QueryCData(gex_Segment_t seg) {
  gasneti_ex_check_segment("gex_Segment_QueryCData", seg);
  return seg->cdata;
}

int gex_Segment_QueryBound(gex_TM_t tm, gex_Rank_t rank, void **owneraddr_p, void **localaddr_p,
                           uintptr_t *size_p) {
  gasnet_node_t node = gasneti_ex_jobrank("gex_Segment_QueryBound", tm, rank);
  if (!gasneti_attach_done) return GASNET_ERR_RESOURCE; /* no segment yet: outputs untouched */
  void *addr = gasneti_seginfo[node].addr;
  if (owneraddr_p) *owneraddr_p = addr;
  if (localaddr_p)
    *localaddr_p = node == gasneti_mynode ? addr
                   : gasneti_pshm_reach[node] ? gasneti_pshm_addr(node, addr) : NULL;
  if (size_p) *size_p = gasneti_seginfo[node].size;
  return GASNET_OK;
}

gex_Event_t gex_EP_QueryBoundSegmentNB(gex_TM_t tm, gex_Rank_t rank, void **owneraddr_p,
                                       void **localaddr_p, uintptr_t *size_p, gex_Flags_t flags) {
  (void)flags; /* none is defined for it */
  if (gex_Segment_QueryBound(tm, rank, owneraddr_p, localaddr_p, size_p) != GASNET_OK) {
    if (owneraddr_p) *owneraddr_p = NULL;
    if (localaddr_p) *localaddr_p = NULL;
    if (size_p) *size_p = 0;
  }
  return GEX_EVENT_INVALID;
}

int gex_Segment_Create(gex_Segment_t *segment_p, gex_Client_t client, gex_Addr_t address,
                       uintptr_t length, gex_MK_t kind, gex_Flags_t flags) {
  (void)segment_p, (void)address, (void)length, (void)flags;
  gasneti_ex_check_client("gex_Segment_Create", client);
  gasneti_ex_error("gex_Segment_Create (kind %s): not supported here: a process has one segment, "
                   "the one gex_Segment_Attach makes", kind == GEX_MK_HOST ? "GEX_MK_HOST" :
                                                                             "of a device");
  return GASNET_ERR_RESOURCE;
}

gex_Client_t gex_EP_QueryClient(gex_EP_t ep) {
  gasneti_ex_check_ep("gex_EP_QueryClient", ep);
  return &gasneti_ex_client;
}
gex_Flags_t gex_EP_QueryFlags(gex_EP_t ep) {
  gasneti_ex_check_ep("gex_EP_QueryFlags", ep);
  return 0;
}
gex_Segment_t gex_EP_QuerySegment(gex_EP_t ep) {
  gasneti_ex_check_ep("gex_EP_QuerySegment", ep);
  return ep->segment;
}
gex_EP_Index_t gex_EP_QueryIndex(gex_EP_t ep) {
  gasneti_ex_check_ep("gex_EP_QueryIndex", ep);
  return 0;
}
void gex_EP_SetCData(gex_EP_t ep, const void *val) {
  gasneti_ex_check_ep("gex_EP_SetCData", ep);
  ep->cdata = (void *)(uintptr_t)val;
}
void *gex_EP_QueryCData(gex_EP_t ep) {
  gasneti_ex_check_ep("gex_EP_QueryCData", ep);
  return ep->cdata;
}
/* The primordial endpoint's segment is published by gex_Segment_Attach, and it is the only one. */
int gex_EP_PublishBoundSegment(gex_TM_t tm, gex_EP_t *eps, size_t num_eps, gex_Flags_t flags) {
  gasneti_ex_tm("gex_EP_PublishBoundSegment", tm);
  for (size_t i = 0; i < num_eps; i++) gasneti_ex_check_ep("gex_EP_PublishBoundSegment", eps[i]);
  if (flags) {
    gasneti_ex_error("gex_EP_PublishBoundSegment: flags 0x%x: must be 0", (unsigned)flags);
    return GASNET_ERR_BAD_ARG;
  }
  return GASNET_OK;
}

gex_Client_t gex_TM_QueryClient(gex_TM_t tm) {
  gasneti_ex_tm("gex_TM_QueryClient", tm);
  return &gasneti_ex_client;
}
gex_EP_t gex_TM_QueryEP(gex_TM_t tm) {
  gasneti_ex_tm("gex_TM_QueryEP", tm);
  return &gasneti_ex_ep;
}
gex_Flags_t gex_TM_QueryFlags(gex_TM_t tm) { return gasneti_ex_tm("gex_TM_QueryFlags", tm)->flags; }
gex_Rank_t gex_TM_QueryRank(gex_TM_t tm) { return gasneti_ex_tm("gex_TM_QueryRank", tm)->rank; }
gex_Rank_t gex_TM_QuerySize(gex_TM_t tm) { return gasneti_ex_tm("gex_TM_QuerySize", tm)->size; }
void gex_TM_SetCData(gex_TM_t tm, const void *val) {
  gasneti_ex_tm("gex_TM_SetCData", tm)->cdata = (void *)(uintptr_t)val;
}
void *gex_TM_QueryCData(gex_TM_t tm) { return gasneti_ex_tm("gex_TM_QueryCData", tm)->cdata; }

gex_Rank_t gex_TM_TranslateRankToJobrank(gex_TM_t tm, gex_Rank_t rank) {
  return gasneti_ex_jobrank("gex_TM_TranslateRankToJobrank", tm, rank);
}

gex_Rank_t gex_TM_TranslateJobrankToRank(gex_TM_t tm, gex_Rank_t jobrank) {
  struct gasneti_tm_s *t = gasneti_ex_tm("gex_TM_TranslateJobrankToRank", tm);
  if (jobrank >= gasneti_nodes)
    gasneti_fatalerror("gex_TM_TranslateJobrankToRank: job rank %u: the job has ranks 0..%d",
                       (unsigned)jobrank, (int)gasneti_nodes - 1);
  if (!t->view.gasneti_to_job) return jobrank;
  for (gex_Rank_t r = 0; r < t->size; r++)
    if (t->view.gasneti_to_job[r] == jobrank) return r;
  return GEX_RANK_INVALID;
}

gex_EP_Location_t gex_TM_TranslateRankToEP(gex_TM_t tm, gex_Rank_t rank, gex_Flags_t flags) {
  (void)flags;
  return (gex_EP_Location_t){gasneti_ex_jobrank("gex_TM_TranslateRankToEP", tm, rank), 0};
}
