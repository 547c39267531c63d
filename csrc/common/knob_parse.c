/* knob_parse.c: parsing knob values of every type into a canonical form, and the arithmetic
 * that turns memory knobs into a segment budget and exit knobs into a timeout. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "knob_api.h"

static const char *const type_names[] = {
    [GASNETI_KNOB_BOOL] = "bool",          [GASNETI_KNOB_INT] = "int",
    [GASNETI_KNOB_SIZE] = "size",          [GASNETI_KNOB_DOUBLE] = "number",
    [GASNETI_KNOB_FRACTION_SIZE] = "fraction-or-size", [GASNETI_KNOB_SEGSIZE] = "segment-size",
    [GASNETI_KNOB_ENUM] = "enum",          [GASNETI_KNOB_STRING] = "string",
    [GASNETI_KNOB_LIST] = "list",          [GASNETI_KNOB_FILENAME] = "filename",
    [GASNETI_KNOB_CUSTOM] = "custom",
};

/* A custom form's own name (e.g. "ports"), else the type's. */
const char *gasneti_knob_type_name(const gasneti_knob_t *knob) {
  return knob->type == GASNETI_KNOB_CUSTOM && knob->syntax ? knob->syntax->type_name
                                                           : type_names[knob->type];
}

const char *gasneti_knob_accepted_form(const gasneti_knob_t *knob) {
  switch (knob->type) {
    case GASNETI_KNOB_BOOL: return "a boolean: 1/0, yes/no, y/n, true/false, on/off";
    case GASNETI_KNOB_INT: return "an integer";
    case GASNETI_KNOB_SIZE: return "a size in bytes with optional K, M, G or T suffix (e.g. 512M)";
    case GASNETI_KNOB_DOUBLE: return "a decimal number (e.g. 2.5)";
    case GASNETI_KNOB_FRACTION_SIZE:
      return "a size (e.g. 16G) or a fraction of physical memory (e.g. 0.5 or 2/3)";
    case GASNETI_KNOB_SEGSIZE:
      return "a size (e.g. 512M) or a fraction of physical memory (e.g. 0.85 or 2/3), optionally "
             "followed by /H (per host) or /P (per process)";
    case GASNETI_KNOB_ENUM: return knob->choices;
    case GASNETI_KNOB_STRING: return "any text";
    case GASNETI_KNOB_LIST:
      if (knob->choices) {
        static _Thread_local char form[256];
        snprintf(form, sizeof form, "comma-separated words, each one of %s", knob->choices);
        return form;
      }
      return "comma-separated words (e.g. a,b,c)";
    case GASNETI_KNOB_FILENAME: return "a file name, where '%' stands for the rank";
    case GASNETI_KNOB_CUSTOM: return knob->syntax ? knob->syntax->accepted : "?";
  }
  return "?";
}

/* The variable's name as given to gasneti_knob_check (a family member's own name). */
static _Thread_local const char *display_name;

/* ---- numbers ----------------------------------------------------------------------------- */
static const char *skip_space(const char *s) {
  while (isspace((unsigned char)*s)) s++;
  return s;
}

static int trailing_space_only(const char *s) { return *skip_space(s) == '\0'; }

int gasneti_knob_blank(const char *text) { return text == NULL || trailing_space_only(text); }

/* A decimal number with an optional K/M/G/T[B] suffix when allow_suffix. *bad points at the
 * first character that does not belong on failure. */
static int parse_number(const char *s, int allow_suffix, double *out, const char **bad) {
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (end == s || errno == ERANGE || !isfinite(v)) {
    *bad = s;
    return 0;
  }
  if (allow_suffix && *end && !isspace((unsigned char)*end)) {
    static const char units[] = "KMGT";
    const char *u = strchr(units, toupper((unsigned char)*end));
    if (!u || !*end) {
      *bad = end;
      return 0;
    }
    v *= pow(1024.0, (double)(u - units + 1));
    end++;
    if (toupper((unsigned char)*end) == 'B') end++;
  }
  if (!trailing_space_only(end)) {
    *bad = end;
    return 0;
  }
  *out = v;
  return 1;
}

static int fail(char *err, size_t errlen, const gasneti_knob_t *k, const char *text,
                const char *why) {
  snprintf(err, errlen, "%s='%s'%s%s: expected %s", display_name ? display_name : k->name, text, why ? ": " : "",
           why ? why : "", gasneti_knob_accepted_form(k));
  return 0;
}

static int fail_at(char *err, size_t errlen, const gasneti_knob_t *k, const char *text,
                   const char *bad) {
  char why[128];
  snprintf(why, sizeof why, "'%s' is not understood", bad);
  return fail(err, errlen, k, text, why);
}

