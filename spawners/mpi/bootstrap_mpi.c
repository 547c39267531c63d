/* bootstrap_mpi.c: the rank's half of the mpi spawner: the bootstrap collectives over MPI
 * (Allgather for the exchange, Bcast of rank 0's job id, Barrier; MPI_Abort on a fatal error,
 * MPI_Finalize on a clean exit). MPI is reached through a plugin compiled for one MPI: the one
 * already in the process when the client links MPI itself, else the one whose launcher
 * started this rank, read from what that launcher set (Open MPI's OMPI_COMM_WORLD_SIZE, or
 * PMIx; MPICH's Hydra PMI_FD), never assumed. */
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mpi_plugin.h"

#include "gasnet_internal.h"
#include "knobs.h"

#ifndef GASNETI_MPI_PLUGIN_DIRS
#define GASNETI_MPI_PLUGIN_DIRS ""
#endif

/* Defined (1) by a conduit whose network is MPI itself (the mpi conduit): MPI may then use
 * the fastest network it finds, instead of being kept off the one another conduit drives. */
extern const int gasnetc_mpi_is_network __attribute__((weak));
/* Defined with it: the largest message that conduit sends but a large payload. */
extern const unsigned gasnetc_mpi_eager_bytes __attribute__((weak));

static const gasneti_mpi_ops_t *mpi;
static gasneti_bootstrap_t mpi_boot;
static int bootstrapped; /* this rank's bootstrap is MPI (not only its plugin loaded) */
static const char *flavour;
static int finalized;

const gasneti_mpi_ops_t *gasneti_mpi_loaded(void) { return bootstrapped ? mpi : NULL; }
const char *gasneti_mpi_flavour(void) { return bootstrapped ? flavour : NULL; }

static const char *const levels[] = {"SINGLE", "FUNNELED", "SERIALIZED", "MULTIPLE"};
static const char *flavour_name(const char *f) { return strcmp(f, "mpich") ? "Open MPI" : "MPICH"; }

static void check(int rc, const char *what) {
  if (rc == 0) return;
  char text[512];
  mpi->error(rc, text, sizeof text);
  gasneti_fatalerror("mpi spawner (%s): %s failed: %s (%d)", flavour, what, text, rc);
}

