/* trace_events.c: what each hook records: a trace line (if the rank traces the event's
 * category) and the event's statistics (count, and min/max/total/average of its size or of
 * the time it waited), plus per-peer messages and bytes. GASNet's names for the events. */
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>
#include <pthread.h>
#include <string.h>

#include "am/am.h"
#include "conduit.h"
#include "trace.h"
#include "trace_internal.h"

/* ---- the statistics table --------------------------------------------------------------- */
enum { UNIT_BYTES, UNIT_TIME, UNIT_SUCCESS, UNIT_COUNT };
typedef struct {
  char name[40];
  char category;
  int unit;
  uint64_t count;
  double min, max, sum;
} stat_t;

static const char *const rma_names[GASNETI_OP_COUNT] = {
    "PUT", "PUT_BULK", "PUT_NB", "PUT_NB_BULK", "PUT_NBI", "PUT_NBI_BULK", "PUT_VAL",
    "PUT_NB_VAL", "PUT_NBI_VAL", "MEMSET", "MEMSET_NB", "MEMSET_NBI", "GET", "GET_BULK",
    "GET_NB", "GET_NB_BULK", "GET_NBI", "GET_NBI_BULK", "GET_VAL", "GET_NB_VAL"};
static const char *const api_names[GASNETI_OP_COUNT] = {
    "gasnet_put", "gasnet_put_bulk", "gasnet_put_nb", "gasnet_put_nb_bulk", "gasnet_put_nbi",
    "gasnet_put_nbi_bulk", "gasnet_put_val", "gasnet_put_nb_val", "gasnet_put_nbi_val",
    "gasnet_memset", "gasnet_memset_nb", "gasnet_memset_nbi", "gasnet_get", "gasnet_get_bulk",
    "gasnet_get_nb", "gasnet_get_nb_bulk", "gasnet_get_nbi", "gasnet_get_nbi_bulk",
    "gasnet_get_val", "gasnet_get_nb_val"};
static const char *const am_kinds[3] = {"SHORT", "MEDIUM", "LONG"};

const char *gasneti_op_api_name(int op) {
  return op >= 0 && op < GASNETI_OP_COUNT ? api_names[op] : "gasnet RMA";
}

static bool is_get(int op) { return op >= GASNETI_OP_GET; }

#define MAX_STATS 128
static stat_t stats[MAX_STATS];
static int nstats;
static uint64_t *peer_msgs, *peer_bytes;
static pthread_mutex_t stats_lock = PTHREAD_MUTEX_INITIALIZER;

void gasneti_trace_stats_init(void) {
  peer_msgs = gasneti_calloc(gasneti_nodes, sizeof *peer_msgs);
  peer_bytes = gasneti_calloc(gasneti_nodes, sizeof *peer_bytes);
}

/* The entry of a name, created on first use (in the order events first happen). */
static stat_t *stat_of(const char *name, char category, int unit) {
  for (int i = 0; i < nstats; i++)
    if (strcmp(stats[i].name, name) == 0) return &stats[i];
  if (nstats == MAX_STATS) return NULL;
  stat_t *s = &stats[nstats++];
  snprintf(s->name, sizeof s->name, "%s", name);
  s->category = category;
  s->unit = unit;
  return s;
}

static void count(const char *name, char category, int unit, double value, int peer,
                  size_t bytes) {
  if (!gasneti_trace_state.statsfile || !gasneti_trace_state.stats_mask[(int)category]) return;
  pthread_mutex_lock(&stats_lock);
  stat_t *s = stat_of(name, category, unit);
  if (s) {
    if (s->count == 0 || value < s->min) s->min = value;
    if (s->count == 0 || value > s->max) s->max = value;
    s->sum += value;
    s->count++;
  }
  if (peer >= 0) {
    peer_msgs[peer]++;
    peer_bytes[peer] += bytes;
  }
  pthread_mutex_unlock(&stats_lock);
}

static bool tracing(char category) {
  return gasneti_trace_state.tracefile && gasneti_trace_state.trace_mask[(int)category];
}

