/* knobs.c: the knob table and its value parsers.
 * The only file of the runtime that calls getenv() on a GASNET_* name. */
#include "knobs.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "gasnet_internal.h"

#define BIG 9.0e18

const gasneti_knob_t gasneti_knob_table[] = {
    {"GASNET_SUPERNODE_MAXSIZE", GASNETI_KNOB_INT, "0", 0, GASNET_MAXNODES, "ranks",
     GASNETI_SCOPE_JOB, "all",
     "Most ranks per shared-memory supernode (0: all ranks of a host; 1: no PSHM peers)."},
    {"GASNET_PSHM_NODES", GASNETI_KNOB_INT, "0", 0, 256, "ranks", GASNETI_SCOPE_JOB, "smp",
     "Without a launcher, fork into this many ranks on this host (0 or 1: a 1-rank job)."},
    {"GASNET_MAX_SEGSIZE", GASNETI_KNOB_SIZE, "", 4096, BIG, "bytes", GASNETI_SCOPE_RANK, "all",
     "Largest segment per rank (default: 85% of this host's free shared memory / ranks on it)."},
    {"GASNET_EXITTIMEOUT", GASNETI_KNOB_DOUBLE, "", 0.001, 86400, "seconds", GASNETI_SCOPE_JOB,
     "all",
     "Time for all ranks to leave after one exits (default: min(_MAX, _MIN + _FACTOR * ranks))."},
    {"GASNET_EXITTIMEOUT_MAX", GASNETI_KNOB_DOUBLE, "360", 0.001, 86400, "seconds",
     GASNETI_SCOPE_JOB, "all", "Upper bound of the computed GASNET_EXITTIMEOUT."},
    {"GASNET_EXITTIMEOUT_MIN", GASNETI_KNOB_DOUBLE, "2", 0.001, 86400, "seconds",
     GASNETI_SCOPE_JOB, "all", "Constant part of the computed GASNET_EXITTIMEOUT."},
    {"GASNET_EXITTIMEOUT_FACTOR", GASNETI_KNOB_DOUBLE, "0.25", 0, 3600, "seconds/rank",
     GASNETI_SCOPE_JOB, "all", "Per-rank part of the computed GASNET_EXITTIMEOUT."},
    {"GASNET_VERBOSEENV", GASNETI_KNOB_BOOL, "0", 0, 1, "", GASNETI_SCOPE_RANK, "all",
     "Rank 0 prints every knob it read, its value, and whether it was the default."},
};
const size_t gasneti_knob_count = sizeof(gasneti_knob_table) / sizeof(gasneti_knob_table[0]);

const gasneti_knob_t *gasneti_knob_find(const char *name) {
  for (size_t i = 0; i < gasneti_knob_count; i++)
    if (strcmp(gasneti_knob_table[i].name, name) == 0) return &gasneti_knob_table[i];
  return NULL;
}

static const char *const accepted_form[] = {
    [GASNETI_KNOB_BOOL] = "a boolean: 1/0, yes/no, true/false, on/off",
    [GASNETI_KNOB_INT] = "an integer",
    [GASNETI_KNOB_SIZE] = "a size in bytes with optional K, M, G or T suffix (e.g. 512M)",
    [GASNETI_KNOB_DOUBLE] = "a decimal number (e.g. 2.5)",
};

static bool parse_bool(const char *s, double *out) {
  static const char *const yes[] = {"1", "y", "yes", "true", "on"};
  static const char *const no[] = {"0", "n", "no", "false", "off"};
  for (size_t i = 0; i < 5; i++) {
    if (strcasecmp(s, yes[i]) == 0) return *out = 1, true;
    if (strcasecmp(s, no[i]) == 0) return *out = 0, true;
  }
  return false;
}

static bool parse_number(const char *s, bool allow_suffix, bool integral, double *out) {
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (end == s || errno == ERANGE || !isfinite(v)) return false;
  if (allow_suffix && *end) {
    static const char units[] = "KMGT";
    const char *u = strchr(units, toupper((unsigned char)*end));
    if (!u) return false;
    v *= pow(1024.0, (double)(u - units + 1));
    end++;
    if (toupper((unsigned char)*end) == 'B') end++;
  }
  while (isspace((unsigned char)*end)) end++;
  if (*end) return false;
  if (integral && v != floor(v)) return false;
  *out = v;
  return true;
}

bool gasneti_knob_parse(const gasneti_knob_t *knob, const char *text, double *out, char *err,
                        size_t errlen) {
  bool ok;
  while (isspace((unsigned char)*text)) text++;
  switch (knob->type) {
    case GASNETI_KNOB_BOOL: ok = parse_bool(text, out); break;
    case GASNETI_KNOB_INT: ok = parse_number(text, false, true, out); break;
    case GASNETI_KNOB_SIZE: ok = parse_number(text, true, true, out); break;
    default: ok = parse_number(text, false, false, out); break;
  }
  if (!ok) {
    snprintf(err, errlen, "%s='%s' is not valid: expected %s", knob->name, text,
             accepted_form[knob->type]);
    return false;
  }
  if (*out < knob->min || *out > knob->max) {
    snprintf(err, errlen, "%s='%s' is out of range: expected %.17g..%.17g %s", knob->name, text,
             knob->min, knob->max, knob->unit);
    return false;
  }
  return true;
}

static const gasneti_knob_t *must_find(const char *name) {
  const gasneti_knob_t *knob = gasneti_knob_find(name);
  if (!knob) gasneti_fatalerror("internal: knob %s is not in the knob table", name);
  return knob;
}

bool gasneti_knob_is_set(const char *name) {
  must_find(name);
  const char *v = getenv(name);
  return v && *v;
}

/* GASNET_VERBOSEENV itself is read without echo, to avoid recursing. */
bool gasneti_knobs_verbose(void) {
  static int cached = -1;
  if (cached < 0) {
    const char *v = getenv("GASNET_VERBOSEENV");
    double out = 0;
    cached = (v && parse_bool(v, &out) && out != 0) ? 1 : 0;
  }
  return cached == 1;
}

static double knob_value(const char *name) {
  const gasneti_knob_t *knob = must_find(name);
  const char *v = getenv(name);
  bool from_env = v && *v;
  const char *text = from_env ? v : knob->dflt;
  if (!*text) gasneti_fatalerror("internal: knob %s has a computed default; check is_set", name);
  double out;
  char err[256];
  if (!gasneti_knob_parse(knob, text, &out, err, sizeof err)) gasneti_fatalerror("%s", err);
  if (gasneti_mynode == 0 && gasneti_knobs_verbose())
    fprintf(stderr, "GASNET knob %s = %s (%s)\n", name, text, from_env ? "environment" : "default");
  return out;
}

bool gasneti_knob_bool(const char *name) { return knob_value(name) != 0; }
int64_t gasneti_knob_int(const char *name) { return (int64_t)knob_value(name); }
uint64_t gasneti_knob_size(const char *name) { return (uint64_t)knob_value(name); }
double gasneti_knob_double(const char *name) { return knob_value(name); }
