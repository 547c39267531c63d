/* trace_syntax.h: the value forms of the tracing and statistics knobs (GASNET_TRACEMASK,
 * GASNET_STATSMASK: category letters; GASNET_TRACENODES, GASNET_STATSNODES: rank lists), shared
 * by the knob table's checks (runtime, gasnetrun's front and its CFFI binding) and the runtime's
 * reading of them (csrc/core/trace). */
#ifndef GASNETI_TRACE_SYNTAX_H
#define GASNETI_TRACE_SYNTAX_H

#include <stddef.h>

#include "knob_api.h"

/* GASNet's category letters; U (the client's own messages) is always on. */
#define GASNETI_TRACE_CATEGORIES "GPSWXBLAICDNHUO"

extern const gasneti_knob_syntax_t gasneti_tracemask_syntax;
extern const gasneti_knob_syntax_t gasneti_tracenodes_syntax;

/* Whether rank is in a rank list ("*", "0,2-4"); the text was checked by the syntax above. */
int gasneti_tracenodes_has(const char *text, int rank);
/* How many of ranks 0..nranks-1 the list names. */
int gasneti_tracenodes_count(const char *text, int nranks);

/* The region between CFFI-BEGIN and CFFI-END is also gasnetrun's binding's cdef. */
/* CFFI-BEGIN */
/* Whether a file knob's pattern (GASNET_TRACEFILE, GASNET_STATSFILE) can serve a job of nranks
 * whose rank-list knob (nodes_knob, its value nodes; NULL: every rank) picks the ranks that
 * write: one named file for several ranks would be overwritten by each. 0: it can; else 1 and
 * why, naming both knobs and the accepted form. The runtime refuses it at start-up and
 * gasnetrun before launch. */
int gasneti_trace_file_problem(const char *file_knob, const char *pattern,
                               const char *nodes_knob, const char *nodes, int nranks, char *why,
                               size_t whylen);
/* CFFI-END */

#endif
