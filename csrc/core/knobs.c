/* knobs.c: the runtime's reader of the knob table: the only place in csrc that calls getenv()
 * on a GASNET_* name. With GASNET_VERBOSEENV, rank 0 reports each knob the first time it is read. */
#include "knobs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gasnet_internal.h"

static const gasneti_knob_t *must_find(const char *name) {
  const gasneti_knob_t *knob = gasneti_knob_find(name);
  if (!knob) gasneti_fatalerror("internal: knob %s is not in the knob table", name);
  return knob;
}

static bool verbose(void) {
  static int cached = -1;
  if (cached < 0) {
    const gasneti_knob_t *k = must_find("GASNET_VERBOSEENV");
    const char *v = getenv(k->name);
    char canon[32], err[256];
    cached = !gasneti_knob_blank(v) && gasneti_knob_check(k, NULL, v, canon, sizeof canon, err, sizeof err) &&
             strcmp(canon, "bool:1") == 0;
  }
  return cached == 1;
}

static void report(const gasneti_knob_t *k, const char *text, bool from_env) {
  static bool *reported; /* one flag per knob of the table, however many it has */
  if (!verbose() || gasneti_mynode != 0) return;
  if (!reported) reported = gasneti_calloc(gasneti_knob_count(), sizeof(bool));
  size_t idx = 0;
  while (gasneti_knob_at(idx) != k) idx++;
  if (reported[idx]) return;
  reported[idx] = true;
  fprintf(stderr, "GASNET knob %-26s = %-12s (%s)\n", k->name, *text ? text : "(computed)",
          from_env ? "environment" : "default");
}

const char *gasneti_knob_text(const char *name) {
  const gasneti_knob_t *k = must_find(name);
  const char *v = getenv(name);
  bool set = !gasneti_knob_blank(v);
  char canon[256], err[512];
  if (set && !gasneti_knob_check(k, name, v, canon, sizeof canon, err, sizeof err))
    gasneti_fatalerror("%s", err);
  report(k, set ? v : k->dflt, set);
  return set ? v : NULL;
}

bool gasneti_knob_is_set(const char *name) { return gasneti_knob_text(name) != NULL; }

/* The value as canonical text ("int:12", "bool:1", ...), from the environment or default. */
static const char *canonical(const char *name, char *canon, size_t len) {
  const gasneti_knob_t *k = must_find(name);
  const char *text = gasneti_knob_text(name);
  if (!text) text = k->dflt;
  if (!*text) gasneti_fatalerror("internal: knob %s has a computed default", name);
  char err[512];
  if (!gasneti_knob_check(k, name, text, canon, len, err, sizeof err))
    gasneti_fatalerror("internal: default of %s: %s", name, err);
  return strchr(canon, ':') + 1;
}

bool gasneti_knob_bool(const char *name) {
  char c[64];
  return strcmp(canonical(name, c, sizeof c), "1") == 0;
}
int64_t gasneti_knob_int(const char *name) {
  char c[64];
  return strtoll(canonical(name, c, sizeof c), NULL, 10);
}
uint64_t gasneti_knob_size(const char *name) {
  char c[64];
  return strtoull(canonical(name, c, sizeof c), NULL, 10);
}
double gasneti_knob_double(const char *name) {
  char c[64];
  return strtod(canonical(name, c, sizeof c), NULL);
}
bool gasneti_knob_enum_is(const char *name, const char *choice) {
  char c[64];
  return strcmp(canonical(name, c, sizeof c), choice) == 0;
}
