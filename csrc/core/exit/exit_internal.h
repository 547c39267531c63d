/* exit_internal.h: what exit.c and signals.c share. */
#ifndef GASNETI_EXIT_INTERNAL_H
#define GASNETI_EXIT_INTERNAL_H

#include <stdbool.h>

/* This process has begun to leave (a thread is inside gasneti_exit_job or the atexit path). */
bool gasneti_exit_started(void);
/* The code another rank of this host posted for the job, else fallback. */
int gasneti_exit_posted_or(int fallback);
/* Runs the client's SIGQUIT handler, once per process, if it installed one; other threads
 * arriving meanwhile wait for it (its gasnet_exit decides the code). */
void gasneti_offer_client_quit(void);
void gasneti_signals_init(void);

#endif
