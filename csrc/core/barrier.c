/* barrier.c: the split-phase barrier with named/anonymous ids and mismatch detection.
 * Inside a supernode every rank posts (id, flags) in its region and reads its peers' posts;
 * across supernodes the leaders run a dissemination barrier over AMs and publish the result. */
#include <string.h>

#include "am/am.h"
#include "knobs.h"
#include "pshm/pshm.h"
#include "pshm/wake.h"
#include "trace/trace.h"

typedef gasneti_barrier_vote_t vote_t;

vote_t gasneti_barrier_combine(vote_t a, vote_t b) {
  if (a.mismatch || b.mismatch) return (vote_t){a.anon && b.anon, a.anon ? b.id : a.id, 1};
  if (a.anon) return b;
  if (b.anon) return a;
  return (vote_t){0, a.id, a.id != b.id};
}
#define combine gasneti_barrier_combine

enum { NAMELESS = GASNET_BARRIERFLAG_ANONYMOUS | GASNET_BARRIERFLAG_UNNAMED };

vote_t gasneti_barrier_vote(int id, int flags) {
  return (vote_t){(flags & NAMELESS) != 0, id, (flags & GASNET_BARRIERFLAG_MISMATCH) != 0};
}
#define vote_of gasneti_barrier_vote

/* The wait is judged against what the barrier agreed, not against this rank's notify (GASNet
 * 1.20's rule, as UPC 1.3 has it): an anonymous notify may be followed by a named wait and
 * the other way round; a named wait mismatches only a named barrier of another name. */
int gasneti_barrier_judge(vote_t agreed, int id, int flags) {
  bool misnamed = !(flags & NAMELESS) && !agreed.anon && id != agreed.id;
  bool forced = (flags & GASNET_BARRIERFLAG_MISMATCH) != 0;
  return (agreed.mismatch || misnamed || forced) ? GASNET_ERR_BARRIER_MISMATCH : GASNET_OK;
}

/* ---- state of this rank's current barrier ------------------------------------------ */
static uint32_t phase;      /* number of the current (or last) barrier, from 1 */
static int notified;        /* notify seen, wait/try not yet successful */
static vote_t result;       /* of the last completed barrier */
static int scanned;         /* supernode members whose notify was folded into sofar */
static vote_t sofar;
static int round_done;      /* leaders: dissemination rounds completed */
static int round_sent;      /* leaders: rounds whose message went out */
/* The last barrier whose wait or try returned (read by whichever thread leaves). */
static _Atomic uint32_t passed;
/* The phase this rank notified and has not finished (wait or try not yet returned), else 0:
 * a posted exit waits for that barrier when the rank that ended the job had passed it (see
 * gasneti_barrier_completes). Read by any thread: a PAR thread that polls elsewhere (udp's
 * receive thread) must not take the rank along while its barrier is under way either. */
static _Atomic uint32_t under_way;

/* Leaders' dissemination inbox, by phase parity and round; written by the AM handler. */
enum { MAX_ROUNDS = 17 };
static struct {
  _Atomic uint32_t phase; /* published after vote */
  vote_t vote;
} inbox[2][MAX_ROUNDS];
/* The barrier's groups: GASNET_BARRIER=PSHM groups by supernode (members post in shared memory,
 * the lowest rank leads); AMDISSEM makes every rank a group of one, all talking over AMs. */
static gasnet_node_t *members; /* ranks whose notify this group gathers */
static int nmembers;
static gasnet_node_t group_leader; /* whose release this rank waits for */
static gasnet_node_t *leaders;     /* leader of each group */
static int nleaders, leader_rounds;
static int my_leader_index = -1;

/* This thread waits (or tries) in a barrier: a barrier message it runs ends the poll, so that
 * the wait looks at its barrier before running what arrived after (gasneti_poll_stop). A thread
 * of its own (udp's receive thread) that runs the message is not stopped. */
static GASNETI_TLS bool waiting_here;

static void barrier_handler(gasnet_token_t token, gasnet_handlerarg_t ph, gasnet_handlerarg_t round,
                            gasnet_handlerarg_t bits, gasnet_handlerarg_t id) {
  (void)token;
  vote_t v = {bits & 1, id, (bits >> 1) & 1};
  inbox[ph & 1][round].vote = v;
  atomic_store_explicit(&inbox[ph & 1][round].phase, (uint32_t)ph, memory_order_release);
  if (waiting_here) gasneti_poll_stop = true;
}

