/* trace_client.c: what the tools header gives a GASNet client for lines of its own (GASNet-1's
 * GASNETT_TRACE_* and GASNETT_STATS_*): messages under category H, masks read and changed at
 * run time, and the source line a trace line names. A runtime over GASNet (a UPC or SHMEM
 * library) sets the line of its user's code and freezes it, so that the GASNet calls its own
 * code then makes are traced at the user's line, not at the library's. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace.h" /* gasnet.h first, as any client */
#include "gasnet_tools.h"
#include "trace_internal.h"
#include "trace_syntax.h"

/* The calling thread's current source line: one the client set (file, line), or the "file:line"
 * of the last GASNet call that traced (loc); frozen, neither changes. */
typedef struct {
  const char *file, *loc;
  unsigned line;
  int frozen;
  char parsed[512]; /* GETSOURCELINE's file name taken out of loc */
} srcline_t;
static GASNETI_TLS srcline_t srcline;

void (*gasnett_stats_callback)(void (*format)(const char *, ...));

const char *gasneti_trace_where(const char *loc, char *buf, size_t len) {
  srcline_t *s = &srcline;
  if (loc && !s->frozen) {
    s->loc = loc;
    s->file = NULL;
    return loc;
  }
  if (s->file) {
    snprintf(buf, len, "%s:%u", s->file, s->line);
    return buf;
  }
  return s->loc;
}

void gasneti_trace_setsourceline(const char *file, unsigned line) {
  srcline_t *s = &srcline;
  if (s->frozen) return;
  s->file = file;
  s->line = line;
  s->loc = NULL;
}

void gasneti_trace_getsourceline(const char **pfile, unsigned *pline) {
  srcline_t *s = &srcline;
  if (s->file) {
    *pfile = s->file;
    *pline = s->line;
    return;
  }
  *pfile = "";
  *pline = 0;
  if (!s->loc) return;
  const char *colon = strrchr(s->loc, ':');
  size_t n = colon ? (size_t)(colon - s->loc) : strlen(s->loc);
  if (n >= sizeof s->parsed) n = sizeof s->parsed - 1;
  memcpy(s->parsed, s->loc, n);
  s->parsed[n] = 0;
  *pfile = s->parsed;
  *pline = colon ? (unsigned)strtoul(colon + 1, NULL, 10) : 0;
}

/* Nested freezes (a library's call inside another's) unfreeze with their outermost. */
void gasneti_trace_freezesourceline(void) { srcline.frozen++; }
void gasneti_trace_unfreezesourceline(void) {
  if (srcline.frozen > 0) srcline.frozen--;
}

int gasneti_trace_enabled(char category) {
  gasneti_trace_state_t *s = &gasneti_trace_state;
  return s->tracefile && s->trace_mask[(int)(unsigned char)category];
}

int gasneti_stats_enabled(char category) {
  gasneti_trace_state_t *s = &gasneti_trace_state;
  return s->statsfile && s->stats_mask[(int)(unsigned char)category];
}

static void client_vline(FILE *f, const char *fmt, va_list ap) {
  char where[GASNETI_TRACE_WHERE_MAX];
  gasneti_trace_vline(f, 'H', gasneti_trace_where(NULL, where, sizeof where), fmt, ap);
}

void gasneti_trace_client_printf(const char *fmt, ...) {
  if (!gasneti_trace_enabled('H')) return;
  va_list ap;
  va_start(ap, fmt);
  client_vline(gasneti_trace_state.tracefile, fmt, ap);
  va_end(ap);
}

/* Whatever the mask says, as long as the rank traces at all. */
void gasneti_trace_client_printf_force(const char *fmt, ...) {
  if (!gasneti_trace_state.tracefile) return;
  va_list ap;
  va_start(ap, fmt);
  client_vline(gasneti_trace_state.tracefile, fmt, ap);
  va_end(ap);
}

void gasneti_stats_client_printf(const char *fmt, ...) {
  if (!gasneti_stats_enabled('H')) return;
  va_list ap;
  va_start(ap, fmt);
  gasneti_trace_vline(gasneti_trace_state.statsfile, 'H', NULL, fmt, ap);
  va_end(ap);
}

void gasneti_stats_client_printf_force(const char *fmt, ...) {
  if (!gasneti_trace_state.statsfile) return;
  va_list ap;
  va_start(ap, fmt);
  gasneti_trace_vline(gasneti_trace_state.statsfile, 'H', NULL, fmt, ap);
  va_end(ap);
}

/* ---- masks -------------------------------------------------------------------------------- */
/* The letters on, in GASNet's order; "" where the rank writes no such file (nothing is). */
static const char *mask_text(const bool *mask, const FILE *f, char *out) {
  size_t n = 0;
  if (f)
    for (const char *c = GASNETI_TRACE_CATEGORIES; *c; c++)
      if (mask[(int)*c]) out[n++] = *c;
  out[n] = 0;
  return out;
}

static void set_mask(const char *what, const char *text, bool *mask) {
  if (!text) gasneti_fatalerror("%s(NULL): expected category letters from %s", what,
                                GASNETI_TRACE_CATEGORIES);
  for (const char *p = text; *p; p++)
    if (!strchr(GASNETI_TRACE_CATEGORIES, *p))
      gasneti_fatalerror("%s(\"%s\"): '%c' is not a category letter: expected letters from %s "
                         "(e.g. \"GPA\")", what, text, *p, GASNETI_TRACE_CATEGORIES);
  bool next[128] = {false};
  for (const char *p = text; *p; p++) next[(int)*p] = true;
  next['U'] = true; /* as the knobs have it */
  memcpy(mask, next, sizeof next);
}

static char trace_mask_text[sizeof GASNETI_TRACE_CATEGORIES];
static char stats_mask_text[sizeof GASNETI_TRACE_CATEGORIES];

const char *gasneti_trace_getmask(void) {
  return mask_text(gasneti_trace_state.trace_mask, gasneti_trace_state.tracefile,
                   trace_mask_text);
}
void gasneti_trace_setmask(const char *mask) {
  set_mask("GASNETT_TRACE_SETMASK", mask, gasneti_trace_state.trace_mask);
}
const char *gasneti_stats_getmask(void) {
  return mask_text(gasneti_trace_state.stats_mask, gasneti_trace_state.statsfile,
                   stats_mask_text);
}
void gasneti_stats_setmask(const char *mask) {
  set_mask("GASNETT_STATS_SETMASK", mask, gasneti_trace_state.stats_mask);
}

int gasneti_trace_get_tracelocal(void) { return gasneti_trace_state.tracelocal; }
void gasneti_trace_set_tracelocal(int on) { gasneti_trace_state.tracelocal = on != 0; }
