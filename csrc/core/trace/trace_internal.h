/* trace_internal.h: what the files of csrc/core/trace share. */
#ifndef GASNETI_TRACE_INTERNAL_H
#define GASNETI_TRACE_INTERNAL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
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

/* The files (trace_output.c). open: the file a knob's pattern names for this rank ("trace" or
 * "statistics"), or stdout/stderr; shared: the statistics go to the trace's file. dead: a
 * write to it failed, write nothing more. check: after writing to f (under the output lock),
 * with the errno of the write: true the first time its error shows (it was cut back to its
 * last whole line); then report, outside the lock, says so once. close: END is written by
 * the caller; flushes, checks and closes (not stdout or stderr). */
FILE *gasneti_trace_open(const char *knob, const char *pattern, const char *what);
void gasneti_trace_output_shared(FILE *f);
bool gasneti_trace_output_dead(FILE *f);
bool gasneti_trace_output_check(FILE *f, int err);
void gasneti_trace_output_report(FILE *f);
void gasneti_trace_output_close(FILE *f);

/* The source line a trace line names (trace_client.c): a call's own loc, which becomes the
 * thread's current line; while the client freezes a line (GASNETT_TRACE_FREEZESOURCELINE),
 * that one; for a call without a loc, the line the client set if any; for a client's message
 * (client_message), the current line. Written into buf where it must be; NULL: none. */
#define GASNETI_TRACE_WHERE_MAX 600
const char *gasneti_trace_where(const char *loc, bool client_message, char *buf, size_t len);
int gasneti_stats_enabled(char category);
void gasneti_stats_client_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Set by GASNETT_STATS_INIT (gasnet_tools.h); called when the statistics are written. */
extern void (*gasnett_stats_callback)(void (*format)(const char *, ...));
/* in_signal: skipped if the statistics' lock is held (by the code the signal interrupted). */
void gasneti_trace_stats_write(FILE *f, bool in_signal);

#endif
