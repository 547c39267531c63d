/* gasnet.h: the public GASNet-1 interface (specification 1.8) of this implementation.
 * Clients define exactly one of GASNET_SEQ, GASNET_PARSYNC or GASNET_PAR before including it. */
#ifndef GASNET_H
#define GASNET_H

#if (defined(GASNET_SEQ) + defined(GASNET_PARSYNC) + defined(GASNET_PAR)) != 1
#error "define exactly one of GASNET_SEQ, GASNET_PARSYNC or GASNET_PAR before including gasnet.h"
#endif

/* What GASNet's gasnet.h brings in and its clients rely on. */
#include <inttypes.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gasnet_portable.h> /* _STRINGIFY, GASNETT_PREDICT_*, PLATFORM_* */
#include <gasnet_conduit.h>  /* from include/<conduit>-conduit: conduit name and limits */

#ifdef __cplusplus
extern "C" {
#endif

/* ---- configuration macros ---------------------------------------------------------- */
#define GASNET_SPEC_VERSION_MAJOR 1
#define GASNET_SPEC_VERSION_MINOR 8
#define GASNET_VERSION GASNET_SPEC_VERSION_MAJOR
#define GASNET_RELEASE_VERSION_MAJOR 0
#define GASNET_RELEASE_VERSION_MINOR 1
#define GASNET_RELEASE_VERSION_PATCH 0

#define GASNET_SEGMENT_FAST 1
#define GASNET_ALIGNED_SEGMENTS 0
#define GASNET_PAGESIZE 4096
#define GASNET_MAXNODES 65535

#if defined(GASNET_PAR)
#define GASNETI_THREAD_MODEL "PAR"
#elif defined(GASNET_PARSYNC)
#define GASNETI_THREAD_MODEL "PARSYNC"
#else
#define GASNETI_THREAD_MODEL "SEQ"
#endif
/* The core's name and version come from the conduit (gasnet_conduit.h); the extended API is
 * the reference implementation over AMs, with direct access inside a supernode. */
#define GASNET_CORE_NAME_STR _STRINGIFY(GASNET_CORE_NAME)
#define GASNET_CORE_VERSION_STR _STRINGIFY(GASNET_CORE_VERSION)
#define GASNET_EXTENDED_NAME REFERENCE
#define GASNET_EXTENDED_NAME_STR _STRINGIFY(GASNET_EXTENDED_NAME)
#define GASNET_EXTENDED_VERSION 1.0
#define GASNET_EXTENDED_VERSION_STR _STRINGIFY(GASNET_EXTENDED_VERSION)

#define GASNET_CONFIG_STRING \
  "RELEASE=0.1.0,SPEC=1.8,CONDUIT=" GASNET_CONDUIT_NAME_STR ",THREADMODEL=" GASNETI_THREAD_MODEL \
  ",SEGMENT=FAST,PSHM=1,ALIGN=unaligned"

/* ---- types ------------------------------------------------------------------------- */
typedef uint16_t gasnet_node_t;
typedef uint8_t gasnet_handler_t;
typedef int32_t gasnet_handlerarg_t;
typedef void *gasnet_token_t;
typedef uint64_t gasnet_register_value_t;
#define SIZEOF_GASNET_REGISTER_VALUE_T 8

typedef struct {
  gasnet_handler_t index; /* 0 means "assign one"; written back by gasnet_attach */
  void (*fnptr)();
} gasnet_handlerentry_t;

typedef struct {
  void *addr;
  uintptr_t size;
} gasnet_seginfo_t;

/* Where each rank lives: its host, its shared-memory supernode, and the offset to add to an
 * address in its segment to reach the same byte through this process's cross-mapping (0 when
 * the rank is not in the caller's supernode, or is the caller). */
typedef struct {
  gasnet_node_t host;
  gasnet_node_t supernode;
  uintptr_t offset;
} gasnet_nodeinfo_t;

/* ---- error codes ------------------------------------------------------------------- */
#define GASNET_OK 0
#define GASNETI_ERR_BASE 10000
#define GASNET_ERR_RESOURCE (GASNETI_ERR_BASE + 1)
#define GASNET_ERR_BAD_ARG (GASNETI_ERR_BASE + 2)
#define GASNET_ERR_NOT_INIT (GASNETI_ERR_BASE + 3)
#define GASNET_ERR_BARRIER_MISMATCH (GASNETI_ERR_BASE + 4)
#define GASNET_ERR_NOT_READY (GASNETI_ERR_BASE + 5)

const char *gasnet_ErrorName(int errval);
const char *gasnet_ErrorDesc(int errval);

/* ---- job control ------------------------------------------------------------------- */
/* gasnet_init is renamed per threading model so that a client compiled for one model cannot
 * link silently against the library built for another. */
#if defined(GASNET_SEQ)
#define gasnet_init gasnet_init_GASNET_SEQ
#else
#define gasnet_init gasnet_init_GASNET_PAR
#endif
int gasnet_init(int *argc, char ***argv);
int gasnet_attach(gasnet_handlerentry_t *table, int numentries, uintptr_t segsize,
                  uintptr_t minheapoffset);
void gasnet_exit(int exitcode) __attribute__((noreturn));
uintptr_t gasnet_getMaxLocalSegmentSize(void);
uintptr_t gasnet_getMaxGlobalSegmentSize(void);

/* ---- job environment queries ------------------------------------------------------- */
extern gasnet_node_t gasneti_mynode, gasneti_nodes;
#define gasnet_mynode() ((gasnet_node_t)gasneti_mynode)
#define gasnet_nodes() ((gasnet_node_t)gasneti_nodes)
int gasnet_getSegmentInfo(gasnet_seginfo_t *seginfo_table, int numentries);
int gasnet_getNodeInfo(gasnet_nodeinfo_t *nodeinfo_table, int numentries);
char *gasnet_getenv(const char *name);

/* ---- active messages --------------------------------------------------------------- */
#define gasnet_AMMaxArgs() ((size_t)16)
#define gasnet_AMMaxMedium() ((size_t)GASNETC_MAX_MEDIUM)
#define gasnet_AMMaxLongRequest() ((size_t)GASNETC_MAX_LONG)
#define gasnet_AMMaxLongReply() ((size_t)GASNETC_MAX_LONG)

int gasneti_AMRequestShort(gasnet_node_t dest, gasnet_handler_t handler, int numargs,
                           const gasnet_handlerarg_t *args);
int gasneti_AMRequestMedium(gasnet_node_t dest, gasnet_handler_t handler, void *source_addr,
                            size_t nbytes, int numargs, const gasnet_handlerarg_t *args);
int gasneti_AMRequestLong(gasnet_node_t dest, gasnet_handler_t handler, void *source_addr,
                          size_t nbytes, void *dest_addr, int numargs,
                          const gasnet_handlerarg_t *args);
int gasneti_AMReplyShort(gasnet_token_t token, gasnet_handler_t handler, int numargs,
                         const gasnet_handlerarg_t *args);
int gasneti_AMReplyMedium(gasnet_token_t token, gasnet_handler_t handler, void *source_addr,
                          size_t nbytes, int numargs, const gasnet_handlerarg_t *args);
int gasneti_AMReplyLong(gasnet_token_t token, gasnet_handler_t handler, void *source_addr,
                        size_t nbytes, void *dest_addr, int numargs,
                        const gasnet_handlerarg_t *args);

int gasnet_AMPoll(void);
int gasnet_AMGetMsgSource(gasnet_token_t token, gasnet_node_t *srcindex);

/* One wait step: poll, and give the core away when this host runs more ranks than cores. */
void gasneti_wait_step(void);
#define GASNET_BLOCKUNTIL(cond)          \
  do {                                   \
    while (!(cond)) gasneti_wait_step(); \
  } while (0)

#include <gasnet_am_macros.h> /* gasnet_AM{Request,Reply}{Short,Medium,Long}{0..16} */

/* ---- atomicity control ------------------------------------------------------------- */
/* Handlers run only inside GASNet calls of the receiving process, never in signal context, so
 * no-interrupt sections need no work; the calls exist for source compatibility. */
#define gasnet_hold_interrupts() ((void)0)
#define gasnet_resume_interrupts() ((void)0)

#if defined(GASNET_SEQ)
typedef struct {
  int locked;
} gasnet_hsl_t;
#define GASNET_HSL_INITIALIZER {0}
#else
#include <pthread.h>
typedef struct {
  pthread_mutex_t lock;
} gasnet_hsl_t;
#define GASNET_HSL_INITIALIZER {PTHREAD_MUTEX_INITIALIZER}
#endif
void gasnet_hsl_init(gasnet_hsl_t *hsl);
void gasnet_hsl_destroy(gasnet_hsl_t *hsl);
void gasnet_hsl_lock(gasnet_hsl_t *hsl);
void gasnet_hsl_unlock(gasnet_hsl_t *hsl);
int gasnet_hsl_trylock(gasnet_hsl_t *hsl);

#define GASNET_WAIT_SPIN 0
#define GASNET_WAIT_BLOCK 1
#define GASNET_WAIT_SPINBLOCK 2
int gasnet_set_waitmode(int wait_mode);

/* ---- barrier ----------------------------------------------------------------------- */
#define GASNET_BARRIERFLAG_ANONYMOUS 1
#define GASNET_BARRIERFLAG_MISMATCH 2
void gasnet_barrier_notify(int id, int flags);
int gasnet_barrier_wait(int id, int flags);
int gasnet_barrier_try(int id, int flags);
/* After a completed barrier: GASNET_BARRIERFLAG_ANONYMOUS if every rank was anonymous,
 * otherwise 0 with *id set to the barrier's name. */
int gasnet_barrier_result(int *id);

#include <gasnet_extended.h> /* put/get/memset, handles, access regions, value forms */

#ifdef __cplusplus
}
#endif
#endif /* GASNET_H */
