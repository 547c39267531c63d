/* tools_env.c: environment variables with defaults, and the number formats GASNet's
 * variables use (sizes with K/M/G/T suffixes). */
#include <ctype.h>

#include "tools_internal.h"

char *gasnett_getenv(const char *key) { return key ? getenv(key) : NULL; }
void gasnett_setenv(const char *key, const char *value) {
  if (setenv(key, value, 1) != 0) gasnett_fatalerror("gasnett_setenv(%s): %s", key, strerror(errno));
}
void gasnett_unsetenv(const char *key) { (void)unsetenv(key); }

int gasnett_verboseenv(void) {
  const char *v = getenv("GASNET_VERBOSEENV");
  return v && *v && *v != '0' && *v != 'n' && *v != 'N';
}

void gasnett_envstr_display(const char *key, const char *val, int is_dflt) {
  if (gasnett_verboseenv())
    fprintf(stderr, "ENV parameter: %s = %s%s\n", key, val ? val : "(unset)",
            is_dflt ? "   (default)" : "");
}
void gasnett_envint_display(const char *key, int64_t val, int is_dflt, int is_mem_size) {
  char buf[64];
  gasnett_envstr_display(key, gasnett_format_number(val, buf, sizeof buf, is_mem_size), is_dflt);
}
void gasnett_envdbl_display(const char *key, double val, int is_dflt) {
  char buf[64];
  snprintf(buf, sizeof buf, "%g", val);
  gasnett_envstr_display(key, buf, is_dflt);
}

char *gasnett_getenv_withdefault(const char *key, const char *defaultval) {
  char *v = gasnett_getenv(key);
  gasnett_envstr_display(key, v ? v : defaultval, v == NULL);
  return v ? v : (char *)defaultval;
}

int gasnett_getenv_yesno_withdefault(const char *key, int defaultval) {
  const char *v = gasnett_getenv(key);
  int result = defaultval;
  if (v && *v) {
    char c = (char)toupper((unsigned char)v[0]);
    if (c == 'Y' || c == '1') result = 1;
    else if (c == 'N' || c == '0') result = 0;
    else
      gasnett_fatalerror("%s=%s: expected a yes/no value (Y, YES, 1, N, NO or 0)", key, v);
  }
  gasnett_envstr_display(key, result ? "YES" : "NO", v == NULL);
  return result;
}

int64_t gasnett_getenv_int_withdefault(const char *key, int64_t defaultval,
                                       uint64_t mem_size_multiplier) {
  const char *v = gasnett_getenv(key);
  int64_t result = v && *v ? gasnett_parse_int(v, mem_size_multiplier) : defaultval;
  gasnett_envint_display(key, result, v == NULL, mem_size_multiplier != 0);
  return result;
}

double gasnett_getenv_dbl_withdefault(const char *key, double defaultval) {
  const char *v = gasnett_getenv(key);
  double result = defaultval;
  if (v && *v) {
    char *end;
    errno = 0;
    result = strtod(v, &end);
    while (isspace((unsigned char)*end)) end++;
    if (end == v || *end || errno)
      gasnett_fatalerror("%s=%s: expected a number (e.g. 2.5 or 1e-3)", key, v);
  }
  gasnett_envdbl_display(key, result, v == NULL);
  return result;
}

char *gasnett_format_number(int64_t val, char *buf, size_t bufsz, int is_mem_size) {
  static const char units[] = "KMGTPE";
  if (!is_mem_size || val == 0) {
    snprintf(buf, bufsz, "%" PRId64, val);
    return buf;
  }
  uint64_t mag = val < 0 ? (uint64_t)0 - (uint64_t)val : (uint64_t)val;
  int unit = -1;
  while (mag % 1024 == 0 && mag >= 1024 && unit < 5) mag /= 1024, unit++;
  if (unit < 0) snprintf(buf, bufsz, "%s%" PRIu64 " B", val < 0 ? "-" : "", mag);
  else snprintf(buf, bufsz, "%s%" PRIu64 " %cB", val < 0 ? "-" : "", mag, units[unit]);
  return buf;
}

int64_t gasnett_parse_int(const char *str, uint64_t mem_size_multiplier) {
  const char *p = str;
  while (isspace((unsigned char)*p)) p++;
  int negative = *p == '-';
  if (*p == '-' || *p == '+') p++;
  char *end;
  errno = 0;
  double whole = 0;
  uint64_t value = strtoull(p, &end, 0);
  int fractional = *end == '.';
  if (fractional) whole = strtod(p, &end); /* "1.5G" is allowed for sizes */
  if (end == p || errno) goto bad;
  /* A unit, as gasnett_format_number prints it ("4 KB", "1 B"): a space may come first, a B
   * may follow, and B alone means bytes (no multiplier). */
  while (isspace((unsigned char)*end)) end++;
  uint64_t scale = 1;
  int unit = 1;
  switch (toupper((unsigned char)*end)) {
    case 'K': scale = 1ull << 10; end++; break;
    case 'M': scale = 1ull << 20; end++; break;
    case 'G': scale = 1ull << 30; end++; break;
    case 'T': scale = 1ull << 40; end++; break;
    case 'P': scale = 1ull << 50; end++; break;
    case 'E': scale = 1ull << 60; end++; break;
    case 'B': break;
    default: unit = 0, scale = mem_size_multiplier ? mem_size_multiplier : 1; break;
  }
  if (unit && toupper((unsigned char)*end) == 'B') end++;
  while (isspace((unsigned char)*end)) end++;
  if (*end || (fractional && scale == 1)) goto bad;
  double as_double = fractional ? whole * (double)scale : (double)value * (double)scale;
  if (as_double > 9.2e18) goto bad;
  int64_t result = fractional ? (int64_t)as_double : (int64_t)(value * scale);
  return negative ? -result : result;
bad:
  gasnett_fatalerror("'%s' is not an integer this variable accepts (accepted: [-]digits or 0x "
                     "hex, optionally followed by K, M, G or T (or P, E), alone or with B, or B "
                     "alone, a space between allowed: 4K, 4 KB, 1 B)", str);
}
