/* conduit.h: the conduit contract: the few link-time functions a conduit folder provides and
 * the core calls. Everything else (AM checks and dispatch, Long fragmentation, PSHM, barriers,
 * the extended API over AMs, exit policy, bootstrap choice) is core. Peers in the caller's
 * supernode, and the caller itself, never reach the conduit. Calls are direct (no function
 * pointers), so the fast path pays nothing for the seam. */
#ifndef GASNETI_CONDUIT_H
#define GASNETI_CONDUIT_H

#include "am/am.h"
#include "bootstrap.h"

/* Largest Long payload piece the conduit carries with one message; the core splits larger
 * Longs (am_send.c). Set by gasnetc_init at the latest. */
extern size_t gasnetc_long_chunk;
/* Optional (a conduit whose gasnet_conduit.h defines GASNETC_LONG_CHUNK_STABLE, a constant):
 * the largest piece of a Long whose payload stays unchanged until the Long is answered
 * (GASNETI_AM_STABLE: puts), for a conduit that sends such a payload from where it lies and
 * so is not bound by its buffers' size (mpi: one MPI message, one rendezvous, per piece). */

/* Bytes each rank registers with the network besides its segment (ibv's buffers; 0 for
 * conduits that pin nothing): GASNET_PHYSMEM_MAX covers both. Set by gasnetc_init. */
extern uint64_t gasnetc_pinned_bytes;
/* The largest segment the network can register (ibv with GASNET_PHYSMEM_PROBE: what the probe
 * could pin, less the buffers), 0 when nothing beyond GASNET_PHYSMEM_MAX limits it. */
extern uint64_t gasnetc_segment_cap;

/* Brings the conduit up (gasnet_init): the host map and PSHM exist; addresses are exchanged
 * here through boot. May refuse the job (e.g. smp on several hosts) with a fatal error. */
void gasnetc_init(const gasneti_bootstrap_t *boot);
/* The rank's segment exists (gasnet_attach); a conduit that registers memory does it here. */
void gasnetc_attach(void *segment, uintptr_t size);
/* Sends one request to a rank outside the caller's supernode. Blocks only for flow control,
 * during which it keeps serving this rank's incoming messages; returns true. A message with
 * GASNETI_AM_IMMEDIATE (am.h) that would have to wait for its first resource (a credit, a send
 * slot, a buffer, room in the window) is not sent: false, nothing taken, nothing polled. */
bool gasnetc_am_request(gasnet_node_t dest, const gasneti_am_t *am);
/* Sends the reply to a request the conduit delivered with this token (token->src); the same
 * rule for GASNETI_AM_IMMEDIATE. */
bool gasnetc_am_reply(gasneti_token_t *request, const gasneti_am_t *am);
/* Serves the conduit's network (GASNETI_POLL_* in which); returns how many messages ran. */
int gasnetc_poll(int which);
/* This rank ends the job with code: tell the other hosts' ranks, best effort, promptly. */
void gasnetc_exit_notify(int code);
/* Releases the conduit's resources on the way out. */
void gasnetc_fini(void);
/* No launcher started this process (gasnet_init, before anything else): a conduit with a
 * start-up convention of its own may take the job over here (udp's 'prog N args' hands it to
 * gasnetrun and never returns); when it returns, the process is a 1-rank job. */
void gasnetc_unlaunched(int *argc, char ***argv);

/* Optional RDMA for the extended API (a conduit whose gasnet_conduit.h defines GASNETC_RDMA):
 * puts and gets to ranks outside the supernode, counted down on counter when complete. A
 * non-bulk put returns with src reusable. */
#ifdef GASNETC_RDMA
void gasnetc_rdma_put(gasnet_node_t node, void *dest, const void *src, size_t n,
                      _Atomic int64_t *counter, int nonbulk);
void gasnetc_rdma_get(void *dest, gasnet_node_t node, const void *src, size_t n,
                      _Atomic int64_t *counter);
#endif

