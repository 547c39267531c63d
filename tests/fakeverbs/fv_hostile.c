/* fv_hostile.c: a local process on the fake fabric that is not part of a job and sends a
 * running rank's UD queue pair well-formed connection datagrams (ibv_wire.h, the conduit's own
 * layout) claiming to come from rank 0 of the job (whose id it read from the rank's
 * environment): an exit notice with code 0, and "that rank finished". A rank must ignore both:
 * the HCA tells the real sender's port (LID) and queue pair.
 * Usage: fv_hostile PID RANK0_PID qp|lid, with the pids of a rank and of the job's rank 0:
 * qp sends from rank 0's own port (only the queue pair gives it away), lid from another
 * port. Prints what it sent. */
#include <fcntl.h>
#include <infiniband/verbs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fv_internal.h"
#include "ibv_wire.h"

static uint32_t job_tag_of(int pid) {
  char path[64], env[65536];
  snprintf(path, sizeof path, "/proc/%d/environ", pid);
  int fd = open(path, O_RDONLY);
  ssize_t n = fd >= 0 ? read(fd, env, sizeof env - 1) : -1;
  if (fd >= 0) close(fd);
  if (n <= 0) return 0;
  env[n] = 0;
  for (char *p = env; p < env + n; p += strlen(p) + 1)
    if (!strncmp(p, "GASNETRUN_JOBID=", 16)) return ibv_job_tag(p + 16);
  return 0;
}

int main(int argc, char **argv) {
  if (argc != 4 || (strcmp(argv[3], "qp") && strcmp(argv[3], "lid"))) {
    fprintf(stderr, "usage: fv_hostile PID RANK0_PID qp|lid\n");
    return 2;
  }
  int other_port = !strcmp(argv[3], "lid");
  int pid = atoi(argv[1]), claimed = atoi(argv[2]);
  uint32_t tag = job_tag_of(pid);
  fv_fabric_attach();
  if (!tag || !fv_fabric) {
    fprintf(stderr, "fv_hostile: no job id for pid %d, or no fabric\n", pid);
    return 1;
  }
  fv_qp_ent_t *target = NULL, *rank0 = NULL;
  for (int i = 1; i < FV_FABRIC_QPS; i++) {
    fv_qp_ent_t *e = &fv_fabric->qps[i];
    if (!atomic_load(&e->qpn) || e->type != IBV_QPT_UD) continue;
    if (e->pid == pid) target = e;
    if (e->pid == claimed) rank0 = e;
  }
  if (!target || !rank0) {
    fprintf(stderr, "fv_hostile: pid %d has no UD queue pair\n", target ? claimed : pid);
    return 1;
  }
  /* The port to send from: rank 0's own (its LID), or another one. */
  int ndev = 0;
  struct ibv_device **list = ibv_get_device_list(&ndev);
  struct ibv_device *dev = NULL;
  int port = 0;
  for (int d = 0; d < ndev && !dev; d++)
    for (int p = 1; p <= 2 && !dev; p++) {
      uint32_t lid = fv_port_lid(ibv_get_device_name(list[d]), p);
      if (lid && (lid == rank0->lid) != other_port) dev = list[d], port = p;
    }
  if (!dev) {
    fprintf(stderr, "fv_hostile: no port %s rank 0's LID %u\n",
            other_port ? "other than" : "with", (unsigned)rank0->lid);
    return 1;
  }
  struct ibv_context *ctx = ibv_open_device(dev);
  struct ibv_pd *pd = ctx ? ibv_alloc_pd(ctx) : NULL;
  struct ibv_cq *cq = pd ? ibv_create_cq(ctx, 16, NULL, NULL, 0) : NULL;
  struct ibv_qp_init_attr init = {.send_cq = cq, .recv_cq = cq,
                                  .cap = {.max_send_wr = 4, .max_recv_wr = 1, .max_send_sge = 1,
                                          .max_recv_sge = 1, .max_inline_data = 64},
                                  .qp_type = IBV_QPT_UD};
  struct ibv_qp *qp = cq ? ibv_create_qp(pd, &init) : NULL;
  struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT, .port_num = (uint8_t)port, .qkey = 1};
  if (!qp || ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY))
    return 1;
  a.qp_state = IBV_QPS_RTR;
  ibv_modify_qp(qp, &a, IBV_QP_STATE);
  a.qp_state = IBV_QPS_RTS;
  ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
  struct ibv_ah_attr aa = {.dlid = (uint16_t)target->lid, .port_num = (uint8_t)port};
  struct ibv_ah *ah = ibv_create_ah(pd, &aa);
  const int types[] = {UD_EXIT, UD_FIN};
  for (int i = 0; i < 2; i++) {
    ibv_ud_msg_t m = {.magic = IBV_UD_MAGIC, .tag = tag, .type = (uint8_t)types[i], .nrails = 1,
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
    printf("fv_hostile: sent a forged %s datagram \"from rank 0\" to pid %d from LID %u\n",
           i ? "finished" : "exit", pid, (unsigned)fv_port_lid(ibv_get_device_name(dev), port));
  }
  return 0;
}
