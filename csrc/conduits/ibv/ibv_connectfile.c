/* ibv_connectfile.c: GASNET_CONNECTFILE_IN/OUT files: lines "node: peer peer a-b ...", optional
 * "size: N" and "base: B" (2..36) lines. Parse errors carry file, line and column. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ibv_plan.h"

int gasneti_conngraph_add(gasneti_conngraph_t *g, int a, int b) {
  if (a == b) return 1; /* a rank is always "connected" to itself */
  if (g->nedges == g->capacity) {
    int cap = g->capacity ? 2 * g->capacity : 256;
    int32_t *e = realloc(g->edges, sizeof(int32_t) * 2 * (size_t)cap);
    if (!e) return 0;
    g->edges = e;
    g->capacity = cap;
  }
  g->edges[2 * g->nedges] = a < b ? a : b;
  g->edges[2 * g->nedges + 1] = a < b ? b : a;
  g->nedges++;
  return 1;
}

void gasneti_conngraph_free(gasneti_conngraph_t *g) {
  free(g->edges);
  g->edges = NULL;
  g->nedges = g->capacity = 0;
}

typedef struct {
  const char *file;
  int line;
  const char *line_start;
  char *err;
  size_t errlen;
} where_t;

static int error_at(where_t *w, const char *at, const char *fmt, const char *detail) {
  int col = (int)(at - w->line_start) + 1;
  char msg[200];
  snprintf(msg, sizeof msg, fmt, detail);
  snprintf(w->err, w->errlen, "%s:%d:%d: %s", w->file, w->line, col, msg);
  return 0;
}

static int digit_value(int c) {
  if (c >= '0' && c <= '9') return c - '0';
  c = tolower(c);
  if (c >= 'a' && c <= 'z') return c - 'a' + 10;
  return 99;
}

/* A node number in base; advances *p. */
static int read_number(where_t *w, const char **p, int base, long *out) {
  const char *s = *p;
  long v = 0;
  while (digit_value((unsigned char)**p) < base) {
    v = v * base + digit_value((unsigned char)**p);
    if (v > 1L << 30) return error_at(w, s, "node number too large%s", "");
    (*p)++;
  }
  if (*p == s) {
    char what[8] = {**p ? **p : '?', 0};
    return error_at(w, s, "expected a node number, found '%s'", what);
  }
  *out = v;
  return 1;
}

static int read_decimal_line(where_t *w, const char *p, const char *end, long *out) {
  while (p < end && isspace((unsigned char)*p)) p++;
  if (!read_number(w, &p, 10, out)) return 0;
  while (p < end && isspace((unsigned char)*p)) p++;
  if (p != end) return error_at(w, p, "unexpected text after the number%s", "");
  return 1;
}

