/* siphash.c: SipHash-2-4 (see siphash.h). Words are read little-endian, as the paper defines
 * them, whatever the host's byte order. */
#include <string.h>

#include "siphash.h"

static uint64_t rotl(uint64_t x, int b) { return (x << b) | (x >> (64 - b)); }

static uint64_t load_le(const uint8_t *p, size_t n) {
  uint64_t v = 0;
  for (size_t i = 0; i < n; i++) v |= (uint64_t)p[i] << (8 * i);
  return v;
}

typedef struct {
  uint64_t v0, v1, v2, v3;
} sip_state_t;

static void rounds(sip_state_t *s, int n) {
  for (int i = 0; i < n; i++) {
    s->v0 += s->v1;
    s->v1 = rotl(s->v1, 13) ^ s->v0;
    s->v0 = rotl(s->v0, 32);
    s->v2 += s->v3;
    s->v3 = rotl(s->v3, 16) ^ s->v2;
    s->v0 += s->v3;
    s->v3 = rotl(s->v3, 21) ^ s->v0;
    s->v2 += s->v1;
    s->v1 = rotl(s->v1, 17) ^ s->v2;
    s->v2 = rotl(s->v2, 32);
  }
}

uint64_t gasneti_siphash24(const uint8_t key[16], const void *data, size_t len) {
  uint64_t k0 = load_le(key, 8), k1 = load_le(key + 8, 8);
  /* the constants spell "somepseudorandomlygeneratedbytes" */
  sip_state_t s = {k0 ^ 0x736f6d6570736575ULL, k1 ^ 0x646f72616e646f6dULL,
                   k0 ^ 0x6c7967656e657261ULL, k1 ^ 0x7465646279746573ULL};
  const uint8_t *p = data;
  size_t whole = len - len % 8;
  for (size_t i = 0; i < whole; i += 8) {
    uint64_t m = load_le(p + i, 8);
    s.v3 ^= m;
    rounds(&s, 2);
    s.v0 ^= m;
  }
  uint64_t last = load_le(p + whole, len % 8) | ((uint64_t)(len & 0xff) << 56);
  s.v3 ^= last;
  rounds(&s, 2);
  s.v0 ^= last;
  s.v2 ^= 0xff;
  rounds(&s, 4);
  return s.v0 ^ s.v1 ^ s.v2 ^ s.v3;
}

void gasneti_derive_key(const uint8_t secret[16], const char *label, uint8_t out[16]) {
  uint8_t msg[80] = {0};
  size_t n = strlen(label);
  if (n > sizeof msg - 1) n = sizeof msg - 1;
  memcpy(msg + 1, label, n);
  for (int half = 0; half < 2; half++) {
    msg[0] = (uint8_t)half;
    uint64_t h = gasneti_siphash24(secret, msg, n + 1);
    for (int i = 0; i < 8; i++) out[8 * half + i] = (uint8_t)(h >> (8 * i));
  }
}
