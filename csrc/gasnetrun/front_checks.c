/* front_checks.c: the checks gasnetrun makes before a job starts, as its compiled front makes
 * them: the command line, the spawner, every GASNET_* variable against the knob table, the
 * host's shared memory and descriptors. Each answers "the front can go on" or "hand the job to
 * Python" (which finds the same problem and names it); none refuses a job by itself. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "knob_api.h"
#include "pshm_layout.h"
#include "front.h"

extern char **environ;

enum { MAX_RANKS = 65535, MAX_ARG_STRLEN = 32 * 4096 };

static int option_value(const char *token, const char *const *spellings, int argc, char **argv,
                        int *i, const char **value) {
  for (const char *const *s = spellings; *s; s++) {
    size_t len = strlen(*s);
    if (strcmp(token, *s) == 0) {
      *value = *i + 1 < argc ? argv[++*i] : NULL;
      return 1;
    }
    if ((*s)[1] == '-' && strncmp(token, *s, len) == 0 && token[len] == '=') {
      *value = token + len + 1;
      return 1;
    }
  }
  return 0;
}

int gasneti_front_parse_args(int argc, char **argv, gasneti_front_args_t *out) {
  static const char *const nranks_spellings[] = {"-n", "-np", "--np", NULL};
  static const char *const spawner_spellings[] = {"-spawner", "--spawner", NULL};
  *out = (gasneti_front_args_t){.nranks = -1};
  for (int i = 1; i < argc; i++) {
    const char *token = argv[i], *value = NULL;
    if (strcmp(token, "--") == 0) {
      out->program = i + 1 < argc ? i + 1 : 0;
      break;
    }
    if (token[0] != '-') {
      out->program = i;
      break;
    }
    if (strncmp(token, "-spawner=", 9) == 0) { /* GASNet's own spelling */
      if (out->spawner) return 0;
      out->spawner = token + 9;
      value = out->spawner;
    } else if (option_value(token, spawner_spellings, argc, argv, &i, &value)) {
      if (out->spawner || !value) return 0;
      out->spawner = value;
    } else if (option_value(token, nranks_spellings, argc, argv, &i, &value)) {
      if (out->nranks >= 0 || !value || !*value || strlen(value) > 9) return 0;
      long n = 0;
      for (const char *p = value; *p; p++) {
        if (*p < '0' || *p > '9') return 0;
        n = 10 * n + (*p - '0');
      }
      out->nranks = n;
    } else {
      return 0; /* an option only the Python gasnetrun knows */
    }
    if (!*value || value[0] == '-') return 0;
  }
  return out->program > 0 && out->nranks >= 1 && out->nranks <= MAX_RANKS;
}

const char *gasneti_front_env(const char *name) { return getenv(name); }

static int is_ascii_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

/* Python's str.strip() and this agree on text of printable ASCII and ASCII white space; for
 * anything else the answer is "unsure" (0). */
static int plain(const char *text) {
  for (const unsigned char *p = (const unsigned char *)text; *p; p++)
    if (*p >= 0x7f || (*p < 0x20 && !is_ascii_space((char)*p))) return 0;
  return 1;
}

int gasneti_front_strip_empty(const char *text) {
  if (!text) return 1;
  if (!plain(text)) return -1;
  return gasneti_front_blank(text);
}

int gasneti_front_blank(const char *text) {
  if (!text) return 1;
  for (; *text; text++)
    if (!is_ascii_space(*text)) return 0;
  return 1;
}

int gasneti_front_choose_spawner(const gasneti_front_args_t *args, const char **spawner) {
  const char *requested = args->spawner;
  const char *setting = gasneti_front_env("GASNET_SPAWNER");
  static char lowered[8];
  if (!requested && setting && !gasneti_front_blank(setting)) {
    if (!plain(setting)) return 0;
    while (is_ascii_space(*setting)) setting++;
    size_t n = strlen(setting);
    while (n && is_ascii_space(setting[n - 1])) n--;
    if (n >= sizeof lowered) return 0;
    for (size_t i = 0; i < n; i++)
      lowered[i] = (char)(setting[i] >= 'A' && setting[i] <= 'Z' ? setting[i] + 32 : setting[i]);
    lowered[n] = '\0';
    requested = lowered;
  }
  if (!requested) { /* chosen by the environment: the pmi spawner inside a Slurm allocation */
    if (gasneti_front_strip_empty(gasneti_front_env("SLURM_JOB_ID")) != 0) return 0;
    requested = "pmi";
  }
  if (strcmp(requested, "pmi") != 0 && strcmp(requested, "mpi") != 0) return 0;
  if (!gasneti_front_has_word(gasneti_front_spawners, requested)) return 0;
  *spawner = strcmp(requested, "pmi") == 0 ? "pmi" : "mpi";
  return 1;
}

