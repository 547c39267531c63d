/* pmix_client.c: the pmi spawner's collectives over PMIx, the process manager interface of
 * Slurm's srun (--mpi=pmix) and Open MPI's mpirun. An exchange is a
 * Put of this rank's blob under a fresh key, a Commit, a Fence that collects the data, and a
 * Get of every rank's blob; a barrier is a Fence.
 *
 * libpmix is loaded when a PMIx server started the rank, not linked: clients link the
 * runtime as before (no PMIx flags in their Makefiles), and only a job started by srun or
 * mpirun needs the library. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pmix.h>

#include "pmi_kvs.h"

#include "gasnet_internal.h"

#ifndef GASNETI_PMIX_LIBDIR
#define GASNETI_PMIX_LIBDIR ""
#endif

/* The PMIx calls this file makes, resolved from the loaded library. */
#define PMIX_CALLS(X) X(PMIx_Init) X(PMIx_Finalize) X(PMIx_Abort) X(PMIx_Get) X(PMIx_Put) \
  X(PMIx_Commit) X(PMIx_Fence) X(PMIx_Error_string) X(PMIx_Value_destruct)
#define DECLARE(f) static __typeof__(f) *p_##f;
PMIX_CALLS(DECLARE)
#undef DECLARE

static void load_pmix(void) {
  const char *candidates[] = {GASNETI_PMIX_LIBDIR "/libpmix.so.2", "libpmix.so.2",
                              "libpmix.so"};
  void *lib = NULL;
  for (size_t i = 0; i < sizeof candidates / sizeof *candidates && !lib; i++)
    if (candidates[i][0] != '/' || GASNETI_PMIX_LIBDIR[0])
      lib = dlopen(candidates[i], RTLD_NOW | RTLD_GLOBAL);
  if (!lib)
    gasneti_fatalerror("pmi spawner: a PMIx server started this rank (PMIX_NAMESPACE is set) "
                       "but libpmix cannot be loaded: %s (Debian: apt-get install libpmix2)",
                       dlerror());
#define RESOLVE(f)                                                                          \
  if (!(*(void **)&p_##f = dlsym(lib, #f)))                                                 \
    gasneti_fatalerror("pmi spawner: libpmix has no %s (PMIx 4 or later is needed)", #f);
  PMIX_CALLS(RESOLVE)
#undef RESOLVE
}

static void load_procid(pmix_proc_t *proc, const char *nspace, pmix_rank_t rank) {
  memset(proc, 0, sizeof *proc);
  snprintf(proc->nspace, sizeof proc->nspace, "%s", nspace);
  proc->rank = rank;
}

static void release(pmix_value_t *v) {
  p_PMIx_Value_destruct(v);
  free(v);
}

static pmix_proc_t me;
static gasneti_bootstrap_t pmi_boot;
static unsigned long exchanges; /* names each exchange's key: gasnet.<n> */
static int finalized;

static void check(pmix_status_t rc, const char *what) {
  if (rc != PMIX_SUCCESS)
    gasneti_fatalerror("pmi spawner: %s failed: %s (%d)", what, p_PMIx_Error_string(rc), (int)rc);
}

static void pmi_fence(int collect) {
  pmix_info_t info;
  memset(&info, 0, sizeof info);
  snprintf(info.key, sizeof info.key, "%s", PMIX_COLLECT_DATA);
  info.value.type = PMIX_BOOL;
  info.value.data.flag = true;
  pmix_proc_t all;
  load_procid(&all, me.nspace, PMIX_RANK_WILDCARD);
  check(p_PMIx_Fence(&all, 1, collect ? &info : NULL, collect ? 1 : 0), "PMIx_Fence");
}

static void pmi_exchange(const void *mine, size_t len, void *all) {
  char key[PMIX_MAX_KEYLEN];
  snprintf(key, sizeof key, "gasnet.%lu", ++exchanges);
  pmix_value_t value;
  memset(&value, 0, sizeof value);
  value.type = PMIX_BYTE_OBJECT;
  value.data.bo.bytes = (char *)(uintptr_t)mine;
  value.data.bo.size = len;
  check(p_PMIx_Put(PMIX_GLOBAL, key, &value), "PMIx_Put");
  check(p_PMIx_Commit(), "PMIx_Commit");
  pmi_fence(1);
  for (int r = 0; r < pmi_boot.size; r++) {
    pmix_proc_t peer;
    load_procid(&peer, me.nspace, (pmix_rank_t)r);
    pmix_value_t *got = NULL;
    check(p_PMIx_Get(&peer, key, NULL, 0, &got), "PMIx_Get of a peer's blob");
    if (got->type != PMIX_BYTE_OBJECT || got->data.bo.size != len)
      gasneti_fatalerror("pmi spawner: rank %d's blob for exchange %lu has %zu bytes, expected "
                         "%zu", r, exchanges, got->type == PMIX_BYTE_OBJECT ? got->data.bo.size : 0,
                         len);
    if (len) memcpy((char *)all + (size_t)r * len, got->data.bo.bytes, len);
    release(got);
  }
}

static void pmi_barrier(void) { pmi_fence(0); }

/* The card goes to the PMIx servers in a fence that collects data, so that a peer's PMIx_Get
 * later reads it from its own host's server: the servers hold the table, once per host, and a
 * rank only what it looks up. (A fence without data and PMIx's direct modex would leave even
 * the servers without it, but Slurm 22.05's plugin answers such a Get NOT-FOUND.) */
#define CARD_KEY "gasnet.card"
static void pmi_publish(const void *card, size_t len) {
  pmix_value_t value;
  memset(&value, 0, sizeof value);
  value.type = PMIX_BYTE_OBJECT;
  value.data.bo.bytes = (char *)(uintptr_t)card;
  value.data.bo.size = len;
  check(p_PMIx_Put(PMIX_GLOBAL, CARD_KEY, &value), "PMIx_Put of this rank's card");
  check(p_PMIx_Commit(), "PMIx_Commit");
  pmi_fence(1);
}

static int pmi_lookup(int rank, void *card, size_t len, int *ended) {
  (void)ended; /* PMIx does not say */
  pmix_proc_t peer;
  load_procid(&peer, me.nspace, (pmix_rank_t)rank);
  pmix_value_t *got = NULL;
  check(p_PMIx_Get(&peer, CARD_KEY, NULL, 0, &got), "PMIx_Get of a peer's card");
  int ok = got->type == PMIX_BYTE_OBJECT && got->data.bo.size == len;
  if (!ok)
    gasneti_fatalerror("pmi spawner: rank %d's card has %zu bytes, expected %zu", rank,
                       got->type == PMIX_BYTE_OBJECT ? got->data.bo.size : 0, len);
  memcpy(card, got->data.bo.bytes, len);
  release(got);
  return 1;
}

/* A rank leaving with code 0 says goodbye to the server (its peers leave too, told by the
 * runtime); one leaving with an error does not, which PMIx servers take as an abnormal end:
 * they end the other ranks and report this code. */
static void pmi_leaving(int code, int ends_job) {
  (void)ends_job;
  if (code == 0 && !finalized) {
    finalized = 1;
    p_PMIx_Finalize(NULL, 0);
  }
}

static void pmi_abort(int code) {
  if (!finalized) p_PMIx_Abort(code, "GASNet fatal error (see the rank's message above)", NULL, 0);
}

/* The job id names shared-memory objects: a short hash of the PMIx namespace (whose own
 * spelling, e.g. "prterun-host-1234@1", need not be a valid file name). */
static void set_jobid(const char *nspace) {
  uint64_t h = 1469598103934665603ull;
  for (const char *p = nspace; *p; p++) h = (h ^ (unsigned char)*p) * 1099511628211ull;
  snprintf(pmi_boot.jobid, sizeof pmi_boot.jobid, "p%016llx", (unsigned long long)h);
}

const gasneti_bootstrap_t *gasneti_pmix_open(void) {
  /* Only a PMIx server's child has these: otherwise this spawner did not start us. */
  if (!getenv("PMIX_NAMESPACE") || !getenv("PMIX_RANK")) return NULL;
  load_pmix();
  check(p_PMIx_Init(&me, NULL, 0), "PMIx_Init");
  pmix_proc_t job;
  load_procid(&job, me.nspace, PMIX_RANK_WILDCARD);
  pmix_value_t *size = NULL;
  check(p_PMIx_Get(&job, PMIX_JOB_SIZE, NULL, 0, &size), "PMIx_Get(PMIX_JOB_SIZE)");
  pmi_boot = (gasneti_bootstrap_t){.name = "pmi",
                                   .rank = (int)me.rank,
                                   .size = (int)size->data.uint32,
                                   .exchange = pmi_exchange,
                                   .barrier = pmi_barrier,
                                   .leaving = pmi_leaving,
                                   .abort = pmi_abort,
                                   .publish = pmi_publish,
                                   .lookup = pmi_lookup};
  release(size);
  set_jobid(me.nspace);
  return &pmi_boot;
}
