/* am_dispatch.c: the handler table, its registration at attach, and running a received
 * message's handler with 0..16 arguments in the right handler context. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "am.h"
#include "trace/trace.h"

/* A handler and what a registration through gex_EP_RegisterHandlers promised of the messages
 * it runs for: `allowed` has bit (category * 2 + is_reply) for each kind it takes, 0 for one
 * registered by gasnet_attach (which promises nothing); nargs the count each carries. */
typedef struct {
  gasneti_handler_fn fn;
  uint8_t allowed, nargs;
} handler_t;
static handler_t handlers[256];
static gex_AM_Entry_t entries[256]; /* a client index's registration (gex_Token_Info) */
static bool taken[256];              /* client indices registered, by either API */
GASNETI_TLS int gasneti_am_context;

void gasneti_register_internal_handler(gasnet_handler_t index, gasneti_handler_fn fn) {
  handlers[index].fn = fn;
}

const gex_AM_Entry_t *gasneti_handler_entry(gasnet_handler_t index) {
  return taken[index] ? &entries[index] : NULL;
}

/* Fixed indices first, then "don't care" entries get the lowest free client index, so the same
 * table gives the same assignment on every rank. */
int gasneti_register_client_handlers(gasnet_handlerentry_t *table, int n) {
  bool used[256];
  memcpy(used, taken, sizeof used);
  for (int i = 0; i < n; i++) {
    int idx = table[i].index;
    if (!table[i].fnptr) {
      gasneti_warning("gasnet_attach: handler table entry %d has a NULL function", i);
      return GASNET_ERR_BAD_ARG;
    }
    if (idx == 0) continue;
    if (idx < GASNETI_HANDLER_FIRST_CLIENT) {
      gasneti_warning("gasnet_attach: handler index %d is reserved: client indices are "
                      "128..255, or 0 to have one assigned", idx);
      return GASNET_ERR_BAD_ARG;
    }
    if (used[idx]) {
      gasneti_warning("gasnet_attach: handler index %d appears twice in the table", idx);
      return GASNET_ERR_BAD_ARG;
    }
    used[idx] = true;
  }
  int next = GASNETI_HANDLER_FIRST_CLIENT;
  for (int i = 0; i < n; i++) {
    if (table[i].index != 0) continue;
    while (next < 256 && used[next]) next++;
    if (next == 256) {
      gasneti_warning("gasnet_attach: more than 128 client handlers");
      return GASNET_ERR_BAD_ARG;
    }
    used[next] = true;
    table[i].index = (gasnet_handler_t)next;
  }
  for (int i = 0; i < n; i++) {
    int idx = table[i].index;
    handlers[idx] = (handler_t){(gasneti_handler_fn)table[i].fnptr, 0, 0};
    entries[idx] = (gex_AM_Entry_t){.gex_index = (gex_AM_Index_t)idx,
                                    .gex_fnptr = (gex_AM_Fn_t)table[i].fnptr};
    taken[idx] = true;
  }
  return GASNET_OK;
}

/* What an EX registration's flags allow, as handler_t's bits; 0 when they are malformed. */
static uint8_t allowed_kinds(gex_Flags_t flags) {
  gex_Flags_t cat = flags & (GEX_FLAG_AM_SHORT | GEX_FLAG_AM_MEDIUM | GEX_FLAG_AM_LONG);
  gex_Flags_t dir = flags & GEX_FLAG_AM_REQREP;
  if (!dir || (cat != GEX_FLAG_AM_SHORT && cat != GEX_FLAG_AM_MEDIUM && cat != GEX_FLAG_AM_LONG &&
               cat != GEX_FLAG_AM_MEDLONG))
    return 0;
  uint8_t bits = 0;
  for (int c = 0; c < 3; c++) {
    if (!(cat & (GEX_FLAG_AM_SHORT << c))) continue;
    if (dir & GEX_FLAG_AM_REQUEST) bits |= (uint8_t)(1u << (c * 2));
    if (dir & GEX_FLAG_AM_REPLY) bits |= (uint8_t)(1u << (c * 2 + 1));
  }
  return bits;
}