static int by_name(const void *a, const void *b) {
  const char *x = *(const char *const *)a, *y = *(const char *const *)b;
  size_t nx = strcspn(x, "="), ny = strcspn(y, "=");
  int c = strncmp(x, y, nx < ny ? nx : ny);
  return c ? c : (nx > ny) - (nx < ny);
}

/* Every GASNET_* variable is a knob with a value its parser takes, no variable is too long
 * for exec, and every name is plain ASCII given once (Python's os.environ would keep the first
 * of two; the front hands on the environment as it is). */
int gasneti_front_check_environment(void) {
  size_t count = 0;
  for (char **e = environ; *e; e++) count++;
  const char **names = malloc((count + 1) * sizeof *names);
  if (!names) return 0;
  size_t n = 0;
  int ok = 1;
  char canon[1024], err[1024], name[256];
  for (char **e = environ; ok && *e; e++) {
    const char *eq = strchr(*e, '=');
    if (!eq) continue;
    size_t len = (size_t)(eq - *e);
    if (len == 0 || strlen(*e) + 1 > MAX_ARG_STRLEN) ok = 0;
    for (const unsigned char *p = (const unsigned char *)*e; ok && p < (const unsigned char *)eq; p++)
      if (*p >= 0x80 || *p < 0x20) ok = 0;
    if (!ok) break;
    names[n++] = *e;
    if (strncmp(*e, "GASNET_", 7) != 0) continue;
    if (len >= sizeof name) {
      ok = 0;
      break;
    }
    memcpy(name, *e, len);
    name[len] = '\0';
    const gasneti_knob_t *knob = gasneti_knob_find(name);
    if (!knob) ok = 0; /* unknown: a likely typo, or a warning; Python says which */
    /* A launch to narrate (GASNET_SPAWN_VERBOSE) is Python's, as -v is. */
    else if (strcmp(name, "GASNET_SPAWN_VERBOSE") == 0 && !gasneti_knob_blank(eq + 1)) ok = 0;
    else if (!gasneti_knob_blank(eq + 1) &&
             !gasneti_knob_check(knob, name, eq + 1, canon, sizeof canon, err, sizeof err))
      ok = 0;
  }
  if (ok) {
    qsort(names, n, sizeof *names, by_name);
    for (size_t i = 1; ok && i < n; i++)
      if (by_name(&names[i - 1], &names[i]) == 0) ok = 0;
  }
  free(names);
  return ok;
}

/* A digit range of a node list: "7", "1-4", "01-08" (ascending; padded ends of one width). */
static int node_range(const char *p, size_t n) {
  const char *dash = memchr(p, '-', n);
  size_t lo = dash ? (size_t)(dash - p) : n, hi = dash ? n - lo - 1 : 0;
  if (lo == 0 || lo > 9 || (dash && (hi == 0 || hi > 9))) return 0;
  if (strspn(p, "0123456789") < lo || (dash && strspn(dash + 1, "0123456789") < hi)) return 0;
  if (!dash) return 1;
  if (((p[0] == '0' && lo > 1) || (dash[1] == '0' && hi > 1)) && lo != hi) return 0;
  return lo < hi || (lo == hi && memcmp(p, dash + 1, lo) <= 0);
}

/* Node lists in the form Slurm writes them: names, or a name with one bracketed group of
 * ranges and an optional suffix ("node[1-4,7]-ib"), comma-separated. Anything else is for
 * Python's node-set parser to judge. */