/* ---- events ----------------------------------------------------------------------------- */
void gasneti_trace_rma(const char *loc, int op, gasnet_node_t peer, size_t n, double start) {
  char category = is_get(op) ? 'G' : 'P';
  bool local = gasneti_trace_is_local(peer);
  char name[40];
  snprintf(name, sizeof name, "%s%s", rma_names[op], local ? "_LOCAL" : "");
  double took = start >= 0 ? gasneti_trace_now() - start : -1;
  count(name, category, UNIT_BYTES, (double)n, peer, n);
  if (!tracing(category) || (local && !gasneti_trace_state.tracelocal)) return;
  char where[GASNETI_TRACE_WHERE_MAX];
  loc = gasneti_trace_where(loc, false, where, sizeof where);
  const char *dir = is_get(op) ? "from" : op >= GASNETI_OP_MEMSET ? "at" : "to";
  if (took >= 0)
    gasneti_trace_printf(category, loc, "%s: %zu bytes %s %d (%.3fus)", name, n, dir, (int)peer,
                         took * 1e6);
  else
    gasneti_trace_printf(category, loc, "%s: %zu bytes %s %d", name, n, dir, (int)peer);
}

void gasneti_trace_am(const char *loc, bool request, int kind, gasnet_node_t peer,
                      gasnet_handler_t handler, int nargs, size_t n, bool handler_run) {
  char name[40];
  snprintf(name, sizeof name, "%s_%s%s", request ? "AMREQUEST" : "AMREPLY", am_kinds[kind],
           handler_run ? "_HANDLER" : "");
  count(name, 'A', UNIT_BYTES, (double)n, handler_run ? -1 : (int)peer, n);
  if (!tracing('A')) return;
  char where[GASNETI_TRACE_WHERE_MAX];
  if (!handler_run) loc = gasneti_trace_where(loc, false, where, sizeof where); /* another's AM: no line */
  gasneti_trace_printf('A', loc, "%s: %s %d, handler %d, %d args, %zu bytes", name,
                       handler_run ? "from" : "to", (int)peer, (int)handler, nargs, n);
}

void gasneti_trace_sync(const char *loc, const char *name, double start, int success) {
  double took = gasneti_trace_now() - start;
  if (success >= 0) count(name, 'S', UNIT_SUCCESS, success, -1, 0);
  else count(name, 'S', UNIT_TIME, took, -1, 0);
  if (!tracing('S')) return;
  char where[GASNETI_TRACE_WHERE_MAX];
  loc = gasneti_trace_where(loc, false, where, sizeof where);
  if (success >= 0)
    gasneti_trace_printf('S', loc, "%s: %s (%.3fus)", name, success ? "success" : "not ready",
                         took * 1e6);
  else
    gasneti_trace_printf('S', loc, "%s (%.3fus)", name, took * 1e6);
}

void gasneti_trace_barrier(const char *loc, const char *name, int id, int flags, double start,
                           int result) {
  double took = start >= 0 ? gasneti_trace_now() - start : 0;
  if (strcmp(name, "BARRIER_NOTIFY") == 0) count(name, 'B', UNIT_COUNT, 1, -1, 0);
  else if (strcmp(name, "BARRIER_TRY") == 0) count(name, 'B', UNIT_SUCCESS, result == GASNET_OK, -1, 0);
  else count(name, 'B', UNIT_TIME, took, -1, 0);
  if (!tracing('B')) return;
  char where[GASNETI_TRACE_WHERE_MAX];
  loc = gasneti_trace_where(loc, false, where, sizeof where);
  char idtext[24];
  if (flags & GASNET_BARRIERFLAG_ANONYMOUS) snprintf(idtext, sizeof idtext, "anonymous");
  else snprintf(idtext, sizeof idtext, "id %d", id);
  if (start >= 0)
    gasneti_trace_printf('B', loc, "%s: %s, flags %d, result %d (%.3fus)", name, idtext, flags,
                         result, took * 1e6);
  else
    gasneti_trace_printf('B', loc, "%s: %s, flags %d", name, idtext, flags);
}

/* ---- the statistics at exit -------------------------------------------------------------- */
/* VmHWM of /proc/self/status (getrusage's ru_maxrss would count the launcher's process this
 * rank was forked from: it survives exec). open/read only: this may run in a signal handler. */
