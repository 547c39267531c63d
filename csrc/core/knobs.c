/* knobs.c: the runtime's reader of the knob table: the only place in csrc that calls getenv()
 * on a GASNET_* name. With GASNET_VERBOSEENV, rank 0 lists every knob of the table that concerns
 * its library, with its value and whether it is the default, at the end of gasnet_init. */
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

/* Whether a knob concerns this library: the core's, a network conduit's shared ones (not
 * smp's), or this conduit's own; families (GASNET_IBV_PORTS_<n>) are listed by their base. */
static bool concerns_me(const gasneti_knob_t *k) {
  if (strchr(k->name, '<')) return false;
  if (strcmp(k->conduits, "all") == 0) return true;
  if (strcmp(k->conduits, "network") == 0) return strcmp(GASNET_CONDUIT_NAME_STR, "smp") != 0;
  return strcmp(k->conduits, GASNET_CONDUIT_NAME_STR) == 0;
}

void gasneti_knob_report_all(void) {
  if (!verbose() || gasneti_mynode != 0) return;
  for (size_t i = 0; i < gasneti_knob_count(); i++) {
    const gasneti_knob_t *k = gasneti_knob_at(i);
    if (!concerns_me(k)) continue;
    const char *v = getenv(k->name);
    bool set = !gasneti_knob_blank(v);
    const char *text = set ? v : k->dflt;
    /* An empty default is computed (numbers) or means unset, as gasnetrun --knobs says. */
    bool number = k->type == GASNETI_KNOB_INT || k->type == GASNETI_KNOB_SIZE ||
                  k->type == GASNETI_KNOB_DOUBLE;
    fprintf(stderr, "GASNET knob %-26s = %-12s (%s)\n", k->name,
            *text ? text : number ? "(computed)" : "(unset)", set ? "environment" : "default");
  }
  fflush(stderr);
}

const char *gasneti_knob_text(const char *name) {
  const gasneti_knob_t *k = must_find(name);
  const char *v = getenv(name);
  bool set = !gasneti_knob_blank(v);
  char canon[256], err[512];
  if (set && !gasneti_knob_check(k, name, v, canon, sizeof canon, err, sizeof err))
    gasneti_fatalerror("%s", err);
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
