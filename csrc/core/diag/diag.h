/* The runtime's self-test (gasnett_run_diagnostics, gasnet_tools.h): shared state of a run and
 * the sections, each in the file of what it exercises. */
#ifndef GASNETI_DIAG_H
#define GASNETI_DIAG_H
#include <gasnet.h>
#include <gasnet_tools.h>
#include <stdbool.h>

/* Handler indices in the client's range, as GASNet 1.x's diagnostics took: the client registers
 * the table gasnett_diagnostic_gethandlers returns at gasnet_attach. */
#define GASNETI_DIAG_HIDX 240

typedef struct {
  int iters;
  int nthreads; /* 1 in a SEQ build */
  const gasnet_seginfo_t *seg;
  gasnet_node_t peer; /* the rank this one's messages and RMA go to (itself in a job of one) */
  bool have_handlers;
  gasnett_atomic_t errors;
} gasneti_diag_t;
extern gasneti_diag_t gasneti_diag;

/* A check that failed: said on stderr with the rank, the section and what broke (the first
 * few of each section), and counted in the run's result. */
void gasneti_diag_fail(const char *section, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Runs fn(thread index) on every thread of the run (the caller is thread 0). */
void gasneti_diag_threads(void (*fn)(int thread));

void gasneti_diag_atomics(int thread); /* A */
void gasneti_diag_timers(int thread);  /* B */
void gasneti_diag_ams(int thread);     /* C */
void gasneti_diag_rma(int thread);     /* D */
void gasneti_diag_barriers(void);      /* E, the caller only: barriers are one per rank */
extern gasnet_handlerentry_t gasneti_diag_handlers[];
extern const int gasneti_diag_handler_count;
#endif
