/* am.h: the conduit-neutral AM descriptor, the token, every internal handler index, and the
 * calls through which a conduit (or PSHM) hands a received message to the core. */
#ifndef GASNETI_AM_H
#define GASNETI_AM_H

#include "gasnet_internal.h"

enum { GASNETI_AM_SHORT = 0, GASNETI_AM_MEDIUM = 1, GASNETI_AM_LONG = 2 };

/* Every handler index the runtime uses, in one place. Clients may register and send to
 * 128..255 only; a send to 1..127 from a client is refused (am_send.c). */
enum {
  GASNETI_HANDLER_NONE = 0,
  GASNETI_HANDLER_BARRIER = 1,    /* Short: dissemination round of the barrier */
  GASNETI_HANDLER_PUT = 2,        /* Long request: payload in place; replies DONE */
  GASNETI_HANDLER_DONE = 3,       /* Short reply: one AM of an operation completed */
  GASNETI_HANDLER_GET = 4,        /* Short request: answer with the data */
  GASNETI_HANDLER_GET_MEDIUM = 5, /* Medium reply: copy to the destination, then DONE */
  GASNETI_HANDLER_GET_LONG = 6,   /* Long reply: data already in place */
  GASNETI_HANDLER_MEMSET = 7,     /* Short request: memset; replies DONE */
  GASNETI_HANDLER_PUT_WORD = 8,   /* Short request: one word store (1-8 bytes); replies DONE */
  GASNETI_HANDLER_GET_WORD = 9,   /* Short reply to GET: one word, stored at the destination */
  GASNETI_HANDLER_VIS_PUT = 10,   /* Medium request: packed runs to scatter; replies DONE */
  GASNETI_HANDLER_VIS_GET = 11,   /* Medium request: runs to gather; replies VIS_GET_REPLY */
  GASNETI_HANDLER_VIS_GET_REPLY = 12, /* Medium reply: packed runs to scatter, then complete */
  GASNETI_HANDLER_COLL = 13,      /* Medium request: a piece of a collective's data (no reply) */
  GASNETI_HANDLER_AD_OP = 14,     /* Short request: a remote atomic operation; replies AD_DONE */
  GASNETI_HANDLER_AD_DONE = 15,   /* Short reply: its old value, then complete */
  GASNETI_HANDLER_LAST_INTERNAL = 127,
  GASNETI_HANDLER_FIRST_CLIENT = 128
};

/* How a message relates to a Long payload larger than the conduit carries in one message:
 * the core splits it into FRAG pieces (copied in place, no handler) and a TAIL that carries
 * the last piece with the header, so the payload is complete before the handler runs. */
enum {
  GASNETI_AM_FRAG = 0x1,
  GASNETI_AM_TAIL = 0x2,
  /* Sender's side only: the payload stays valid and unchanged until the receiver has
   * acknowledged it (a blocking or bulk put's source, the memory a get reply comes from), so
   * a conduit may send straight from it, and again from it, instead of copying it first. */
  GASNETI_AM_STABLE = 0x4,
  /* Sender's side only: GEX_FLAG_IMMEDIATE: a message that would have to wait for a credit, a
   * queue slot or a buffer is not sent (the send returns false) instead. Only the first
   * resource a message needs is tried this way: once any of it is committed, the rest of it is
   * sent as any message is. */
  GASNETI_AM_IMMEDIATE = 0x8,
};

/* One message, as the core asks a conduit to send it and as a conduit delivers it. */
typedef struct {
  uint8_t category; /* GASNETI_AM_SHORT / MEDIUM / LONG */
  uint8_t handler;
  uint8_t nargs;
  uint8_t flags;    /* GASNETI_AM_FRAG / TAIL */
  uint32_t nbytes;  /* what the handler sees (a Long: the whole payload) */
  uint32_t chunk;   /* payload bytes this message carries */
  const gasnet_handlerarg_t *args;
  const void *payload; /* chunk bytes */
  uint64_t dst;        /* Long: the payload's address in the receiver (FRAG: this piece's) */
} gasneti_am_t;

