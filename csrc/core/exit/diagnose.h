/* diagnose.h: what a failing rank shows before it goes (GASNET_BACKTRACE) and how it waits
 * for a debugger (GASNET_FREEZE, GASNET_FREEZE_ON_ERROR, GASNET_FREEZE_SIGNAL). */
#ifndef GASNETI_DIAGNOSE_H
#define GASNETI_DIAGNOSE_H

#include <stdbool.h>

/* Reads the knobs, freezes here under GASNET_FREEZE; returns whether fatal signals must be
 * caught (a backtrace or a freeze was asked for). */
bool gasneti_diagnose_init(void);
/* On a fatal signal (context: the handler's ucontext) or a fatal error (NULL): the backtrace
 * and the freeze the user asked for, if any. */
void gasneti_diagnose_fatal(void *context);
/* This thread's call stack on fd, one frame per line, symbolized where possible: from the
 * interrupted instruction when context is a signal handler's ucontext, else from the caller
 * of gasneti_diagnose_fatal's caller. */
void gasneti_backtrace_print(int fd, void *context);

#endif
