/* knob_api.h: the knob table (the core's rows and every conduit's, collected by the build), its
 * value parsers, and the arithmetic of memory and exit knobs. Free of runtime state, so the
 * runtime, the compiled gasnetrun front and gasnetrun's CFFI binding share one implementation.
 * The region between CFFI-BEGIN and CFFI-END is also the binding's cdef: plain declarations. */
#ifndef GASNETI_KNOB_API_H
#define GASNETI_KNOB_API_H

#include <stddef.h>
#include <stdint.h>

/* CFFI-BEGIN */
typedef enum {
  GASNETI_KNOB_BOOL,
  GASNETI_KNOB_INT,
  GASNETI_KNOB_SIZE,          /* bytes, optional K/M/G/T suffix (powers of 1024) */
  GASNETI_KNOB_DOUBLE,        /* decimal number */
  GASNETI_KNOB_FRACTION_SIZE, /* "2/3", "0.5" (fraction of memory, < 1) or a size "16G" */
  GASNETI_KNOB_SEGSIZE,       /* a FRACTION_SIZE with optional "/H" (per host) or "/P" */
  GASNETI_KNOB_ENUM,          /* one of the words in choices (case-insensitive) */
  GASNETI_KNOB_STRING,
  GASNETI_KNOB_LIST,          /* comma-separated words */
  GASNETI_KNOB_FILENAME,      /* a path; '%' is replaced by the rank */
  GASNETI_KNOB_CUSTOM         /* the row's syntax (a conduit's own value form) parses it */
} gasneti_knob_type_t;

typedef enum { GASNETI_SCOPE_JOB, GASNETI_SCOPE_RANK } gasneti_knob_scope_t;

/* A value form of a conduit's own (GASNETI_KNOB_CUSTOM), declared beside the code that reads
 * it: its name, its accepted form for messages, and its parser (1 with the canonical form in
 * canon, or 0 with what is wrong in why). */
typedef struct {
  const char *type_name;
  const char *accepted;
  int (*check)(const char *text, char *canon, size_t canonlen, char *why, size_t whylen);
} gasneti_knob_syntax_t;

typedef struct {
  const char *name;     /* a family like GASNET_IBV_PORTS_<n> ends in "_<n>" */
  gasneti_knob_type_t type;
  const char *dflt;     /* as a user would write it; "" means computed, see doc */
  double min, max;      /* inclusive range of numeric values */
  const char *choices;  /* ENUM: words separated by '|' */
  const char *unit;
  gasneti_knob_scope_t scope;
  const char *conduits; /* "all", "network" (every conduit that reaches other hosts), or the
                         * one conduit whose rows declare it */
  const char *doc;
  /* For gasnet-tune: whether sweeping the knob can pay off, the values worth trying
   * (comma-separated, in the knob's own syntax), and a constraint relating it to another knob
   * ("<=GASNET_X": never more than GASNET_X's value), or NULL. */
  int tunable;
  const char *sweep;
  const char *constraint;
  const gasneti_knob_syntax_t *syntax; /* GASNETI_KNOB_CUSTOM only */
} gasneti_knob_t;

size_t gasneti_knob_count(void);
const gasneti_knob_t *gasneti_knob_at(size_t index);
/* Exact names, and members of families ("GASNET_IBV_PORTS_3" finds GASNET_IBV_PORTS_<n>). */
const gasneti_knob_t *gasneti_knob_find(const char *name);
const char *gasneti_knob_type_name(const gasneti_knob_t *knob);
const char *gasneti_knob_accepted_form(const gasneti_knob_t *knob);

/* Whether a value means "unset": empty or only white space (the runtime and gasnetrun agree). */
int gasneti_knob_blank(const char *text);

/* Parses text as the knob's value (name: the variable as the user spelled it, for messages;
 * NULL means the knob's own name). On success writes a canonical form to canon (the same from
 * every caller: tests compare C and Python through it) and returns 1; on failure writes a
 * message naming the knob, the value, what is wrong and the accepted form, and returns 0. */
int gasneti_knob_check(const gasneti_knob_t *knob, const char *name, const char *text,
                       char *canon, size_t canonlen, char *err, size_t errlen);

/* A parsed FRACTION_SIZE or SEGSIZE value. */
typedef struct {
  int is_fraction;  /* value is a fraction of physical memory, else bytes */
  double value;
  int per_host;     /* SEGSIZE "/H": shared by the host's ranks */
} gasneti_memsize_t;
int gasneti_parse_memsize(const char *text, int allow_scope, gasneti_memsize_t *out, char *err,
                          size_t errlen);

/* Bytes of segment one rank may have: GASNET_MAX_SEGSIZE and GASNET_PHYSMEM_MAX (either may
 * be NULL or blank for its default) applied to the host's memory, its free shared memory, the
 * number of ranks on it and the bytes its AM queues take (gasneti_pshm_host_bytes), less what
 * each rank pins besides its segment (pinned_bytes: ibv's buffers; 0 elsewhere);
 * page-aligned. 0 with a message in err when a value does not parse or nothing is left. */
uint64_t gasneti_segment_budget(const char *max_segsize, const char *physmem_max,
                                uint64_t host_memory, uint64_t shm_free, int ranks_on_host,
                                uint64_t queue_bytes, uint64_t pinned_bytes, char *err,
                                size_t errlen);

/* GASNET_EXITTIMEOUT, or min(_MAX, _MIN + _FACTOR * ranks); NULL means unset. -1 on error. */
double gasneti_exit_timeout_of(const char *timeout, const char *max, const char *min,
                               const char *factor, int ranks, char *err, size_t errlen);

/* How long ranks get to leave on their own after the first one left, before the launcher (or
 * the fork supervisor) sends SIGQUIT: ranks that end together need a moment to get there. */
double gasneti_exit_grace(double timeout);

/* '%' replaced by the rank (FILENAME knobs). */
int gasneti_expand_filename(const char *pattern, int rank, char *out, size_t outlen);

/* Frees what the parsers of this table and of conduits' launcher code return. */
void gasneti_free(void *p);
/* CFFI-END */

/* One owner's rows (the core's, or a conduit's <name>_knobs.c); the build lists every owner's
 * in gasneti_knob_groups (generated), and the lookups below see them as one table. */
typedef struct {
  const char *owner;
  const gasneti_knob_t *rows;
  size_t count;
} gasneti_knob_group_t;
extern const gasneti_knob_group_t *const gasneti_knob_groups[]; /* NULL-terminated */

/* Row initializer tails: a knob the tuner leaves alone, and one it sweeps. */
#define GASNETI_NOT_TUNED 0, NULL, NULL, NULL
#define GASNETI_TUNED(values, constraint) 1, values, constraint, NULL

#endif
