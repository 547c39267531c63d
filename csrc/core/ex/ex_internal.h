/* ex_internal.h: the GASNet-EX objects behind gasnetex.h's handles. A process has one client,
 * its one (primordial) endpoint, the primordial team and at most one segment, all made by
 * gex_Client_Init and gex_Segment_Attach, or by gasnet_init and gasnet_attach for a GASNet-1
 * program (gasnet_QueryGexObjects reaches them). */
#ifndef GASNETI_EX_INTERNAL_H
#define GASNETI_EX_INTERNAL_H

#include "gasnet_internal.h"

/* What a handle must point at (a client that passes garbage is told so). */
enum {
  GASNETI_EX_CLIENT_MAGIC = 0x43545845, /* "EXTC" */
  GASNETI_EX_EP_MAGIC = 0x50455845,
  GASNETI_EX_TM_MAGIC = 0x4d545845,
  GASNETI_EX_SEGMENT_MAGIC = 0x47535845,
};

struct gasneti_client_s {
  uint32_t magic;
  gex_Flags_t flags;
  char name[64];
  void *cdata;
};

struct gasneti_segment_s {
  uint32_t magic;
  void *addr;
  uintptr_t size;
  void *cdata;
};

struct gasneti_ep_s {
  uint32_t magic;
  gex_Segment_t segment; /* GEX_SEGMENT_INVALID until one is attached */
  void *cdata;
};

struct gasneti_tm_s {
  gasneti_tm_view_t view; /* first: gasnetex.h's inline paths read it */
  uint32_t magic;
  gex_Rank_t rank, size;
  gex_Flags_t flags;
  void *cdata;
};

extern struct gasneti_client_s gasneti_ex_client;
extern struct gasneti_ep_s gasneti_ex_ep;
extern struct gasneti_tm_s gasneti_ex_tm0; /* the primordial team */
extern struct gasneti_segment_s gasneti_ex_segment;

/* The objects exist (gasnet_init or gex_Client_Init ran); the segment is attached. */
extern bool gasneti_ex_objects_made;
/* gasnet_init made the objects (a GASNet-1 program), not gex_Client_Init. */
extern bool gasneti_ex_made_by_gasnet1;

/* gasnet_init's part of making them (named "GASNET1"), and gasnet_attach's segment. */
void gasneti_ex_objects_init(const char *name, gex_Flags_t flags);
void gasneti_ex_segment_made(void);

/* Fatal unless the handle is a valid object of its kind (what: the call, for the message). */
struct gasneti_tm_s *gasneti_ex_tm(const char *what, gex_TM_t tm);
void gasneti_ex_check_ep(const char *what, gex_EP_t ep);
void gasneti_ex_check_client(const char *what, gex_Client_t client);
void gasneti_ex_check_segment(const char *what, gex_Segment_t seg);
/* A team member's job rank, checking rank against the team's size (what: the call). */
gasnet_node_t gasneti_ex_jobrank(const char *what, gex_TM_t tm, gex_Rank_t rank);

/* gex_System_SetVerboseErrors: whether non-fatal errors say why on stderr. */
void gasneti_ex_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