int gasneti_connectfile_parse(const char *text, const char *filename, int job_size,
                              gasneti_conngraph_t *out, char *err, size_t errlen) {
  memset(out, 0, sizeof *out);
  out->size = -1;
  where_t w = {filename ? filename : "<connect file>", 0, text, err, errlen};
  int base = 10;
  int limit = job_size > 0 ? job_size : -1;
  const char *p = text;
  while (*p) {
    const char *end = p + strcspn(p, "\n");
    w.line++;
    w.line_start = p;
    const char *s = p;
    while (s < end && isspace((unsigned char)*s)) s++;
    if (s == end) goto next;
    if (strncmp(s, "size:", 5) == 0 || strncmp(s, "base:", 5) == 0) {
      long v;
      if (!read_decimal_line(&w, s + 5, end, &v)) goto fail;
      if (s[0] == 'b') {
        if (v < 2 || v > 36) {
          error_at(&w, s + 5, "base must be 2..36%s", "");
          goto fail;
        }
        base = (int)v;
      } else {
        if (job_size > 0 && v != job_size) {
          char d[32];
          snprintf(d, sizeof d, "%d", job_size);
          error_at(&w, s + 5, "size does not match the job's %s ranks", d);
          goto fail;
        }
        out->size = (int)v;
        if (limit < 0) limit = (int)v;
      }
      goto next;
    }
    long node;
    if (!read_number(&w, &s, base, &node)) goto fail;
    if (limit >= 0 && node >= limit) {
      error_at(&w, s - 1, "node number is beyond the job's last rank%s", "");
      goto fail;
    }
    while (s < end && (*s == ' ' || *s == '\t')) s++;
    if (s == end || *s != ':') {
      error_at(&w, s, "expected ':' after the node number%s", "");
      goto fail;
    }
    s++;
    for (;;) {
      while (s < end && isspace((unsigned char)*s)) s++;
      if (s >= end) break;
      const char *item = s;
      long lo, hi;
      if (!read_number(&w, &s, base, &lo)) goto fail;
      hi = lo;
      if (s < end && *s == '-') {
        s++;
        if (!read_number(&w, &s, base, &hi)) goto fail;
        if (hi < lo) {
          error_at(&w, item, "range goes backwards%s", "");
          goto fail;
        }
      }
      if (s < end && !isspace((unsigned char)*s)) {
        char what[8] = {*s, 0};
        error_at(&w, s, "unexpected '%s'", what);
        goto fail;
      }
      if (limit >= 0 && hi >= limit) {
        error_at(&w, item, "peer is beyond the job's last rank%s", "");
        goto fail;
      }
      for (long peer = lo; peer <= hi; peer++)
        if (!gasneti_conngraph_add(out, (int)node, (int)peer)) {
          error_at(&w, item, "out of memory%s", "");
          goto fail;
        }
    }
  next:
    p = *end ? end + 1 : end;
  }
  return 1;
fail:
  gasneti_conngraph_free(out);
  return 0;
}

static int cmp_edge(const void *a, const void *b) {
  const int32_t *x = a, *y = b;
  if (x[0] != y[0]) return x[0] < y[0] ? -1 : 1;
  return (x[1] > y[1]) - (x[1] < y[1]);
}

/* Appends v in base to buf. */
static size_t put_number(char *buf, long v, int base) {
  char tmp[40];
  int n = 0;
  do {
    int d = (int)(v % base);
    tmp[n++] = (char)(d < 10 ? '0' + d : 'a' + d - 10);
    v /= base;
  } while (v);
  for (int i = 0; i < n; i++) buf[i] = tmp[n - 1 - i];
  return (size_t)n;
}

char *gasneti_connectfile_write(const gasneti_conngraph_t *g, int nodes, int base) {
  if (base < 2 || base > 36 || nodes < 0) return NULL;
  int32_t *e = malloc(sizeof(int32_t) * 2 * (size_t)(g->nedges ? g->nedges : 1));
  if (!e) return NULL;
  memcpy(e, g->edges, sizeof(int32_t) * 2 * (size_t)g->nedges);
  qsort(e, (size_t)g->nedges, 2 * sizeof(int32_t), cmp_edge);
  /* Worst case per edge: a separator and a number of up to 32 digits, plus line heads. */
  size_t cap = 64 + (size_t)g->nedges * 35 + (size_t)nodes * 36;
  char *out = malloc(cap), *o = out;
  if (!out) return free(e), NULL;
  o += sprintf(o, "size: %d\nbase: %d\n", nodes, base);
  for (int i = 0; i < g->nedges;) {
    int a = e[2 * i];
    o += put_number(o, a, base);
    *o++ = ':';
    while (i < g->nedges && e[2 * i] == a) {
      int lo = e[2 * i + 1], hi = lo;
      i++;
      /* Extend over duplicates and consecutive peers into one range. */
      while (i < g->nedges && e[2 * i] == a && e[2 * i + 1] <= hi + 1) hi = e[2 * i++ + 1];
      *o++ = ' ';
      o += put_number(o, lo, base);
      if (hi > lo) {
        *o++ = '-';
        o += put_number(o, hi, base);
      }
    }
    *o++ = '\n';
  }
  *o = '\0';
  free(e);
  return out;
}
