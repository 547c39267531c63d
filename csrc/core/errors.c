/* errors.c: error names and descriptions, fatal errors and warnings, checked allocation.
 * Fatal errors name the rank and host, then end the whole job at once (exit.c). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "exit/diagnose.h"
#include "gasnet_internal.h"

static const struct {
  int code;
  const char *name, *desc;
} errors[] = {
    {GASNET_OK, "GASNET_OK", "no error"},
    {GASNET_ERR_RESOURCE, "GASNET_ERR_RESOURCE", "problem with a network or system resource"},
    {GASNET_ERR_BAD_ARG, "GASNET_ERR_BAD_ARG", "invalid function argument"},
    {GASNET_ERR_NOT_INIT, "GASNET_ERR_NOT_INIT", "GASNet was not initialized or attached"},
    {GASNET_ERR_BARRIER_MISMATCH, "GASNET_ERR_BARRIER_MISMATCH",
     "barrier id or flags did not match across ranks"},
    {GASNET_ERR_NOT_READY, "GASNET_ERR_NOT_READY", "operation not yet complete"},
};

const char *gasnet_ErrorName(int errval) {
  for (size_t i = 0; i < sizeof errors / sizeof errors[0]; i++)
    if (errors[i].code == errval) return errors[i].name;
  return "GASNET_ERR_UNKNOWN";
}

const char *gasnet_ErrorDesc(int errval) {
  for (size_t i = 0; i < sizeof errors / sizeof errors[0]; i++)
    if (errors[i].code == errval) return errors[i].desc;
  return "unknown error code";
}

static void vreport(const char *kind, const char *fmt, va_list ap) {
  char msg[1024];
  vsnprintf(msg, sizeof msg, fmt, ap);
  if (gasneti_init_done)
    fprintf(stderr, "GASNet %s on rank %d (%s): %s\n", kind, (int)gasneti_mynode,
            gasneti_hostname, msg);
  else
    fprintf(stderr, "GASNet %s: %s\n", kind, msg);
  fflush(stderr);
}

void gasneti_fatalerror(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vreport("error", fmt, ap);
  va_end(ap);
  gasneti_diagnose_fatal(NULL); /* GASNET_BACKTRACE, GASNET_FREEZE_ON_ERROR */
  gasneti_exit_job(1, true);
}

void gasneti_warning(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vreport("warning", fmt, ap);
  va_end(ap);
}

void *gasneti_malloc(size_t n) {
  void *p = malloc(n ? n : 1);
  if (!p) gasneti_fatalerror("out of memory allocating %zu bytes", n);
  return p;
}

void *gasneti_calloc(size_t n, size_t size) {
  void *p = calloc(n ? n : 1, size ? size : 1);
  if (!p) gasneti_fatalerror("out of memory allocating %zu x %zu bytes", n, size);
  return p;
}

/* The spawner propagates the launching environment, so the process environment is it. */
char *gasnet_getenv(const char *name) { return getenv(name); }
