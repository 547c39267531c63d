/* front_util.c: string vectors and allocation for gasnetrun's compiled front; out of memory
 * ends it (nothing has started yet, or the launcher ends with it). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "front.h"

static void *checked(void *p) {
  if (!p) {
    fputs("gasnetrun: out of memory\n", stderr);
    exit(1);
  }
  return p;
}

char *gasneti_front_strdup(const char *text) { return checked(strdup(text)); }

char *gasneti_front_printf(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *out = NULL;
  int n = vasprintf(&out, fmt, ap);
  va_end(ap);
  return checked(n < 0 ? NULL : out);
}

void gasneti_strv_take(gasneti_strv_t *s, char *text) {
  if (s->n + 2 > s->cap) {
    s->cap = s->cap ? 2 * s->cap : 16;
    s->v = checked(realloc(s->v, s->cap * sizeof *s->v));
  }
  s->v[s->n++] = text;
  s->v[s->n] = NULL;
}

void gasneti_strv_push(gasneti_strv_t *s, const char *text) {
  gasneti_strv_take(s, gasneti_front_strdup(text));
}

void gasneti_strv_free(gasneti_strv_t *s) {
  for (size_t i = 0; i < s->n; i++) free(s->v[i]);
  free(s->v);
  *s = (gasneti_strv_t){0};
}

int gasneti_front_has_word(const char *list, const char *word) {
  size_t len = strlen(word);
  for (const char *p = list; *p;) {
    const char *end = strchr(p, ',');
    size_t n = end ? (size_t)(end - p) : strlen(p);
    if (n == len && strncmp(p, word, len) == 0) return 1;
    if (!end) break;
    p = end + 1;
  }
  return 0;
}
