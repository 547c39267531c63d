/* front.h: gasnetrun's compiled front. A job started through a site launcher (the pmi and mpi
 * spawners) whose every check passes is planned and supervised here, without Python's start-up
 * (most of the time gasnetrun added to a 0.2 s mpiexec); anything else, and every check that
 * does not pass, goes to the Python gasnetrun, which says what is wrong. The front therefore
 * never refuses a job itself: a case it does not know is handed over, not guessed. */
#ifndef GASNETI_FRONT_H
#define GASNETI_FRONT_H

#include <stddef.h>

/* A growable NULL-terminated array of owned strings (argv, envp). */
typedef struct {
  char **v;
  size_t n, cap;
} gasneti_strv_t;

void gasneti_strv_push(gasneti_strv_t *s, const char *text); /* copies text */
void gasneti_strv_take(gasneti_strv_t *s, char *text);       /* owns text */
void gasneti_strv_free(gasneti_strv_t *s);
char *gasneti_front_strdup(const char *text);
char *gasneti_front_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The command line gasnetrun's front understands: -n N (-np N, --np N, --np=N) and
 * -spawner=NAME (--spawner NAME, --spawner=NAME), then [--] the program and its arguments. */
typedef struct {
  long nranks;
  const char *spawner; /* NULL: not given */
  int program;         /* index of the program in argv */
} gasneti_front_args_t;

/* Everything the front decided: the launcher's command and environment. */
typedef struct {
  int nranks;
  const char *spawner;   /* "pmi" or "mpi" */
  char *program;         /* absolute path, as Python's os.path.abspath gives it */
  gasneti_strv_t argv;   /* the launcher's command line */
  char *launcher_path;   /* where argv[0] was found in PATH */
  gasneti_strv_t envp;   /* the launcher's environment */
  double exit_timeout;   /* GASNET_EXITTIMEOUT as the runtime computes it */
  unsigned long descriptors; /* the soft RLIMIT_NOFILE the job needs (0: as it is) */
} gasneti_front_job_t;

/* Each returns 1 when the front can go on, 0 when the job goes to Python. */
int gasneti_front_parse_args(int argc, char **argv, gasneti_front_args_t *out);
const char *gasneti_front_env(const char *name);  /* the value, or NULL when unset */
int gasneti_front_blank(const char *text);        /* empty or ASCII white space only */
int gasneti_front_choose_spawner(const gasneti_front_args_t *args, const char **spawner);
int gasneti_front_check_environment(void);
int gasneti_front_check_host(int nranks, const char **host_variable,
                             unsigned long *descriptors);
int gasneti_front_raise_descriptors(unsigned long descriptors);
/* Python's str.strip() would make text empty (1), would not (0), or the front cannot tell
 * (-1: text other than printable ASCII and ASCII white space). */
int gasneti_front_strip_empty(const char *text);
/* shutil.which and os.path.abspath as Python's gasnetrun uses them; malloc'ed or NULL. */
char *gasneti_front_which(const char *name);
char *gasneti_front_abspath(const char *path);
/* The program's conduit and spawners from its $GASNetIdent$ (0: none found). */
typedef struct {
  char conduit[64];
  char spawners[256]; /* comma-separated */
} gasneti_front_ident_t;
int gasneti_front_read_ident(const char *path, gasneti_front_ident_t *out);
int gasneti_front_has_word(const char *list, const char *word); /* in a comma-separated list */
int gasneti_front_build_command(gasneti_front_job_t *job, char **args, int nargs);
/* Runs the launcher, forwards signals, returns the job's exit code. */
int gasneti_front_supervise(gasneti_front_job_t *job);

/* From the build (SConstruct). */
extern const char gasneti_front_python[];         /* the interpreter of the Python gasnetrun */
extern const char gasneti_front_spawners[];       /* this build's spawners, comma-separated */
extern const char gasneti_front_multi_host[];     /* conduits that span hosts, comma-separated */
extern const char gasneti_front_planned[];        /* conduits with a launcher half (Python's) */

#endif
