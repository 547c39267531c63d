/* solo.h: PAR locks that cost nothing while one thread does all of a rank's communication.
 *
 * On x86 every locked instruction drains the store buffer; on the AM fast path the stores
 * waiting there are the previous message's, to lines the receiver is reading, so a spin lock
 * taken per message cost a PAR sender 20-40% of its flood rate against SEQ. Most PAR clients
 * communicate from one thread at a time, so the first thread that enters a section guarded
 * this way owns them all and runs them with plain stores: it marks itself busy, then reads
 * the mode (no fence between them). The first section entered by any other thread revokes the
 * ownership, once per process: it sets the mode, makes every thread of the process execute a
 * full barrier (membarrier(2), private expedited), and waits until the owner is no longer
 * inside a section; from then on everybody takes the locks. The barrier is what makes the
 * owner's fence-free fast path safe: after it, either the owner's busy mark is visible to the
 * revoker or the owner reads the new mode. Where membarrier is missing, the locks are always
 * taken. A thread that makes AM calls while holding a handler-safe lock that a handler needs
 * is erroneous (as in GASNet) and may now wait for ever at its first section.
 *
 * SEQ builds compile none of this. */
#ifndef GASNETI_SOLO_H
#define GASNETI_SOLO_H

#include "gasnet_internal.h"

#if GASNETI_THREADS
enum {
  GASNETI_SOLO_SHARED = 0,    /* locks, for good (also before gasneti_solo_init) */
  GASNETI_SOLO_UNCLAIMED = 1, /* nobody has entered a section yet */
  GASNETI_SOLO_OWNED = 2,     /* one thread runs every section without locks */
  GASNETI_SOLO_REVOKING = 3,  /* another thread arrived: it waits for the owner to leave */
};
/* On lines of their own: every thread reads the mode, only the owner writes busy. */
extern _Alignas(64) _Atomic int gasneti_solo_mode;
extern _Alignas(64) _Atomic unsigned gasneti_solo_busy; /* the owner's depth of lock-free sections */
extern GASNETI_TLS bool gasneti_solo_owner;

/* Single-threaded start-up: enables ownership where membarrier(2) is available. */
void gasneti_solo_init(void);
bool gasneti_solo_enter_slow(void);

/* Entering a guarded section: true when the caller runs it without the lock (and must leave
 * it with gasneti_solo_leave), false when it must take the lock as usual. */
static inline __attribute__((always_inline)) bool gasneti_solo_enter(void) {
  if (GASNETI_LIKELY(gasneti_solo_owner)) {
    unsigned depth = atomic_load_explicit(&gasneti_solo_busy, memory_order_relaxed);
    atomic_store_explicit(&gasneti_solo_busy, depth + 1, memory_order_relaxed);
    atomic_signal_fence(memory_order_seq_cst); /* the compiler keeps the order; membarrier the CPU */
    if (GASNETI_LIKELY(atomic_load_explicit(&gasneti_solo_mode, memory_order_relaxed) ==
                       GASNETI_SOLO_OWNED))
      return true;
    atomic_store_explicit(&gasneti_solo_busy, depth, memory_order_release);
    /* For good: stop writing the busy mark, which only the revoker ever waits on. */
    if (atomic_load_explicit(&gasneti_solo_mode, memory_order_relaxed) == GASNETI_SOLO_SHARED)
      gasneti_solo_owner = false;
    return false;
  }
  return gasneti_solo_enter_slow();
}

static inline __attribute__((always_inline)) void gasneti_solo_leave(void) {
  unsigned depth = atomic_load_explicit(&gasneti_solo_busy, memory_order_relaxed);
  atomic_store_explicit(&gasneti_solo_busy, depth - 1, memory_order_release);
}

/* A spin lock that the owner skips: lock returns what unlock needs. */
static inline __attribute__((always_inline)) bool gasneti_solo_lock(gasneti_spinlock_t *l) {
  if (gasneti_solo_enter()) return true;
  gasneti_spin_lock(l);
  return false;
}
static inline __attribute__((always_inline)) bool gasneti_solo_trylock(gasneti_spinlock_t *l,
                                                                        bool *solo) {
  if ((*solo = gasneti_solo_enter())) return true;
  return gasneti_spin_trylock(l);
}
static inline __attribute__((always_inline)) void gasneti_solo_unlock(gasneti_spinlock_t *l,
                                                                       bool solo) {
  if (solo) gasneti_solo_leave();
  else gasneti_spin_unlock(l);
}
#else
#define gasneti_solo_init() ((void)0)
#define gasneti_solo_lock(l) ((void)(l), false)
#define gasneti_solo_trylock(l, solo) ((void)(l), *(solo) = false, true)
#define gasneti_solo_unlock(l, solo) ((void)(l), (void)(solo))
#endif

#endif
