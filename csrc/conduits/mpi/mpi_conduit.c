/* mpi_conduit.c: the mpi conduit's side of the conduit contract: set-up (the MPI plugin the
 * bootstrap loaded, the thread level, receive and send slots, credits), polling, the exit
 * notice to other hosts' ranks and a clean finish. MPI is brought up and finalized by the
 * mpi spawner's bootstrap, which this library is built with alone. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "knobs.h"
#include "mpi_internal.h"
#include "pshm/pshm.h"

gasnetc_mpi_state_t gasnetc_mpi;
#if GASNETI_THREADS
gasneti_spinlock_t gasnetc_mpi_lock = GASNETI_SPINLOCK_INIT;
#endif
uint64_t gasnetc_pinned_bytes, gasnetc_segment_cap; /* nothing is registered with a network */
/* Longs travel in pieces of the largest Medium, so every message fits a receive slot. */
size_t gasnetc_long_chunk = GASNETC_MAX_MEDIUM;
/* MPI is this conduit's network: the bootstrap leaves MPI free to choose its fastest. */
const int gasnetc_mpi_is_network = 1;
/* Its largest message but a Long's stable piece: MPI should send each of these at once, not
 * by a rendezvous (the bootstrap raises Open MPI's TCP eager limit to it). */
const unsigned gasnetc_mpi_eager_bytes =
    ((sizeof(gasnetc_mpi_msg_t) + 4u * 16 + 7u) & ~7u) + GASNETC_MAX_MEDIUM; /* MPIC_MAX_MESSAGE */

double gasnetc_mpi_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void gasnetc_mpi_fail(int rc, const char *what, int peer) {
  char text[512];
  gasnetc_mpi.ops->error(rc, text, sizeof text);
  gasnetc_mpi_lock_drop();
  if (peer >= 0)
    gasneti_fatalerror("mpi: %s to rank %d (host %s) failed: %s (%d)", what, peer,
                       gasneti_host_name((gasnet_node_t)peer), text, rc);
  gasneti_fatalerror("mpi: %s failed: %s (%d)", what, text, rc);
}

/* The PAR library calls MPI from whichever thread is in GASNet: SINGLE or FUNNELED would let
 * MPI assume one thread. */
static void check_thread_level(void) {
#if GASNETI_THREADS
  static const char *const below[] = {"SINGLE", "FUNNELED"};
  for (int i = 0; i < 2; i++)
    if (gasneti_knob_is_set("GASNET_MPI_THREAD") && gasneti_knob_enum_is("GASNET_MPI_THREAD", below[i]))
      gasneti_fatalerror("mpi: GASNET_MPI_THREAD=%s, but this PAR library calls MPI from "
                         "whichever thread is in GASNet: set SERIALIZED or MULTIPLE (or unset "
                         "it: SERIALIZED is the PAR default), or build the client with "
                         "mpi-seq.mak", below[i]);
#endif
}

void gasnetc_init(const gasneti_bootstrap_t *boot) {
  (void)boot;
  gasnetc_mpi_state_t *s = &gasnetc_mpi;
  const gasneti_mpi_ops_t *ops = gasneti_mpi_loaded();
  if (!ops && gasneti_nodes > 1)
    gasneti_fatalerror("mpi: this %d-rank job was not started over MPI (the mpi conduit's "
                       "ranks need an MPI launcher: gasnetrun -spawner=mpi, mpirun, mpiexec "
                       "or srun)", (int)gasneti_nodes);
  check_thread_level();
  s->peers = gasneti_calloc(gasneti_nodes, sizeof *s->peers);
  for (int r = 0; r < (int)gasneti_nodes; r++)
    s->peers[r].network = r != (int)gasneti_mynode && !gasneti_pshm_reach[r];
  if (!ops) return; /* a 1-rank job without MPI: nothing to reach */
  /* The same on every rank (the duplication of the communicator is collective): AMs travel
   * over MPI when the job has several supernodes; with one, only the exit's messages do, into
   * a few small receives, and polls leave MPI alone. */
  s->network = gasneti_supernode_count > 1;
  s->nrecv = s->network ? (int)gasneti_knob_int("GASNET_MPI_RECV_BUFFERS") : 4;
  s->rcap = s->network ? (MPIC_MAX_MESSAGE(GASNETC_MAX_MEDIUM) + 63u) & ~63u : 64;
  gasnetc_mpi_send_init();
  int rc = ops->p2p_open(s->nrecv, s->nsend);
  s->ops = ops;
  if (rc) gasnetc_mpi_fail(rc, "MPI_Comm_dup", -1);
  gasneti_credits_setup(&s->credits, "mpi");
  gasnetc_mpi_recv_init();
}

void gasnetc_attach(void *segment, uintptr_t size) { (void)segment, (void)size; }

bool gasnetc_am_request(gasnet_node_t dest, const gasneti_am_t *am) {
  return gasnetc_mpi_send_am(dest, am, NULL);
}

bool gasnetc_am_reply(gasneti_token_t *request, const gasneti_am_t *am) {
  return gasnetc_mpi_send_am(request->src, am, request);
}

int gasnetc_poll(int which) {
  if (GASNETI_UNLIKELY(!gasnetc_mpi.network)) return 0;
  return gasnetc_mpi_poll(which);
}

static bool take_lock_briefly(void) {
#if GASNETI_THREADS
  double until = gasnetc_mpi_now() + 0.1;
  while (!gasneti_spin_trylock(&gasnetc_mpi_lock))
    if (gasnetc_mpi_now() > until) return false;
#endif
  return true;
}