static long peak_resident_kib(void) {
  char buf[4096];
  int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return -1;
  buf[n] = 0;
  const char *at = strstr(buf, "VmHWM:");
  return at ? strtol(at + 6, NULL, 10) : -1;
}

#ifdef GASNETC_STATS
/* The file the conduit's counters go to (set under stats_lock while gasnetc_stats runs). */
static FILE *conduit_stats_file;
static void conduit_stat(const char *name, uint64_t count, int64_t bytes) {
  if (bytes >= 0)
    gasneti_trace_line(conduit_stats_file, 'C', NULL, "%-26s %8llu evnts, total=%lld sz", name,
                       (unsigned long long)count, (long long)bytes);
  else
    gasneti_trace_line(conduit_stats_file, 'C', NULL, "%-26s %8llu evnts", name,
                       (unsigned long long)count);
}
#endif

void gasneti_trace_stats_write(FILE *f, bool in_signal) {
  if (in_signal ? pthread_mutex_trylock(&stats_lock) != 0 : pthread_mutex_lock(&stats_lock) != 0)
    return;
  gasneti_trace_line(f, 'I', NULL, "STATS rank %d of %d: %d kinds of events", (int)gasneti_mynode,
                     (int)gasneti_nodes, nstats);
  for (int i = 0; i < nstats; i++) {
    stat_t *s = &stats[i];
    double avg = s->count ? s->sum / (double)s->count : 0;
    switch (s->unit) {
      case UNIT_BYTES:
        gasneti_trace_line(f, s->category, NULL,
                           "%-26s %8llu evnts, total=%.0f sz, min=%.0f sz, max=%.0f sz, "
                           "avg=%.1f sz", s->name, (unsigned long long)s->count, s->sum,
                           s->min, s->max, avg);
        break;
      case UNIT_TIME:
        gasneti_trace_line(f, s->category, NULL,
                           "%-26s %8llu evnts, total=%.3fus, min=%.3fus, max=%.3fus, "
                           "avg=%.3fus", s->name, (unsigned long long)s->count, s->sum * 1e6,
                           s->min * 1e6, s->max * 1e6, avg * 1e6);
        break;
      case UNIT_SUCCESS:
        gasneti_trace_line(f, s->category, NULL, "%-26s %8llu evnts, success=%.0f",
                           s->name, (unsigned long long)s->count, s->sum);
        break;
      default:
        gasneti_trace_line(f, s->category, NULL, "%-26s %8llu evnts", s->name,
                           (unsigned long long)s->count);
    }
  }
#ifdef GASNETC_STATS
  if (gasneti_trace_state.stats_mask['C']) { /* the conduit's own counters */
    conduit_stats_file = f;
    gasnetc_stats(conduit_stat);
  }
#endif
  /* What start-up cost this rank: the spawner's data it received (exchanges' whole tables and
   * the address cards it looked up) and its peak resident memory so far. */
  long peak_kib = peak_resident_kib();
  gasneti_trace_line(f, 'I', NULL, "STARTUP %llu bytes from the spawner (%u exchanges, %u "
                     "lookups), peak resident %ld KiB",
                     (unsigned long long)gasneti_bootstrap_counts.bytes,
                     gasneti_bootstrap_counts.exchanges, gasneti_bootstrap_counts.lookups,
                     peak_kib);
  for (int p = 0; p < (int)gasneti_nodes; p++)
    if (peer_msgs[p])
      gasneti_trace_line(f, 'I', NULL, "PEER %d: %llu msgs, %llu bytes", p,
                         (unsigned long long)peer_msgs[p], (unsigned long long)peer_bytes[p]);
  pthread_mutex_unlock(&stats_lock);
  /* The client's own lines (GASNETT_STATS_INIT), last and unlocked, once. Everything written
   * so far is flushed first: the callback is client code, which may block or end the process.
   * Not from a signal handler: client code is not safe there. */
  void (*client)(void (*)(const char *, ...)) = gasnett_stats_callback;
  if (!in_signal && client && gasneti_stats_enabled('H')) {
    gasnett_stats_callback = NULL;
    if (gasneti_trace_state.tracefile) fflush(gasneti_trace_state.tracefile);
    fflush(f);
    client(gasneti_stats_client_printf);
  }
}
