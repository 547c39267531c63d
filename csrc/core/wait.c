/* wait.c: polling and the wait policy of every blocking loop in the runtime.
 * Poll while the host has a core per waiting thread; give the core away when they outnumber
 * the cores. */
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <time.h>

#include "conduit.h"
#include "gasnet_internal.h"
#include "knobs.h"
#include "pshm/pshm.h"
#include "pshm/wake.h"
#include "exit/exit_internal.h"

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

/* ---- sleeping (wake.h): SEQ builds whose conduit can sleep (GASNETC_WAIT_FDS) ---- */
#if !GASNETI_THREADS && defined(GASNETC_WAIT_FDS)
#define GASNETI_CAN_SLEEP 1
/* An idle wait sleeps once it has found nothing for this long: twice what this VM takes to
 * wake a process blocked in the kernel (20-30 us), so a reply on its way is still polled for. */
#define SLEEP_AFTER 50e-6
static bool may_sleep;       /* this rank sleeps in its blocking waits */
/* How long a sleep lasts when nothing ends it: GASNET_WAIT_SLEEP_MIN at first, twice as long
 * after each such sleep, up to GASNET_WAIT_SLEEP_MAX, and back to the first once the rank
 * finds work. Only a wake nobody sends needs the limit (a client's wait on a word a supernode
 * peer stores to through its own mapping of the segment, not through GASNet), which a rank
 * then notices within about twice the time it waited; the doubling keeps a rank that waits
 * long from waking for nothing: 512 ranks on 2 cores woke 5 million times in an all-to-all
 * with a fixed 10 ms. */
static long sleep_first_ns, sleep_max_ns, sleep_ns;
static bool armed;           /* its sleeping word is set (wake_arm) */
#ifdef GASNETC_WAIT_ARM
static bool conduit_ready;   /* the conduit said at arming that the rank may sleep */
#endif
static double idle_since = -1; /* the first idle step of the current wait, -1: it found work */

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* gasneti_poll ran something: the wait is not idle, and writers need not wake this rank. */
static inline void found_work(void) {
  idle_since = -1;
  sleep_ns = sleep_first_ns;
  if (armed) {
    armed = false;
    gasneti_wake_disarm();
  }
}

/* One idle step of a blocking wait: true if it armed or slept (the caller looks again), false
 * if it should yield instead. Arming comes first and returns at once, so that the caller's
 * next look at its condition and its next poll come after the word is set (wake.h); the step
 * after that sleeps, until a wake, a datagram, the conduit's deadline or sleep_ns. */
static bool sleep_step(void) {
  double now = now_s();
  if (idle_since < 0) idle_since = now;
  if (now - idle_since < SLEEP_AFTER) return false;
  if (!armed) {
    armed = true;
    gasneti_wake_arm();
#ifdef GASNETC_WAIT_ARM
    conduit_ready = gasnetc_wait_arm() == 0;
#endif
    return true;
  }
#ifdef GASNETC_WAIT_ARM
  if (!conduit_ready) { /* it had work: the caller polled it; ask again at the next arming */
    armed = false;
    gasneti_wake_disarm();
    return false;
  }
  conduit_ready = false;
#endif
  struct pollfd fds[1 + GASNETC_WAIT_FDS];
  fds[0] = (struct pollfd){.fd = gasneti_wake_fd(), .events = POLLIN};
  double deadline = -1;
  int n = gasnetc_wait_fds(fds + 1, &deadline);
  if (n < 0) return false; /* the conduit has work due now */
  long ns = sleep_ns;
  bool capped = false; /* the conduit's deadline comes first */
  if (deadline >= 0) {
    if (deadline <= now) return false;
    if ((deadline - now) * 1e9 < (double)ns) ns = (long)((deadline - now) * 1e9) + 1, capped = true;
  }
  struct timespec ts = {ns / 1000000000L, ns % 1000000000L};
  /* A signal ends it early: the caller looks again. */
  if (ppoll(fds, (nfds_t)(1 + n), &ts, NULL) == 0 && !capped)
    sleep_ns = sleep_ns < sleep_max_ns / 2 ? 2 * sleep_ns : sleep_max_ns;
  if (fds[0].revents) gasneti_wake_drain();
  /* A writer that woke it cleared the word: set it again before the caller's next look. */
  armed = false;
  return true;
}
#endif