/* Optional negotiated-payload Mediums (a conduit whose gasnet_conduit.h defines
 * GASNETC_NATIVE_NP_ALLOC_MEDIUM; the core's ex/ex_np.c): gex_AM_Prepare*Medium with a runtime
 * buffer to a rank outside the caller's supernode asks the conduit for room for a message of
 * nargs arguments and least..most payload bytes in its own send buffer, so that the client
 * writes the payload where it is sent from. GASNETC_NP_OK: *payload and *size (least..most)
 * say where and how much, and the room is the caller's (the conduit's lock may stay held) until
 * gasnetc_np_commit sends it (am: the header; am->chunk the bytes written). GASNETC_NP_REFUSED:
 * immediate and no room now (nothing taken). GASNETC_NP_ELSEWHERE: not this way (it does not
 * fit one of the conduit's buffers, say): the core uses a buffer of its own. */
#ifdef GASNETC_NATIVE_NP_ALLOC_MEDIUM
enum { GASNETC_NP_OK, GASNETC_NP_REFUSED, GASNETC_NP_ELSEWHERE };
int gasnetc_np_prepare(gasnet_node_t dest, gasneti_token_t *reply_to, int nargs, size_t least,
                       size_t most, bool immediate, void **payload, size_t *size);
void gasnetc_np_commit(gasnet_node_t dest, gasneti_token_t *reply_to, const gasneti_am_t *am);
#endif

/* Optional sleeping waits (a conduit whose gasnet_conduit.h defines GASNETC_WAIT_FDS, the
 * most descriptors it names; pshm/wake.h): fills fds with what a sleeping rank must wake on
 * when its network has something for it, and *deadline (CLOCK_MONOTONIC seconds, -1: none)
 * with when the conduit must run again though nothing arrived (a retransmission); returns how
 * many descriptors, or -1 when it has work due at once. Called by the rank's only thread. */
#ifdef GASNETC_WAIT_FDS
#include <poll.h>
int gasnetc_wait_fds(struct pollfd *fds, double *deadline);
#endif
/* Optional with it (a conduit that defines GASNETC_WAIT_ARM): for a provider that moves data
 * while it is asked whether the rank may sleep. libfabric's fi_trywait runs the provider's
 * progress, and a put that lands in this rank's segment completes nothing the conduit sees:
 * asked just before the sleep, after the caller's last look at its condition, the put would
 * be in memory and the rank asleep. So the core asks when the rank arms, before that look:
 * 0 if it may sleep (whatever arrives from then on makes one of its descriptors readable),
 * -1 if it has work now. Until the sleep that follows, its poll must move none of the
 * provider's data (what it moved then would come after the look). */
#ifdef GASNETC_WAIT_ARM
int gasnetc_wait_arm(void);
#endif

/* Optional blocking waits (a conduit whose gasnet_conduit.h defines GASNETC_WAIT_BLOCK), in
 * SEQ builds: a blocking wait of the client's whose poll found nothing, on a rank that spins
 * (not yielding its core), asks the conduit to wait inside its network until a message
 * arrives, and to run it. Returns the messages it ran, or -1 when it did not wait (the rank
 * cannot: only a message may end its waits, so a conduit says -1 whenever something else
 * could). */
#ifdef GASNETC_WAIT_BLOCK
int gasnetc_wait_block(void);
#endif

/* Optional statistics (a conduit whose gasnet_conduit.h defines GASNETC_STATS): its own
 * counters, which the core writes with its statistics at exit (GASNET_STATSFILE, category C)
 * and gasnetrun --stats sums over the ranks. emit(name, count, bytes): an upper-case name
 * starting with the conduit's, how many, and their bytes (-1: not a byte count). May run in a
 * signal handler on the way out: it only reads (no lock, no allocation), and a count another
 * thread is changing may be off by a few. */
#ifdef GASNETC_STATS
typedef void (*gasnetc_stat_fn)(const char *name, uint64_t count, int64_t bytes);
void gasnetc_stats(gasnetc_stat_fn emit);
#endif

#endif
