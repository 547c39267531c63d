/* exit.c: leaving the job. A rank that ends the job (gasnet_exit, a non-zero exit code, a
 * fatal error, a signal) posts its code in the host's exit word and tells the other hosts'
 * ranks through the conduit; ranks waiting inside GASNet see it and follow; the launcher ends
 * the others. A rank that returns 0 from main has simply finished: its peers go on, and the
 * launcher ends the job once every rank finished (or GASNET_EXITTIMEOUT after the first). */
#include <signal.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <unistd.h>

#include "conduit.h"
#include "gasnet_internal.h"
#include "knobs.h"
#include "pshm/pshm.h"
#include "pshm/wake.h"
#include "trace/trace.h"
#include "exit_internal.h"

static atomic_int exiting;
static GASNETI_TLS int this_thread_exiting;
bool gasneti_conduit_up;

/* First code wins: peers leave with the code of the rank that ended the job. Returns the
 * job's code: this one, or the one another rank of this host posted first. The phase (the
 * latest barrier passed by a rank that ended the job) goes first, so whoever sees the code
 * sees it; of several, the latest stands. */
static int publish(int code, uint32_t phase) {
  gasneti_region_t *leader = gasneti_host_leader_region;
  if (!leader) return code;
  /* 0 is "no barrier passed" (phases count from 1; one that wrapped to 0 only gives up the
   * wait for it), so any phase replaces it: a comparison with 0 would stop working once
   * phases pass 2^31. */
  uint32_t had = atomic_load(&leader->exit_phase);
  while (phase != 0 && (had == 0 || (int32_t)(phase - had) > 0) &&
         !atomic_compare_exchange_weak(&leader->exit_phase, &had, phase)) {
  }
  int32_t seen = GASNETI_EXIT_NONE;
  bool first = atomic_compare_exchange_strong(&leader->exit_code, &seen, code);
  if (first) gasneti_wake_host(); /* sleeping peers must see it (wake.h) */
  return first ? code : seen;
}

void gasneti_exit_post(int code, uint32_t phase) { publish(code, phase); }

bool gasneti_exit_timed_out(void) {
  return gasneti_exit_posted_or(GASNETI_EXIT_NONE) == GASNETI_EXIT_TIMEDOUT;
}

/* The process's code for a posted one. */
static int status_of(int code) { return code == GASNETI_EXIT_TIMEDOUT ? 1 : code; }

uint32_t gasneti_exit_phase(void) {
  gasneti_region_t *leader = gasneti_host_leader_region;
  return leader ? atomic_load(&leader->exit_phase) : gasneti_barrier_passed();
}

bool gasneti_exit_started(void) { return atomic_load(&exiting) != 0; }

int gasneti_exit_posted_or(int fallback) {
  gasneti_region_t *leader = gasneti_host_leader_region;
  if (!leader) return fallback;
  int32_t posted = atomic_load(&leader->exit_code);
  return posted != GASNETI_EXIT_NONE ? posted : fallback;
}

/* From a signal handler, only a stream with output pending: the code the signal interrupted
 * may be inside stdio itself, and a sanitizer's fflush wrapper holds a lock of its own after
 * the flush proper, which a second fflush from the handler waits for forever (seen in CI: a
 * rank that had just flushed its "ready" line, SIGINT right after, the job never ended). */
static void flush_output(void) {
  bool in_signal = gasneti_exit_in_signal;
  if (!in_signal || __fpending(stdout)) fflush(stdout);
  if (!in_signal || __fpending(stderr)) fflush(stderr);
}

void gasneti_exit_job(int code, bool abort) {
  if (this_thread_exiting) _exit(code & 0xff); /* an error on the way out */
  if (atomic_exchange(&exiting, 1)) {
    for (;;) pause(); /* another thread is ending the process */
  }
  this_thread_exiting = 1;
  /* A rank following another's exit (a client SIGQUIT handler calling gasnet_exit(4) after a
   * peer's gasnet_exit(3)) leaves with its own code but reports the job's: its report may
   * reach the supervisor before the first rank's does. */
  /* A fatal error may have come from inside the trace's output: its statistics stay unwritten. */
  if (!abort) gasneti_trace_finish(status_of(code), gasneti_exit_in_signal);
  int job_code = publish(code, gasneti_barrier_passed());
  if (gasneti_conduit_up) gasnetc_exit_notify(job_code); /* GASNETI_EXIT_TIMEDOUT travels as is */
  flush_output();
  if (gasneti_boot) {
    if (abort) gasneti_boot->abort(status_of(job_code));
    else gasneti_boot->leaving(status_of(job_code), 1);
  }
  _exit(status_of(code) & 0xff);
}

void gasnet_exit(int exitcode) {
  /* The two codes the exit word reserves mean nothing from a client: the process's own code
   * (the low 8 bits) stands for them. */
  if (exitcode == GASNETI_EXIT_NONE || exitcode == GASNETI_EXIT_TIMEDOUT) exitcode &= 0xff;
  gasneti_exit_job(exitcode, false);
}

/* Set once this thread has seen a posted exit and let its caller look again. */
static GASNETI_TLS int exit_seen;

void gasneti_exit_check(void) {
  gasneti_region_t *leader = gasneti_host_leader_region;
  if (!leader) return;
  int32_t code = atomic_load_explicit(&leader->exit_code, memory_order_acquire);
  if (GASNETI_UNLIKELY(code != GASNETI_EXIT_NONE) && !atomic_load(&exiting)) {
    if (gasneti_barrier_completes(atomic_load(&leader->exit_phase))) return;
    /* A wait that the leaving rank completed just before it left (it stored a flag, or sent
     * an AM now in the queue, then called gasnet_exit) ends first: it published that before
     * its exit code, so one more poll and one more look at the caller's condition see it. */
    if (!exit_seen) {
      exit_seen = 1;
      return;
    }
    if (code == GASNETI_EXIT_TIMEDOUT)
      fprintf(stderr, "GASNet: rank %d (pid %d, host %s) ended by the conduit after "
              "GASNET_EXITTIMEOUT (code 1): the job's code is 1\n", (int)gasneti_mynode,
              (int)getpid(), gasneti_hostname);
    gasneti_offer_client_quit(); /* GASNet-1: a client's SIGQUIT handler hears of it first */
    if (!atomic_load(&exiting)) gasneti_exit_job(code, false);
  }
}

/* Returning from main or calling exit(): a non-zero code ends the job like gasnet_exit; 0
 * means this rank is done, and its peers are not cut short. stdio is flushed by exit(). */
static void at_exit(int status, void *arg) {
  (void)arg;
  if (atomic_exchange(&exiting, 1)) return;
  this_thread_exiting = 1;
  gasneti_trace_finish(status, false);
  int reported = status;
  if (status != 0) {
    reported = publish(status, gasneti_barrier_passed());
    if (gasneti_conduit_up) gasnetc_exit_notify(reported);
  } else if (gasneti_conduit_up) {
    gasnetc_fini();
  }
  if (gasneti_boot) gasneti_boot->leaving(reported, status != 0);
}

void gasneti_exit_init(void) {
  gasneti_signals_init();
  on_exit(at_exit, NULL);
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