/* ---- memory sizes ------------------------------------------------------------------------ */
int gasneti_parse_memsize(const char *text, int allow_scope, gasneti_memsize_t *out, char *err,
                          size_t errlen) {
  char buf[128];
  snprintf(buf, sizeof buf, "%s", skip_space(text));
  size_t n = strlen(buf);
  while (n && isspace((unsigned char)buf[n - 1])) buf[--n] = '\0';
  out->per_host = 0;
  if (allow_scope && n >= 2 && buf[n - 2] == '/' && strchr("HhPp", buf[n - 1])) {
    out->per_host = toupper((unsigned char)buf[n - 1]) == 'H';
    buf[n -= 2] = '\0';
  }
  const char *bad;
  char *slash = strchr(buf, '/');
  if (slash) { /* "a/b": a fraction of physical memory */
    *slash = '\0';
    double a, b;
    if (!parse_number(buf, 0, &a, &bad) || !parse_number(slash + 1, 0, &b, &bad)) {
      snprintf(err, errlen, "'%s' is not a fraction a/b", text);
      return 0;
    }
    if (!(b > 0) || !(a > 0) || a > b) {
      snprintf(err, errlen, "fraction '%s' must lie in (0, 1]", text);
      return 0;
    }
    out->is_fraction = 1;
    out->value = a / b;
    return 1;
  }
  double v;
  if (!parse_number(buf, 1, &v, &bad)) {
    snprintf(err, errlen, "'%s' is not understood", *bad ? bad : buf);
    return 0;
  }
  if (!(v > 0)) {
    snprintf(err, errlen, "'%s' must be more than 0", text);
    return 0;
  }
  out->is_fraction = v < 1.0;
  out->value = out->is_fraction ? v : floor(v);
  return 1;
}

static int check_memsize(const gasneti_knob_t *k, const char *text, char *canon, size_t canonlen,
                         char *err, size_t errlen) {
  gasneti_memsize_t m;
  char why[160];
  if (!gasneti_parse_memsize(text, k->type == GASNETI_KNOB_SEGSIZE, &m, why, sizeof why))
    return fail(err, errlen, k, text, why);
  if (!m.is_fraction && (m.value < k->min || m.value > k->max)) {
    snprintf(why, sizeof why, "out of range %.0f..%.0f bytes", k->min, k->max);
    return fail(err, errlen, k, text, why);
  }
  const char *scope = k->type != GASNETI_KNOB_SEGSIZE ? "" : m.per_host ? "/H" : "/P";
  if (m.is_fraction) snprintf(canon, canonlen, "fraction:%.17g%s", m.value, scope);
  else snprintf(canon, canonlen, "size:%.0f%s", m.value, scope);
  return 1;
}

/* ---- everything else --------------------------------------------------------------------- */
static int check_bool(const gasneti_knob_t *k, const char *text, char *canon, size_t canonlen,
                      char *err, size_t errlen) {
  static const char *const yes[] = {"1", "y", "yes", "true", "on"};
  static const char *const no[] = {"0", "n", "no", "false", "off"};
  const char *s = skip_space(text);
  for (size_t i = 0; i < 5; i++) {
    if (strcasecmp(s, yes[i]) == 0) return snprintf(canon, canonlen, "bool:1"), 1;
    if (strcasecmp(s, no[i]) == 0) return snprintf(canon, canonlen, "bool:0"), 1;
  }
  return fail(err, errlen, k, text, NULL);
}

/* A bound as people write it: the fewest digits that read back as the same double (the
 * table's 0.00001 is 1.0000000000000001e-05 at 17 digits). */
static void shortest(double v, char *buf, size_t len) {
  for (int digits = 6; digits < 17; digits++) {
    snprintf(buf, len, "%.*g", digits, v);
    if (strtod(buf, NULL) == v) return;
  }
  snprintf(buf, len, "%.17g", v);
}

static int check_numeric(const gasneti_knob_t *k, const char *text, char *canon, size_t canonlen,
                         char *err, size_t errlen) {
  const char *s = skip_space(text), *bad;
  double v;
  if (!parse_number(s, k->type == GASNETI_KNOB_SIZE, &v, &bad)) return fail_at(err, errlen, k, text, *bad ? bad : s);
  if (k->type != GASNETI_KNOB_DOUBLE && v != floor(v))
    return fail(err, errlen, k, text, "not a whole number");
  if (v < k->min || v > k->max) {
    char why[128], lo[32], hi[32];
    shortest(k->min, lo, sizeof lo);
    shortest(k->max, hi, sizeof hi);
    snprintf(why, sizeof why, "out of range %s..%s%s%s", lo, hi, *k->unit ? " " : "", k->unit);
    return fail(err, errlen, k, text, why);
  }
  if (k->type == GASNETI_KNOB_DOUBLE) snprintf(canon, canonlen, "number:%.17g", v);
  else snprintf(canon, canonlen, "%s:%.0f", k->type == GASNETI_KNOB_INT ? "int" : "size", v);
  return 1;
}

