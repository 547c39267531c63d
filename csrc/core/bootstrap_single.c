/* bootstrap_single.c: the bootstrap of a program started without any launcher: a 1-rank job,
 * where every collective is a copy. */
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gasnet_internal.h"

static void single_exchange(const void *mine, size_t len, void *all) { memmove(all, mine, len); }
static void single_barrier(void) {}
static void single_broadcast(void *buf, size_t len, int root) {
  (void)buf;
  (void)len;
  (void)root;
}
static _Noreturn void single_abort(int code) { gasneti_exit_now(code); }

static gasneti_bootstrap_t single = {
    .name = "single",
    .rank = 0,
    .size = 1,
    .exchange = single_exchange,
    .barrier = single_barrier,
    .broadcast = single_broadcast,
    .abort = single_abort,
    .fini = NULL,
};

const gasneti_bootstrap_t *gasneti_bootstrap_single_open(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  snprintf(single.jobid, sizeof single.jobid, "s%ld-%lx", (long)getpid(), (long)ts.tv_nsec);
  return &single;
}
