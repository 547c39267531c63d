/* trace_client.c: what the tools header gives a GASNet client for lines of its own (GASNet-1's
 * GASNETT_TRACE_* and GASNETT_STATS_*): messages under category H (U when forced past the
 * mask), masks read and changed at run time, and the source line a trace line names. A
 * runtime over GASNet (a UPC or SHMEM library) sets the line of its user's code and freezes it,
 * so that the GASNet calls its own code then makes are traced at the user's line. */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace.h" /* gasnet.h first, as any client */
#include "gasnet_tools.h"
#include "trace_internal.h"
#include "trace_syntax.h"

/* The calling thread's current source line: one the client set (file, line), or the "file:line"
 * of its last traced GASNet call (loc); frozen, neither changes. */
typedef struct {
  const char *file, *loc;
  unsigned line;
  int frozen;
} srcline_t;
static GASNETI_TLS srcline_t srcline;

void (*gasnett_stats_callback)(void (*format)(const char *, ...));

/* File names taken out of a call's "file:line", kept for the life of the process: a client
 * may hold the pointer GETSOURCELINE gave and set it back later (save and restore). */
typedef struct interned {
  struct interned *next;
  char name[];
} interned_t;
static interned_t *interned_names;
static pthread_mutex_t intern_lock = PTHREAD_MUTEX_INITIALIZER;

static const char *intern(const char *name, size_t n) {
  pthread_mutex_lock(&intern_lock);
  interned_t *i = interned_names;
  while (i && (strncmp(i->name, name, n) != 0 || i->name[n] != 0)) i = i->next;
  if (!i) {
    i = gasneti_malloc(sizeof *i + n + 1);
    memcpy(i->name, name, n);
    i->name[n] = 0;
    i->next = interned_names;
    interned_names = i;
  }
  pthread_mutex_unlock(&intern_lock);
  return i->name;
}

/* A call's "file:line" as its file (interned) and line. */
static const char *split_loc(const char *loc, unsigned *line) {
  const char *colon = strrchr(loc, ':');
  *line = colon ? (unsigned)strtoul(colon + 1, NULL, 10) : 0;
  return intern(loc, colon ? (size_t)(colon - loc) : strlen(loc));
}

/* "file:line" into buf; a file name too long for it keeps its line and says it was cut. */
static const char *format_line(const char *file, unsigned line, char *buf, size_t len) {
  int n = snprintf(buf, len, "%s:%u", file, line);
  if (n >= 0 && (size_t)n >= len) {
    char tail[16];
    int t = snprintf(tail, sizeof tail, "...:%u", line);
    memcpy(buf + len - 1 - (size_t)t, tail, (size_t)t + 1);
  }
  return buf;
}

static const char *current(char *buf, size_t len) {
  srcline_t *s = &srcline;
  if (s->file) return format_line(s->file, s->line, buf, len);
  return s->loc;
}

const char *gasneti_trace_where(const char *loc, bool client_message, char *buf, size_t len) {
  srcline_t *s = &srcline;
  if (s->frozen) {
    const char *held = current(buf, len);
    return held ? held : loc;
  }
  if (loc) {
    s->loc = loc;
    s->file = NULL;
    return loc;
  }
  /* A call without a line of its own (a function form, gasnet_wait_syncnb_some): the line the
   * client set, if any, never the previous call's. A message of the client's: the current line. */
  if (client_message) return current(buf, len);
  return s->file ? format_line(s->file, s->line, buf, len) : NULL;
}

void gasneti_trace_setsourceline(const char *file, unsigned line) {
  srcline_t *s = &srcline;
  if (s->frozen) return;
  if (!file) { /* as GASNet-1: a new line in the current file */
    unsigned ignored;
    file = s->file ? s->file : s->loc ? split_loc(s->loc, &ignored) : NULL;
  }
  s->file = file;
  s->line = line;
  s->loc = NULL;
}

void gasneti_trace_getsourceline(const char **pfile, unsigned *pline) {
  srcline_t *s = &srcline;
  if (s->file) {
    *pfile = s->file;
    *pline = s->line;
  } else if (s->loc) {
    *pfile = split_loc(s->loc, pline);
  } else {
    *pfile = "";
    *pline = 0;
  }
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

static void client_vline(char category, const char *fmt, va_list ap) {
  FILE *f = gasneti_trace_state.tracefile;
  if (!f) return;
  char where[GASNETI_TRACE_WHERE_MAX];
  gasneti_trace_vline(f, category, gasneti_trace_where(NULL, true, where, sizeof where), fmt, ap);
}

void gasneti_trace_client_printf(const char *fmt, ...) {
  if (!gasneti_trace_enabled('H')) return;
  va_list ap;
  va_start(ap, fmt);
  client_vline('H', fmt, ap);
  va_end(ap);
}

/* Whatever the mask says, as long as the rank traces at all: under U, which is always on. */
void gasneti_trace_client_printf_force(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  client_vline('U', fmt, ap);
  va_end(ap);
}

static void stats_vline(char category, const char *fmt, va_list ap) {
  FILE *f = gasneti_trace_state.statsfile;
  if (f) gasneti_trace_vline(f, category, NULL, fmt, ap);
}

void gasneti_stats_client_printf(const char *fmt, ...) {
  if (!gasneti_stats_enabled('H')) return;
  va_list ap;
  va_start(ap, fmt);
  stats_vline('H', fmt, ap);
  va_end(ap);
}

void gasneti_stats_client_printf_force(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  stats_vline('U', fmt, ap);
  va_end(ap);
}

/* ---- masks -------------------------------------------------------------------------------- */
/* Changed by one thread while others may trace: writers take the lock, and the text a reader
 * gets is its own thread's, made under the lock. */
static pthread_mutex_t mask_lock = PTHREAD_MUTEX_INITIALIZER;
static GASNETI_TLS char trace_mask_text[sizeof GASNETI_TRACE_CATEGORIES];
static GASNETI_TLS char stats_mask_text[sizeof GASNETI_TRACE_CATEGORIES];

/* The letters on, in GASNet's order; "" where the rank writes no such file (nothing is). */
static const char *mask_text(const bool *mask, const FILE *f, char *out) {
  size_t n = 0;
  pthread_mutex_lock(&mask_lock);
  if (f)
    for (const char *c = GASNETI_TRACE_CATEGORIES; *c; c++)
      if (mask[(int)*c]) out[n++] = *c;
  pthread_mutex_unlock(&mask_lock);
  out[n] = 0;
  return out;
}

/* As GASNet-1: letters that are no category are ignored (a client may pass on a user's mask),
 * but said once, naming them. */
static void set_mask(const char *what, const char *text, bool *mask) {
  static int told;
  if (!text) text = "";
  bool next[128] = {false};
  for (const char *p = text; *p; p++) {
    if (strchr(GASNETI_TRACE_CATEGORIES, *p)) next[(int)*p] = true;
    else if (!told++)
      gasneti_warning("%s(\"%s\"): '%c' is not a category letter and is ignored (letters: %s)",
                      what, text, *p, GASNETI_TRACE_CATEGORIES);
  }
  next['U'] = true; /* as the knobs have it */
  pthread_mutex_lock(&mask_lock);
  memcpy(mask, next, sizeof next);
  pthread_mutex_unlock(&mask_lock);
}

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
