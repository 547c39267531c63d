/* front_command.c: the site launcher's command line and environment, built as the Python
 * gasnetrun builds them (gasnetrun/launchers.py): the PMIRUN_CMD/MPIRUN_CMD template with %N %P
 * %A %C, the launcher's flavour as remembered in the user's cache (a launcher not yet asked is
 * Python's to ask), and that flavour's options for the environment and the exit semantics. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "knob_api.h"
#include "front.h"
#include "launch_env.h"

extern char **environ;

static char *replace_all(const char *text, const char *what, const char *with) {
  size_t wl = strlen(what), count = 0;
  for (const char *p = text; (p = strstr(p, what)) != NULL; p += wl) count++;
  char *out = malloc(strlen(text) + count * strlen(with) + 1);
  if (!out) return gasneti_front_strdup(""); /* reports and ends */
  char *o = out;
  for (const char *p = text;;) {
    const char *hit = strstr(p, what);
    if (!hit) {
      strcpy(o, p);
      break;
    }
    memcpy(o, p, (size_t)(hit - p));
    o += hit - p;
    strcpy(o, with);
    o += strlen(with);
    p = hit + wl;
  }
  return out;
}

/* The template's words with the placeholders filled in; 0 for anything shlex would read
 * differently from a plain split (quotes, backslashes) or that needs the host list. */
static int expand(const char *template, gasneti_front_job_t *job, char **args, int nargs) {
  if (strpbrk(template, "'\"\\") || strstr(template, "%M") || strstr(template, "%H")) return 0;
  for (const unsigned char *p = (const unsigned char *)template; *p; p++)
    if (*p >= 0x7f || (*p < 0x20 && *p != '\t' && *p != '\r' && *p != '\n')) return 0;
  char *copy = gasneti_front_strdup(template), *save = NULL;
  int has_n = 0, has_program = 0;
  char nranks[16];
  snprintf(nranks, sizeof nranks, "%d", job->nranks);
  for (char *w = strtok_r(copy, " \t\r\n", &save); w; w = strtok_r(NULL, " \t\r\n", &save)) {
    has_n |= strstr(w, "%N") != NULL;
    has_program |= strcmp(w, "%C") == 0 || strstr(w, "%P") != NULL;
    if (strcmp(w, "%C") == 0 || strcmp(w, "%A") == 0) {
      if (w[1] == 'C') gasneti_strv_push(&job->argv, job->program);
      for (int i = 1; i < nargs; i++) gasneti_strv_push(&job->argv, args[i]);
      continue;
    }
    char *with_n = replace_all(w, "%N", nranks);
    gasneti_strv_take(&job->argv, replace_all(with_n, "%P", job->program));
    free(with_n);
  }
  free(copy);
  return has_n && has_program && job->argv.n > 0;
}

/* launcherscache.py's file: "flavour<TAB>realpath|dev|ino|size|mtime_ns" lines. */
static int cached_flavour(const char *path, char *flavour, size_t len) {
  const char *xdg = gasneti_front_env("XDG_CACHE_HOME"), *home = gasneti_front_env("HOME");
  char *file;
  if (xdg && xdg[0] == '/') file = gasneti_front_printf("%s/gasnetrun/launchers.tsv", xdg);
  else if (home && home[0] == '/') file = gasneti_front_printf("%s/.cache/gasnetrun/launchers.tsv", home);
  else return 0;
  char *real = realpath(path, NULL);
  struct stat st;
  FILE *f = real && stat(path, &st) == 0 ? fopen(file, "re") : NULL;
  free(file);
  int found = 0;
  if (f) {
    char *key = gasneti_front_printf(
        "%s|%llu|%llu|%lld|%lld", real, (unsigned long long)st.st_dev,
        (unsigned long long)st.st_ino, (long long)st.st_size,
        (long long)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec);
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    while ((n = getline(&line, &cap, f)) > 0) {
      for (ssize_t i = 0; i < n; i++)
        if ((unsigned char)line[i] >= 0x80) found = -1; /* UTF-8 Python may not take */
      if (found < 0) break;
      if (line[n - 1] == '\n') line[--n] = '\0';
      char *tab = strchr(line, '\t');
      if (!tab || strcmp(tab + 1, key) != 0) continue;
      size_t fl = (size_t)(tab - line) < len ? (size_t)(tab - line) : 0; /* too long: none */
      memcpy(flavour, line, fl);
      flavour[fl] = '\0';
      found = 1; /* the last line for a key is the newest */
    }
    free(line);
    free(key);
    fclose(f);
  }
  free(real);
  return found > 0;
}

static int given(const gasneti_strv_t *argv, const char *word, int prefix) {
  for (size_t i = 1; i < argv->n; i++)
    if (prefix ? strncmp(argv->v[i], word, strlen(word)) == 0 : strcmp(argv->v[i], word) == 0)
      return 1;
  return 0;
}

static int by_string(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names handed on by name: the environment's, less the session's and launchers' own and
 * the template's variable (the launcher's environment lacks it), plus the spawner's mark;
 * sorted (Python's sorted() on ASCII names is strcmp's order). */
static void handed_on(gasneti_strv_t *names, const char *variable) {
  for (char **e = environ; *e; e++) {
    const char *eq = strchr(*e, '=');
    if (!eq) continue;
    char *name = gasneti_front_printf("%.*s", (int)(eq - *e), *e);
    if (gasneti_launch_handed_on(name) && strcmp(name, variable) != 0)
      gasneti_strv_take(names, name);
    else free(name);
  }
  gasneti_strv_push(names, "GASNETRUN_SPAWNER");
  qsort(names->v, names->n, sizeof *names->v, by_string);
}

