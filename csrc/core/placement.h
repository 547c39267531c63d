/* placement.h: where this rank runs, for conduits that pick a device near it (ibv's ports,
 * ofi's domain per socket). */
#ifndef GASNETI_PLACEMENT_H
#define GASNETI_PLACEMENT_H

#include <stdbool.h>

/* The socket (or, with numa, the NUMA node) holding every CPU this rank may run on, or -1 when
 * they span several (an unbound rank) or the system does not say. */
int gasneti_cpu_domain(bool numa);

#endif
