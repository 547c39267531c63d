/* trace.c: the tracing and statistics knobs, the files, time 0, and the line form
 * ("rank time s> [file:line] (category) message", as GASNet writes it). */
#include "trace.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "knobs.h"
#include "trace_internal.h"
#include "trace_syntax.h"

int gasneti_trace_active;
uintptr_t *gasneti_trace_direct;
gasneti_trace_state_t gasneti_trace_state;

static double clock_seconds(clockid_t id) {
  struct timespec ts;
  clock_gettime(id, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

double gasneti_trace_now(void) {
  return clock_seconds(CLOCK_MONOTONIC) - gasneti_trace_state.t0;
}

bool gasneti_trace_is_local(gasnet_node_t peer) {
  return peer == gasneti_mynode || gasneti_pshm_reachable(peer);
}

/* A mask knob's categories (its default when unset: every category). */
static void read_mask(const char *knob, bool *mask) {
  const char *text = gasneti_knob_text(knob);
  if (!text) text = gasneti_knob_find(knob)->dflt;
  memset(mask, 0, 128 * sizeof *mask);
  for (const char *p = text; *p; p++)
    if (strchr(GASNETI_TRACE_CATEGORIES, *p)) mask[(int)*p] = true;
  mask['U'] = true; /* the client's own messages are always written */
}

/* Whether this rank is in a rank-list knob (unset: every rank). */
static bool in_nodes(const char *nodes_knob) {
  const char *nodes = gasneti_knob_text(nodes_knob);
  return !nodes || gasneti_tracenodes_has(nodes, gasneti_mynode);
}

/* Whether this rank writes the file a knob names; one file for several ranks would be
 * overwritten by each, so such a pattern needs a '%'. */
static bool selected(const char *nodes_knob, const char *file_knob, const char *pattern) {
  char why[1024];
  if (gasneti_trace_file_problem(file_knob, pattern, nodes_knob, gasneti_knob_text(nodes_knob),
                                 (int)gasneti_nodes, why, sizeof why))
    gasneti_fatalerror("%s", why);
  return in_nodes(nodes_knob);
}

static void header(FILE *f, int argc, char **argv) {
  gasneti_trace_state_t *s = &gasneti_trace_state;
  char cmd[1024] = "";
  size_t used = 0;
  for (int i = 0; i < argc && argv && used + 1 < sizeof cmd; i++)
    used += (size_t)snprintf(cmd + used, sizeof cmd - used, "%s%s", i ? " " : "", argv[i]);
  /* The job id lets gasnet-trace tell apart the files of two jobs one pattern matched. */
  gasneti_trace_line(f, 'I', NULL, "TRACE rank %d of %d, host %s, pid %d, conduit %s, %s, job %s",
                     (int)gasneti_mynode, (int)gasneti_nodes, gasneti_hostname, (int)getpid(),
                     GASNET_CONDUIT_NAME_STR, GASNETI_THREAD_MODEL, gasneti_jobid);
  gasneti_trace_line(f, 'I', NULL, "COMMAND %s", cmd);
  /* Time 0 of every rank is the end of the bootstrap exchange that gasnet_init ends with. */
  gasneti_trace_line(f, 'I', NULL, "CLOCK time 0 is the bootstrap exchange of gasnet_init; "
                     "wall clock then %.6f", s->wall0);
}

void gasneti_trace_init(int argc, char **argv) {
  gasneti_trace_state_t *s = &gasneti_trace_state;
  s->t0 = clock_seconds(CLOCK_MONOTONIC);
  s->wall0 = clock_seconds(CLOCK_REALTIME);
  const char *trace = gasneti_knob_text("GASNET_TRACEFILE");
  const char *stats = gasneti_knob_text("GASNET_STATSFILE");
  read_mask("GASNET_TRACEMASK", s->trace_mask);
  read_mask("GASNET_STATSMASK", s->stats_mask);
  s->tracelocal = gasneti_knob_bool("GASNET_TRACELOCAL");
  s->flush = gasneti_knob_bool("GASNET_TRACEFLUSH");
  if (trace && selected("GASNET_TRACENODES", "GASNET_TRACEFILE", trace))
    s->tracefile = gasneti_trace_open("GASNET_TRACEFILE", trace, "trace");
  /* Statistics go to their own file, or at the end of the trace when only it is named. */
  if (stats) {
    if (selected("GASNET_STATSNODES", "GASNET_STATSFILE", stats))
      s->statsfile = (trace && s->tracefile && strcmp(stats, trace) == 0)
                         ? s->tracefile
                         : gasneti_trace_open("GASNET_STATSFILE", stats, "statistics");
  } else if (s->tracefile && in_nodes("GASNET_STATSNODES")) {
    s->statsfile = s->tracefile;
  }
  if (s->statsfile && s->statsfile == s->tracefile) gasneti_trace_output_shared(s->tracefile);
  if (s->statsfile) gasneti_trace_stats_init();
  if (s->tracefile) header(s->tracefile, argc, argv);
  if (s->statsfile && s->statsfile != s->tracefile) header(s->statsfile, argc, argv);
  gasneti_trace_direct = gasneti_calloc(gasneti_nodes, sizeof *gasneti_trace_direct);
  for (int r = 0; r < (int)gasneti_nodes; r++) gasneti_trace_direct[r] = GASNETI_PSHM_FAR;
  /* Set last: from here on the hooks run. */
  gasneti_trace_active = (s->tracefile ? GASNETI_TRACE_ON : 0) | (s->statsfile ? GASNETI_STATS_ON : 0);
}

static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;

void gasneti_trace_vline(FILE *f, char category, const char *loc, const char *fmt, va_list ap) {
  char msg[1024];
  int n = vsnprintf(msg, sizeof msg, fmt, ap);
  if (n >= (int)sizeof msg) memcpy(msg + sizeof msg - 4, "...", 4); /* cut: say so */
  /* One line an event: a client's message loses its trailing newlines, and the ones inside
   * become spaces. */
  size_t len = strlen(msg);
  while (len && msg[len - 1] == '\n') msg[--len] = 0;
  for (char *c = msg; (c = strchr(c, '\n')); c++) *c = ' ';
  pthread_mutex_lock(&out_lock);
  bool failed = false;
  if (!gasneti_trace_output_dead(f)) {
    errno = 0;
    if (loc)
      fprintf(f, "%d %.6fs> [%s] (%c) %s\n", (int)gasneti_mynode, gasneti_trace_now(), loc,
              category, msg);
    else
      fprintf(f, "%d %.6fs> (%c) %s\n", (int)gasneti_mynode, gasneti_trace_now(), category, msg);
    if (gasneti_trace_state.flush) fflush(f);
    failed = ferror(f) && gasneti_trace_output_check(f, errno);
  }
  pthread_mutex_unlock(&out_lock);
  if (failed) gasneti_trace_output_report(f); /* a warning may be traced: outside the lock */
}

void gasneti_trace_line(FILE *f, char category, const char *loc, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  gasneti_trace_vline(f, category, loc, fmt, ap);
  va_end(ap);
}

void gasneti_trace_printf(char category, const char *loc, const char *fmt, ...) {
  gasneti_trace_state_t *s = &gasneti_trace_state;
  if (!s->tracefile || !s->trace_mask[(int)category]) return;
  va_list ap;
  va_start(ap, fmt);
  gasneti_trace_vline(s->tracefile, category, loc, fmt, ap);
  va_end(ap);
}

static bool file_free(FILE *f) {
  if (!f) return true;
  if (ftrylockfile(f) != 0) return false;
  funlockfile(f);
  return true;
}

void gasneti_trace_finish(int code, bool in_signal) {
  gasneti_trace_state_t *s = &gasneti_trace_state;
  if (!gasneti_trace_active) return;
  if (in_signal) {
    if (pthread_mutex_trylock(&out_lock) != 0) return;
    pthread_mutex_unlock(&out_lock);
    if (!file_free(s->tracefile) || !file_free(s->statsfile)) return;
  }
  gasneti_trace_printf('X', NULL, "EXIT code %d", code);
  if (s->statsfile) gasneti_trace_stats_write(s->statsfile, in_signal);
  gasneti_trace_active = 0;
  /* The last line of a file written to its end: gasnet-trace warns of a file without it. */
  if (s->tracefile) gasneti_trace_line(s->tracefile, 'I', NULL, "END of this rank's file");
  if (s->statsfile && s->statsfile != s->tracefile)
    gasneti_trace_line(s->statsfile, 'I', NULL, "END of this rank's file");
  if (s->tracefile) gasneti_trace_output_close(s->tracefile);
  if (s->statsfile && s->statsfile != s->tracefile) gasneti_trace_output_close(s->statsfile);
  s->tracefile = s->statsfile = NULL;
}
