/* fv_selftest.c: checks fakeverbs against the verbs specification with two processes (a
 * parent and a forked child, each with its own device context): RC send/receive, RDMA write and
 * read, in-order completions, RNR wait and RNR retry exhaustion, remote access errors and
 * flushing, receive length errors, a peer that died (retry exceeded), UD with its GRH space and
 * silent drops, a shared receive queue, and the state machine's checks.
 * Run with FAKEVERBS_SYSFS and FAKEVERBS_FABRIC set; prints "selftest: N checks passed". */
#include <errno.h>
#include <infiniband/verbs.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int checks;
static const char *who = "parent";
#define CHECK(cond, ...)                                              \
  do {                                                                \
    if (!(cond)) {                                                    \
      fprintf(stderr, "selftest (%s) line %d: ", who, __LINE__);      \
      fprintf(stderr, __VA_ARGS__);                                   \
      fprintf(stderr, "\n");                                          \
      exit(1);                                                        \
    }                                                                 \
    checks++;                                                         \
  } while (0)

typedef struct {
  struct ibv_context *ctx;
  struct ibv_pd *pd;
  struct ibv_cq *scq, *rcq;
  uint16_t lid;
  uint8_t *buf;
  struct ibv_mr *mr;
} node_t;

typedef struct {
  uint32_t qpn[8];
  uint16_t lid;
  uint64_t addr;
  uint32_t rkey;
} card_t;

enum { BUF = 1 << 20 };
static int sock;

static void send_card(const card_t *c) {
  if (write(sock, c, sizeof *c) != sizeof *c) exit(3);
}
static void recv_card(card_t *c) {
  if (read(sock, c, sizeof *c) != sizeof *c) exit(3);
}
static void sync_peer(void) {
  char b = 0;
  if (write(sock, &b, 1) != 1 || read(sock, &b, 1) != 1) exit(3);
}

