/* tools_internal.h: what the tools sources include. Compiled twice: into the standalone
 * libgasnet_tools-{seq,par} (GASNETT_THREAD_SINGLE / GASNETT_THREAD_SAFE) and into every
 * conduit library (GASNET_SEQ / GASNET_PAR, so gasnet.h comes first, as for any client). */
#ifndef GASNETT_TOOLS_INTERNAL_H
#define GASNETT_TOOLS_INTERNAL_H

#if defined(GASNET_SEQ) || defined(GASNET_PAR)
#include <gasnet.h>
#endif
#include "gasnet_tools.h"

/* The variable a debugger clears to release a frozen process (GASNet-1's name). */
extern volatile int gasnet_frozen;

#endif
