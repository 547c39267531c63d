/* bootstrap_mpi.c: the rank's half of the mpi spawner: the bootstrap collectives over MPI
 * (Allgather for the exchange, Bcast of rank 0's job id, Barrier; MPI_Abort on a fatal error,
 * MPI_Finalize on a clean exit). MPI is reached through a plugin compiled for the MPI whose
 * launcher started this rank, which is read from what that launcher set (Open MPI's
 * OMPI_COMM_WORLD_SIZE, or PMIx; MPICH's Hydra PMI_FD), never assumed. */
#include <dlfcn.h>
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

static struct {
  gasneti_mpi_init_fn *init;
  gasneti_mpi_allgather_fn *allgather;
  gasneti_mpi_bcast_fn *bcast;
  gasneti_mpi_barrier_fn *barrier;
  gasneti_mpi_finalize_fn *finalize;
  gasneti_mpi_abort_fn *abort;
  gasneti_mpi_error_fn *error;
} mpi;
static gasneti_bootstrap_t mpi_boot;
static const char *flavour;
static int finalized;

static void check(int rc, const char *what) {
  if (rc == 0) return;
  char text[512];
  mpi.error(rc, text, sizeof text);
  gasneti_fatalerror("mpi spawner (%s): %s failed: %s (%d)", flavour, what, text, rc);
}

/* Which MPI's launcher started this rank. */
static const char *started_by(void) {
  if (getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMIX_NAMESPACE")) return "openmpi";
  if (getenv("PMI_FD") || getenv("PMI_PORT")) return "mpich";
  return NULL;
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
    gasneti_fatalerror("mpi spawner: this rank was started by %s's launcher, but this build has "
                       "no plugin for it (rebuild with %s's development files installed, or use "
                       "-spawner=pmi):%s", flavour, flavour, tried);
#define RESOLVE(field, symbol)                                                              \
  if (!(*(void **)&mpi.field = dlsym(handle, symbol)))                                      \
    gasneti_fatalerror("mpi spawner: %s lacks %s", path, symbol);
  RESOLVE(init, "gasneti_mpi_init") RESOLVE(allgather, "gasneti_mpi_allgather")
  RESOLVE(bcast, "gasneti_mpi_bcast") RESOLVE(barrier, "gasneti_mpi_barrier")
  RESOLVE(finalize, "gasneti_mpi_finalize") RESOLVE(abort, "gasneti_mpi_abort")
  RESOLVE(error, "gasneti_mpi_error")
#undef RESOLVE
}

static void mpi_exchange(const void *mine, size_t len, void *all) {
  check(mpi.allgather(mine, len, all), "MPI_Allgather");
}

static void mpi_barrier(void) { check(mpi.barrier(), "MPI_Barrier"); }

/* Hydra drops the output its proxies have not yet forwarded when a rank aborts: the rank's
 * last words are handed over first (as in spawners/pmi/pmi_kvs.c). Error paths only. */
static void mpich_abort(int code) {
  fflush(NULL);
  struct timespec pause = {0, 200 * 1000 * 1000};
  nanosleep(&pause, NULL);
  mpi.abort(code);
}

/* As under the pmi spawner: a clean exit finalizes; an error exit does not, which Open MPI's
 * launcher takes as an abnormal end, ending the others with this rank's code. MPICH's Hydra
 * would report the signal it killed the others with, so there the rank aborts with the code. */
static void mpi_leaving(int code, int ends_job) {
  if (finalized) return;
  finalized = 1;
  if (code == 0)
    mpi.finalize();
  else if (ends_job && !strcmp(flavour, "mpich"))
    mpich_abort(code);
}

static void mpi_abort(int code) {
  if (finalized) return;
  if (!strcmp(flavour, "mpich"))
    mpich_abort(code);
  else
    mpi.abort(code);
}

/* Keeps MPI's own traffic on TCP and shared memory: the fast network is the conduit's. A
 * setting the user made wins. */
static void keep_off_fast_network(void) {
  if (!strcmp(flavour, "openmpi")) {
    setenv("OMPI_MCA_pml", "ob1", 0);
    setenv("OMPI_MCA_btl", "self,vader,tcp", 0);
    setenv("OMPI_MCA_mtl", "^ofi,psm2", 0);
  } else {
    setenv("UCX_TLS", "self,sm,tcp", 0);
    setenv("FI_PROVIDER", "tcp;ofi_rxm", 0);
  }
}

const gasneti_bootstrap_t *gasneti_bootstrap_mpi_open(int *argc, char ***argv) {
  const char *chosen = getenv("GASNETRUN_SPAWNER");
  if (!chosen || strcmp(chosen, "mpi")) return NULL; /* only gasnetrun's mpi spawner */
  flavour = started_by();
  if (!flavour)
    gasneti_fatalerror("mpi spawner: no MPI launcher started this rank (none of "
                       "OMPI_COMM_WORLD_SIZE, PMIX_NAMESPACE, PMI_FD is set); MPIRUN_CMD must "
                       "run an MPI launcher (mpirun, mpiexec, srun)");
  load();
  keep_off_fast_network();
  static const char *levels[] = {"SINGLE", "FUNNELED", "SERIALIZED", "MULTIPLE"};
  int want = 0, provided = 0;
  for (int i = 0; i < 4; i++)
    if (gasneti_knob_enum_is("GASNET_MPI_THREAD", levels[i])) want = i;
  mpi_boot = (gasneti_bootstrap_t){.name = "mpi",
                                   .exchange = mpi_exchange,
                                   .barrier = mpi_barrier,
                                   .leaving = mpi_leaving,
                                   .abort = mpi_abort};
  check(mpi.init(argc, argv, want, &mpi_boot.rank, &mpi_boot.size, &provided),
        "MPI_Init_thread");
  if (provided < want)
    gasneti_fatalerror("mpi spawner: GASNET_MPI_THREAD=%s, but %s's MPI offers only "
                       "MPI_THREAD_%s", levels[want], flavour, levels[provided]);
  /* One job id for all: rank 0's, which names shared-memory objects with the host. */
  char id[sizeof mpi_boot.jobid] = "";
  if (mpi_boot.rank == 0) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    snprintf(id, sizeof id, "m%ld-%lx", (long)getpid(), (long)ts.tv_nsec);
  }
  check(mpi.bcast(id, sizeof id, 0), "MPI_Bcast");
  memcpy(mpi_boot.jobid, id, sizeof id);
  mpi_boot.jobid[sizeof mpi_boot.jobid - 1] = 0;
  return &mpi_boot;
}