bool gasneti_wait_may_sleep(void) {
#ifdef GASNETI_CAN_SLEEP
  return may_sleep;
#else
  return false;
#endif
}

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
#ifdef GASNETI_CAN_SLEEP
  /* An explicit spin never sleeps; GASNET_WAIT_MODE=block and spinblock sleep after a short
   * idle spell, and so does auto when the host's ranks outnumber its CPUs. A rank that sleeps
   * says so in the host's region: its host peers then wake whoever sleeps (wake.h). */
  bool sleep = wait_mode == GASNET_WAIT_BLOCK || wait_mode == GASNET_WAIT_SPINBLOCK ||
               (auto_mode && gasneti_host_size > cpus);
  may_sleep = gasneti_wake_init(sleep);
  sleep_first_ns = (long)(gasneti_knob_double("GASNET_WAIT_SLEEP_MIN") * 1e9);
  sleep_max_ns = (long)(gasneti_knob_double("GASNET_WAIT_SLEEP_MAX") * 1e9);
  if (sleep_max_ns < sleep_first_ns) sleep_max_ns = sleep_first_ns;
  sleep_ns = sleep_first_ns;
#endif
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

GASNETI_TLS bool gasneti_poll_stop;

int gasneti_poll(int which) {
  gasneti_exit_check();
  if (!which) return 0;
  gasneti_poll_stop = false;
  int ran = gasneti_pshm_poll(which);
  if (GASNETI_LIKELY(!gasneti_poll_stop)) ran += gasnetc_poll(which);
#ifdef GASNETI_CAN_SLEEP
  if (GASNETI_UNLIKELY(idle_since >= 0) && ran) found_work(); /* (only a sleeper sets it) */
#endif
  return ran;
}

/* As GASNet: every idle wait iteration yields in every mode but SPIN (SPINBLOCK too: there is
 * no blocking wait to fall back to after spinning), and whenever the runtime chose to. No pause
 * instruction when spinning: it costs ~27 ns on the VMs we run on, and bursts of it trip the
 * hypervisor's pause-loop exiting; measured, it quadrupled the AM round trip. */
void gasneti_wait_yield(void) {
#if GASNETI_THREADS
  if (GASNETI_UNLIKELY(!counted)) count_waiter();
#endif
  if (wait_mode != GASNET_WAIT_SPIN || atomic_load_explicit(&runtime_yields, memory_order_relaxed))
    sched_yield();
}

/* A blocking wait's idle step may also sleep (wake.h); a client's poll or try never does
 * (gasneti_wait_yield): gasnet_AMPoll does not block. */
void gasneti_wait_backoff(void) {
#ifdef GASNETI_CAN_SLEEP
  if (may_sleep && gasneti_attach_done &&
      (wait_mode != GASNET_WAIT_SPIN || atomic_load_explicit(&runtime_yields, memory_order_relaxed)) &&
      sleep_step())
    return;
#endif
  gasneti_wait_yield();
}

void gasneti_wait_step(void) {
  int which = gasneti_am_context == GASNETI_CTX_CLIENT ? GASNETI_POLL_ALL : 0;
#if !GASNETI_THREADS && defined(GASNETC_WAIT_BLOCK)
  /* A spinning waiter whose conduit can wait inside its network does (conduit.h), unless
   * another rank ended the job: leaving takes two polls (gasneti_exit_check). */
  if (gasneti_attach_done && which == GASNETI_POLL_ALL && wait_mode == GASNET_WAIT_SPIN &&
      !atomic_load_explicit(&runtime_yields, memory_order_relaxed) &&
      gasneti_exit_posted_or(GASNETI_EXIT_NONE) == GASNETI_EXIT_NONE &&
      gasnetc_wait_block() >= 0)
    return;
#endif
  if (!gasneti_attach_done || !gasneti_poll(which)) gasneti_wait_backoff();
}
