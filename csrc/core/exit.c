/* exit.c: leaving the job. The first rank to leave posts its exit code in the host's exit
 * word; ranks waiting inside GASNet see it and follow; the launcher signals the others. */
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include "gasnet_internal.h"
#include "knobs.h"
#include "pshm/pshm.h"

static atomic_int exiting;
static GASNETI_TLS int this_thread_exiting;

/* First code wins: peers leave with the code of the rank that started the exit. */
static void publish(int code) {
  gasneti_region_t *leader = gasneti_host_leader_region;
  if (!leader) return;
  int32_t none = GASNETI_EXIT_NONE;
  atomic_compare_exchange_strong(&leader->exit_code, &none, code);
}

void gasneti_exit_now(int code) {
  if (this_thread_exiting) _exit(code & 0xff); /* an error on the way out */
  if (atomic_exchange(&exiting, 1)) {
    for (;;) pause(); /* another thread is ending the process */
  }
  this_thread_exiting = 1;
  publish(code);
  fflush(stdout);
  fflush(stderr);
  if (gasneti_boot && gasneti_boot->fini) gasneti_boot->fini();
  _exit(code & 0xff);
}

void gasnet_exit(int exitcode) { gasneti_exit_now(exitcode); }

void gasneti_exit_check(void) {
  gasneti_region_t *leader = gasneti_host_leader_region;
  if (!leader) return;
  int32_t code = atomic_load_explicit(&leader->exit_code, memory_order_relaxed);
  if (GASNETI_UNLIKELY(code != GASNETI_EXIT_NONE) && !atomic_load(&exiting))
    gasneti_exit_now(code);
}

/* The launcher sends SIGQUIT when a peer left; SIGINT/SIGTERM/SIGHUP end the job as well.
 * Ranks leave with the job's exit code when one was posted, else 128 + the signal. */
static void on_signal(int sig) {
  if (atomic_load(&exiting)) return;
  int code = 128 + sig;
  gasneti_region_t *leader = gasneti_host_leader_region;
  if (sig == SIGQUIT && leader) {
    int32_t posted = atomic_load(&leader->exit_code);
    if (posted != GASNETI_EXIT_NONE) code = posted;
  }
  gasneti_exit_now(code);
}

/* Returning from main (or calling exit) ends the job: peers are told to leave with 0, and this
 * process keeps the status it was given. */
static void at_exit(void) {
  if (atomic_exchange(&exiting, 1)) return;
  this_thread_exiting = 1;
  publish(0);
  fflush(stdout);
  fflush(stderr);
  if (gasneti_boot && gasneti_boot->fini) gasneti_boot->fini();
}

void gasneti_exit_init(void) {
  struct sigaction sa = {0};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  const int sigs[] = {SIGQUIT, SIGTERM, SIGINT, SIGHUP};
  for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) sigaction(sigs[i], &sa, NULL);
  atexit(at_exit);
}

double gasneti_exit_timeout(int ranks) {
  char err[256];
  double t = gasneti_exit_timeout_of(
      gasneti_knob_text("GASNET_EXITTIMEOUT"), gasneti_knob_text("GASNET_EXITTIMEOUT_MAX"),
      gasneti_knob_text("GASNET_EXITTIMEOUT_MIN"), gasneti_knob_text("GASNET_EXITTIMEOUT_FACTOR"),
      ranks, err, sizeof err);
  if (t < 0) gasneti_fatalerror("%s", err);
  return t;
}
