/* mpi_plugin.c: the runtime's MPI calls, compiled once per MPI found (Open MPI, MPICH) into
 * libgasnet-mpi-<flavour>.so and loaded by bootstrap_mpi.c: the spawner's collectives, the mpi
 * conduit's point-to-point traffic and the benchmarks' baselines, each on a private duplicate
 * of MPI_COMM_WORLD so that none meets a client's own MPI traffic. Initialization and
 * finalization go through the PMPI_ names: a hybrid client's copy of the mpi conduit
 * interposes MPI_Init and MPI_Finalize (csrc/conduits/mpi/mpi_interpose.c), and our own calls
 * must not land there. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include <mpi.h>

#include "mpi_plugin.h"

/* MPICH's MPI_STATUSES_IGNORE is a null pointer that its prototypes declare as an array, which
 * gcc 12 reads as a zero-byte region the call would overrun: a false alarm, for MPICH only. */
#pragma GCC diagnostic ignored "-Wstringop-overflow"

static MPI_Comm comm = MPI_COMM_NULL, am_comm = MPI_COMM_NULL, raw_comm = MPI_COMM_NULL;
static int we_initialized, deferred;

/* ---- the spawner's collectives -------------------------------------------------------- */
static const int levels[] = {MPI_THREAD_SINGLE, MPI_THREAD_FUNNELED, MPI_THREAD_SERIALIZED,
                             MPI_THREAD_MULTIPLE};

static int dup_world(MPI_Comm *out) {
  int rc = MPI_Comm_dup(MPI_COMM_WORLD, out);
  /* Errors come back as codes, which the runtime reports with its own context. */
  return rc ? rc : MPI_Comm_set_errhandler(*out, MPI_ERRORS_RETURN);
}

static int init(int *argc, char ***argv, int thread_level, int *rank, int *size,
                int *provided) {
  int already = 0, done = 0, rc;
  if ((rc = PMPI_Initialized(&already)) || (rc = PMPI_Finalized(&done))) return rc;
  if (done) return MPI_ERR_OTHER; /* finalized before gasnet_init: MPI cannot start again */
  if (already) {
    if ((rc = PMPI_Query_thread(provided))) return rc;
  } else {
    if ((rc = PMPI_Init_thread(argc, argv, levels[thread_level & 3], provided))) return rc;
    we_initialized = 1;
  }
  for (int i = 0; i < 4; i++)
    if (*provided == levels[i]) {
      *provided = i;
      break;
    }
  if ((rc = dup_world(&comm)) || (rc = MPI_Comm_rank(comm, rank))) return rc;
  return MPI_Comm_size(comm, size);
}

static int allgather(const void *mine, size_t len, void *all) {
  if (len > INT_MAX) return MPI_ERR_COUNT;
  return MPI_Allgather(mine, (int)len, MPI_BYTE, all, (int)len, MPI_BYTE, comm);
}

static int bcast(void *buf, size_t len, int root) {
  if (len > INT_MAX) return MPI_ERR_COUNT;
  return MPI_Bcast(buf, (int)len, MPI_BYTE, root, comm);
}

static int barrier(void) { return MPI_Barrier(comm); }

static void abort_job(int code) { MPI_Abort(MPI_COMM_WORLD, code); }

static void error_text(int code, char *text, size_t max) {
  char msg[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(code, msg, &len) != MPI_SUCCESS) len = 0;
  snprintf(text, max, "%.*s", len, msg);
}

static int state(void) {
  int init_done = 0, fini_done = 0;
  PMPI_Initialized(&init_done);
  PMPI_Finalized(&fini_done);
  return (init_done ? GASNETI_MPI_INITIALIZED : 0) | (we_initialized ? GASNETI_MPI_BY_US : 0) |
         (fini_done ? GASNETI_MPI_FINALIZED : 0) | (deferred ? GASNETI_MPI_DEFERRED : 0);
}

static void defer_finalize(void) { deferred = 1; }

/* ---- the conduit's point-to-point traffic --------------------------------------------- */
enum { AM_TAG = 1 };
static MPI_Request *recvs; /* per receive slot */
static int nrecvs;
/* Sends in flight, kept packed so that one MPI_Testsome looks at those only. */
static MPI_Request *sends;
static int *send_slot, *done_index, nsends, send_cap;

