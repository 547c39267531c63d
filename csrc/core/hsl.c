/* hsl.c: handler-safe locks. In SEQ builds a lock is a flag checked for misuse;
 * in PAR builds it is a mutex, since handlers may run on any client thread that polls. */
#include "gasnet_internal.h"

#if GASNETI_THREADS
void gasnet_hsl_init(gasnet_hsl_t *hsl) {
  if (pthread_mutex_init(&hsl->lock, NULL)) gasneti_fatalerror("gasnet_hsl_init failed");
}
void gasnet_hsl_destroy(gasnet_hsl_t *hsl) {
  if (pthread_mutex_destroy(&hsl->lock)) gasneti_fatalerror("gasnet_hsl_destroy of a held lock");
}
void gasnet_hsl_lock(gasnet_hsl_t *hsl) {
  if (pthread_mutex_lock(&hsl->lock)) gasneti_fatalerror("gasnet_hsl_lock failed");
}
void gasnet_hsl_unlock(gasnet_hsl_t *hsl) {
  if (pthread_mutex_unlock(&hsl->lock)) gasneti_fatalerror("gasnet_hsl_unlock failed");
}
int gasnet_hsl_trylock(gasnet_hsl_t *hsl) {
  return pthread_mutex_trylock(&hsl->lock) == 0 ? GASNET_OK : GASNET_ERR_NOT_READY;
}
#else
void gasnet_hsl_init(gasnet_hsl_t *hsl) { hsl->locked = 0; }
void gasnet_hsl_destroy(gasnet_hsl_t *hsl) {
  if (hsl->locked) gasneti_fatalerror("gasnet_hsl_destroy of a held lock");
}
void gasnet_hsl_lock(gasnet_hsl_t *hsl) {
  /* One thread and no asynchronous handlers: a held lock here can only be a client bug. */
  if (hsl->locked) gasneti_fatalerror("gasnet_hsl_lock: lock already held (deadlock)");
  hsl->locked = 1;
}
void gasnet_hsl_unlock(gasnet_hsl_t *hsl) {
  if (!hsl->locked) gasneti_fatalerror("gasnet_hsl_unlock: lock not held");
  hsl->locked = 0;
}
int gasnet_hsl_trylock(gasnet_hsl_t *hsl) {
  if (hsl->locked) return GASNET_ERR_NOT_READY;
  hsl->locked = 1;
  return GASNET_OK;
}
#endif
