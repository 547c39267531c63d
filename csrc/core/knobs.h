/* knobs.h: how the runtime reads its knobs: the environment's value if set (malformed values
 * are fatal, with a message naming variable, value and accepted form), else the default. */
#ifndef GASNETI_KNOBS_H
#define GASNETI_KNOBS_H

#include <stdbool.h>
#include <stdint.h>

#include "knob_api.h"

/* The environment's text for a knob (validated), or NULL when unset or empty. */
const char *gasneti_knob_text(const char *name);
bool gasneti_knob_is_set(const char *name);
bool gasneti_knob_bool(const char *name);
int64_t gasneti_knob_int(const char *name);
uint64_t gasneti_knob_size(const char *name);
double gasneti_knob_double(const char *name);
/* ENUM knobs: whether the value (environment or default) is this choice. */
bool gasneti_knob_enum_is(const char *name, const char *choice);
/* GASNET_VERBOSEENV: rank 0 lists every knob with its value and whether it is the default. */
void gasneti_knob_report_all(void);

#endif
