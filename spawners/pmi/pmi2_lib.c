/* pmi2_lib.c: PMI-2 through Slurm's client library (srun --mpi=pmi2), loaded when a PMI-2
 * server started this rank, so clients link nothing more. The functions are those of the
 * PMI-2 interface (MPICH's pmi2.h, which Slurm's libpmi2 implements), declared here so the
 * build needs no PMI-2 header. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pmi_kvs.h"

#include "gasnet_internal.h"

#define PMI2_VALUE_MAX 1024 /* PMI2_MAX_VALLEN, with its NUL */

typedef int init_fn(int *spawned, int *size, int *rank, int *appnum);
typedef int finalize_fn(void);
typedef int abort_fn(int flag, const char msg[]);
typedef int job_getid_fn(char jobid[], int jobid_size);
typedef int kvs_put_fn(const char key[], const char value[]);
typedef int kvs_fence_fn(void);
typedef int kvs_get_fn(const char *jobid, int src, const char key[], char value[], int maxvalue,
                       int *vallen);
static struct {
  init_fn *Init;
  finalize_fn *Finalize;
  abort_fn *Abort;
  job_getid_fn *Job_GetId;
  kvs_put_fn *KVS_Put;
  kvs_fence_fn *KVS_Fence;
  kvs_get_fn *KVS_Get;
} pmi2;

static gasneti_pmi_kvs_t lib;

static void check(int rc, const char *what) {
  if (rc != 0) gasneti_fatalerror("pmi spawner (PMI-2): %s failed (error %d)", what, rc);
}

static void lib_put(const char *key, const char *value) {
  check(pmi2.KVS_Put(key, value), "PMI2_KVS_Put");
}

static void lib_fence(void) { check(pmi2.KVS_Fence(), "PMI2_KVS_Fence"); }

static void lib_get(int rank, const char *key, char *value, size_t max) {
  int len = 0;
  check(pmi2.KVS_Get(lib.job, rank, key, value, (int)max, &len), "PMI2_KVS_Get");
}

static void lib_finalize(void) { pmi2.Finalize(); }

static void lib_abort(int code) {
  char msg[64];
  snprintf(msg, sizeof msg, "GASNet fatal error, exit code %d", code);
  pmi2.Abort(1, msg);
}

static void load(void) {
  const char *candidates[] = {"libpmi2.so.0", "libpmi2.so"};
  void *handle = NULL;
  for (size_t i = 0; i < sizeof candidates / sizeof *candidates && !handle; i++)
    handle = dlopen(candidates[i], RTLD_NOW | RTLD_GLOBAL);
  if (!handle)
    gasneti_fatalerror("pmi spawner: a PMI-2 server started this rank (PMI_FD and PMI_JOBID are "
                       "set) but libpmi2 cannot be loaded: %s (Debian: apt-get install "
                       "libpmi2-0)", dlerror());
#define RESOLVE(f)                                                                          \
  if (!(*(void **)&pmi2.f = dlsym(handle, "PMI2_" #f)))                                     \
    gasneti_fatalerror("pmi spawner: libpmi2 has no PMI2_%s", #f);
  RESOLVE(Init) RESOLVE(Finalize) RESOLVE(Abort) RESOLVE(Job_GetId) RESOLVE(KVS_Put)
  RESOLVE(KVS_Fence) RESOLVE(KVS_Get)
#undef RESOLVE
}

const gasneti_pmi_kvs_t *gasneti_pmi2_open(void) {
  /* PMI_JOBID marks a PMI-2 server (Slurm's); Hydra's PMI-1 sets only PMI_FD/RANK/SIZE. */
  if (!getenv("PMI_FD") || !getenv("PMI_JOBID")) return NULL;
  load();
  int spawned = 0, appnum = 0;
  lib = (gasneti_pmi_kvs_t){.protocol = "PMI-2",
                            .value_max = PMI2_VALUE_MAX - 1,
                            .put = lib_put,
                            .fence = lib_fence,
                            .get = lib_get,
                            .finalize = lib_finalize,
                            .abort = lib_abort};
  check(pmi2.Init(&spawned, &lib.size, &lib.rank, &appnum), "PMI2_Init");
  check(pmi2.Job_GetId(lib.job, (int)sizeof lib.job), "PMI2_Job_GetId");
  return &lib;
}