typedef struct gasneti_token {
  gasnet_node_t src;
  uint8_t is_request;
  uint8_t replied;
  uint32_t conduit; /* the conduit's own per-message state (e.g. credits to return) */
  uint8_t category; /* set by the core as the handler starts (gex_Token_Info) */
  gasnet_handler_t handler;
} gasneti_token_t;

/* What the calling thread is doing: handlers may not send requests and run at most one reply. */
enum { GASNETI_CTX_CLIENT = 0, GASNETI_CTX_REQUEST = 1, GASNETI_CTX_REPLY = 2 };
extern GASNETI_TLS int gasneti_am_context;

typedef void (*gasneti_handler_fn)(void);
void gasneti_register_internal_handler(gasnet_handler_t index, gasneti_handler_fn fn);
/* Installs the client's table (gasnet_attach); returns a GASNET_ERR_* code. */
int gasneti_register_client_handlers(gasnet_handlerentry_t *table, int n);
/* gex_EP_RegisterHandlers: fixed indices first, then 0 entries take the highest free index in
 * table order; an index is taken once (by either API). Returns a GASNET_ERR_* code, having said
 * why (gex_System_SetVerboseErrors) and registered nothing, when the table is refused. */
int gasneti_register_ex_handlers(gex_AM_Entry_t *table, size_t n);
/* The registration of a client handler (gex_Token_Info), NULL for an index nobody took. */
const gex_AM_Entry_t *gasneti_handler_entry(gasnet_handler_t index);

/* Runs what a received message asks: copies Long pieces into place, then runs the handler
 * (never for a FRAG). The payload pointer stays valid until this returns. */
void gasneti_am_deliver(gasneti_token_t *token, const gasneti_am_t *am);
/* The same for a Short, without building a gasneti_am_t (a conduit's receive fast path). */
void gasneti_am_deliver_short(gasneti_token_t *token, gasnet_handler_t handler, int nargs,
                              const gasnet_handlerarg_t *args);

/* Internal sends: no client-index rule, same flow control. */
void gasneti_am_request_internal(gasnet_node_t dest, gasnet_handler_t handler, int category,
                                 const void *src, size_t nbytes, void *dst, int nargs,
                                 const gasnet_handlerarg_t *args);
void gasneti_am_reply_internal(gasnet_token_t token, gasnet_handler_t handler, int category,
                               const void *src, size_t nbytes, void *dst, int nargs,
                               const gasnet_handlerarg_t *args);
/* The variadic AM forms' count check of a debug client (gasnet_am_macros.h). */
void gasneti_am_nargs_mismatch(const char *call, int numargs, int given) __attribute__((noreturn));
/* A client's AM with its flags (GASNETI_AM_IMMEDIATE): false when an immediate one was not
 * sent. The checks and the trace are the caller's (am_send.c's entry points, the EX layer). */
bool gasneti_am_request_client(gasnet_node_t dest, gasnet_handler_t handler, int category,
                               const void *src, size_t nbytes, void *dst, int nargs,
                               const gasnet_handlerarg_t *args, uint8_t flags);
bool gasneti_am_reply_client(gasnet_token_t token, gasnet_handler_t handler, int category,
                             const void *src, size_t nbytes, void *dst, int nargs,
                             const gasnet_handlerarg_t *args, uint8_t flags);
/* Mediums and Longs whose payload is GASNETI_AM_STABLE. */
void gasneti_am_request_stable(gasnet_node_t dest, gasnet_handler_t handler, int category,
                               const void *src, size_t nbytes, void *dst, int nargs,
                               const gasnet_handlerarg_t *args);
void gasneti_am_reply_stable(gasnet_token_t token, gasnet_handler_t handler, int category,
                             const void *src, size_t nbytes, void *dst, int nargs,
                             const gasnet_handlerarg_t *args);

#endif
