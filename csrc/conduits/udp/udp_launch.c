/* udp_launch.c: GASNet's own start-up convention for udp programs, `prog N args` with
 * GASNET_SPAWNFN=L (this host) or S (ssh to GASNET_SSH_SERVERS), as client wrappers (an
 * OpenSHMEM's oshrun) use it: the process hands the job to gasnetrun with the matching spawner
 * and never becomes a rank itself. C (a custom spawn command) is refused naming gasnetrun; and
 * without GASNET_SPAWNFN a process no launcher started stays a 1-rank job, but says so when its
 * first argument looks like a rank count. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conduit.h"
#include "knobs.h"

#ifndef GASNETI_GASNETRUN_DIRS
#define GASNETI_GASNETRUN_DIRS ""
#endif

/* argv[1] as a rank count, or 0. */
static long rank_count(int argc, char **argv) {
  if (argc < 2) return 0;
  char *end;
  errno = 0;
  long n = strtol(argv[1], &end, 10);
  return (errno || end == argv[1] || *end || n < 1 || n > GASNET_MAXNODES) ? 0 : n;
}

/* gasnetrun beside this build's or install's libraries (the same version), else NULL (then
 * execvp looks on PATH). */
static const char *find_gasnetrun(char *path, size_t len) {
  char dirs[] = GASNETI_GASNETRUN_DIRS;
  for (char *save, *d = strtok_r(dirs, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
    snprintf(path, len, "%s/gasnetrun", d);
    if (access(path, X_OK) == 0) return path;
  }
  return NULL;
}

void gasnetc_unlaunched(int *argc_p, char ***argv_p) {
  /* gasnet_init(NULL, NULL) and gex_Client_Init with NULL argc/argv: a program without them. */
  int ac = argc_p && argv_p ? *argc_p : 0;
  char *none[] = {"prog", NULL};
  char **av = argc_p && argv_p && *argv_p ? *argv_p : none;
  int *argc = &ac;
  char ***argv = &av;
  long n = rank_count(*argc, *argv);
  if (!gasneti_knob_is_set("GASNET_SPAWNFN")) {
    if (n > 0)
      gasneti_warning("no launcher started this udp program, so it runs as a 1-rank job with "
                      "'%s' as its first argument; GASNet's 'prog N args' convention needs "
                      "GASNET_SPAWNFN=L (this host) or S (ssh), or start it with gasnetrun -n %ld "
                      "%s", (*argv)[1], n, (*argv)[0]);
    return;
  }
  const char *fn = gasneti_knob_enum_is("GASNET_SPAWNFN", "S") ? "S"
                   : gasneti_knob_enum_is("GASNET_SPAWNFN", "L") ? "L" : "C";
  if (fn[0] == 'C')
    gasneti_fatalerror("GASNET_SPAWNFN=C (a custom spawn command) is not supported: start the job "
                       "with gasnetrun -n N %s (its -spawner option chooses local, ssh, pmi or "
                       "mpi)", *argc > 0 ? (*argv)[0] : "prog");
  if (!argc_p || !argv_p)
    gasneti_fatalerror("GASNET_SPAWNFN=%s: udp's start-up convention is 'prog N args', but the "
                       "program gave gasnet_init (or gex_Client_Init) no argc and argv (NULL), so "
                       "there is no N to read; start the job with gasnetrun -n N prog", fn);
  if (n == 0)
    gasneti_fatalerror("GASNET_SPAWNFN=%s: udp's start-up convention is 'prog N args', but the "
                       "first argument (%s%s%s) is not a rank count 1..%d; or start the job with "
                       "gasnetrun -n N %s", fn, *argc > 1 ? "'" : "", *argc > 1 ? (*argv)[1] : "none",
                       *argc > 1 ? "'" : "", GASNET_MAXNODES, *argc > 0 ? (*argv)[0] : "prog");
  char self[PATH_MAX], runner[PATH_MAX], count[16];
  ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
  if (len <= 0) gasneti_fatalerror("GASNET_SPAWNFN=%s: cannot read /proc/self/exe: %s", fn,
                                   strerror(errno));
  self[len] = '\0';
  if (!find_gasnetrun(runner, sizeof runner)) snprintf(runner, sizeof runner, "gasnetrun");
  snprintf(count, sizeof count, "%ld", n);
  /* gasnetrun -n N -spawner=local|ssh <this program> args-after-N (hosts of ssh: GASNET_SSH_SERVERS,
   * which gasnetrun reads from the environment this process passes on). */
  char **args = gasneti_calloc((size_t)*argc + 6, sizeof *args);
  int k = 0;
  args[k++] = runner;
  /* GASNET_* names the program set itself before gasnet_init (GASNet 1.x names a client still
   * sets, a misspelt name of its own) are its business: warned of, never refused. Its user has
   * no way to pass this option through the client's own launcher. */
  args[k++] = "--allow-unknown-knobs";
  args[k++] = "-n";
  args[k++] = count;
  args[k++] = fn[0] == 'S' ? "-spawner=ssh" : "-spawner=local";
  args[k++] = self;
  for (int i = 2; i < *argc; i++) args[k++] = (*argv)[i];
  args[k] = NULL;
  fflush(NULL);
  execvp(runner, args);
  gasneti_fatalerror("GASNET_SPAWNFN=%s: cannot run %s (looked in %s and on PATH): %s; start "
                     "the job with gasnetrun -n %ld %s", fn, runner, GASNETI_GASNETRUN_DIRS,
                     strerror(errno), n, self);
}
