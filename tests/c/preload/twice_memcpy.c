/* twice_memcpy.c: an LD_PRELOAD memcpy for the flag ping-pong test. For 1..8 bytes it writes
 * the destination twice with a pause between the stores, as glibc's vectorised memcpy does
 * (two overlapping stores) when the writer is preempted between them: a put that still goes
 * through memcpy then loses a step of the ping-pong at once, instead of once in many runs.
 * Only programs named flag_pingpong* are affected (the launcher's own Python calls memcpy
 * constantly). */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <time.h>

static int active = -1;

static void pause_us(long us) {
  struct timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  do clock_gettime(CLOCK_MONOTONIC, &b);
  while ((b.tv_sec - a.tv_sec) * 1000000L + (b.tv_nsec - a.tv_nsec) / 1000 < us);
}

void *memcpy(void *dst, const void *src, size_t n) {
  if (active < 0) active = strncmp(program_invocation_short_name, "flag_pingpong", 13) == 0;
  if (!active || n == 0 || n > 8) return memmove(dst, src, n);
  unsigned char v[8];
  for (size_t i = 0; i < n; i++) v[i] = ((const volatile unsigned char *)src)[i];
  for (size_t i = 0; i < n; i++) ((volatile unsigned char *)dst)[i] = v[i];
  pause_us(20);
  for (size_t i = 0; i < n; i++) ((volatile unsigned char *)dst)[i] = v[i];
  return dst;
}