/* Which MPI's launcher started this rank. */
static const char *started_by(void) {
  if (getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMIX_NAMESPACE")) return "openmpi";
  if (getenv("PMI_FD") || getenv("PMI_PORT")) return "mpich";
  return NULL;
}

/* Which MPI the program itself links (a hybrid client), from the libraries loaded: Open MPI's
 * libmpi.so.40, MPICH's libmpich.so.12 (or its libmpi.so.12 alias). */
static int seen_library(struct dl_phdr_info *info, size_t size, void *found) {
  (void)size;
  const char *slash = strrchr(info->dlpi_name, '/');
  const char *base = slash ? slash + 1 : info->dlpi_name;
  if (!strncmp(base, "libmpi.so.40", 12)) *(const char **)found = "openmpi";
  else if (!strncmp(base, "libmpich.so", 11) || !strncmp(base, "libmpi.so.12", 12))
    *(const char **)found = "mpich";
  return *(const char **)found != NULL;
}

static const char *linked_mpi(void) {
  const char *found = NULL;
  dl_iterate_phdr(seen_library, &found);
  return found;
}

static void load(void) {
  char dirs[] = GASNETI_MPI_PLUGIN_DIRS, path[4096], tried[8192] = "";
  void *handle = NULL;
  for (char *save = NULL, *dir = strtok_r(dirs, ":", &save); dir && !handle;
       dir = strtok_r(NULL, ":", &save)) {
    snprintf(path, sizeof path, "%s/libgasnet-mpi-%s.so", dir, flavour);
    handle = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
    if (!handle)
      snprintf(tried + strlen(tried), sizeof tried - strlen(tried), "\n  %s", dlerror());
  }
  if (!handle)
    gasneti_fatalerror("mpi spawner: this rank runs %s, but this build has no plugin for it "
                       "(rebuild with %s's development files installed, or use -spawner=pmi):%s",
                       flavour_name(flavour), flavour_name(flavour), tried);
  mpi = dlsym(handle, "gasneti_mpi_ops");
  if (!mpi || mpi->version != GASNETI_MPI_OPS_VERSION)
    gasneti_fatalerror("mpi spawner: %s is not a plugin of this build (its gasneti_mpi_ops is "
                       "%s, expected version %d)", path, mpi ? "another version" : "missing",
                       GASNETI_MPI_OPS_VERSION);
}

static void mpi_exchange(const void *mine, size_t len, void *all) {
  check(mpi->allgather(mine, len, all), "MPI_Allgather");
}

static void mpi_barrier(void) { check(mpi->barrier(), "MPI_Barrier"); }

/* Hydra drops the output its proxies have not yet forwarded when a rank aborts: the rank's
 * last words are handed over first (as in spawners/pmi/pmi_kvs.c). Error paths only. */
static void mpich_abort(int code) {
  fflush(NULL);
  struct timespec pause = {0, 200 * 1000 * 1000};
  nanosleep(&pause, NULL);
  mpi->abort(code);
}

/* A rank ending the job with an error code would make Open MPI's launcher (or, under Hydra,
 * its MPI_Abort) end every other rank at once, before they heard of it and ran the client's
 * SIGQUIT handler, which the local spawner's agents give them a grace period for: so it first
 * waits, that long at most, for the others to reach their own exit. Not from a signal handler
 * (MPI's locks may be held by the code it interrupted). */
static bool linger(void) {
  if (gasneti_exit_in_signal || mpi->leave_start()) return false;
  struct timespec ts, nap = {0, 1000 * 1000};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  double until = (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9 +
                 gasneti_exit_grace(gasneti_exit_timeout(mpi_boot.size));
  int done = 0;
  while (!done) {
    if (mpi->leave_test(&done)) return false;
    if (done) break;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    if ((double)ts.tv_sec + (double)ts.tv_nsec * 1e-9 > until) return false;
    nanosleep(&nap, NULL); /* the others may need this core to get there */
  }
  return true; /* every rank reached its exit */
}

/* As under the pmi spawner: a clean exit finalizes (also an MPI the client initialized: a
 * rank leaving without MPI_Finalize is an error to MPI's launchers); an error exit does not,
 * which Open MPI's launcher takes as an abnormal end, ending the others with the code of the
 * first rank it saw leave. code is the job's (the first a rank posted): a rank that followed
 * with another code (a client's SIGQUIT handler calling gasnet_exit(4) after a peer's
 * gasnet_exit(3)) leaves with the job's, so that whichever the launcher sees first, the job's
 * code stands, as gasnetrun's agents report it. MPICH's Hydra would report the signal it
 * killed the others with, so there the rank aborts with the code. */
static void mpi_leaving(int code, int ends_job) {
  if (finalized) return;
  finalized = 1;
  if (code == 0) {
    mpi->finalize();
    return;
  }
  if (!ends_job) return;
  bool all_there = linger();
  if (all_there && gasneti_exit_timed_out()) {
    /* Ended at GASNET_EXITTIMEOUT (the mpi conduit's rule) with every rank at its exit: it
     * finalizes as the finished ranks do, then leaves with its code. Leaving unfinalized made
     * Open MPI's mpirun abort the others inside their MPI_Finalize, and crash in its PMIx
     * server doing so. */
    mpi->finalize();
    fflush(NULL);
    _exit(code & 0xff);
  }
  if (!strcmp(flavour, "mpich")) mpich_abort(code);
  fflush(NULL);
  _exit(code & 0xff);
}

static void mpi_abort(int code) {
  if (finalized) return;
  if (!strcmp(flavour, "mpich"))
    mpich_abort(code);
  else
    mpi->abort(code);
}

/* Keeps MPI's own traffic on TCP and shared memory: the fast network is the conduit's. A
 * setting the user made wins. */
static void keep_off_fast_network(void) {
  if (&gasnetc_mpi_is_network && gasnetc_mpi_is_network) {
    /* Open MPI's TCP transport sends a message over its eager limit (64 KiB with its own
     * header) by a rendezvous, whose steps a rank waiting in MPI_Test (as the conduit's do)
     * takes only when Open MPI next looks at its sockets: 64 KiB Mediums and Long pieces
     * across hosts each took 5-12 ms so. Its limit is raised to the conduit's largest
     * message (the user's setting wins; a client that starts MPI before gasnet_init must
     * set it itself). */
    if (&gasnetc_mpi_eager_bytes && !strcmp(flavour, "openmpi")) {
      char limit[16];
      snprintf(limit, sizeof limit, "%u", (gasnetc_mpi_eager_bytes + 64 + 4095) & ~4095u);
      setenv("OMPI_MCA_btl_tcp_eager_limit", limit, 0);
    }
    return;
  }
  if (!strcmp(flavour, "openmpi")) {
    setenv("OMPI_MCA_pml", "ob1", 0);
    setenv("OMPI_MCA_btl", "self,vader,tcp", 0);
    setenv("OMPI_MCA_mtl", "^ofi,psm2", 0);
  } else {
    setenv("UCX_TLS", "self,sm,tcp", 0);
    setenv("FI_PROVIDER", "tcp;ofi_rxm", 0);
  }
}

/* GASNET_MPI_THREAD, or by threading model: SINGLE for SEQ, SERIALIZED for PAR and PARSYNC
 * (their threads take turns in GASNet, and so in MPI). */
static int wanted_level(void) {
  if (gasneti_knob_is_set("GASNET_MPI_THREAD"))
    for (int i = 0; i < 4; i++)
      if (gasneti_knob_enum_is("GASNET_MPI_THREAD", levels[i])) return i;
  return GASNETI_THREADS ? GASNETI_MPI_SERIALIZED : GASNETI_MPI_SINGLE;
}

/* Whether this library's list of spawners has the pmi one, which takes the ranks an MPI or
 * Slurm launcher started without gasnetrun (GASNETRUN_SPAWNER unset). */
static int have_pmi_spawner(void) {
  for (const gasneti_bootstrap_opener_t *o = gasneti_bootstrap_openers; o->open; o++)
    if (!strcmp(o->name, "pmi")) return 1;
  return 0;
}

/* This rank is the mpi spawner's: gasnetrun's mpi spawner started it; or, in a library
 * without the pmi spawner (the mpi conduit's: its ranks need MPI whoever started them), an
 * MPI launcher started it directly (mpirun, mpiexec, srun), or the client linked MPI and
 * initialized it (a 1-rank singleton). */
static int ours(void) {
  const char *chosen = getenv("GASNETRUN_SPAWNER");
  if (chosen && *chosen) return !strcmp(chosen, "mpi");
  if (have_pmi_spawner()) return 0;
  return started_by() != NULL || linked_mpi() != NULL;
}

const gasneti_bootstrap_t *gasneti_bootstrap_mpi_open(int *argc, char ***argv) {
  if (!ours()) return NULL;
  const char *launcher = started_by(), *linked = linked_mpi();
  if (!launcher && getenv("GASNETRUN_SPAWNER"))
    gasneti_fatalerror("mpi spawner: no MPI launcher started this rank (none of "
                       "OMPI_COMM_WORLD_SIZE, PMIX_NAMESPACE, PMI_FD is set); MPIRUN_CMD must "
                       "run an MPI launcher (mpirun, mpiexec, srun)");
  /* A program linking one MPI started by the other's launcher would run as n singletons
   * (PMIx alone does not say which: srun offers it to both). */
  bool sure = getenv("OMPI_COMM_WORLD_SIZE") || (getenv("PMI_FD") && !getenv("PMIX_NAMESPACE"));
  if (linked && launcher && strcmp(linked, launcher) && sure)
    gasneti_fatalerror("mpi spawner: this program links %s, but %s's launcher started it: "
                       "start it with %s's launcher (MPIRUN_CMD), or rebuild it with %s's mpicc",
                       flavour_name(linked), flavour_name(launcher), flavour_name(linked),
                       flavour_name(launcher));
  flavour = linked ? linked : launcher;
  load();
  /* Without a launcher, MPI is the client's business until it initializes it: a 1-rank job
   * whose client has not (yet) is a plain one, which needs no MPI. */
  if (!launcher && !(mpi->state() & GASNETI_MPI_INITIALIZED)) return NULL;
  keep_off_fast_network();
  int want = wanted_level(), provided = 0;
  mpi_boot = (gasneti_bootstrap_t){.name = "mpi",
                                   .exchange = mpi_exchange,
                                   .barrier = mpi_barrier,
                                   .leaving = mpi_leaving,
                                   .abort = mpi_abort};
  int before = mpi->state();
  if (before & GASNETI_MPI_FINALIZED)
    gasneti_fatalerror("mpi spawner: the client called MPI_Finalize before gasnet_init; MPI "
                       "cannot start again (call gasnet_init first, or MPI_Finalize last)");
  check(mpi->init(argc, argv, want, &mpi_boot.rank, &mpi_boot.size, &provided),
        "MPI_Init_thread");
  /* MPI's world must be the launcher's job: a client linking another MPI than the
   * launcher's (found out only now when it started MPI itself) runs as singletons. */
  const char *said = getenv("OMPI_COMM_WORLD_SIZE") ? getenv("OMPI_COMM_WORLD_SIZE")
                                                    : getenv("PMI_SIZE");
  if (said && atoi(said) > 0 && atoi(said) != mpi_boot.size) {
    /* The singleton MPI made is finalized first: Open MPI's keeps a session folder in the
     * temporary directory until it finalizes, which a fatal error's exit would leave behind. */
    mpi->finalize();
    finalized = 1;
    gasneti_fatalerror("mpi spawner: the launcher started %s ranks (%s), but %s says this job "
                       "has %d: the program links %s, which is not the launcher's MPI (start it "
                       "with %s's launcher, or rebuild it with the launcher's mpicc)", said,
                       getenv("OMPI_COMM_WORLD_SIZE") ? "OMPI_COMM_WORLD_SIZE" : "PMI_SIZE",
                       flavour_name(flavour), mpi_boot.size, flavour_name(flavour),
                       flavour_name(flavour));
  }
  if (provided < want) {
    const char *asked = gasneti_knob_is_set("GASNET_MPI_THREAD")
                            ? "GASNET_MPI_THREAD" : (GASNETI_THREADS ? "the PAR library's default"
                                                                     : "the default");
    if (before & GASNETI_MPI_INITIALIZED)
      gasneti_fatalerror("mpi spawner: GASNET_MPI_THREAD is %s (%s), but the client initialized "
                         "%s with MPI_THREAD_%s before gasnet_init: call MPI_Init_thread asking "
                         "MPI_THREAD_%s or more", levels[want], asked, flavour_name(flavour),
                         levels[provided], levels[want]);
    gasneti_fatalerror("mpi spawner: GASNET_MPI_THREAD is %s (%s), but %s granted only "
                       "MPI_THREAD_%s", levels[want], asked, flavour_name(flavour),
                       levels[provided]);
  }
  /* One job id for all: rank 0's, which names shared-memory objects with the host. */
  char id[sizeof mpi_boot.jobid] = "";
  if (mpi_boot.rank == 0) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    snprintf(id, sizeof id, "m%ld-%lx", (long)getpid(), (long)ts.tv_nsec);
  }
  check(mpi->bcast(id, sizeof id, 0), "MPI_Bcast");
  memcpy(mpi_boot.jobid, id, sizeof id);
  mpi_boot.jobid[sizeof mpi_boot.jobid - 1] = 0;
  bootstrapped = 1;
  return &mpi_boot;
}
