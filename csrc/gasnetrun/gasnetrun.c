/* gasnetrun.c: the gasnetrun command. Jobs a site launcher starts (pmi, mpi spawners) whose
 * command line and environment pass every check are run from here; everything else is handed
 * to the Python gasnetrun beside this program, which does all the rest and says what is wrong. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "front.h"

/* The Python gasnetrun: its package tree in a build (../python) or an install
 * (../lib/gasnet/python), found from this program's own location. */
static char *python_entry(void) {
  char self[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) return NULL;
  self[n] = '\0';
  char *slash = strrchr(self, '/');
  if (!slash) return NULL;
  *slash = '\0';
  const char *trees[] = {"../python", "../lib/gasnet/python"};
  for (size_t i = 0; i < sizeof trees / sizeof trees[0]; i++) {
    char *entry = gasneti_front_printf("%s/%s/gasnetrun_entry.py", self, trees[i]);
    if (access(entry, R_OK) == 0) return entry;
    free(entry);
  }
  return NULL;
}

static int hand_to_python(int argc, char **argv) {
  char *entry = python_entry();
  if (!entry) {
    fputs("gasnetrun: cannot find the Python gasnetrun (gasnetrun_entry.py) in ../python or "
          "../lib/gasnet/python beside this program; reinstall gasnetrun\n", stderr);
    return 1;
  }
  char **args = calloc((size_t)argc + 3, sizeof *args);
  if (!args) return 1;
  args[0] = (char *)gasneti_front_python;
  /* -S: no site processing (its .pth hooks cost ~14 ms of every job's start); the entry
   * adds the site directories itself. */
  args[1] = "-S";
  args[2] = entry;
  for (int i = 1; i < argc; i++) args[i + 2] = argv[i];
  execv(gasneti_front_python, args);
  fprintf(stderr, "gasnetrun: cannot run %s %s: %s\n", gasneti_front_python, entry,
          strerror(errno));
  free(args);
  free(entry);
  return 1;
}

/* The whole plan, or 0 at the first thing the front does not handle. */
static int plan(int argc, char **argv, gasneti_front_job_t *job) {
  gasneti_front_args_t args;
  if (!gasneti_front_parse_args(argc, argv, &args)) return 0;
  job->nranks = (int)args.nranks;
  /* Unasked (no -spawner, no GASNET_SPAWNER), the program may decide (below). */
  const char *setting = gasneti_front_env("GASNET_SPAWNER");
  int asked = args.spawner || (setting && !gasneti_front_blank(setting));
  if (!gasneti_front_choose_spawner(&args, &job->spawner)) {
    if (asked) return 0;
    job->spawner = NULL;
  }
  if (!gasneti_front_check_environment()) return 0;
  /* A launcher started without address-space randomisation (the ranks it forks inherit that)
   * is Python's to start: rare, and one implementation of it (agent/ranks.py). */
  if (!gasneti_front_blank(gasneti_front_env("GASNET_SAME_ADDRESSES"))) return 0;
  const char *host_variable = NULL;
  if (!gasneti_front_check_host(job->nranks, &host_variable, &job->descriptors)) return 0;
  char *found = gasneti_front_which(argv[args.program]); /* there, executable, not a directory */
  if (!found) return 0;
  job->program = gasneti_front_abspath(found);
  free(found);
  if (!job->program) return 0;
  gasneti_front_ident_t ident;
  if (!gasneti_front_read_ident(job->program, &ident)) return 0;
  /* A conduit with a launcher half (it probes and plans nodes) is Python's; so is a one-host
   * conduit on a job that may span the allocation's hosts, to refuse or allow. */
  if (gasneti_front_has_word(gasneti_front_planned, ident.conduit)) return 0;
  if (host_variable && !gasneti_front_has_word(gasneti_front_multi_host, ident.conduit)) return 0;
  /* A library whose only spawner is mpi (the mpi conduit's) gets it unasked, as Python gives
   * it (cli.choose_spawner: none of the spawners the environment suggests is the program's). */
  if (!asked && (!job->spawner || !gasneti_front_has_word(ident.spawners, job->spawner))) {
    if (strcmp(ident.spawners, "mpi") != 0 || !gasneti_front_has_word(gasneti_front_spawners, "mpi"))
      return 0;
    job->spawner = "mpi";
  }
  if (!gasneti_front_has_word(ident.spawners, job->spawner)) return 0;
  return gasneti_front_build_command(job, argv + args.program, argc - args.program);
}

int main(int argc, char **argv) {
  gasneti_front_job_t job = {0};
  /* The descriptor limit is raised only for a job the front runs: Python does its own. */
  int mine = plan(argc, argv, &job) && gasneti_front_raise_descriptors(job.descriptors);
  int code = mine ? gasneti_front_supervise(&job) : 0;
  gasneti_strv_free(&job.argv);
  gasneti_strv_free(&job.envp);
  free(job.program);
  free(job.launcher_path);
  return mine ? code : hand_to_python(argc, argv);
}
