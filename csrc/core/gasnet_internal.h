/* gasnet_internal.h: state and helpers shared by the conduit-independent runtime and conduits.
 * Nothing here is visible to clients; names are gasneti_* (core) and gasnetc_* (conduit). */
#ifndef GASNET_INTERNAL_H
#define GASNET_INTERNAL_H

#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "gasnet.h"

#if defined(GASNET_PAR) || defined(GASNET_PARSYNC)
#define GASNETI_THREADS 1
#define GASNETI_TLS _Thread_local
#else
#define GASNETI_THREADS 0
#define GASNETI_TLS
#endif

#define GASNETI_CACHELINE 64
#define GASNETI_ALIGNUP(x, a) ((((uintptr_t)(x)) + ((a) - 1)) & ~((uintptr_t)(a) - 1))
#define GASNETI_LIKELY(x) __builtin_expect(!!(x), 1)
#define GASNETI_UNLIKELY(x) __builtin_expect(!!(x), 0)

#ifdef GASNETI_DEBUG
#define gasneti_assert(expr) \
  ((expr) ? (void)0 : gasneti_fatalerror("assertion failed at %s:%d: %s", __FILE__, __LINE__, #expr))
#else
#define gasneti_assert(expr) ((void)0)
#endif

/* ---- errors and messages ------------------------------------------------------------ */
_Noreturn void gasneti_fatalerror(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void gasneti_warning(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void *gasneti_malloc(size_t n);
void *gasneti_calloc(size_t n, size_t size);

static inline void gasneti_cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

/* ---- job layout (filled by gasnet_init) -------------------------------------------- */
/* attach_done: the segment and the network are up (gasnet_attach, gex_Segment_Attach). */
extern int gasneti_init_done, gasneti_attach_done;
/* init.c's steps, shared by the GASNet-1 calls and GASNet-EX's (ex/ex_init.c). */
void gasneti_init_job(int *argc, char ***argv);
void gasneti_attach_runtime(void);
void gasneti_attach_network(uintptr_t segsize);
uintptr_t gasneti_max_local_segment(void);
extern char gasneti_hostname[64];
extern char gasneti_jobid[32];
/* 16 hex digits that no other user can compute, for the name this job gives one object other
 * users can see (/dev/shm, abstract sockets, a conduit library's regions), its own for each
 * kind (a letter) and rank: the job id alone is visible to all (pshm/name_tag.c). Ready during
 * gasnet_init, before the conduit starts. */
void gasneti_name_tag(char kind, int rank, char out[17]);
extern gasnet_node_t *gasneti_host_of;      /* per rank: host index (hosts ordered by first rank) */
extern gasnet_node_t *gasneti_supernode_of; /* per rank: supernode index */
extern gasnet_node_t gasneti_host_count, gasneti_supernode_count;
extern gasnet_node_t *gasneti_host_peers; /* ranks on this host, ascending */
extern int gasneti_host_size, gasneti_host_index;
extern int gasneti_host_cpus; /* CPUs the host's ranks may run on together (0: unknown) */
extern int *gasneti_host_local; /* per rank: index among this host's ranks, or -1 */
extern gasnet_node_t *gasneti_snode_peers; /* ranks of this supernode, ascending */
extern int gasneti_snode_size, gasneti_snode_index;
extern uintptr_t *gasneti_pshm_offset; /* per rank: add to its segment address to map it here */
extern gasnet_seginfo_t *gasneti_seginfo;

/* A count of 4 KiB pages in the 6 bytes the start-up exchanges give it (segment bases and
 * sizes are whole pages; 2^48 pages reach past any 57-bit address): a larger count is sent as
 * the largest that fits. */
enum { GASNETI_PAGES_BYTES = 6 };
static inline void gasneti_pages_put(uint8_t *out, uint64_t bytes) {
  uint64_t pages = bytes / GASNET_PAGESIZE;
  if (pages >> 48) pages = (1ull << 48) - 1;
  for (int i = 0; i < GASNETI_PAGES_BYTES; i++) out[i] = (uint8_t)(pages >> (8 * i));
}
static inline uint64_t gasneti_pages_get(const uint8_t *in) {
  uint64_t pages = 0;
  for (int i = 0; i < GASNETI_PAGES_BYTES; i++) pages |= (uint64_t)in[i] << (8 * i);
  return pages * GASNET_PAGESIZE;
}

/* Whether [addr, addr + n) lies inside rank's segment (n == 0 always does). */
static inline bool gasneti_in_segment(gasnet_node_t rank, const void *addr, size_t n) {
  uintptr_t base = (uintptr_t)gasneti_seginfo[rank].addr, size = gasneti_seginfo[rank].size;
  uintptr_t a = (uintptr_t)addr;
  return n == 0 || (a >= base && a - base <= size && n <= size - (a - base));
}

static inline bool gasneti_pshm_reachable(gasnet_node_t rank) {
  return gasneti_supernode_of[rank] == gasneti_supernode_of[gasneti_mynode];
}

/* Build the host and supernode maps from every rank's host name (gasnet_init). */
void gasneti_hostmap_build(void);
/* The name of the host a rank runs on (for messages). */
const char *gasneti_host_name(gasnet_node_t rank);

/* ---- bootstrap --------------------------------------------------------------------- */
#include "bootstrap.h"
extern const gasneti_bootstrap_t *gasneti_boot;

/* ---- polling and waiting ----------------------------------------------------------- */
/* Which incoming queues to serve: request handlers may only drain replies while they wait. */
enum { GASNETI_POLL_REPLIES = 1, GASNETI_POLL_REQUESTS = 2, GASNETI_POLL_ALL = 3 };
int gasneti_poll(int which);
/* Set by the barrier's handler while this thread waits in a barrier: the poll that ran it
 * delivers nothing more (each conduit's delivery loop and PSHM's look at it between messages),
 * so the wait sees its barrier complete before it runs messages that arrived after the one
 * completing it; a client handler run inside the wait would otherwise see a message its sender
 * sent only after passing the barrier. Each poll clears it as it starts. */
extern GASNETI_TLS bool gasneti_poll_stop;
/* One step of a wait loop that must keep serving AMs (wait_step in gasnet.h is the client's). */
void gasneti_wait_backoff(void);
/* The same for a loop the client runs (gasnet_AMPoll, a try): yields, never sleeps. */
void gasneti_wait_yield(void);
void gasneti_wait_init(void);
/* This rank sleeps in its blocking waits (decided in gasneti_wait_init, before the conduit's
 * init: a conduit opens what it sleeps on only then). */
bool gasneti_wait_may_sleep(void);

/* ---- segments ---------------------------------------------------------------------- */
uintptr_t gasneti_segment_limit(void);
void gasneti_segment_attach(uintptr_t segsize);

/* ---- barrier, exit ----------------------------------------------------------------- */
void gasneti_barrier_init(void);
/* One step of the barrier this rank notified, without polling (gex_Coll_BarrierNB's event): true
 * once it completed (it is then finished, as a wait would have). */
bool gasneti_barrier_advance(void);
/* What a set of notifies adds up to (the team barriers of gasnet_coll.h combine them too).
 * Combining is idempotent, so a contribution may be counted twice. */
typedef struct {
  int anon;     /* every contributor was anonymous */
  int id;       /* the common name when !anon */
  int mismatch; /* names differed, or someone notified with GASNET_BARRIERFLAG_MISMATCH */
} gasneti_barrier_vote_t;
gasneti_barrier_vote_t gasneti_barrier_vote(int id, int flags);
gasneti_barrier_vote_t gasneti_barrier_combine(gasneti_barrier_vote_t a, gasneti_barrier_vote_t b);
/* A wait's (id, flags) judged against what the barrier agreed: GASNET_OK or
 * GASNET_ERR_BARRIER_MISMATCH. */
int gasneti_barrier_judge(gasneti_barrier_vote_t agreed, int id, int flags);
void gasneti_exit_init(void);
/* Called from every wait loop: leaves the job if another rank has ended it. */
void gasneti_exit_check(void);
/* This rank ends the whole job with code (gasnet_exit, a fatal error with abort set). */
_Noreturn void gasneti_exit_job(int code, bool abort);
extern bool gasneti_conduit_up; /* gasnetc_init returned: exit notices may use it */
/* The rank is leaving from a signal handler (interrupt, leave signal): the conduit's exit
 * notice may not allocate or write files then. */
extern volatile sig_atomic_t gasneti_exit_in_signal;
/* Another rank ended the job (host exit word, conduit notice): leave with its code. phase is
 * the latest barrier that rank had passed (its exit notice carries gasneti_exit_phase()). */
void gasneti_exit_post(int code, uint32_t phase);
uint32_t gasneti_exit_phase(void);
/* This rank leaves because a conduit that keeps GASNET_EXITTIMEOUT itself ended it there
 * (GASNETI_EXIT_TIMEDOUT was posted): every other rank finished or is leaving the same way. */
bool gasneti_exit_timed_out(void);
/* The barrier this rank has under way (notified, wait or try not yet returned) is one a rank
 * that ended the job had passed (phase): it will normally complete, so the rank finishes it
 * before following. */
bool gasneti_barrier_completes(uint32_t phase);
/* The phase of the last barrier whose wait (or try) returned on this rank; 0 before any. */
uint32_t gasneti_barrier_passed(void);
/* GASNET_EXITTIMEOUT, or min(_MAX, _MIN + _FACTOR * ranks): how long a job may take to end. */
double gasneti_exit_timeout(int ranks);


/* ---- threading helpers ------------------------------------------------------------- */
#if GASNETI_THREADS
typedef struct {
  atomic_flag flag;
} gasneti_spinlock_t;
#define GASNETI_SPINLOCK_INIT {ATOMIC_FLAG_INIT}
static inline void gasneti_spin_lock(gasneti_spinlock_t *l) {
  while (atomic_flag_test_and_set_explicit(&l->flag, memory_order_acquire)) gasneti_cpu_relax();
}
static inline bool gasneti_spin_trylock(gasneti_spinlock_t *l) {
  return !atomic_flag_test_and_set_explicit(&l->flag, memory_order_acquire);
}
static inline void gasneti_spin_unlock(gasneti_spinlock_t *l) {
  atomic_flag_clear_explicit(&l->flag, memory_order_release);
}
#else
typedef struct {
  int unused;
} gasneti_spinlock_t;
#define GASNETI_SPINLOCK_INIT {0}
#define gasneti_spin_lock(l) ((void)(l))
#define gasneti_spin_trylock(l) ((void)(l), true)
#define gasneti_spin_unlock(l) ((void)(l))
#endif

#endif /* GASNET_INTERNAL_H */