static int p2p_open(int nrecv, int nsend) {
  recvs = malloc(sizeof *recvs * (size_t)nrecv);
  sends = malloc(sizeof *sends * (size_t)nsend);
  send_slot = malloc(sizeof *send_slot * (size_t)nsend);
  done_index = malloc(sizeof *done_index * (size_t)nsend);
  if (!recvs || !sends || !send_slot || !done_index) return MPI_ERR_NO_MEM;
  for (int i = 0; i < nrecv; i++) recvs[i] = MPI_REQUEST_NULL;
  nrecvs = nrecv;
  send_cap = nsend;
  return dup_world(&am_comm);
}

static int recv_post(int slot, void *buf, int cap) {
  return MPI_Irecv(buf, cap, MPI_BYTE, MPI_ANY_SOURCE, AM_TAG, am_comm, &recvs[slot]);
}

/* A received message's length in bytes. MPI_Get_count checks its arguments and divides by the
 * type's size: 44 instructions of Open MPI's on every message, a twentieth of what the conduit
 * adds to a round trip; for MPI_BYTE the status's own count (a field of each MPI's mpi.h,
 * which this file is compiled against) is the answer. Any other MPI asks MPI_Get_count. */
static int received_bytes(const MPI_Status *st, int *len) {
#if defined(OPEN_MPI)
  *len = (int)st->_ucount;
  return MPI_SUCCESS;
#elif defined(MPICH)
  *len = st->count_lo; /* bytes; the high part is 0 below 2 GiB, more than any message here */
  return MPI_SUCCESS;
#else
  return MPI_Get_count(st, MPI_BYTE, len);
#endif
}

static int recv_test(int slot, int *done, int *src, int *len) {
  MPI_Status st;
  int rc = MPI_Test(&recvs[slot], done, &st);
  if (rc || !*done) return rc;
  *src = st.MPI_SOURCE;
  return received_bytes(&st, len);
}

static int recv_wait(int slot, int *src, int *len) {
  MPI_Status st;
  int rc = MPI_Wait(&recvs[slot], &st);
  if (rc) return rc;
  *src = st.MPI_SOURCE;
  return received_bytes(&st, len);
}

/* A message in two pieces (header here, payload where the client has it) goes as one, through
 * a datatype of absolute addresses: the receiver's buffer sees one contiguous message. */
static int p2p_send(int slot, const void *head, int head_len, const void *tail, int tail_len,
                int dest) {
  if (nsends == send_cap) return MPI_ERR_OTHER; /* the caller hands out at most nsend slots */
  MPI_Request *req = &sends[nsends];
  int rc;
  if (tail_len <= 0) {
    rc = MPI_Isend(head, head_len, MPI_BYTE, dest, AM_TAG, am_comm, req);
  } else {
    int lens[2] = {head_len, tail_len};
    MPI_Aint where[2];
    MPI_Datatype type;
    if ((rc = MPI_Get_address(head, &where[0])) || (rc = MPI_Get_address(tail, &where[1])) ||
        (rc = MPI_Type_create_hindexed(2, lens, where, MPI_BYTE, &type)) ||
        (rc = MPI_Type_commit(&type)))
      return rc;
    rc = MPI_Isend(MPI_BOTTOM, 1, type, dest, AM_TAG, am_comm, req);
    MPI_Type_free(&type); /* the send keeps what it needs */
  }
  if (rc) return rc;
  send_slot[nsends++] = slot;
  return 0;
}

enum { DATA_TAG = 3 };

static int send_data(int slot, const void *buf, int len, int dest) {
  if (nsends == send_cap) return MPI_ERR_OTHER;
  int rc = MPI_Isend(buf, len, MPI_BYTE, dest, DATA_TAG, am_comm, &sends[nsends]);
  if (!rc) send_slot[nsends++] = slot;
  return rc;
}

/* Waiting here also moves every other transfer of this process on (MPI's progress is
 * global), its own sends to the peer included: two ranks each waiting for the other's
 * payload both get it. */
static int recv_data(void *buf, int len, int src) {
  MPI_Request req;
  int rc = MPI_Irecv(buf, len, MPI_BYTE, src, DATA_TAG, am_comm, &req);
  return rc ? rc : MPI_Wait(&req, MPI_STATUS_IGNORE);
}

static int send_reap(int *slots, int max, int *n) {
  *n = 0;
  if (!nsends) return 0;
  int count = 0, rc = MPI_Testsome(nsends, sends, &count, done_index, MPI_STATUSES_IGNORE);
  if (rc) return rc;
  if (count == MPI_UNDEFINED || count == 0) return 0;
  /* Completed entries are MPI_REQUEST_NULL now: report their slots, then pack the rest. */
  for (int i = 0; i < count && *n < max; i++) slots[(*n)++] = send_slot[done_index[i]];
  int kept = 0;
  for (int i = 0; i < nsends; i++)
    if (sends[i] != MPI_REQUEST_NULL) {
      sends[kept] = sends[i];
      send_slot[kept++] = send_slot[i];
    }
  nsends = kept;
  return 0;
}

