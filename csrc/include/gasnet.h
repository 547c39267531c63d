/* gasnet.h: what a GASNet-1 client includes: the GASNet-1 interface (specification 1.8) and,
 * as GASNet-EX's gasnet.h does, the GASNet-EX interface beside it (a program may mix both), plus
 * the GASNet-1 collectives. Clients define exactly one of GASNET_SEQ, GASNET_PARSYNC or
 * GASNET_PAR before including it.
 *
 * Which header comes first decides the release numbers a client sees (gasnet_config.h): a
 * GASNet-1 client (gasnet.h first) sees the GASNet-1 release it has always checked, a GASNet-EX
 * client (gasnetex.h first) the GASNet-EX release. */
#ifndef _INCLUDED_GASNET_H
#define _INCLUDED_GASNET_H

#ifndef _INCLUDED_GASNETEX_H
#define GASNETI_LEGACY_CLIENT 1
#endif
#include <gasnetex.h>

/* GASNet 1.x's gasnet.h brings in the collectives (its test harness calls gasnet_coll_* in
 * programs that include only gasnet.h); gasnet_vis.h, gasnet_tools.h and gasnet_handler.h
 * stay the client's to include, as there. */
#include <gasnet_coll.h>

#endif /* _INCLUDED_GASNET_H */