static int check_enum(const gasneti_knob_t *k, const char *text, char *canon, size_t canonlen,
                      char *err, size_t errlen) {
  const char *s = skip_space(text), *c = k->choices;
  size_t n = strlen(s);
  while (n && isspace((unsigned char)s[n - 1])) n--;
  while (*c) {
    size_t len = strcspn(c, "|");
    if (len == n && strncasecmp(c, s, n) == 0)
      return snprintf(canon, canonlen, "enum:%.*s", (int)len, c), 1;
    c += len + (c[len] == '|');
  }
  return fail(err, errlen, k, text, "not one of the choices");
}

/* Whether the n characters at s are one of the '|'-separated words (case-insensitive). */
static int one_of(const char *choices, const char *s, size_t n) {
  for (const char *c = choices; *c;) {
    size_t len = strcspn(c, "|");
    if (len == n && strncasecmp(c, s, n) == 0) return 1;
    c += len + (c[len] == '|');
  }
  return 0;
}

static int check_list(const gasneti_knob_t *k, const char *text, char *canon, size_t canonlen,
                      char *err, size_t errlen) {
  size_t used = (size_t)snprintf(canon, canonlen, "list:");
  const char *p = text;
  int items = 0;
  while (*p) {
    size_t len = strcspn(p, ",");
    const char *a = p, *b = p + len;
    while (a < b && isspace((unsigned char)*a)) a++;
    while (b > a && isspace((unsigned char)b[-1])) b--;
    if (a == b) return fail(err, errlen, k, text, "empty item");
    if (k->choices && !one_of(k->choices, a, (size_t)(b - a))) {
      char why[96];
      snprintf(why, sizeof why, "'%.*s' is not one of the choices", (int)(b - a > 40 ? 40 : b - a), a);
      return fail(err, errlen, k, text, why);
    }
    if (used < canonlen)
      used += (size_t)snprintf(canon + used, canonlen - used, "%s%.*s", items ? "," : "",
                               (int)(b - a), a);
    items++;
    p += len + (p[len] == ',');
  }
  if (!items) return fail(err, errlen, k, text, "no items");
  return 1;
}

static int check_custom(const gasneti_knob_t *k, const char *text, char *canon,
                        size_t canonlen, char *err, size_t errlen) {
  char why[160] = "no parser for this knob's form";
  if (!k->syntax || !k->syntax->check(text, canon, canonlen, why, sizeof why))
    return fail(err, errlen, k, text, why);
  return 1;
}

static int check(const gasneti_knob_t *k, const char *text, char *canon, size_t canonlen,
                 char *err, size_t errlen) {
  switch (k->type) {
    case GASNETI_KNOB_BOOL: return check_bool(k, text, canon, canonlen, err, errlen);
    case GASNETI_KNOB_INT:
    case GASNETI_KNOB_SIZE:
    case GASNETI_KNOB_DOUBLE: return check_numeric(k, text, canon, canonlen, err, errlen);
    case GASNETI_KNOB_FRACTION_SIZE:
    case GASNETI_KNOB_SEGSIZE: return check_memsize(k, text, canon, canonlen, err, errlen);
    case GASNETI_KNOB_ENUM: return check_enum(k, text, canon, canonlen, err, errlen);
    case GASNETI_KNOB_LIST: return check_list(k, text, canon, canonlen, err, errlen);
    case GASNETI_KNOB_CUSTOM: return check_custom(k, text, canon, canonlen, err, errlen);
    case GASNETI_KNOB_FILENAME:
      if (!*skip_space(text)) return fail(err, errlen, k, text, "empty");
      return snprintf(canon, canonlen, "file:%s", text), 1;
    case GASNETI_KNOB_STRING: return snprintf(canon, canonlen, "string:%s", text), 1;
  }
  return fail(err, errlen, k, text, "unknown type");
}

int gasneti_knob_check(const gasneti_knob_t *k, const char *name, const char *text, char *canon,
                       size_t canonlen, char *err, size_t errlen) {
  display_name = name;
  int ok = check(k, text, canon, canonlen, err, errlen);
  display_name = NULL;
  return ok;
}

/* ---- derived values ---------------------------------------------------------------------- */
static double resolve(const gasneti_memsize_t *m, uint64_t host_memory) {
  return m->is_fraction ? m->value * (double)host_memory : m->value;
}

