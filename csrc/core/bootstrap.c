/* bootstrap.c: choosing how this rank was started (the first spawner in the build's list that
 * claims the process, else a 1-rank job), and the checked exchange every caller uses. */
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "conduit.h"
#include "gasnet_internal.h"

/* ---- a 1-rank job: no launcher, every collective is a copy ------------------------------- */
static void single_exchange(const void *mine, size_t len, void *all) { memmove(all, mine, len); }
static void single_barrier(void) {}
static void single_leaving(int code, int ends_job) { (void)code, (void)ends_job; }
static void single_abort(int code) { (void)code; }

static gasneti_bootstrap_t single = {.name = "single",
                                     .rank = 0,
                                     .size = 1,
                                     .exchange = single_exchange,
                                     .barrier = single_barrier,
                                     .leaving = single_leaving,
                                     .abort = single_abort};

const gasneti_bootstrap_t *gasneti_bootstrap_choose(int *argc, char ***argv) {
  for (const gasneti_bootstrap_opener_t *o = gasneti_bootstrap_openers; o->open; o++) {
    const gasneti_bootstrap_t *boot = o->open(argc, argv);
    if (boot) return boot;
  }
  gasnetc_unlaunched(argc, argv);
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  snprintf(single.jobid, sizeof single.jobid, "s%ld-%lx", (long)getpid(), (long)ts.tv_nsec);
  return &single;
}

void gasneti_bootstrap_exchange(const void *mine, size_t len, void *all) {
  if (len > GASNETI_BOOTSTRAP_BLOB_MAX)
    gasneti_fatalerror("internal: a bootstrap exchange of %zu bytes per rank exceeds "
                       "GASNETI_BOOTSTRAP_BLOB_MAX (%d)", len, GASNETI_BOOTSTRAP_BLOB_MAX);
  gasneti_boot->exchange(mine, len, all);
}
