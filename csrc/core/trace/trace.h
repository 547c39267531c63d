/* trace.h: GASNet-compatible tracing (GASNET_TRACEFILE ...) and statistics (GASNET_STATSFILE
 * ...), recorded where the core serves the client (AM entry points and dispatch, the extended
 * API's library half, barriers, syncs) so that every conduit has them. Nothing here runs unless
 * gasneti_trace_active is set: each hook is one predictable branch on that global. */
#ifndef GASNETI_TRACE_H
#define GASNETI_TRACE_H

#include <stdbool.h>
#include <stddef.h>

#include "gasnet_internal.h"

#define GASNETI_TRACE_ON 1 /* gasneti_trace_active: this rank writes a trace */
#define GASNETI_STATS_ON 2 /* ... collects statistics */

/* Reads the knobs and opens the files; the end of gasnet_init's bootstrap exchange is every
 * rank's time 0 (ranks leave an all-gather together), which aligns the ranks' clocks. */
void gasneti_trace_init(int argc, char **argv);
/* Writes the statistics and closes the files (every exit path that runs the core's).
 * in_signal: called from a signal handler, which may have interrupted this very output: then
 * only if neither the trace's lock nor its files' locks are held. */
void gasneti_trace_finish(int code, bool in_signal);
/* Seconds since time 0. */
double gasneti_trace_now(void);
/* Whether a peer is reached through shared memory (the trace's "local"). */
bool gasneti_trace_is_local(gasnet_node_t peer);
/* The would-be direct offset of a supernode peer (GASNETI_PSHM_FAR: none), kept by pshm attach
 * while gasneti_pshm_direct stays far for a rank that traces. */
extern uintptr_t *gasneti_trace_direct;

/* Events. loc: the client's "file:line" or NULL. start: gasneti_trace_now() when the call
 * began, for calls that wait (negative: no duration). */
void gasneti_trace_rma(const char *loc, int op, gasnet_node_t peer, size_t n, double start);
/* kind: GASNETI_AM_SHORT/MEDIUM/LONG; handler_run: the event is a handler about to run. */
void gasneti_trace_am(const char *loc, bool request, int kind, gasnet_node_t peer,
                      gasnet_handler_t handler, int nargs, size_t n, bool handler_run);
/* name: WAIT_SYNCNB, TRY_SYNCNBI_PUTS, ...; success: 1/0 for try forms, -1 for waits. */
void gasneti_trace_sync(const char *loc, const char *name, double start, int success);
void gasneti_trace_barrier(const char *loc, const char *name, int id, int flags, double start,
                           int result);
void gasneti_trace_printf(char category, const char *loc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
