/* raw_ofi.h: the physical baselines of the ofi conduit, measured between ranks 0 and 1 of the
 * same job on an endpoint of their own, with the same provider (GASNET_OFI_PROVIDER, else
 * libfabric's first) and no GASNet code on the path: a ping-pong of 8-byte injected messages
 * into posted receives (raw_ofi_rtt, what fi_pingpong measures), a flood of injected 8-byte
 * messages into a multi-receive buffer (raw_ofi_inject_flood, per message) and a stream of
 * 1 MiB RMA writes (raw_ofi_write_stream). The conduit's figures are read as ratios to these,
 * taken in the same run. Built for the ofi conduit only (it links libfabric). */
#ifndef RAW_OFI_H
#define RAW_OFI_H

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <string.h>

#include "bench_util.h"

typedef struct {
  struct fi_info *info;
  struct fid_fabric *fabric;
  struct fid_domain *domain;
  struct fid_ep *ep;
  struct fid_cq *cq;
  struct fid_av *av;
  struct fid_mr *mr;
  fi_addr_t peer;
  uint8_t *target;        /* 1 MiB the peer writes into, registered */
  uint64_t peer_base, peer_key;
  uint8_t rbuf[1 << 20];  /* multi-receive buffer */
  int virt;
} raw_ofi_t;

typedef struct {
  uint8_t name[248];
  uint64_t namelen, base, key;
} raw_ofi_card_t;