static int refuse(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int refuse(const char *fmt, ...) {
  if (gex_System_GetVerboseErrors()) {
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    gasneti_warning("gex_EP_RegisterHandlers: %s", msg);
  }
  return GASNET_ERR_BAD_ARG;
}

int gasneti_register_ex_handlers(gex_AM_Entry_t *table, size_t n) {
  bool used[256];
  memcpy(used, taken, sizeof used);
  for (size_t i = 0; i < n; i++) {
    const gex_AM_Entry_t *e = &table[i];
    const char *name = e->gex_name ? e->gex_name : "";
    if (!e->gex_fnptr) return refuse("entry %zu%s%s has a NULL gex_fnptr", i, *name ? " " : "", name);
    if (!allowed_kinds(e->gex_flags))
      return refuse("entry %zu (index %d%s%s) has gex_flags 0x%x: expected one of "
                    "GEX_FLAG_AM_SHORT, _MEDIUM, _LONG or _MEDLONG ORed with one of "
                    "GEX_FLAG_AM_REQUEST, _REPLY or _REQREP", i, (int)e->gex_index,
                    *name ? ", " : "", name, (unsigned)e->gex_flags);
    if (e->gex_nargs > 16)
      return refuse("entry %zu (index %d%s%s) has gex_nargs %u: accepted 0..16", i,
                    (int)e->gex_index, *name ? ", " : "", name, e->gex_nargs);
    int idx = e->gex_index;
    if (idx == 0) continue;
    if (idx < GEX_AM_INDEX_BASE)
      return refuse("entry %zu%s%s asks for handler index %d: client indices are %d..255, or 0 "
                    "to have one assigned", i, *name ? " " : "", name, idx, GEX_AM_INDEX_BASE);
    if (used[idx])
      return refuse("handler index %d (entry %zu%s%s) is taken already (registered before, or "
                    "twice in this table)", idx, i, *name ? ", " : "", name);
    used[idx] = true;
  }
  /* The specification's rule: 0 entries, in table order, take the highest index still free. */
  int next = 255;
  for (size_t i = 0; i < n; i++) {
    if (table[i].gex_index != 0) continue;
    while (next >= GEX_AM_INDEX_BASE && used[next]) next--;
    if (next < GEX_AM_INDEX_BASE)
      return refuse("no free handler index for entry %zu: an endpoint has 128 (%d..255)", i,
                    GEX_AM_INDEX_BASE);
    used[next] = true;
    table[i].gex_index = (gex_AM_Index_t)next;
  }
  for (size_t i = 0; i < n; i++) {
    const gex_AM_Entry_t *e = &table[i];
    handlers[e->gex_index] = (handler_t){(gasneti_handler_fn)e->gex_fnptr,
                                         allowed_kinds(e->gex_flags), (uint8_t)e->gex_nargs};
    entries[e->gex_index] = *e;
    taken[e->gex_index] = true;
  }
  return GASNET_OK;
}

/* ---- calling a handler with its argument count ------------------------------------------ */
#define T gasnet_handlerarg_t
#define TS1 T
#define TS2 TS1, T
#define TS3 TS2, T
#define TS4 TS3, T
#define TS5 TS4, T
#define TS6 TS5, T
#define TS7 TS6, T
#define TS8 TS7, T
#define TS9 TS8, T
#define TS10 TS9, T
#define TS11 TS10, T
#define TS12 TS11, T
#define TS13 TS12, T
#define TS14 TS13, T
#define TS15 TS14, T
#define TS16 TS15, T
#define AS1 a[0]
#define AS2 AS1, a[1]
#define AS3 AS2, a[2]
#define AS4 AS3, a[3]
#define AS5 AS4, a[4]
#define AS6 AS5, a[5]
#define AS7 AS6, a[6]
#define AS8 AS7, a[7]
#define AS9 AS8, a[8]
#define AS10 AS9, a[9]
#define AS11 AS10, a[10]
#define AS12 AS11, a[11]
#define AS13 AS12, a[12]
#define AS14 AS13, a[13]
#define AS15 AS14, a[14]
#define AS16 AS15, a[15]
#define SHORT_CASE(n) \
  case n: ((void (*)(gasnet_token_t, TS##n))fn)(tok, AS##n); break;
#define BULK_CASE(n) \
  case n: ((void (*)(gasnet_token_t, void *, size_t, TS##n))fn)(tok, buf, nbytes, AS##n); break;

static void call_handler(gasneti_handler_fn fn, gasnet_token_t tok, int category, void *buf,
                         size_t nbytes, int nargs, const T *a) {
  if (category == GASNETI_AM_SHORT) {
    switch (nargs) {
      case 0: ((void (*)(gasnet_token_t))fn)(tok); break;
      SHORT_CASE(1) SHORT_CASE(2) SHORT_CASE(3) SHORT_CASE(4) SHORT_CASE(5) SHORT_CASE(6)
      SHORT_CASE(7) SHORT_CASE(8) SHORT_CASE(9) SHORT_CASE(10) SHORT_CASE(11) SHORT_CASE(12)
      SHORT_CASE(13) SHORT_CASE(14) SHORT_CASE(15) SHORT_CASE(16)
    }
  } else {
    switch (nargs) {
      case 0: ((void (*)(gasnet_token_t, void *, size_t))fn)(tok, buf, nbytes); break;
      BULK_CASE(1) BULK_CASE(2) BULK_CASE(3) BULK_CASE(4) BULK_CASE(5) BULK_CASE(6)
      BULK_CASE(7) BULK_CASE(8) BULK_CASE(9) BULK_CASE(10) BULK_CASE(11) BULK_CASE(12)
      BULK_CASE(13) BULK_CASE(14) BULK_CASE(15) BULK_CASE(16)
    }
  }
}

static const char *const kind_names[] = {"Short", "Medium", "Long"};

/* A message its handler's gex_EP_RegisterHandlers entry did not allow. */
static void __attribute__((noreturn, noinline, unused)) unregistered_kind(
    const gasneti_token_t *token, int category, gasnet_handler_t handler, int nargs) {
  const gex_AM_Entry_t *e = &entries[handler];
  gasneti_fatalerror("AM %s %s with %d argument%s from rank %d to handler %d%s%s%s, which "
                     "gex_EP_RegisterHandlers registered with gex_flags 0x%x and gex_nargs %u",
                     kind_names[category], token->is_request ? "request" : "reply", nargs,
                     nargs == 1 ? "" : "s", (int)token->src, (int)handler,
                     e->gex_name ? " (" : "", e->gex_name ? e->gex_name : "",
                     e->gex_name ? ")" : "", (unsigned)e->gex_flags, e->gex_nargs);
}

/* A received message's handler, in its handler context. */
static inline __attribute__((always_inline)) void run_handler(
    gasneti_token_t *token, int category, gasnet_handler_t handler, void *buf, size_t nbytes,
    int nargs, const T *args) {
  const handler_t *h = &handlers[handler];
  gasneti_handler_fn fn = h->fn;
  if (GASNETI_UNLIKELY(!fn))
    gasneti_fatalerror("AM %s from rank %d names handler %d, which is not registered",
                       token->is_request ? "request" : "reply", (int)token->src, (int)handler);
#ifdef GASNETI_DEBUG
  /* What gex_EP_RegisterHandlers promised (breaking it is undefined behaviour): checked in the
   * debug build, as GASNet's debug builds check it; the fast path leaves it out. */
  if (GASNETI_UNLIKELY(h->allowed && (!(h->allowed >> (category * 2 + !token->is_request) & 1) ||
                                       nargs != h->nargs)))
    unregistered_kind(token, category, handler, nargs);
#endif
  token->category = (uint8_t)category;
  token->handler = handler;
  if (GASNETI_UNLIKELY(nargs > 16))
    gasneti_fatalerror("AM from rank %d carries %d arguments (at most 16)", (int)token->src,
                       nargs);
  if (GASNETI_UNLIKELY(gasneti_trace_active) && handler >= GASNETI_HANDLER_FIRST_CLIENT)
    gasneti_trace_am(NULL, token->is_request, category, token->src, handler, nargs, nbytes,
                     true);
  int saved = gasneti_am_context;
  gasneti_am_context = token->is_request ? GASNETI_CTX_REQUEST : GASNETI_CTX_REPLY;
  call_handler(fn, (gasnet_token_t)token, category, buf, nbytes, nargs, args);
  gasneti_am_context = saved;
}

void gasneti_am_deliver(gasneti_token_t *token, const gasneti_am_t *am) {
  void *buf = (void *)am->payload;
  if (am->category == GASNETI_AM_LONG) {
    buf = (void *)(uintptr_t)am->dst;
    if (am->flags & GASNETI_AM_FRAG) {
      memcpy(buf, am->payload, am->chunk);
      return;
    }
    if (am->flags & GASNETI_AM_TAIL)
      memcpy((uint8_t *)buf + (am->nbytes - am->chunk), am->payload, am->chunk);
  }
  run_handler(token, am->category, am->handler, buf, am->nbytes, am->nargs, am->args);
}

void gasneti_am_deliver_short(gasneti_token_t *token, gasnet_handler_t handler, int nargs,
                              const gasnet_handlerarg_t *args) {
  run_handler(token, GASNETI_AM_SHORT, handler, NULL, 0, nargs, args);
}
