/* fv_hostile.c: a local process on the fake fabric that is not part of a job and sends a
 * running rank's UD queue pair well-formed connection datagrams claiming to come from another
 * rank of the job (whose id it read from the rank's environment): an exit notice with code 0,
 * and "that rank finished". A rank must ignore both (the HCA tells the real sender's queue
 * pair and port). Usage: fv_hostile PID (of a rank); prints what it sent. */
#include <fcntl.h>
#include <infiniband/verbs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fv_internal.h"

/* The handshake datagram as csrc/conduits/ibv/ibv_conn.c lays it out (its wire format). */
typedef struct {
  uint32_t magic, tag;
  uint8_t type, nrails;
  uint16_t pad;
  uint32_t src;
  int32_t code;
  uint32_t qpn[8];
} ud_msg_t;

static uint32_t job_tag_of(int pid) {
  char path[64], env[65536];
  snprintf(path, sizeof path, "/proc/%d/environ", pid);
  int fd = open(path, O_RDONLY);
  ssize_t n = fd >= 0 ? read(fd, env, sizeof env - 1) : -1;
  if (fd >= 0) close(fd);
  if (n <= 0) return 0;
  env[n] = 0;
  for (char *p = env; p < env + n; p += strlen(p) + 1)
    if (!strncmp(p, "GASNETRUN_JOBID=", 16)) {
      uint32_t h = 2166136261u; /* as the conduit hashes it */
      for (const char *c = p + 16; *c; c++) h = (h ^ (uint8_t)*c) * 16777619u;
      return h;
    }
  return 0;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: fv_hostile PID\n");
    return 2;
  }
  int pid = atoi(argv[1]);
  uint32_t tag = job_tag_of(pid);
  fv_fabric_attach();
  if (!tag || !fv_fabric) {
    fprintf(stderr, "fv_hostile: no job id for pid %d, or no fabric\n", pid);
    return 1;
  }
  fv_qp_ent_t *target = NULL;
  for (int i = 1; i < FV_FABRIC_QPS && !target; i++) {
    fv_qp_ent_t *e = &fv_fabric->qps[i];
    if (atomic_load(&e->qpn) && e->pid == pid && e->type == IBV_QPT_UD) target = e;
  }
  if (!target) {
    fprintf(stderr, "fv_hostile: pid %d has no UD queue pair\n", pid);
    return 1;
  }
  struct ibv_device **list = ibv_get_device_list(NULL);
  struct ibv_context *ctx = list && list[0] ? ibv_open_device(list[0]) : NULL;
  struct ibv_pd *pd = ctx ? ibv_alloc_pd(ctx) : NULL;
  struct ibv_cq *cq = pd ? ibv_create_cq(ctx, 16, NULL, NULL, 0) : NULL;
  struct ibv_qp_init_attr init = {.send_cq = cq, .recv_cq = cq,
                                  .cap = {.max_send_wr = 4, .max_recv_wr = 1, .max_send_sge = 1,
                                          .max_recv_sge = 1, .max_inline_data = 64},
                                  .qp_type = IBV_QPT_UD};
  struct ibv_qp *qp = cq ? ibv_create_qp(pd, &init) : NULL;
  struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = 1};
  if (!qp || ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY))
    return 1;
  a.qp_state = IBV_QPS_RTR;
  ibv_modify_qp(qp, &a, IBV_QP_STATE);
  a.qp_state = IBV_QPS_RTS;
  ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
  struct ibv_ah_attr aa = {.dlid = (uint16_t)target->lid, .port_num = 1};
  struct ibv_ah *ah = ibv_create_ah(pd, &aa);
  const int types[] = {5 /* exit */, 6 /* finished */};
  for (int i = 0; i < 2; i++) {
    ud_msg_t m = {.magic = 0x56424947u, .tag = tag, .type = (uint8_t)types[i], .nrails = 1,
                  .src = 0, .code = 0};
    struct ibv_sge sge = {(uint64_t)(uintptr_t)&m, sizeof m, 0};
    struct ibv_send_wr wr = {.sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
                             .send_flags = IBV_SEND_INLINE | IBV_SEND_SIGNALED}, *bad;
    wr.wr.ud.ah = ah;
    wr.wr.ud.remote_qpn = atomic_load(&target->qpn);
    wr.wr.ud.remote_qkey = target->qkey;
    if (ibv_post_send(qp, &wr, &bad)) return 1;
    struct ibv_wc wc;
    while (ibv_poll_cq(cq, 1, &wc) == 0) continue;
    printf("fv_hostile: sent a forged %s datagram \"from rank 0\" to pid %d\n",
           i ? "finished" : "exit", pid);
  }
  return 0;
}
