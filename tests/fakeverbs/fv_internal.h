/* fv_internal.h: fakeverbs, a test provider with libibverbs' entry points (built as
 * libibverbs.so.1) whose HCAs are simulated between the processes of one machine.
 *
 * - Devices and ports come from a sysfs-shaped directory (FAKEVERBS_SYSFS: class/infiniband/
 *   <dev>/ports/<n>/state ...; limits from an optional ibv_devinfo -v record beside it), the
 *   recorded nodes of tests/fixtures/nodes.
 * - The fabric (FAKEVERBS_FABRIC, a file made by `fakeverbs-sm up`) plays the subnet manager
 *   and the switch: it hands out LIDs and holds the directories of queue pairs and memory
 *   regions. Without it, ports stay in INIT, as on a fabric whose subnet manager is down.
 * - Each process keeps its completion and receive queues in a memfd "region" that peers map
 *   through /proc/<pid>/fd/<n>: it vanishes with the process, so nothing is left behind.
 * - A sender executes its work requests itself, in order per QP, during ibv_post_send and
 *   ibv_poll_cq: data moves with process_vm_writev/readv; receive completions go straight into
 *   the receiver's CQ. A send finding no receive posted waits (RNR), a peer that is gone or
 *   not connected makes the request time out (retry exceeded), a bad rkey is a remote access
 *   error: with the completions, statuses and QP state changes the verbs specification gives.
 * Not simulated: atomics, memory windows, completion channels and events, multicast, XRC. */
#ifndef FV_INTERNAL_H
#define FV_INTERNAL_H

#include <infiniband/verbs.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define FV_MAX_DEVICES 8
#define FV_MAX_PORTS 4      /* per device */
#define FV_MAX_SGE 8
#define FV_MAX_INLINE 256
#define FV_MAX_MSG (1u << 30)
#define FV_UD_GRH 40        /* bytes a UD receive reserves for the (absent) global route header */
#define FV_REGION_SIZE (512ull << 20) /* a process's memfd: sparse, pages appear when touched */

/* ---- the fabric file ------------------------------------------------------------------- */
#define FV_FABRIC_MAGIC 0x4641424b56455253ull /* "FABKVERS" */
#define FV_FABRIC_VERSION 3
#define FV_FABRIC_PORTS 4096
#define FV_FABRIC_QPS 16384   /* QP numbers: slot | generation << 14 */
#define FV_FABRIC_MRS 32768   /* keys: slot | generation << 15 */
#define FV_QP_SLOT_BITS 14
#define FV_MR_SLOT_BITS 15

typedef struct {
  char host[64];
  char dev[32];
  uint32_t port;
  uint32_t lid; /* 0: free */
} fv_port_ent_t;

/* A queue pair as the fabric knows it: what a sender needs to reach and check it. */
typedef struct {
  _Atomic uint32_t qpn;   /* 0: free slot */
  _Atomic uint32_t state; /* enum ibv_qp_state */
  int32_t pid;
  int32_t region_fd;      /* the owner's memfd, opened by peers as /proc/<pid>/fd/<n> */
  uint64_t start;         /* owner's start time (guards against pid reuse) */
  uint32_t type;          /* IBV_QPT_RC / IBV_QPT_UD */
  uint32_t pd;            /* fabric-wide PD id */
  uint32_t lid;           /* of the port it is bound to (0 before INIT) */
  uint32_t dest_qpn, dest_lid; /* RC, from RTR */
  uint32_t qkey;          /* UD */
  uint32_t access;        /* qp_access_flags */
  uint32_t min_rnr_timer; /* what its senders wait after a receiver-not-ready */
  uint32_t mtu;           /* bytes */
  uint64_t rq_off;        /* its receive ring (an SRQ's when it has one) in the owner's region */
  uint64_t rcq_off;       /* its receive CQ in the owner's region */
} fv_qp_ent_t;

typedef struct {
  _Atomic uint32_t key;   /* 0: free slot; lkey == rkey */
  int32_t pid;
  uint64_t start;
  uint32_t pd;
  uint32_t access;
  uint64_t addr, length;
} fv_mr_ent_t;

typedef struct {
  uint64_t magic;
  uint32_t version, pad;
  pthread_mutex_t lock; /* robust, process-shared: allocation of slots and LIDs */
  uint32_t next_lid, next_pd;
  uint32_t qp_hint, mr_hint;
  uint16_t qp_gen[FV_FABRIC_QPS];
  uint16_t mr_gen[FV_FABRIC_MRS];
  fv_port_ent_t ports[FV_FABRIC_PORTS];
  fv_qp_ent_t qps[FV_FABRIC_QPS];
  fv_mr_ent_t mrs[FV_FABRIC_MRS];
} fv_fabric_t;

/* ---- rings in a process's region --------------------------------------------------------- */
typedef struct {
  pthread_mutex_t lock; /* robust, process-shared: producers are other processes */
  uint32_t cap;
  _Atomic uint32_t head, tail; /* free-running counters */
  _Atomic uint32_t overrun;
  uint32_t pad;
  struct ibv_wc e[];
} fv_cqring_t;

typedef struct {
  uint64_t wr_id;
  uint32_t nsge, pad;
  struct ibv_sge sge[FV_MAX_SGE];
} fv_rwqe_t;

