/* wait.c: polling and the wait policy of every blocking loop in the runtime.
 * Poll while the host has a core per waiting thread; give the core away when they outnumber
 * the cores. */
#include <sched.h>
#include <stdio.h>

#include "conduit.h"
#include "gasnet_internal.h"
#include "knobs.h"
#include "pshm/pshm.h"

/* The client's mode (gasnet_set_waitmode, or GASNET_WAIT_MODE), and whether the runtime
 * itself chose to yield because the host runs more waiting threads than it has cores. The
 * client's mode never turns the runtime's choice off: a waiter spinning on an oversubscribed
 * host holds the core the rank it waits for needs (an AM to a rank in SPINBLOCK took 30-1,300
 * us against 7-21 us while it spun 2,000 empty polls before each yield). GASNET_WAIT_MODE=spin
 * does: the user asked for it by name. */
static int wait_mode = GASNET_WAIT_SPIN;
static _Atomic int runtime_yields;
static bool auto_mode;
static int cpus = 1;

/* PAR: every thread that waits in GASNet competes for the cores, not only one per rank: two
 * ranks of two threads each on two cores spun a timeslice at a time while the thread they
 * waited for (a handler replying, holding the request queue) sat descheduled, and a 1 MiB Long
 * round trip took 0.33 s. Each process counts its threads that have waited (and forgets
 * those that ended) and takes the host's other ranks to have as many. */
#if GASNETI_THREADS
#include <pthread.h>
static _Atomic int waiting_threads;
static pthread_key_t waiter_key;
static pthread_once_t waiter_once = PTHREAD_ONCE_INIT;
static GASNETI_TLS bool counted;

static void reconsider(int threads) {
  atomic_store_explicit(&runtime_yields, auto_mode && gasneti_host_size * threads > cpus,
                        memory_order_relaxed);
}
static void waiter_gone(void *unused) {
  (void)unused;
  reconsider(atomic_fetch_sub(&waiting_threads, 1) - 1);
}
static void waiter_key_init(void) { pthread_key_create(&waiter_key, waiter_gone); }
static void count_waiter(void) {
  counted = true;
  pthread_once(&waiter_once, waiter_key_init);
  pthread_setspecific(waiter_key, &counted); /* non-NULL: the destructor runs at thread exit */
  reconsider(atomic_fetch_add(&waiting_threads, 1) + 1);
}
#endif

void gasneti_wait_init(void) {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) cpus = CPU_COUNT(&set);
  /* The host's ranks together, when they may run on different CPUs (each bound to one). */
  if (gasneti_host_cpus > cpus) cpus = gasneti_host_cpus;
  /* Oversubscribed: a spinning waiter would hold the core the rank it waits for needs. The
   * rank cannot see ranks of other "hosts" sharing its cores (containers, fake hosts on one
   * machine): GASNET_WAIT_MODE says so. */
  if (gasneti_knob_enum_is("GASNET_WAIT_MODE", "spin")) wait_mode = GASNET_WAIT_SPIN;
  else if (gasneti_knob_enum_is("GASNET_WAIT_MODE", "block")) wait_mode = GASNET_WAIT_BLOCK;
  else if (gasneti_knob_enum_is("GASNET_WAIT_MODE", "spinblock")) wait_mode = GASNET_WAIT_SPINBLOCK;
  else auto_mode = true;
  atomic_store(&runtime_yields, auto_mode && gasneti_host_size > cpus);
  if (auto_mode && gasneti_mynode == 0 && gasneti_knob_bool("GASNET_VERBOSEENV"))
    fprintf(stderr, "GASNET_WAIT_MODE auto: %s (%d ranks on host %s, %d CPUs for them)\n",
            gasneti_host_size > cpus ? "block" : "spin", gasneti_host_size, gasneti_hostname,
            cpus);
}

int gasnet_set_waitmode(int mode) {
  if (mode != GASNET_WAIT_SPIN && mode != GASNET_WAIT_BLOCK && mode != GASNET_WAIT_SPINBLOCK)
    return GASNET_ERR_BAD_ARG;
  wait_mode = mode;
  return GASNET_OK;
}

int gasneti_poll(int which) {
  gasneti_exit_check();
  if (!which) return 0;
  return gasneti_pshm_poll(which) + gasnetc_poll(which);
}

/* As GASNet: every idle wait iteration yields in every mode but SPIN (SPINBLOCK too: there is
 * no blocking wait to fall back to after spinning), and whenever the runtime chose to. No pause
 * instruction when spinning: it costs ~27 ns on the VMs we run on, and bursts of it trip the
 * hypervisor's pause-loop exiting; measured, it quadrupled the AM round trip. */
void gasneti_wait_backoff(void) {
#if GASNETI_THREADS
  if (GASNETI_UNLIKELY(!counted)) count_waiter();
#endif
  if (wait_mode != GASNET_WAIT_SPIN || atomic_load_explicit(&runtime_yields, memory_order_relaxed))
    sched_yield();
}

void gasneti_wait_step(void) {
  int which = gasneti_am_context == GASNETI_CTX_CLIENT ? GASNETI_POLL_ALL : 0;
  if (!gasneti_attach_done || !gasneti_poll(which)) gasneti_wait_backoff();
}
