/* wait.c: polling and the wait policy of every blocking loop in the runtime.
 * Poll while the host has a core per rank; give the core away when ranks outnumber cores. */
#include <sched.h>

#include "conduit.h"
#include "gasnet_internal.h"
#include "knobs.h"
#include "pshm/pshm.h"

/* The client's mode (gasnet_set_waitmode, or GASNET_WAIT_MODE), and whether the runtime
 * itself chose to yield because the host runs more ranks than it has cores. The client's
 * mode never turns the runtime's choice off: a waiter spinning on an oversubscribed host
 * holds the core the rank it waits for needs (an AM to a rank in SPINBLOCK took 30-1,300 us
 * against 7-21 us while it spun 2,000 empty polls before each yield). GASNET_WAIT_MODE=spin
 * does: the user asked for it by name. */
static int wait_mode = GASNET_WAIT_SPIN;
static int runtime_yields;

void gasneti_wait_init(void) {
  cpu_set_t set;
  int cpus = 1;
  if (sched_getaffinity(0, sizeof set, &set) == 0) cpus = CPU_COUNT(&set);
  /* Oversubscribed: a spinning waiter would hold the core the rank it waits for needs. The
   * rank cannot see ranks of other "hosts" sharing its cores (containers, fake hosts on one
   * machine): GASNET_WAIT_MODE says so. */
  if (gasneti_knob_enum_is("GASNET_WAIT_MODE", "spin")) wait_mode = GASNET_WAIT_SPIN;
  else if (gasneti_knob_enum_is("GASNET_WAIT_MODE", "block")) wait_mode = GASNET_WAIT_BLOCK;
  else if (gasneti_knob_enum_is("GASNET_WAIT_MODE", "spinblock")) wait_mode = GASNET_WAIT_SPINBLOCK;
  else runtime_yields = gasneti_host_size > cpus;
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
  if (wait_mode != GASNET_WAIT_SPIN || runtime_yields) sched_yield();
}

void gasneti_wait_step(void) {
  int which = gasneti_am_context == GASNETI_CTX_CLIENT ? GASNETI_POLL_ALL : 0;
  if (!gasneti_attach_done || !gasneti_poll(which)) gasneti_wait_backoff();
}
