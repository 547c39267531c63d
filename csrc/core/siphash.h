/* siphash.h: SipHash-2-4 (Aumasson and Bernstein, 2012), a keyed pseudo-random function on
 * short inputs: a 64-bit MAC for control datagrams, and a way to derive per-purpose keys from a
 * job's secret. Written from the paper's description. */
#ifndef GASNETI_SIPHASH_H
#define GASNETI_SIPHASH_H

#include <stddef.h>
#include <stdint.h>

uint64_t gasneti_siphash24(const uint8_t key[16], const void *data, size_t len);

/* A 16-byte key for one purpose (label) from a 16-byte secret: two SipHash outputs. */
void gasneti_derive_key(const uint8_t secret[16], const char *label, uint8_t out[16]);

#endif
