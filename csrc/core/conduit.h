/* conduit.h: what a conduit provides to the core (one implementation per conduit folder).
 * The core reaches supernode peers through PSHM itself; everything else goes through here. */
#ifndef GASNETI_CONDUIT_H
#define GASNETI_CONDUIT_H

#include "gasnet_internal.h"

/* Chooses the bootstrap this process was started with (may fork, for GASNET_PSHM_NODES). */
const gasneti_bootstrap_t *gasnetc_bootstrap_open(int *argc, char ***argv);
/* Brings the conduit up once the host map and PSHM regions exist (gasnet_init). */
void gasnetc_init(void);
/* Sends one AM to a rank outside this rank's supernode; blocks only for flow control. */
void gasnetc_am_send(gasnet_node_t dest, int reply, int category, gasnet_handler_t handler,
                     const void *src, size_t nbytes, void *dst, int nargs,
                     const gasnet_handlerarg_t *args);
/* Serves the conduit's own network (not PSHM); returns how many messages ran. */
int gasnetc_poll(int which);

#endif