static void open_node(node_t *n) {
  int num;
  struct ibv_device **list = ibv_get_device_list(&num);
  CHECK(list && num >= 1, "no device (FAKEVERBS_SYSFS?)");
  n->ctx = ibv_open_device(list[0]);
  ibv_free_device_list(list);
  struct ibv_port_attr pa;
  CHECK(ibv_query_port(n->ctx, 1, &pa) == 0 && pa.state == IBV_PORT_ACTIVE, "port 1 not active");
  n->lid = pa.lid;
  n->pd = ibv_alloc_pd(n->ctx);
  n->scq = ibv_create_cq(n->ctx, 4096, NULL, NULL, 0);
  n->rcq = ibv_create_cq(n->ctx, 4096, NULL, NULL, 0);
  n->buf = aligned_alloc(4096, BUF);
  memset(n->buf, 0, BUF);
  n->mr = ibv_reg_mr(n->pd, n->buf, BUF,
                     IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
  CHECK(n->pd && n->scq && n->rcq && n->mr, "resources: %s", strerror(errno));
}

static struct ibv_qp *rc_qp(node_t *n, struct ibv_srq *srq, int depth) {
  struct ibv_qp_init_attr a = {.send_cq = n->scq, .recv_cq = n->rcq, .srq = srq,
                               .cap = {.max_send_wr = (uint32_t)depth,
                                       .max_recv_wr = srq ? 0 : (uint32_t)depth,
                                       .max_send_sge = 2, .max_recv_sge = 2,
                                       .max_inline_data = 64},
                               .qp_type = IBV_QPT_RC};
  struct ibv_qp *qp = ibv_create_qp(n->pd, &a);
  CHECK(qp, "create_qp: %s", strerror(errno));
  struct ibv_qp_attr m = {.qp_state = IBV_QPS_INIT, .port_num = 1,
                          .qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ};
  /* Leaving out a required attribute is refused. */
  CHECK(ibv_modify_qp(qp, &m, IBV_QP_STATE | IBV_QP_PORT) == EINVAL, "INIT without pkey taken");
  CHECK(ibv_modify_qp(qp, &m, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
                                  IBV_QP_ACCESS_FLAGS) == 0, "to INIT");
  return qp;
}

static void rc_connect(struct ibv_qp *qp, uint32_t qpn, uint16_t lid, int rnr_retry,
                       int timeout) {
  struct ibv_qp_attr m = {.qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_4096, .dest_qp_num = qpn,
                          .rq_psn = 0, .max_dest_rd_atomic = 1, .min_rnr_timer = 1,
                          .ah_attr = {.dlid = lid, .port_num = 1}};
  CHECK(ibv_modify_qp(qp, &m, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
                                  IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
                                  IBV_QP_MIN_RNR_TIMER) == 0, "to RTR");
  m = (struct ibv_qp_attr){.qp_state = IBV_QPS_RTS, .timeout = (uint8_t)timeout, .retry_cnt = 1,
                           .rnr_retry = (uint8_t)rnr_retry, .sq_psn = 0, .max_rd_atomic = 1};
  CHECK(ibv_modify_qp(qp, &m, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
                                  IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC) == 0,
        "to RTS");
}

static void post_recv(struct ibv_qp *qp, node_t *n, size_t off, uint32_t len, uint64_t id) {
  struct ibv_sge s = {(uint64_t)(uintptr_t)(n->buf + off), len, n->mr->lkey};
  struct ibv_recv_wr w = {.wr_id = id, .sg_list = &s, .num_sge = 1}, *bad;
  CHECK(ibv_post_recv(qp, &w, &bad) == 0, "post_recv");
}

static int post(struct ibv_qp *qp, node_t *n, enum ibv_wr_opcode op, size_t off, uint32_t len,
                uint64_t raddr, uint32_t rkey, uint64_t id, unsigned flags) {
  struct ibv_sge s = {(uint64_t)(uintptr_t)(n->buf + off), len, n->mr->lkey};
  struct ibv_send_wr w = {.wr_id = id, .sg_list = &s, .num_sge = 1, .opcode = op,
                          .send_flags = IBV_SEND_SIGNALED | flags}, *bad;
  w.wr.rdma.remote_addr = raddr;
  w.wr.rdma.rkey = rkey;
  return ibv_post_send(qp, &w, &bad);
}

static struct ibv_wc wait_cq(struct ibv_cq *cq, double seconds) {
  struct ibv_wc wc;
  struct timespec t0, t;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (;;) {
    int n = ibv_poll_cq(cq, 1, &wc);
    CHECK(n >= 0, "poll_cq error");
    if (n == 1) return wc;
    clock_gettime(CLOCK_MONOTONIC, &t);
    CHECK((double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) * 1e-9 < seconds,
          "no completion within %g s", seconds);
  }
}

static bool quiet(struct ibv_cq *cq, double seconds) {
  struct timespec t0, t;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  struct ibv_wc wc;
  do {
    if (ibv_poll_cq(cq, 1, &wc) != 0) return false;
    clock_gettime(CLOCK_MONOTONIC, &t);
  } while ((double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) * 1e-9 < seconds);
  return true;
}

/* Both sides run this; role 0 is the parent (requester in most steps). */
static void run(int role) {
  node_t n;
  open_node(&n);
  enum { NQP = 5 };
  struct ibv_srq_init_attr sa = {.attr = {.max_wr = 64, .max_sge = 1}};
  struct ibv_srq *srq = ibv_create_srq(n.pd, &sa);
  CHECK(srq, "create_srq");
  struct ibv_qp *qp[NQP];
  for (int i = 0; i < NQP; i++) qp[i] = rc_qp(&n, i == 3 ? srq : NULL, 1024);
  /* Posting a send before RTS is refused. */
  CHECK(post(qp[0], &n, IBV_WR_SEND, 0, 8, 0, 0, 1, 0) == EINVAL, "send in INIT taken");
  card_t mine = {.lid = n.lid, .addr = (uint64_t)(uintptr_t)n.buf, .rkey = n.mr->rkey}, peer;
  for (int i = 0; i < NQP; i++) mine.qpn[i] = qp[i]->qp_num;
  send_card(&mine);
  recv_card(&peer);
  for (int i = 0; i < NQP; i++) rc_connect(qp[i], peer.qpn[i], peer.lid, i == 1 ? 0 : 7, 10);

  /* 1. send/receive in order, completions as specified. */
  if (role == 1) {
    for (int i = 0; i < 100; i++) post_recv(qp[0], &n, (size_t)i * 64, 64, 1000 + (uint64_t)i);
    sync_peer();
    for (int i = 0; i < 100; i++) {
      struct ibv_wc wc = wait_cq(n.rcq, 5);
      CHECK(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV, "recv %d status %d", i,
            wc.status);
      CHECK(wc.wr_id == 1000 + (uint64_t)i && wc.byte_len == 8 && wc.qp_num == qp[0]->qp_num &&
            wc.src_qp == peer.qpn[0] && wc.slid == peer.lid, "recv %d fields", i);
      uint64_t v;
      memcpy(&v, n.buf + (size_t)i * 64, 8);
      CHECK(v == (uint64_t)i * 7, "recv %d payload %llu", i, (unsigned long long)v);
    }
  } else {
    sync_peer();
    for (int i = 0; i < 100; i++) {
      uint64_t v = (uint64_t)i * 7;
      memcpy(n.buf + 8192 + (size_t)i * 8, &v, 8);
      CHECK(post(qp[0], &n, IBV_WR_SEND, 8192 + (size_t)i * 8, 8, 0, 0, (uint64_t)i,
                 i % 2 ? IBV_SEND_INLINE : 0) == 0, "post send");
    }
    for (int i = 0; i < 100; i++) {
      struct ibv_wc wc = wait_cq(n.scq, 5);
      CHECK(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_SEND && wc.wr_id == (uint64_t)i,
            "send completion %d", i);
    }
  }
  sync_peer();

  /* 2. RDMA write then read back; a write's data is in place when a later send arrives. */
  if (role == 0) {
    memset(n.buf + 65536, 0xab, 100000);
    CHECK(post(qp[2], &n, IBV_WR_RDMA_WRITE, 65536, 100000, peer.addr + 300000, peer.rkey, 7, 0)
          == 0, "post write");
    CHECK(post(qp[2], &n, IBV_WR_SEND, 0, 4, 0, 0, 8, 0) == 0, "post send after write");
    struct ibv_wc wc = wait_cq(n.scq, 5);
    CHECK(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RDMA_WRITE && wc.wr_id == 7, "write");
    wc = wait_cq(n.scq, 5);
    CHECK(wc.status == IBV_WC_SUCCESS && wc.wr_id == 8, "send after write");
    CHECK(post(qp[2], &n, IBV_WR_RDMA_READ, 500000, 100000, peer.addr + 300000, peer.rkey, 9, 0)
          == 0, "post read");
    wc = wait_cq(n.scq, 5);
    CHECK(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RDMA_READ && wc.byte_len == 100000,
          "read");
    CHECK(!memcmp(n.buf + 500000, n.buf + 65536, 100000), "read back differs");
  } else {
    post_recv(qp[2], &n, 0, 64, 77);
    struct ibv_wc wc = wait_cq(n.rcq, 5);
    CHECK(wc.status == IBV_WC_SUCCESS && wc.wr_id == 77, "send after write arrived");
    for (int i = 0; i < 100000; i++) CHECK(n.buf[300000 + i] == 0xab, "write byte %d missing", i);
  }
  sync_peer();

  /* 3. RNR: a send waits for its receive (rnr_retry 7); with rnr_retry 0 it fails. */
  if (role == 0) {
    CHECK(post(qp[0], &n, IBV_WR_SEND, 0, 16, 0, 0, 31, 0) == 0, "post rnr send");
    CHECK(quiet(n.scq, 0.2), "send completed without a receive");
    sync_peer(); /* the child posts now */
    struct ibv_wc wc = wait_cq(n.scq, 5);
    CHECK(wc.status == IBV_WC_SUCCESS && wc.wr_id == 31, "rnr send after the receive");
    CHECK(post(qp[1], &n, IBV_WR_SEND, 0, 16, 0, 0, 32, 0) == 0, "post on rnr_retry 0");
    wc = wait_cq(n.scq, 5);
    CHECK(wc.status == IBV_WC_RNR_RETRY_EXC_ERR && wc.wr_id == 32, "rnr exhausted: %s",
          ibv_wc_status_str(wc.status));
    CHECK(post(qp[1], &n, IBV_WR_SEND, 0, 16, 0, 0, 33, 0) == 0, "post in error state");
    wc = wait_cq(n.scq, 5);
    CHECK(wc.status == IBV_WC_WR_FLUSH_ERR && wc.wr_id == 33, "flush after error");
  } else {
    sync_peer();
    post_recv(qp[0], &n, 0, 64, 41);
    struct ibv_wc wc = wait_cq(n.rcq, 5);
    CHECK(wc.status == IBV_WC_SUCCESS && wc.wr_id == 41, "rnr receive");
  }
  sync_peer();

  /* 4. A bad rkey: remote access error; later requests flush. A write to read-only memory. */
  if (role == 0) {
    CHECK(post(qp[4], &n, IBV_WR_RDMA_WRITE, 0, 64, peer.addr, peer.rkey ^ 0x5a5a, 51, 0) == 0,
          "post bad rkey");
    CHECK(post(qp[4], &n, IBV_WR_RDMA_WRITE, 0, 64, peer.addr, peer.rkey, 52, 0) == 0, "post");
    struct ibv_wc wc = wait_cq(n.scq, 5);
    CHECK(wc.status == IBV_WC_REM_ACCESS_ERR && wc.wr_id == 51, "bad rkey: %s",
          ibv_wc_status_str(wc.status));
    wc = wait_cq(n.scq, 5);
    CHECK(wc.status == IBV_WC_WR_FLUSH_ERR && wc.wr_id == 52, "flushed after it");
    struct ibv_qp_attr qa;
    struct ibv_qp_init_attr qi;
    CHECK(ibv_query_qp(qp[4], &qa, IBV_QP_STATE, &qi) == 0 && qa.qp_state == IBV_QPS_ERR,
          "qp not in error");
    /* Out of bounds of a valid region: also a remote access error. */
    CHECK(post(qp[2], &n, IBV_WR_RDMA_READ, 0, 64, peer.addr + BUF - 32, peer.rkey, 53, 0) == 0,
          "post oob");
    wc = wait_cq(n.scq, 5);
    CHECK(wc.status == IBV_WC_REM_ACCESS_ERR, "read past the region: %s",
          ibv_wc_status_str(wc.status));
  }
  sync_peer();

  /* 5. A receive too small: local length error there, remote invalid request here. */
  if (role == 1) {
    post_recv(qp[0], &n, 0, 8, 61); /* qp[0] is still connected and healthy */
    sync_peer();
    struct ibv_wc wc = wait_cq(n.rcq, 5);
    CHECK(wc.status == IBV_WC_LOC_LEN_ERR && wc.wr_id == 61, "short receive: %s",
          ibv_wc_status_str(wc.status));
  } else {
    sync_peer();
    CHECK(post(qp[0], &n, IBV_WR_SEND, 0, 100, 0, 0, 62, 0) == 0, "post long send");
    struct ibv_wc wc = wait_cq(n.scq, 5);
    CHECK(wc.status == IBV_WC_REM_INV_REQ_ERR, "long send: %s", ibv_wc_status_str(wc.status));
  }
  sync_peer();

  /* 6. A shared receive queue feeds its QP. */
  if (role == 1) {
    struct ibv_sge s = {(uint64_t)(uintptr_t)n.buf, 64, n.mr->lkey};
    struct ibv_recv_wr w = {.wr_id = 71, .sg_list = &s, .num_sge = 1}, *bad;
    CHECK(ibv_post_srq_recv(srq, &w, &bad) == 0, "post srq");
    CHECK(ibv_post_recv(qp[3], &w, &bad) == EINVAL, "post_recv on an SRQ QP taken");
    sync_peer();
    struct ibv_wc wc = wait_cq(n.rcq, 5);
    CHECK(wc.status == IBV_WC_SUCCESS && wc.wr_id == 71 && wc.qp_num == qp[3]->qp_num, "srq recv");
  } else {
    sync_peer();
    CHECK(post(qp[3], &n, IBV_WR_SEND, 0, 32, 0, 0, 72, 0) == 0, "post to srq");
    CHECK(wait_cq(n.scq, 5).status == IBV_WC_SUCCESS, "send to srq");
  }
  sync_peer();

  /* 7. UD: the payload lands after the GRH space; without a receive it is dropped. */
  struct ibv_qp_init_attr ua = {.send_cq = n.scq, .recv_cq = n.rcq,
                                .cap = {.max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 1,
                                        .max_recv_sge = 1},
                                .qp_type = IBV_QPT_UD};
  struct ibv_qp *ud = ibv_create_qp(n.pd, &ua);
  struct ibv_qp_attr m = {.qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = 0x1234};
  CHECK(ud && ibv_modify_qp(ud, &m, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
                                        IBV_QP_QKEY) == 0, "ud init");
  m.qp_state = IBV_QPS_RTR;
  CHECK(ibv_modify_qp(ud, &m, IBV_QP_STATE) == 0, "ud rtr");
  m.qp_state = IBV_QPS_RTS;
  CHECK(ibv_modify_qp(ud, &m, IBV_QP_STATE | IBV_QP_SQ_PSN) == 0, "ud rts");
  mine.qpn[0] = ud->qp_num;
  send_card(&mine);
  recv_card(&peer);
  struct ibv_ah_attr aa = {.dlid = peer.lid, .port_num = 1};
  struct ibv_ah *ah = ibv_create_ah(n.pd, &aa);
  if (role == 1) post_recv(ud, &n, 4096, 200, 81);
  sync_peer();
  if (role == 0) {
    memcpy(n.buf + 100, "datagram", 8);
    struct ibv_sge s = {(uint64_t)(uintptr_t)(n.buf + 100), 8, n.mr->lkey};
    struct ibv_send_wr w = {.wr_id = 82, .sg_list = &s, .num_sge = 1, .opcode = IBV_WR_SEND,
                            .send_flags = IBV_SEND_SIGNALED}, *bad;
    w.wr.ud.ah = ah;
    w.wr.ud.remote_qpn = peer.qpn[0];
    w.wr.ud.remote_qkey = 0x1234;
    CHECK(ibv_post_send(ud, &w, &bad) == 0, "ud send");
    CHECK(wait_cq(n.scq, 5).status == IBV_WC_SUCCESS, "ud send completion");
    w.wr_id = 83; /* nothing posted for this one: lost, but it completes */
    CHECK(ibv_post_send(ud, &w, &bad) == 0, "ud send 2");
    CHECK(wait_cq(n.scq, 5).status == IBV_WC_SUCCESS, "ud send 2 completion");
  } else {
    struct ibv_wc wc = wait_cq(n.rcq, 5);
    CHECK(wc.status == IBV_WC_SUCCESS && wc.byte_len == 8 + 40 && wc.src_qp == peer.qpn[0] &&
          !memcmp(n.buf + 4096 + 40, "datagram", 8), "ud receive");
    CHECK(quiet(n.rcq, 0.1), "a dropped datagram arrived");
  }
  sync_peer();

  /* 8. A peer that died: retry exceeded after timeout x (retry_cnt + 1). */
  if (role == 1) _exit(0); /* the child vanishes without a word */
  int status;
  wait(&status);
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child failed");
  CHECK(post(qp[3], &n, IBV_WR_RDMA_WRITE, 0, 64, peer.addr, peer.rkey, 91, 0) == 0,
        "post to dead peer");
  struct ibv_wc wc = wait_cq(n.scq, 5);
  CHECK(wc.status == IBV_WC_RETRY_EXC_ERR && wc.wr_id == 91, "dead peer: %s",
        ibv_wc_status_str(wc.status));
}

int main(void) {
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) return 3;
  pid_t child = fork();
  if (child == 0) {
    who = "child";
    sock = sv[1];
    close(sv[0]);
    run(1);
    _exit(0);
  }
  sock = sv[0];
  close(sv[1]);
  run(0);
  printf("selftest: %d checks passed\n", checks);
  return 0;
}
