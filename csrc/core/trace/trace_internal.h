/* trace_internal.h: what the files of csrc/core/trace share. */
#ifndef GASNETI_TRACE_INTERNAL_H
#define GASNETI_TRACE_INTERNAL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

typedef struct {
  FILE *tracefile, *statsfile; /* NULL: this rank does not trace / count */
  bool trace_mask[128], stats_mask[128];
  bool tracelocal, flush;
  double t0, wall0; /* monotonic and wall clock at time 0 */
} gasneti_trace_state_t;
extern gasneti_trace_state_t gasneti_trace_state;

void gasneti_trace_line(FILE *f, char category, const char *loc, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void gasneti_trace_vline(FILE *f, char category, const char *loc, const char *fmt, va_list ap);
void gasneti_trace_stats_init(void);
/* in_signal: skipped if the statistics' lock is held (by the code the signal interrupted). */
void gasneti_trace_stats_write(FILE *f, bool in_signal);

#endif
