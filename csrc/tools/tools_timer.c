/* tools_timer.c: the timer's granularity and overhead, measured once per process. */
#include "tools_internal.h"

static double granularity_us = -1, overhead_us = -1;

static void measure(void) {
  /* Overhead: the mean cost of one reading over a burst. Granularity: the smallest non-zero
   * step between consecutive readings. */
  enum { N = 10000 };
  gasnett_tick_t first = gasnett_ticks_now(), prev = first, step = GASNETT_TICK_MAX;
  for (int i = 0; i < N; i++) {
    gasnett_tick_t t = gasnett_ticks_now();
    if (t > prev && t - prev < step) step = t - prev;
    prev = t;
  }
  overhead_us = (double)(prev - first) / N / 1000.0;
  granularity_us = step == GASNETT_TICK_MAX ? 0.001 : (double)step / 1000.0;
}

double gasnett_tick_granularityus(void) {
  if (granularity_us < 0) measure();
  return granularity_us;
}

double gasnett_tick_overheadus(void) {
  if (overhead_us < 0) measure();
  return overhead_us;
}