void gasneti_barrier_init(void) {
  gasneti_register_internal_handler(GASNETI_HANDLER_BARRIER, (gasneti_handler_fn)barrier_handler);
  gasnet_node_t me = gasneti_mynode;
  if (gasneti_knob_enum_is("GASNET_BARRIER", "AMDISSEM")) {
    nleaders = gasneti_nodes;
    leaders = gasneti_calloc((size_t)nleaders, sizeof *leaders);
    for (int r = 0; r < nleaders; r++) leaders[r] = (gasnet_node_t)r;
    members = &leaders[me];
    nmembers = 1;
  } else {
    nleaders = gasneti_supernode_count;
    leaders = gasneti_calloc((size_t)nleaders, sizeof *leaders);
    for (int r = gasneti_nodes - 1; r >= 0; r--) leaders[gasneti_supernode_of[r]] = (gasnet_node_t)r;
    members = gasneti_snode_peers;
    nmembers = gasneti_snode_size;
  }
  group_leader = members[0];
  for (int i = 0; i < nleaders; i++)
    if (leaders[i] == me) my_leader_index = i;
  leader_rounds = 0;
  while ((1 << leader_rounds) < nleaders) leader_rounds++;
}

static gasneti_region_t *region_of(gasnet_node_t rank) {
  return gasneti_regions[gasneti_host_local[rank]];
}

/* Fold in the group members' notifies; false while one is missing. */
static bool gather_group(void) {
  int parity = phase & 1;
  for (; scanned < nmembers; scanned++) {
    gasneti_barrier_slot_t *s = &region_of(members[scanned])->notify[parity];
    if (atomic_load_explicit(&s->phase, memory_order_acquire) != phase) return false;
    sofar = combine(sofar, vote_of(s->id, s->flags));
  }
  return true;
}

/* Leaders: advance the dissemination among leaders as far as arrived messages allow. */
static bool disseminate(void) {
  int L = nleaders, parity = phase & 1;
  while (round_done < leader_rounds) {
    if (round_sent == round_done) {
      gasnet_node_t to = leaders[(my_leader_index + (1 << round_done)) % L];
      gasneti_am_request_internal(
          to, GASNETI_HANDLER_BARRIER, GASNETI_AM_SHORT, NULL, 0, NULL, 4,
          (gasnet_handlerarg_t[]){(gasnet_handlerarg_t)phase, round_done,
                                  sofar.anon | (sofar.mismatch << 1), sofar.id});
      round_sent++;
    }
    if (atomic_load_explicit(&inbox[parity][round_done].phase, memory_order_acquire) != phase)
      return false;
    sofar = combine(sofar, inbox[parity][round_done].vote);
    round_done++;
  }
  return true;
}

/* One non-blocking attempt to finish the current barrier; fills result when done. */
static bool progress(void) {
  int parity = phase & 1;
  gasneti_region_t *leader_region = region_of(group_leader);
  if (nleaders == 1) {
    if (!gather_group()) return false;
    result = sofar;
    return true;
  }
  if (my_leader_index < 0) { /* wait for the group leader's release */
    gasneti_barrier_slot_t *rel = &leader_region->release[parity];
    if (atomic_load_explicit(&rel->phase, memory_order_acquire) != phase) return false;
    result = (vote_t){rel->flags & 1, rel->id, (rel->flags >> 1) & 1};
    return true;
  }
  if (!gather_group() || !disseminate()) return false;
  result = sofar;
  gasneti_barrier_slot_t *rel = &leader_region->release[parity];
  rel->id = result.id;
  rel->flags = result.anon | (result.mismatch << 1);
  atomic_store_explicit(&rel->phase, phase, memory_order_release);
  for (int i = 0; i < nmembers; i++) /* they may sleep until it is out (wake.h) */
    if (members[i] != gasneti_mynode) gasneti_wake_peer(gasneti_host_local[members[i]]);
  return true;
}

/* A barrier waits for other ranks; inside a handler that would stall the handler's sender too,
 * so the rule is enforced rather than left to hang. */
static void check_context(const char *what) {
  if (GASNETI_UNLIKELY(!gasneti_attach_done)) gasneti_fatalerror("%s before gasnet_attach", what);
  if (GASNETI_UNLIKELY(gasneti_am_context != GASNETI_CTX_CLIENT))
    gasneti_fatalerror("%s called inside an AM handler: barriers may only be called outside "
                       "handlers (a handler must not wait for other ranks)", what);
}

/* The _at forms take a source line for the library's own callers (gasnet.h says why the public
 * names are plain functions). */
