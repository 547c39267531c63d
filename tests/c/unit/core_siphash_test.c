/* core_siphash_test.c: the core's SipHash-2-4 against the published test vectors (key 00..0f,
 * message 00 01 .. of each length), and its key derivation telling labels and secrets apart. */
#include <stdio.h>
#include <string.h>

#include "siphash.h"

int main(void) {
  uint8_t key[16], msg[64];
  for (int i = 0; i < 16; i++) key[i] = (uint8_t)i;
  for (int i = 0; i < 64; i++) msg[i] = (uint8_t)i;
  static const struct {
    size_t len;
    uint64_t want;
  } vectors[] = {{0, 0x726fdb47dd0e0e31ULL}, {15, 0xa129ca6149be45e5ULL}};
  int bad = 0;
  for (size_t i = 0; i < sizeof vectors / sizeof vectors[0]; i++) {
    uint64_t got = gasneti_siphash24(key, msg, vectors[i].len);
    if (got != vectors[i].want) {
      printf("length %zu: %016llx, expected %016llx\n", vectors[i].len,
             (unsigned long long)got, (unsigned long long)vectors[i].want);
      bad = 1;
    }
  }
  uint8_t a[16], b[16], c[16], other[16];
  memcpy(other, key, 16);
  other[15] ^= 1;
  gasneti_derive_key(key, "udp-control", a);
  gasneti_derive_key(key, "udp-control", b);
  gasneti_derive_key(key, "udp-contrOl", c);
  if (memcmp(a, b, 16) != 0 || memcmp(a, c, 16) == 0) bad = printf("derive: labels\n") > 0;
  gasneti_derive_key(other, "udp-control", c);
  if (memcmp(a, c, 16) == 0) bad = printf("derive: secrets\n") > 0;
  if (memcmp(a, a + 8, 8) == 0) bad = printf("derive: halves\n") > 0;
  printf(bad ? "core_siphash_test: FAILED\n" : "core_siphash_test: OK\n");
  return bad;
}