/* Sends in flight leave before the process does (at most `seconds`). Lock held. */
static void drain(double seconds) {
  double until = gasnetc_mpi_now() + seconds;
  while (gasnetc_mpi.inflight && gasnetc_mpi_now() < until) gasnetc_mpi_reap();
}

/* Every rank outside this supernode hears it over MPI: other hosts' ranks, and this host's
 * too, which share its exit word but may be waiting inside MPI_Wait, where they do not look
 * at it (gasnetc_wait_block). Not from a signal handler: MPI's own locks may be held by the
 * code the signal interrupted, and every rank receives the launcher's signal anyway. Lock
 * held. */
static void notify_peers(int code) {
  gasnetc_mpi_state_t *s = &gasnetc_mpi;
  uint32_t phase = gasneti_exit_phase();
  for (int r = 0; r < (int)gasneti_nodes; r++)
    if (s->peers[r].network) gasnetc_mpi_send_ctrl(r, MPIC_EXIT, code, phase, false);
  drain(0.1);
}

void gasnetc_exit_notify(int code) {
  if (!gasnetc_mpi.network || gasneti_exit_in_signal || !take_lock_briefly()) return;
  notify_peers(code);
  gasnetc_mpi_lock_drop();
}

/* "0-1, 3": the ranks other than this one that have not said they finished. */
static void running_list(char *buf, size_t len) {
  size_t used = 0;
  buf[0] = 0;
  for (int r = 0; r < (int)gasneti_nodes; r++) {
    if (r == (int)gasneti_mynode || gasnetc_mpi.peers[r].finished) continue;
    int end = r;
    while (end + 1 < (int)gasneti_nodes && end + 1 != (int)gasneti_mynode &&
           !gasnetc_mpi.peers[end + 1].finished)
      end++;
    int n = end > r ? snprintf(buf + used, len - used, "%s%d-%d", used ? ", " : "", r, end)
                    : snprintf(buf + used, len - used, "%s%d", used ? ", " : "", r);
    if (n < 0 || (size_t)n >= len - used) break;
    used += (size_t)n;
    r = end;
  }
}

/* No rank below this one has finished: of the ranks that finished, it speaks. */
static bool first_finished(void) {
  for (int r = 0; r < (int)gasneti_mynode; r++)
    if (gasnetc_mpi.peers[r].finished) return false;
  return true;
}

/* GASNET_EXITTIMEOUT after this rank finished, the ranks still at work are told to leave, as
 * gasnetrun's agents would make them: each names itself and leaves with code 1, the job's code
 * (a rank that never finished is a failed job). */
static void end_stragglers(double timeout) {
  if (first_finished()) {
    char list[256];
    gasnetc_mpi_lock_take();
    running_list(list, sizeof list);
    gasnetc_mpi_lock_drop();
    fprintf(stderr, "GASNet: still running %g s after rank %d finished (GASNET_EXITTIMEOUT): "
            "ranks %s; ending them\n", timeout, (int)gasneti_mynode, list);
  }
  gasneti_exit_post(GASNETI_EXIT_TIMEDOUT, gasneti_exit_phase()); /* this host's ranks */
  gasnetc_mpi_lock_take();
  notify_peers(GASNETI_EXIT_TIMEDOUT);
  gasnetc_mpi_lock_drop();
}

/* Returning from main: what this rank sent arrives, every other rank learns not to send it
 * anything more (and that it finished), and it waits for every rank to reach its own exit
 * (MPI_Finalize would wait anyway), serving its peers meanwhile; ranks still at work after
 * GASNET_EXITTIMEOUT are told to leave (they follow from their next GASNet call: a rank that
 * never makes one again keeps the job running). */
void gasnetc_fini(void) {
  gasnetc_mpi_state_t *s = &gasnetc_mpi;
  if (!s->ops) return; /* a 1-rank job without MPI */
  gasnetc_mpi_lock_take();
  drain(1.0);
  for (int r = 0; r < (int)gasneti_nodes; r++)
    if (r != (int)gasneti_mynode && !gasnetc_mpi_send_ctrl(r, MPIC_FINISHED, 0, 0, false)) {
      drain(1.0);
      gasnetc_mpi_send_ctrl(r, MPIC_FINISHED, 0, 0, false);
    }
  int rc = s->ops->leave_start();
  gasnetc_mpi_lock_drop();
  if (rc) return; /* the finalize reports it */
  double timeout = gasneti_exit_timeout(gasneti_nodes), until = gasnetc_mpi_now() + timeout;
  bool told = false;
  for (int done = 0;;) {
    gasnetc_mpi_lock_take();
    rc = s->ops->leave_test(&done);
    gasnetc_mpi_lock_drop();
    if (rc || done) break;
    int ran = gasneti_pshm_poll(GASNETI_POLL_ALL) + gasnetc_mpi_poll(GASNETI_POLL_ALL);
    if (!ran) gasneti_wait_backoff();
    if (!told && gasnetc_mpi_now() > until) {
      told = true;
      end_stragglers(timeout);
    }
  }
  gasnetc_mpi_lock_take();
  drain(1.0);
  gasnetc_mpi_lock_drop();
}

/* A process no launcher started: the mpi spawner's bootstrap (MPI_Init) makes it a job of one,
 * as MPI does for a singleton; the conduit has no start-up convention of its own. */
void gasnetc_unlaunched(int *argc, char ***argv) { (void)argc, (void)argv; }