uint64_t gasneti_segment_budget(const char *max_segsize, const char *physmem_max,
                                uint64_t host_memory, uint64_t shm_free, int ranks_on_host,
                                uint64_t queue_bytes, uint64_t pinned_bytes, char *err,
                                size_t errlen) {
  gasneti_memsize_t seg, phys;
  const gasneti_knob_t *kseg = gasneti_knob_find("GASNET_MAX_SEGSIZE");
  const gasneti_knob_t *kphys = gasneti_knob_find("GASNET_PHYSMEM_MAX");
  char why[160];
  const char *seg_text = !gasneti_knob_blank(max_segsize) ? max_segsize : kseg->dflt;
  const char *phys_text = !gasneti_knob_blank(physmem_max) ? physmem_max : kphys->dflt;
  if (errlen) err[0] = '\0';
  if (!gasneti_parse_memsize(seg_text, 1, &seg, why, sizeof why)) {
    snprintf(err, errlen, "GASNET_MAX_SEGSIZE='%s': %s", seg_text, why);
    return 0;
  }
  if (!gasneti_parse_memsize(phys_text, 0, &phys, why, sizeof why)) {
    snprintf(err, errlen, "GASNET_PHYSMEM_MAX='%s': %s", phys_text, why);
    return 0;
  }
  double ranks = ranks_on_host > 0 ? ranks_on_host : 1;
  /* The host's AM queues come first: they live in the same memory and /dev/shm. */
  double q = (double)queue_bytes;
  double seg_share = resolve(&seg, host_memory) / (seg.per_host ? ranks : 1);
  double phys_share = (resolve(&phys, host_memory) - q) / ranks - (double)pinned_bytes;
  double shm_share = ((double)shm_free - q) / ranks;
  double budget = seg_share;
  if (phys_share < budget) budget = phys_share;
  if (shm_free && shm_share < budget) budget = shm_share;
  uint64_t bytes = budget <= 0 ? 0 : budget > 9.0e18 ? (uint64_t)9.0e18 : (uint64_t)budget;
  bytes -= bytes % 4096;
  if (bytes == 0)
    snprintf(err, errlen,
             "the segment budget per rank rounds to 0 bytes (at least one 4096-byte page is "
             "needed): GASNET_MAX_SEGSIZE='%s' gives %.0f, GASNET_PHYSMEM_MAX='%s' gives %.0f "
             "after %.0f bytes of AM queues, shared among %d ranks, less %llu bytes of "
             "buffers each rank pins, and free /dev/shm %llu bytes gives %.0f",
             seg_text, seg_share, phys_text, phys_share, q, (int)ranks,
             (unsigned long long)pinned_bytes, (unsigned long long)shm_free, shm_share);
  return bytes;
}

double gasneti_exit_timeout_of(const char *timeout, const char *max, const char *min,
                               const char *factor, int ranks, char *err, size_t errlen) {
  const char *names[4] = {"GASNET_EXITTIMEOUT", "GASNET_EXITTIMEOUT_MAX",
                          "GASNET_EXITTIMEOUT_MIN", "GASNET_EXITTIMEOUT_FACTOR"};
  const char *texts[4] = {timeout, max, min, factor};
  double v[4] = {-1, 0, 0, 0};
  for (int i = 0; i < 4; i++) {
    const gasneti_knob_t *k = gasneti_knob_find(names[i]);
    const char *t = !gasneti_knob_blank(texts[i]) ? texts[i] : k->dflt;
    if (!*t) continue; /* GASNET_EXITTIMEOUT unset: computed below */
    char canon[64];
    if (!gasneti_knob_check(k, NULL, t, canon, sizeof canon, err, errlen)) return -1;
    v[i] = strtod(canon + strlen("number:"), NULL);
  }
  if (v[0] >= 0) return v[0];
  double t = v[2] + v[3] * ranks;
  return t < v[1] ? t : v[1];
}

double gasneti_exit_grace(double timeout) { return timeout / 4 < 1.0 ? timeout / 4 : 1.0; }

int gasneti_expand_filename(const char *pattern, int rank, char *out, size_t outlen) {
  size_t used = 0;
  for (const char *p = pattern; *p; p++) {
    int n = *p == '%' ? snprintf(out + used, outlen - used, "%d", rank)
                      : snprintf(out + used, outlen - used, "%c", *p);
    if (n < 0 || (size_t)n >= outlen - used) return 0;
    used += (size_t)n;
  }
  if (used == 0 && outlen) out[0] = '\0';
  return 1;
}

void gasneti_free(void *p) { free(p); }
