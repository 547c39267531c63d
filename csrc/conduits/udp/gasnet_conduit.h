/* gasnet_conduit.h (udp): what a client sees of the udp conduit at compile time.
 * Installed as include/udp-conduit/gasnet_conduit.h, found through the .mak/.pc flags. */
#ifndef GASNET_CONDUIT_H
#define GASNET_CONDUIT_H

#define GASNET_CONDUIT_UDP 1
#define GASNET_CONDUIT_NAME udp
#define GASNET_CONDUIT_NAME_STR "udp"
#define GASNET_PSHM 1
#define GASNET_CORE_NAME UDP
#define GASNET_CORE_VERSION 1.0

/* Between hosts, Medium and Long payloads larger than a datagram travel in pieces (reassembled,
 * or copied into the target segment, before the handler runs); in a supernode, through PSHM.
 * The largest Medium fits one loopback datagram (65507 bytes) with its headers and 16
 * arguments: a get into memory outside the segment (Medium replies) then needs no
 * reassembly copy where datagrams are that large. */
#define GASNETC_MAX_MEDIUM 65024
#define GASNETC_MAX_LONG (4u * 1024 * 1024)
/* Negotiated-payload Mediums are written in the datagram they leave in (udp_np.c). */
#define GASNETC_NATIVE_NP_ALLOC_MEDIUM 1
/* A waiting rank may sleep on its socket (csrc/core/pshm/wake.h). */
#define GASNETC_WAIT_FDS 1
/* Its counters (datagrams, retransmissions, duplicates, drops) join the statistics. */
#define GASNETC_STATS 1

#endif
