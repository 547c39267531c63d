/* solo.c: the slow paths of solo.h: claiming the sections, and revoking the claim. */
#include "solo.h"

#if GASNETI_THREADS
#include <linux/membarrier.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

_Alignas(64) _Atomic int gasneti_solo_mode = GASNETI_SOLO_SHARED;
_Alignas(64) _Atomic unsigned gasneti_solo_busy;
GASNETI_TLS bool gasneti_solo_owner;

void gasneti_solo_init(void) {
  /* Without the expedited barrier a revoker could not see the owner's fence-free mark. */
  bool ok = syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
  atomic_store(&gasneti_solo_mode, ok ? GASNETI_SOLO_UNCLAIMED : GASNETI_SOLO_SHARED);
}

bool gasneti_solo_enter_slow(void) {
  int mode = atomic_load_explicit(&gasneti_solo_mode, memory_order_acquire);
  if (mode == GASNETI_SOLO_SHARED) return false;
  if (mode == GASNETI_SOLO_UNCLAIMED &&
      atomic_compare_exchange_strong(&gasneti_solo_mode, &mode, GASNETI_SOLO_OWNED)) {
    gasneti_solo_owner = true;
    /* The same mark-then-read as the fast path: a thread that revoked in between either sees
     * the mark or is seen here. */
    if (gasneti_solo_enter()) return true;
    mode = atomic_load_explicit(&gasneti_solo_mode, memory_order_acquire);
  }
  if (mode == GASNETI_SOLO_OWNED &&
      atomic_compare_exchange_strong(&gasneti_solo_mode, &mode, GASNETI_SOLO_REVOKING)) {
    if (syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) != 0)
      gasneti_fatalerror("membarrier failed after registering for it");
    while (atomic_load_explicit(&gasneti_solo_busy, memory_order_acquire) != 0) sched_yield();
    atomic_store_explicit(&gasneti_solo_mode, GASNETI_SOLO_SHARED, memory_order_release);
    return false;
  }
  /* Another thread is revoking: wait until the owner has left its section. */
  while (atomic_load_explicit(&gasneti_solo_mode, memory_order_acquire) != GASNETI_SOLO_SHARED)
    sched_yield();
  return false;
}
#endif