/* Options after the launcher's name unless the template already gives them: the environment
 * (Open MPI -x each, Hydra -genvlist, srun --export=ALL) and srun's --kill-on-bad-exit. */
static void add_options(gasneti_front_job_t *job, const char *flavour, const char *variable) {
  gasneti_strv_t options = {0};
  const gasneti_strv_t *argv = &job->argv;
  int env_given = given(argv, "-x", 0) || given(argv, "-genvlist", 0) ||
                  given(argv, "-genvall", 0) || given(argv, "-genvnone", 0) ||
                  given(argv, "-envlist", 0) || given(argv, "--export", 1);
  if (!env_given) {
    gasneti_strv_t names = {0};
    if (strcmp(flavour, "slurm") != 0) handed_on(&names, variable);
    if (strcmp(flavour, "openmpi") == 0) {
      for (size_t i = 0; i < names.n; i++) {
        gasneti_strv_push(&options, "-x");
        gasneti_strv_push(&options, names.v[i]);
      }
    } else if (strcmp(flavour, "hydra") == 0) {
      size_t total = 1;
      for (size_t i = 0; i < names.n; i++) total += strlen(names.v[i]) + 1;
      char *list = calloc(total, 1);
      for (size_t i = 0; list && i < names.n; i++) {
        if (i) strcat(list, ",");
        strcat(list, names.v[i]);
      }
      gasneti_strv_push(&options, "-genvlist");
      gasneti_strv_take(&options, list ? list : gasneti_front_strdup(""));
    } else {
      gasneti_strv_push(&options, "--export=ALL");
    }
    gasneti_strv_free(&names);
  }
  if (strcmp(flavour, "slurm") == 0 && !given(argv, "--kill-on-bad-exit", 1) &&
      !given(argv, "-K", 1))
    gasneti_strv_push(&options, "--kill-on-bad-exit=1");
  gasneti_strv_t out = {0};
  gasneti_strv_push(&out, argv->v[0]);
  for (size_t i = 0; i < options.n; i++) gasneti_strv_push(&out, options.v[i]);
  for (size_t i = 1; i < argv->n; i++) gasneti_strv_push(&out, argv->v[i]);
  gasneti_strv_free(&options);
  gasneti_strv_free(&job->argv);
  job->argv = out;
}

/* The launcher's environment: the caller's, less the template's variable, with the mark that
 * tells the ranks which of gasnetrun's spawners started them. */
static void launcher_environment(gasneti_front_job_t *job, const char *variable) {
  size_t vl = strlen(variable), ml = strlen("GASNETRUN_SPAWNER");
  for (char **e = environ; *e; e++) {
    if (!strchr(*e, '=')) continue;
    if (strncmp(*e, variable, vl) == 0 && (*e)[vl] == '=') continue;
    if (strncmp(*e, "GASNETRUN_SPAWNER", ml) == 0 && (*e)[ml] == '=') continue;
    gasneti_strv_push(&job->envp, *e);
  }
  gasneti_strv_take(&job->envp, gasneti_front_printf("GASNETRUN_SPAWNER=%s", job->spawner));
}

/* Open MPI refuses more ranks than slots (this host's cores) unless told to oversubscribe:
 * whether this job would meet that. */
static int meets_slot_limit(const gasneti_front_job_t *job) {
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  if (cores < 1 || job->nranks <= cores) return 0;
  for (size_t i = 1; i < job->argv.n; i++)
    if (strcasestr(job->argv.v[i], "oversubscribe")) return 0;
  const char *mca = gasneti_front_env("OMPI_MCA_rmaps_base_oversubscribe");
  return !mca || !(strcmp(mca, "1") == 0 || strcasecmp(mca, "true") == 0 ||
                   strcasecmp(mca, "yes") == 0);
}

int gasneti_front_build_command(gasneti_front_job_t *job, char **args, int nargs) {
  int pmi = strcmp(job->spawner, "pmi") == 0;
  const char *variable = pmi ? "PMIRUN_CMD" : "MPIRUN_CMD";
  const char *template = gasneti_front_env(variable);
  int unset = gasneti_front_strip_empty(template);
  int no_slurm = gasneti_front_strip_empty(gasneti_front_env("SLURM_JOB_ID"));
  if (unset < 0 || no_slurm < 0) return 0;
  if (unset) template = pmi && !no_slurm ? "srun --mpi=pmix -n %N %C" : "mpirun -np %N %C";
  if (!expand(template, job, args, nargs)) return 0;
  job->launcher_path = gasneti_front_which(job->argv.v[0]);
  char flavour[32];
  if (!job->launcher_path || !cached_flavour(job->launcher_path, flavour, sizeof flavour))
    return 0; /* not found (Python names it), or never asked what it is */
  /* The Python launcher says how to oversubscribe before such a launch (launchers.py). */
  if (strcmp(flavour, "openmpi") == 0 && meets_slot_limit(job)) return 0;
  if (strcmp(flavour, "openmpi") == 0 || strcmp(flavour, "hydra") == 0 ||
      strcmp(flavour, "slurm") == 0)
    add_options(job, flavour, variable);
  launcher_environment(job, variable);
  const char *names[] = {"GASNET_EXITTIMEOUT", "GASNET_EXITTIMEOUT_MAX", "GASNET_EXITTIMEOUT_MIN",
                         "GASNET_EXITTIMEOUT_FACTOR"};
  const char *values[4];
  for (int i = 0; i < 4; i++) {
    values[i] = gasneti_front_env(names[i]);
    if (values[i] && !*values[i]) values[i] = NULL;
  }
  char err[1024];
  job->exit_timeout = gasneti_exit_timeout_of(values[0], values[1], values[2], values[3],
                                              job->nranks, err, sizeof err);
  return job->exit_timeout >= 0;
}