typedef struct {
  pthread_mutex_t lock;
  uint32_t cap, max_sge;
  _Atomic uint32_t head, tail;
  uint64_t cq_off;  /* the CQ that flushed entries go to (per-QP rings) */
  fv_rwqe_t e[];
} fv_rqring_t;

/* ---- this process's objects (struct ibv_* first, so verbs' pointers are ours) ------------- */
typedef struct {
  struct ibv_device dev;
  int index;
  int nports;
  char port_state[FV_MAX_PORTS]; /* from sysfs: 'A'ctive, 'D'own, 'I'nit */
  char link_layer[FV_MAX_PORTS];
  struct ibv_device_attr attr;
  char fw_ver[64];
  uint64_t guid;
} fv_device_t;

typedef struct fv_qp fv_qp_t;

typedef struct {
  struct ibv_context ctx;
  fv_device_t *fdev;
  pthread_mutex_t lock; /* this context's send engines and object lists */
  uint32_t lid[FV_MAX_PORTS + 1];
  fv_qp_t *qps;         /* every live QP of the context (the engines to run) */
  _Atomic int pending;  /* work requests queued in all of them: idle polls skip the engines */
} fv_context_t;

typedef struct {
  struct ibv_pd pd;
  uint32_t id;
} fv_pd_t;

typedef struct {
  struct ibv_cq cq;
  fv_cqring_t *ring;
  uint64_t off;
} fv_cq_t;

typedef struct {
  struct ibv_srq srq;
  fv_rqring_t *ring;
  uint64_t off;
  struct ibv_srq_attr attr;
} fv_srq_t;

typedef struct {
  struct ibv_ah ah;
  struct ibv_ah_attr attr;
} fv_ah_t;

/* One work request waiting in (or at the head of) a send queue. */
typedef struct {
  uint64_t wr_id;
  enum ibv_wr_opcode opcode;
  unsigned flags;
  uint32_t imm;
  int nsge;
  struct ibv_sge sge[FV_MAX_SGE];
  uint32_t inline_len;
  uint8_t inline_data[FV_MAX_INLINE];
  uint64_t remote_addr;
  uint32_t rkey;
  uint32_t ud_dlid, ud_qpn, ud_qkey;
  double first_try, next_try;
  int rnr_tries;
} fv_swqe_t;

struct fv_qp {
  struct ibv_qp qp;
  fv_qp_t *next;
  int slot;              /* in the fabric's directory */
  fv_qp_ent_t *ent;
  fv_cq_t *scq, *rcq;
  fv_srq_t *srq;
  fv_rqring_t *rq;       /* own ring, when no SRQ */
  uint64_t rq_off;
  struct ibv_qp_cap cap;
  bool sq_sig_all;
  uint8_t port;
  uint32_t timeout, retry_cnt, rnr_retry, path_mtu;
  fv_swqe_t *sq;         /* ring of cap.max_send_wr entries */
  uint32_t sq_head, sq_count;
};

/* ---- shared helpers ----------------------------------------------------------------------- */
extern fv_fabric_t *fv_fabric; /* NULL: no subnet manager */
void fv_fabric_attach(void);
bool fv_alive(int32_t pid, uint64_t start);
uint64_t fv_self_start(void);
double fv_now(void);
void fv_lock(pthread_mutex_t *m);
void fv_unlock(pthread_mutex_t *m);
void fv_shared_mutex_init(pthread_mutex_t *m);

/* LID of (this host, dev, port): assigned once by the fabric; 0 without one. */
uint32_t fv_port_lid(const char *dev, int port);
int fv_qp_slot_alloc(void);
fv_qp_ent_t *fv_qp_lookup(uint32_t qpn);
void fv_qp_slot_free(int slot);
uint32_t fv_pd_new(void);
uint32_t fv_mr_new(uint32_t pd, uint32_t access, uint64_t addr, uint64_t length);
fv_mr_ent_t *fv_mr_lookup(uint32_t key);
void fv_mr_free(uint32_t key);
/* Whether [addr, addr+len) of process (pid, start) lies in an MR with these access rights. */
bool fv_mr_check(uint32_t key, int32_t pid, uint64_t start, uint32_t pd, uint32_t need,
                 uint64_t addr, uint64_t len);

/* This process's region, and other processes' (mapped on first use, cached). */
void *fv_region_alloc(size_t bytes, uint64_t *off);
void fv_region_free(uint64_t off);
int fv_region_fd(void);
void *fv_region_of(int32_t pid, uint64_t start, int32_t fd);

void fv_cq_push(fv_cqring_t *ring, const struct ibv_wc *wc);
fv_rqring_t *fv_rq_new(uint32_t cap, uint32_t max_sge, uint64_t cq_off, uint64_t *off);
/* Takes the oldest receive request; false when none is posted. */
bool fv_rq_take(fv_rqring_t *rq, fv_rwqe_t *out);
int fv_rq_post(fv_rqring_t *rq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad, uint32_t pd);
/* Every posted receive completes with IBV_WC_WR_FLUSH_ERR in cq. */
void fv_rq_flush(fv_rqring_t *rq, fv_cqring_t *cq, uint32_t qpn);

/* The send engines: run every QP's queue of this context as far as it goes. */
void fv_progress(fv_context_t *c);
void fv_qp_set_error(fv_qp_t *q);

/* Devices (from FAKEVERBS_SYSFS). */
int fv_devices(fv_device_t **out);
const char *fv_sysfs_root(void);

extern const struct ibv_context_ops fv_ops;

#endif