void gasneti_barrier_notify_at(const char *loc, int id, int flags) {
  check_context("gasnet_barrier_notify");
  if (GASNETI_UNLIKELY(gasneti_trace_active))
    gasneti_trace_barrier(loc, "BARRIER_NOTIFY", id, flags, -1, 0);
  if (notified) gasneti_fatalerror("gasnet_barrier_notify called twice without a wait");
  phase++;
  notified = 1;
  scanned = 0;
  round_done = round_sent = 0;
  sofar = (vote_t){1, 0, 0};
  gasneti_barrier_slot_t *s = &gasneti_regions[gasneti_host_index]->notify[phase & 1];
  s->id = id;
  s->flags = flags;
  atomic_store_explicit(&s->phase, phase, memory_order_release);
  atomic_store(&under_way, phase);
  /* Who reads it may sleep until it is there (wake.h): the group's leader, or, in a job of one
   * group, every member (each gathers the group itself). */
  for (int i = 0; i < nmembers; i++)
    if (members[i] != gasneti_mynode && (nleaders == 1 || members[i] == group_leader))
      gasneti_wake_peer(gasneti_host_local[members[i]]);
  /* A leader's first message goes now, not at the wait: a rank that computes between notify
   * and wait (the split phase's point) does not hold the others up. */
  (void)progress();
}

static int finish(int id, int flags) {
  notified = 0;
  atomic_store_explicit(&passed, phase, memory_order_relaxed);
  atomic_store(&under_way, 0);
  return gasneti_barrier_judge(result, id, flags);
}

int gasneti_barrier_wait_at(const char *loc, int id, int flags) {
  check_context("gasnet_barrier_wait");
  if (!notified) gasneti_fatalerror("gasnet_barrier_wait without a preceding notify");
  double start = gasneti_trace_active ? gasneti_trace_now() : 0;
  /* Only the wait's own polls stop at a barrier message: progress() may send, and a credit
   * wait there serves the conduit directly, which must deliver everything. */
  while (!progress()) {
    waiting_here = true;
    gasneti_wait_step();
    waiting_here = gasneti_poll_stop = false;
  }
  int rc = finish(id, flags);
  if (GASNETI_UNLIKELY(gasneti_trace_active))
    gasneti_trace_barrier(loc, "BARRIER_WAIT", id, flags, start, rc);
  return rc;
}

int gasneti_barrier_at(const char *loc, int id, int flags) {
  gasneti_barrier_notify_at(loc, id, flags);
  return gasneti_barrier_wait_at(loc, id, flags);
}

static int barrier_try(int id, int flags) {
  check_context("gasnet_barrier_try");
  if (!notified) gasneti_fatalerror("gasnet_barrier_try without a preceding notify");
  waiting_here = true;
  gasneti_poll(GASNETI_POLL_ALL);
  waiting_here = gasneti_poll_stop = false;
  if (!progress()) {
    gasneti_wait_yield(); /* the caller loops on try: yield, but a try never sleeps */
    return GASNET_ERR_NOT_READY;
  }
  return finish(id, flags);
}

int gasneti_barrier_try_at(const char *loc, int id, int flags) {
  double start = gasneti_trace_active ? gasneti_trace_now() : 0;
  int rc = barrier_try(id, flags);
  if (GASNETI_UNLIKELY(gasneti_trace_active))
    gasneti_trace_barrier(loc, "BARRIER_TRY", id, flags, start, rc);
  return rc;
}

bool gasneti_barrier_advance(void) {
  if (!notified) return true;
  if (!progress()) return false;
  (void)finish(0, GASNET_BARRIERFLAG_UNNAMED);
  return true;
}

void gasnet_barrier_notify(int id, int flags) { gasneti_barrier_notify_at(NULL, id, flags); }
int gasnet_barrier_wait(int id, int flags) { return gasneti_barrier_wait_at(NULL, id, flags); }
int gasnet_barrier(int id, int flags) { return gasneti_barrier_at(NULL, id, flags); }
int gasnet_barrier_try(int id, int flags) { return gasneti_barrier_try_at(NULL, id, flags); }

int gasnet_barrier_result(int *id) {
  if (id) *id = result.anon ? 0 : result.id;
  return result.anon ? GASNET_BARRIERFLAG_ANONYMOUS : 0;
}

/* Every rank notified a barrier that some rank passed, so the members normally get through it
 * as they keep polling: a rank that ended the job right after a barrier does not take the
 * others along before they are through it too (their output after it is not lost). Where it
 * cannot complete after all (a member was killed, a datagram of the leaver's was lost) or the
 * rank computes instead of waiting, the launcher's leave signal ends the rank after the grace
 * period (at most a second), as it ends any rank that does not follow. */
bool gasneti_barrier_completes(uint32_t exit_phase) {
  uint32_t notified_phase = atomic_load(&under_way);
  return exit_phase != 0 && notified_phase != 0 && (int32_t)(notified_phase - exit_phase) <= 0;
}

uint32_t gasneti_barrier_passed(void) {
  return atomic_load_explicit(&passed, memory_order_relaxed);
}
