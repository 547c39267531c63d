/* wait.c: polling and the wait policy of every blocking loop in the runtime.
 * Poll while the host has a core per rank; give the core away when ranks outnumber cores. */
#include <sched.h>
#include <stdio.h>

#include "conduit.h"
#include "gasnet_internal.h"
#include "knobs.h"
#include "pshm/pshm.h"

static int wait_mode = GASNET_WAIT_SPIN;
enum { SPINS_BEFORE_YIELD = 2000 };
static GASNETI_TLS unsigned idle_spins;

void gasneti_wait_init(void) {
  cpu_set_t set;
  int cpus = 1;
  if (sched_getaffinity(0, sizeof set, &set) == 0) cpus = CPU_COUNT(&set);
  /* The host's ranks together, when they may run on different CPUs (each bound to one). */
  if (gasneti_host_cpus > cpus) cpus = gasneti_host_cpus;
  /* Oversubscribed: a spinning waiter would hold the core the rank it waits for needs. The
   * rank cannot see ranks of other "hosts" sharing its cores (containers, fake hosts on one
   * machine): GASNET_WAIT_MODE says so. */
  if (gasneti_knob_enum_is("GASNET_WAIT_MODE", "spin")) wait_mode = GASNET_WAIT_SPIN;
  else if (gasneti_knob_enum_is("GASNET_WAIT_MODE", "block")) wait_mode = GASNET_WAIT_BLOCK;
  else if (gasneti_knob_enum_is("GASNET_WAIT_MODE", "spinblock")) wait_mode = GASNET_WAIT_SPINBLOCK;
  else {
    wait_mode = gasneti_host_size > cpus ? GASNET_WAIT_BLOCK : GASNET_WAIT_SPIN;
    if (gasneti_mynode == 0 && gasneti_knob_bool("GASNET_VERBOSEENV"))
      fprintf(stderr, "GASNET_WAIT_MODE auto: %s (%d ranks on host %s, %d CPUs for them)\n",
              wait_mode == GASNET_WAIT_SPIN ? "spin" : "block", gasneti_host_size,
              gasneti_hostname, cpus);
  }
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
  int ran = gasneti_pshm_poll(which) + gasnetc_poll(which);
  if (ran) idle_spins = 0;
  return ran;
}

void gasneti_wait_backoff(void) {
  switch (wait_mode) {
    case GASNET_WAIT_BLOCK: sched_yield(); break;
    case GASNET_WAIT_SPINBLOCK:
      if (++idle_spins > SPINS_BEFORE_YIELD) sched_yield();
      break;
    default:
      /* No pause instruction: it costs ~27 ns on the VMs we run on, and bursts of it trip the
       * hypervisor's pause-loop exiting; measured, it quadrupled the AM round trip. */
      break;
  }
}

void gasneti_wait_step(void) {
  int which = gasneti_am_context == GASNETI_CTX_CLIENT ? GASNETI_POLL_ALL : 0;
  if (!gasneti_attach_done || !gasneti_poll(which)) gasneti_wait_backoff();
}
