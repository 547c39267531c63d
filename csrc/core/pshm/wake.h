/* wake.h: sleeping waits. On a host whose ranks outnumber its cores (or with
 * GASNET_WAIT_MODE=block), an idle rank in a blocking wait sleeps in the kernel until
 * something it may be waiting for arrives, instead of yielding in a loop: hundreds of ranks that
 * yield keep every core busy with each other's empty polls. What can end a wait arrives either
 * through the conduit (a datagram: the conduit names the descriptors, wait.c) or through this
 * host's shared memory (a PSHM message, ring space given back, a barrier slot, the exit word):
 * whoever writes those wakes the rank it writes for, if it sleeps. Each rank has a wake socket
 * (an abstract AF_UNIX datagram socket: nothing on the file system to leave behind) and a
 * sleeping word in its region.
 *
 * The protocol, lost-wakeup free: a rank going to sleep sets its word, fences, and lets its
 * caller look at its condition and poll once more; only then does it sleep on its descriptors.
 * A writer stores what it writes, fences, and if the word is set clears it (one writer wins)
 * and sends one byte to the sleeper's socket. Either the sleeper's last look saw the write, or
 * the writer saw the word and the byte makes the sleep return at once. SEQ builds only: in PAR
 * another thread of the rank could end a wait by a store no one wakes for. */
#ifndef GASNETI_PSHM_WAKE_H
#define GASNETI_PSHM_WAKE_H

#include <stdbool.h>

#include "gasnet_internal.h"

/* Some rank of this host may sleep: writers must wake it (set at attach, before any rank
 * sleeps). */
extern bool gasneti_wake_on;

/* gasnet_init: this rank sleeps in its waits (its own verdict from its knobs and its host):
 * opens its wake socket and tells its host peers that they must wake it. False if it cannot
 * (its socket's name was taken), which it says once; it yields then. */
bool gasneti_wake_init(bool sleep);
/* gasnet_attach, after every rank of the host passed gasneti_wake_init: whether to wake. */
void gasneti_wake_attach(void);

/* After a store a host peer (host-local index) may be sleeping on. */
void gasneti_wake_peer_slow(int host_index);
static inline void gasneti_wake_peer(int host_index) {
  if (GASNETI_UNLIKELY(gasneti_wake_on)) gasneti_wake_peer_slow(host_index);
}
/* Every other rank of the host (the exit word was posted). */
void gasneti_wake_host(void);

/* ---- the sleeper's side (wait.c) ---- */
int gasneti_wake_fd(void);      /* its socket, to sleep on */
void gasneti_wake_arm(void);    /* sets the word and fences: look once more, then sleep */
void gasneti_wake_disarm(void); /* it found work: writers need not wake it */
void gasneti_wake_drain(void);  /* after waking: empties the socket */

#endif