static int node_list(const char *text) {
  static const char name_chars[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                   "0123456789._-";
  const char *p = text;
  for (;;) {
    size_t prefix = strspn(p, name_chars);
    p += prefix;
    if (*p == '[') {
      if (prefix == 0) return 0;
      const char *close = strchr(p, ']');
      if (!close) return 0;
      for (const char *r = p + 1; r < close;) {
        const char *end = memchr(r, ',', (size_t)(close - r));
        if (!end) end = close;
        if (!node_range(r, (size_t)(end - r))) return 0;
        r = end == close ? close : end + 1;
        if (end != close && r == close) return 0; /* a trailing comma */
      }
      p = close + 1;
      p += strspn(p, name_chars);
    } else if (prefix == 0) {
      return 0; /* an empty item */
    }
    if (*p == '\0') return 1;
    if (*p != ',') return 0;
    p++;
  }
}

/* Hosts the job may span: only a Slurm allocation's node list is read here, and only in the
 * forms Slurm writes; other sources are parsed by Python. The shared-memory and descriptor
 * checks assume every rank on this host: when that passes, Python's check of this host's
 * share does. */
int gasneti_front_check_host(int nranks, const char **host_variable, unsigned long *descriptors) {
  static const char *const sources[] = {"GASNET_SSH_SERVERS", "GASNET_SSH_NODEFILE",
                                        "GASNET_NODEFILE", "PBS_NODEFILE", "PE_HOSTFILE",
                                        "LSB_MCPU_HOSTS", "LSB_HOSTS", "SLURM_JOB_NODELIST"};
  *host_variable = NULL;
  for (size_t i = 0; i < sizeof sources / sizeof sources[0]; i++) {
    const char *value = gasneti_front_env(sources[i]);
    int empty = gasneti_front_strip_empty(value);
    if (empty < 0) return 0;
    if (empty) continue;
    if (strcmp(sources[i], "SLURM_JOB_NODELIST") != 0) return 0;
    char *compact = gasneti_front_strdup(value);
    size_t n = 0;
    for (const char *c = value; *c; c++) /* Python removes spaces before parsing */
      if (*c != ' ') compact[n++] = *c;
    compact[n] = '\0';
    int ok = node_list(compact);
    free(compact);
    if (!ok) return 0;
    *host_variable = sources[i];
    break;
  }
  uint64_t queues = gasneti_pshm_host_bytes(nranks);
  uint64_t physical = (uint64_t)sysconf(_SC_PHYS_PAGES) * (uint64_t)sysconf(_SC_PAGE_SIZE);
  struct statvfs st;
  uint64_t shm_free = statvfs("/dev/shm", &st) == 0 ? (uint64_t)st.f_bavail * st.f_frsize : 0;
  if (shm_free && queues > shm_free) return 0;
  const char *segsize = gasneti_front_env("GASNET_MAX_SEGSIZE");
  const char *physmem = gasneti_front_env("GASNET_PHYSMEM_MAX");
  char err[1024];
  if (gasneti_segment_budget(segsize && *segsize ? segsize : NULL,
                             physmem && *physmem ? physmem : NULL, physical, shm_free, nranks,
                             queues, 0, err, sizeof err) == 0)
    return 0;
  /* Python raises the soft descriptor limit to what the job needs on this host, 2 per local
   * rank (4 per remote host) plus 64; the front does the same where it knows the need. */
  struct rlimit lim;
  if (getrlimit(RLIMIT_NOFILE, &lim) != 0) return 0;
  rlim_t needed = (rlim_t)nranks * (*host_variable ? 4 : 2) + 64;
  *descriptors = 0;
  if (needed <= lim.rlim_cur) return 1;
  if (*host_variable || (lim.rlim_max != RLIM_INFINITY && needed > lim.rlim_max)) return 0;
  *descriptors = (unsigned long)needed;
  return 1;
}

int gasneti_front_raise_descriptors(unsigned long descriptors) {
  struct rlimit lim;
  if (descriptors == 0) return 1;
  if (getrlimit(RLIMIT_NOFILE, &lim) != 0) return 0;
  lim.rlim_cur = (rlim_t)descriptors;
  return setrlimit(RLIMIT_NOFILE, &lim) == 0;
}