static void p2p_close(void) {
  for (int i = 0; i < nrecvs; i++)
    if (recvs[i] != MPI_REQUEST_NULL) {
      MPI_Cancel(&recvs[i]);
      MPI_Wait(&recvs[i], MPI_STATUS_IGNORE);
    }
  /* Sends still in flight finish on their own (their peers may be gone already). */
  for (int i = 0; i < nsends; i++) MPI_Request_free(&sends[i]);
  nsends = nrecvs = 0;
}

/* ---- the benchmarks' baselines -------------------------------------------------------- */
enum { RAW_TAG = 2, RAW_MAX = 64 };
static MPI_Request raw_reqs[RAW_MAX];
static int raw_live;

static int raw_open(void) { return raw_comm == MPI_COMM_NULL ? dup_world(&raw_comm) : 0; }

static int raw_send(const void *buf, int len, int dest) {
  return MPI_Send(buf, len, MPI_BYTE, dest, RAW_TAG, raw_comm);
}

static int raw_recv(void *buf, int len, int src) {
  return MPI_Recv(buf, len, MPI_BYTE, src, RAW_TAG, raw_comm, MPI_STATUS_IGNORE);
}

static int raw_isend(const void *buf, int len, int dest) {
  if (raw_live == RAW_MAX) return MPI_ERR_OTHER;
  return MPI_Isend(buf, len, MPI_BYTE, dest, RAW_TAG, raw_comm, &raw_reqs[raw_live++]);
}

static int raw_irecv(void *buf, int len, int src) {
  if (raw_live == RAW_MAX) return MPI_ERR_OTHER;
  return MPI_Irecv(buf, len, MPI_BYTE, src, RAW_TAG, raw_comm, &raw_reqs[raw_live++]);
}

static int raw_waitall(void) {
  int n = raw_live;
  raw_live = 0;
  return MPI_Waitall(n, raw_reqs, MPI_STATUSES_IGNORE);
}

static int raw_testall(int *done) {
  int rc = MPI_Testall(raw_live, raw_reqs, done, MPI_STATUSES_IGNORE);
  if (!rc && *done) raw_live = 0;
  return rc;
}

/* ---- leaving -------------------------------------------------------------------------- */
static MPI_Request leave_req = MPI_REQUEST_NULL;
static int leave_started;

static int leave_start(void) {
  if (leave_started) return 0;
  leave_started = 1;
  return MPI_Ibarrier(comm, &leave_req);
}

static int leave_test(int *done) { return MPI_Test(&leave_req, done, MPI_STATUS_IGNORE); }

static int finalize(void) {
  int done = 0;
  PMPI_Finalized(&done);
  if (done) return 0;
  /* Every rank leaving cleanly meets the others here first, so that MPI_Finalize (which
   * several MPIs make collective) never waits on a rank that still works. */
  if (!leave_start()) MPI_Wait(&leave_req, MPI_STATUS_IGNORE);
  p2p_close();
  MPI_Comm *comms[] = {&am_comm, &raw_comm, &comm};
  for (int i = 0; i < 3; i++)
    if (*comms[i] != MPI_COMM_NULL) MPI_Comm_free(comms[i]);
  return PMPI_Finalize();
}

const gasneti_mpi_ops_t gasneti_mpi_ops = {
    .version = GASNETI_MPI_OPS_VERSION,
    .init = init,
    .allgather = allgather,
    .bcast = bcast,
    .barrier = barrier,
    .finalize = finalize,
    .abort = abort_job,
    .error = error_text,
    .state = state,
    .defer_finalize = defer_finalize,
    .leave_start = leave_start,
    .leave_test = leave_test,
    .p2p_open = p2p_open,
    .recv_post = recv_post,
    .recv_test = recv_test,
    .recv_wait = recv_wait,
    .send = p2p_send,
    .send_reap = send_reap,
    .send_data = send_data,
    .recv_data = recv_data,
    .raw_open = raw_open,
    .raw_send = raw_send,
    .raw_recv = raw_recv,
    .raw_isend = raw_isend,
    .raw_irecv = raw_irecv,
    .raw_waitall = raw_waitall,
    .raw_testall = raw_testall,
};