#define RAW_OFI_CHECK(call)                                                         \
  do {                                                                              \
    int rc_ = (int)(call);                                                          \
    if (rc_) {                                                                      \
      fprintf(stderr, "raw_ofi: %s: %s\n", #call, fi_strerror(rc_ < 0 ? -rc_ : rc_)); \
      gasnet_exit(1);                                                               \
    }                                                                               \
  } while (0)

static inline void raw_ofi_wait(raw_ofi_t *o, int n) {
  struct fi_cq_data_entry e[16];
  while (n > 0) {
    ssize_t got = fi_cq_read(o->cq, e, n < 16 ? n : 16);
    if (got > 0) n -= (int)got;
    else if (got != -FI_EAGAIN) RAW_OFI_CHECK(got);
  }
}

static inline void raw_ofi_post_recv(raw_ofi_t *o) {
  struct iovec iov = {o->rbuf, sizeof o->rbuf};
  struct fi_msg msg = {.msg_iov = &iov, .iov_count = 1, .addr = FI_ADDR_UNSPEC};
  RAW_OFI_CHECK(fi_recvmsg(o->ep, &msg, FI_MULTI_RECV));
}

/* Collective: ranks 0 and 1 open endpoints and learn each other's address and target buffer
 * through their segments (offset off of each is scratch). Returns whether this rank takes
 * part. */
static inline int raw_ofi_open(raw_ofi_t *o, gasnet_seginfo_t *seg, size_t off) {
  int me = (int)gasnet_mynode();
  if (me > 1) {
    for (int i = 0; i < 2; i++) {
      gasnet_barrier_notify(0, GASNET_BARRIERFLAG_ANONYMOUS);
      gasnet_barrier_wait(0, GASNET_BARRIERFLAG_ANONYMOUS);
    }
    return 0;
  }
  struct fi_info *hints = fi_allocinfo();
  hints->ep_attr->type = FI_EP_RDM;
  hints->caps = FI_MSG | FI_RMA | FI_MULTI_RECV;
  hints->mode = FI_CONTEXT | FI_CONTEXT2;
  hints->domain_attr->mr_mode = FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
  const char *prov = getenv("GASNET_OFI_PROVIDER");
  if (prov && *prov) hints->fabric_attr->prov_name = strdup(prov);
  RAW_OFI_CHECK(fi_getinfo(FI_VERSION(1, 9), NULL, NULL, 0, hints, &o->info));
  fi_freeinfo(hints);
  o->virt = !!(o->info->domain_attr->mr_mode & FI_MR_VIRT_ADDR);
  RAW_OFI_CHECK(fi_fabric(o->info->fabric_attr, &o->fabric, NULL));
  RAW_OFI_CHECK(fi_domain(o->fabric, o->info, &o->domain, NULL));
  struct fi_cq_attr cqa = {.format = FI_CQ_FORMAT_DATA, .size = 4096};
  RAW_OFI_CHECK(fi_cq_open(o->domain, &cqa, &o->cq, NULL));
  struct fi_av_attr ava = {.type = FI_AV_TABLE};
  RAW_OFI_CHECK(fi_av_open(o->domain, &ava, &o->av, NULL));
  RAW_OFI_CHECK(fi_endpoint(o->domain, o->info, &o->ep, NULL));
  RAW_OFI_CHECK(fi_ep_bind(o->ep, &o->cq->fid, FI_TRANSMIT | FI_RECV));
  RAW_OFI_CHECK(fi_ep_bind(o->ep, &o->av->fid, 0));
  RAW_OFI_CHECK(fi_enable(o->ep));
  size_t min = 64;
  RAW_OFI_CHECK(fi_setopt(&o->ep->fid, FI_OPT_ENDPOINT, FI_OPT_MIN_MULTI_RECV, &min, sizeof min));
  o->target = aligned_alloc(4096, 1 << 20);
  RAW_OFI_CHECK(fi_mr_reg(o->domain, o->target, 1 << 20, FI_REMOTE_WRITE, 0, 7 + (uint64_t)me,
                          0, &o->mr, NULL));
  raw_ofi_card_t mine = {.namelen = sizeof mine.name, .base = (uint64_t)(uintptr_t)o->target,
                         .key = fi_mr_key(o->mr)}, theirs;
  size_t len = sizeof mine.name;
  RAW_OFI_CHECK(fi_getname(&o->ep->fid, mine.name, &len));
  mine.namelen = len;
  memcpy((char *)seg[me].addr + off, &mine, sizeof mine);
  gasnet_barrier_notify(0, GASNET_BARRIERFLAG_ANONYMOUS);
  gasnet_barrier_wait(0, GASNET_BARRIERFLAG_ANONYMOUS);
  gasnet_get(&theirs, (gasnet_node_t)(1 - me), (char *)seg[1 - me].addr + off, sizeof theirs);
  gasnet_barrier_notify(0, GASNET_BARRIERFLAG_ANONYMOUS);
  gasnet_barrier_wait(0, GASNET_BARRIERFLAG_ANONYMOUS);
  if (fi_av_insert(o->av, theirs.name, 1, &o->peer, 0, NULL) != 1) {
    fprintf(stderr, "raw_ofi: cannot insert the peer's address\n");
    gasnet_exit(1);
  }
  o->peer_base = theirs.base, o->peer_key = theirs.key;
  raw_ofi_post_recv(o);
  return 1;
}

/* One message in (busy-polled), its buffer reposted once the provider released it. */
static inline void raw_ofi_recv(raw_ofi_t *o) {
  struct fi_cq_data_entry e;
  for (;;) {
    ssize_t got = fi_cq_read(o->cq, &e, 1);
    if (got == 1) {
      if (e.flags & FI_MULTI_RECV) raw_ofi_post_recv(o);
      if ((e.flags & FI_RECV) && e.len) return;
    } else if (got != -FI_EAGAIN) {
      RAW_OFI_CHECK(got);
    }
  }
}

static inline void raw_ofi_inject(raw_ofi_t *o, const void *buf, size_t n) {
  ssize_t rc;
  while ((rc = fi_inject(o->ep, buf, n, o->peer)) == -FI_EAGAIN) {
    struct fi_cq_data_entry e;
    if (fi_cq_read(o->cq, &e, 1) == 1 && (e.flags & FI_MULTI_RECV)) raw_ofi_post_recv(o);
  }
  RAW_OFI_CHECK(rc);
}

static inline void raw_ofi_rtt_bench(raw_ofi_t *o, long iters) {
  char buf[8] = {0};
  double samples[64];
  for (int r = -1; r < repeats; r++) {
    double t0 = now_us();
    for (long i = 0; i < iters; i++) {
      if (gasnet_mynode() == 0) {
        raw_ofi_inject(o, buf, sizeof buf);
        raw_ofi_recv(o);
      } else {
        raw_ofi_recv(o);
        raw_ofi_inject(o, buf, sizeof buf);
      }
    }
    if (r >= 0) samples[r] = (now_us() - t0) / (double)iters;
  }
  if (gasnet_mynode() == 0) bench_report("raw_ofi_rtt", "raw", 8, "us", samples, iters);
}

/* One repeat of the inject flood: rank 0 injects iters 8-byte messages, rank 1 counts them and
 * answers once. Returns microseconds per message (as each rank saw it). */
static inline double raw_ofi_flood_once(raw_ofi_t *o, long iters) {
  char buf[8] = {0};
  double t0 = now_us();
  if (gasnet_mynode() == 0) {
    for (long i = 0; i < iters; i++) raw_ofi_inject(o, buf, sizeof buf);
    raw_ofi_recv(o);
  } else {
    for (long i = 0; i < iters; i++) raw_ofi_recv(o);
    raw_ofi_inject(o, buf, sizeof buf);
  }
  return (now_us() - t0) / (double)iters;
}

static inline void raw_ofi_flood_bench(raw_ofi_t *o, long iters) {
  double samples[64];
  for (int r = -1; r < repeats; r++) {
    double us = raw_ofi_flood_once(o, iters);
    if (r >= 0) samples[r] = us;
  }
  if (gasnet_mynode() == 0) bench_report("raw_ofi_inject_flood", "raw", 8, "us", samples, iters);
}

/* Rank 0 writes size bytes into rank 1's target iters times, waits for the writes, and tells
 * rank 1, which answers: a stream of RMA writes, acknowledged per repeat. */
static inline void raw_ofi_write_bench(raw_ofi_t *o, char *buf, size_t size, long iters) {
  double samples[64];
  char ack[8] = {0};
  for (int r = -1; r < repeats; r++) {
    double t0 = now_us();
    if (gasnet_mynode() == 0) {
      uint64_t addr = o->virt ? o->peer_base : 0;
      int posted = 0;
      for (long i = 0; i < iters; i++) {
        ssize_t rc;
        while ((rc = fi_write(o->ep, buf, size, NULL, o->peer, addr, o->peer_key, NULL)) ==
               -FI_EAGAIN) {
          struct fi_cq_data_entry e;
          if (fi_cq_read(o->cq, &e, 1) == 1) posted--;
        }
        RAW_OFI_CHECK(rc);
        posted++;
      }
      raw_ofi_wait(o, posted);
      raw_ofi_inject(o, ack, sizeof ack);
      raw_ofi_recv(o);
    } else {
      raw_ofi_recv(o);
      raw_ofi_inject(o, ack, sizeof ack);
    }
    if (r >= 0) samples[r] = (now_us() - t0) / (double)iters;
  }
  if (gasnet_mynode() == 0)
    bench_report("raw_ofi_write_stream", "raw", size, "GiB/s", samples, iters);
}

static inline void raw_ofi_close(raw_ofi_t *o) {
  fi_close(&o->mr->fid);
  fi_close(&o->ep->fid);
  fi_close(&o->av->fid);
  fi_close(&o->cq->fid);
  fi_close(&o->domain->fid);
  fi_close(&o->fabric->fid);
  fi_freeinfo(o->info);
  free(o->target);
}

#endif
