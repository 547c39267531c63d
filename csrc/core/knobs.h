/* knobs.h: the table of every GASNET_* environment variable the runtime reads.
 * The runtime reads the environment only through these calls; a name not in the table is fatal. */
#ifndef GASNETI_KNOBS_H
#define GASNETI_KNOBS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum {
  GASNETI_KNOB_BOOL,
  GASNETI_KNOB_INT,
  GASNETI_KNOB_SIZE,   /* bytes, with optional K/M/G/T suffix (powers of 1024) */
  GASNETI_KNOB_DOUBLE, /* a non-negative decimal number */
} gasneti_knob_type_t;

typedef enum {
  GASNETI_SCOPE_JOB,  /* must be equal on every rank */
  GASNETI_SCOPE_RANK, /* may differ per process */
} gasneti_knob_scope_t;

typedef struct {
  const char *name;
  gasneti_knob_type_t type;
  const char *dflt; /* as the user would write it; "" means "computed" (see doc) */
  double min, max;  /* inclusive range of the parsed value */
  const char *unit;
  gasneti_knob_scope_t scope;
  const char *conduits; /* comma-separated, or "all" */
  const char *doc;
} gasneti_knob_t;

extern const gasneti_knob_t gasneti_knob_table[];
extern const size_t gasneti_knob_count;

const gasneti_knob_t *gasneti_knob_find(const char *name);

/* Parse text as the knob's type into *out (doubles hold every type exactly enough for
 * ranges); on failure write a message naming the accepted form into err and return false. */
bool gasneti_knob_parse(const gasneti_knob_t *knob, const char *text, double *out, char *err,
                        size_t errlen);

/* Typed readers: the environment's value if set (fatal error if malformed), else the default. */
bool gasneti_knob_is_set(const char *name);
bool gasneti_knob_bool(const char *name);
int64_t gasneti_knob_int(const char *name);
uint64_t gasneti_knob_size(const char *name);
double gasneti_knob_double(const char *name);

/* GASNET_VERBOSEENV: echo every knob read on rank 0. */
bool gasneti_knobs_verbose(void);

#endif
