/* mpi_internal.h: the mpi conduit's state, shared by its files: set-up, polling, exit and
 * finish (mpi_conduit.c), sending (mpi_send.c) and receiving (mpi_recv.c). MPI itself is the
 * plugin's (spawners/mpi/mpi_plugin.h); every call to it is made under gasnetc_mpi_lock in
 * PAR builds (MPI_THREAD_SERIALIZED is enough). */
#ifndef GASNETC_MPI_INTERNAL_H
#define GASNETC_MPI_INTERNAL_H

#include "am/credits.h"
#include "conduit.h"
#include "mpi_plugin.h"
#include "mpi_wire.h"

/* A send slot's own buffer holds a Short, or a Medium or Long piece this small; a larger
 * payload is copied into one of the few large buffers, or sent from where it lies when the
 * core says it stays unchanged (GASNETI_AM_STABLE) and is worth the datatype it takes. */
enum { MPIC_SMALL = 512, MPIC_LARGE_BUFS = 16, MPIC_ZCOPY_MIN = 8192 };
/* A Long piece this large goes as a header, then its payload as a message of its own that the
 * receiver takes straight into its segment (MPIC_DIRECT): MPI's large-message path (a single
 * copy between processes of a host) instead of a copy into a receive buffer and another out. */
enum { MPIC_DIRECT_MIN = 16384 };

typedef struct {
  bool network;  /* AMs to it go through MPI: neither this rank nor one of its supernode */
  bool finished; /* it returned from main (every rank says so to every other over MPI):
                  * nothing more goes to it */
} gasnetc_mpi_peer_t;

typedef struct {
  const gasneti_mpi_ops_t *ops; /* NULL: no MPI (a 1-rank job started without a launcher) */
  bool network; /* some rank is in another supernode: AMs travel over MPI (else only the
                 * exit's runtime messages do, and polls leave MPI alone) */
  gasnetc_mpi_peer_t *peers;
  gasneti_credits_t credits;
  /* receives: nrecv slots of rcap bytes; posted[] lists the posted ones oldest first (MPI
   * matches a message to the oldest posted receive, so that is where the next one lands) */
  int nrecv;
  uint32_t rcap;
  uint8_t *rbufs;
  int *posted, head, nposted;
  int *unposted, nunposted; /* run, to be posted again at the start of the next poll */
  /* sends: nsend slots, free ones stacked; a slot using a large buffer holds its index */
  int nsend, nfree, inflight;
  int *free_slots, *slot_large, *reaped;
  uint8_t *small;
  int nlarge_free;
  int free_large[MPIC_LARGE_BUFS];
  uint8_t *large;
} gasnetc_mpi_state_t;

extern gasnetc_mpi_state_t gasnetc_mpi;

#if GASNETI_THREADS
extern gasneti_spinlock_t gasnetc_mpi_lock; /* all of the above, and every MPI call */
#define MPIC_LOCK (&gasnetc_mpi_lock)
#else
#define MPIC_LOCK NULL
#endif
static inline void gasnetc_mpi_lock_take(void) {
#if GASNETI_THREADS
  gasneti_spin_lock(&gasnetc_mpi_lock);
#endif
}
static inline void gasnetc_mpi_lock_drop(void) {
#if GASNETI_THREADS
  gasneti_spin_unlock(&gasnetc_mpi_lock);
#endif
}

/* An MPI call failed (with gasnetc_mpi_lock held): ends the job naming the call and, when
 * there is one, the peer. */
_Noreturn void gasnetc_mpi_fail(int rc, const char *what, int peer);

/* mpi_send.c (lock not held) */
bool gasnetc_mpi_send_am(gasnet_node_t dest, const gasneti_am_t *am, gasneti_token_t *reply_to);
/* Runtime traffic without a credit: the credits owed to peer (when still overdue), an exit
 * notice, the news that this rank finished. wait: whether it may wait for a send slot
 * (false on the exit path, lock held: then it is dropped when none is free). */
bool gasnetc_mpi_send_ctrl(int peer, int kind, int32_t code, uint32_t phase, bool wait);
void gasnetc_mpi_reap(void);        /* completed sends give their slots back (lock held) */
void gasnetc_mpi_send_init(void);

/* mpi_recv.c */
int gasnetc_mpi_poll(int which);    /* lock not held */
void gasnetc_mpi_recv_init(void);

double gasnetc_mpi_now(void);

#endif
