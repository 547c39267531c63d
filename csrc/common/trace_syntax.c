/* trace_syntax.c: parsers of the tracing knobs' own value forms (trace_syntax.h). */
#include "trace_syntax.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A mask is a word of category letters, each at most once in the canonical form (sorted in
 * GASNet's order), so "PG" and "GPG" compare equal. */
static int check_mask(const char *text, char *canon, size_t canonlen, char *why, size_t whylen) {
  int seen[128] = {0};
  for (const char *p = text; *p; p++) {
    if (isspace((unsigned char)*p)) continue;
    if (!strchr(GASNETI_TRACE_CATEGORIES, *p) || *p == '\0') {
      /* The whole character, not its first byte, when it is a multi-byte UTF-8 one. */
      int n = 1;
      if ((unsigned char)*p >= 0xc0)
        while (n < 4 && ((unsigned char)p[n] & 0xc0) == 0x80) n++;
      snprintf(why, whylen, "'%.*s' is not a category letter", n, p);
      return 0;
    }
    seen[(int)*p] = 1;
  }
  size_t used = (size_t)snprintf(canon, canonlen, "mask:");
  for (const char *c = GASNETI_TRACE_CATEGORIES; *c && used + 1 < canonlen; c++)
    if (seen[(int)*c]) canon[used++] = *c, canon[used] = '\0';
  return 1;
}

const gasneti_knob_syntax_t gasneti_tracemask_syntax = {
    "mask", "category letters from " GASNETI_TRACE_CATEGORIES " (e.g. GPA)", check_mask};

/* Calls fn for every range lo..hi of the list; 0 with a message when the list is malformed. */
static int each_range(const char *text, void (*fn)(long lo, long hi, void *arg), void *arg,
                      char *why, size_t whylen) {
  const char *p = text;
  while (*p == ' ') p++;
  if (strcmp(p, "*") == 0) {
    if (fn) fn(0, 65535, arg);
    return 1;
  }
  int items = 0;
  for (;;) {
    while (*p == ' ') p++;
    char *end;
    if (!isdigit((unsigned char)*p)) {
      snprintf(why, whylen, "expected a rank at '%s'", p);
      return 0;
    }
    long lo = strtol(p, &end, 10), hi = lo;
    p = end;
    if (*p == '-') {
      p++;
      if (!isdigit((unsigned char)*p)) {
        snprintf(why, whylen, "expected the end of a range at '%s'", p);
        return 0;
      }
      hi = strtol(p, &end, 10);
      p = end;
      if (hi < lo) {
        snprintf(why, whylen, "range %ld-%ld ends before it starts", lo, hi);
        return 0;
      }
    }
    if (hi > 65535) {
      snprintf(why, whylen, "rank %ld is beyond 65535", hi);
      return 0;
    }
    if (fn) fn(lo, hi, arg);
    items++;
    while (*p == ' ') p++;
    if (*p == '\0') return items > 0;
    if (*p != ',') {
      snprintf(why, whylen, "unexpected '%c'", *p);
      return 0;
    }
    p++;
  }
}

static int check_nodes(const char *text, char *canon, size_t canonlen, char *why, size_t whylen) {
  if (!each_range(text, NULL, NULL, why, whylen)) return 0;
  /* The canonical form is the text without spaces. */
  size_t used = (size_t)snprintf(canon, canonlen, "nodes:");
  for (const char *p = text; *p && used + 1 < canonlen; p++)
    if (*p != ' ') canon[used++] = *p, canon[used] = '\0';
  return 1;
}

const gasneti_knob_syntax_t gasneti_tracenodes_syntax = {
    "ranks", "* or ranks and ranges separated by commas (e.g. 0,2-4)", check_nodes};

typedef struct {
  int rank, nranks, hit, count;
  unsigned char *marked;
} nodes_query_t;

static void mark(long lo, long hi, void *arg) {
  nodes_query_t *q = arg;
  if (q->rank >= lo && q->rank <= hi) q->hit = 1;
  for (long r = lo; r <= hi && r < q->nranks; r++)
    if (q->marked && !q->marked[r]) q->marked[r] = 1, q->count++;
}

int gasneti_tracenodes_has(const char *text, int rank) {
  nodes_query_t q = {rank, 0, 0, 0, NULL};
  char why[128];
  return each_range(text, mark, &q, why, sizeof why) && q.hit;
}

int gasneti_tracenodes_count(const char *text, int nranks) {
  nodes_query_t q = {-1, nranks, 0, 0, calloc((size_t)nranks + 1, 1)};
  char why[128];
  int ok = q.marked && each_range(text, mark, &q, why, sizeof why);
  free(q.marked);
  return ok ? q.count : 0;
}

int gasneti_trace_file_problem(const char *file_knob, const char *pattern,
                               const char *nodes_knob, const char *nodes, int nranks, char *why,
                               size_t whylen) {
  if (!nodes) nodes = "*";
  if (strchr(pattern, '%') || !strcmp(pattern, "stdout") || !strcmp(pattern, "stderr") ||
      !strcmp(pattern, "-") || gasneti_tracenodes_count(nodes, nranks) <= 1)
    return 0;
  snprintf(why, whylen, "%s='%s' names one file for several ranks (%s='%s'): put '%%' in it, "
           "which stands for the rank (e.g. %s-%%)", file_knob, pattern, nodes_knob, nodes,
           pattern);
  return 1;
}
