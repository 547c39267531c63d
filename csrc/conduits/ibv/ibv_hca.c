/* ibv_hca.c: which HCA ports this rank uses and opening them. GASNET_IBV_PORTS_<n> applies
 * when the rank's CPUs all lie in socket (or NUMA node, GASNET_IBV_PORTS_TYPE) n, else
 * GASNET_IBV_PORTS; unset, the first active port of every HCA. Each used HCA gets a protection
 * domain, a send and a receive completion queue, and a shared receive queue when the buffer
 * plan says so. */
#include <ctype.h>
#include <dirent.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>

#include "knobs.h"
#include "ibv_plan.h"
#include "ibv_internal.h"
#include "placement.h"

/* ---- the ports ------------------------------------------------------------------------------- */
typedef struct {
  struct ibv_device *dev;
  struct ibv_context *ctx;
} found_t;

static const char *state_name(enum ibv_port_state s) {
  switch (s) {
    case IBV_PORT_ACTIVE: return "ACTIVE";
    case IBV_PORT_DOWN: return "DOWN";
    case IBV_PORT_INIT: return "INIT (no subnet manager?)";
    case IBV_PORT_ARMED: return "ARMED";
    default: return "not usable";
  }
}

/* Lists every port this host has, with its state, for messages. */
static void describe_all(found_t *devs, int ndevs, char *out, size_t len) {
  size_t used = 0;
  out[0] = 0;
  for (int d = 0; d < ndevs; d++) {
    struct ibv_device_attr a;
    if (ibv_query_device(devs[d].ctx, &a) != 0) continue;
    for (int p = 1; p <= a.phys_port_cnt; p++) {
      struct ibv_port_attr pa;
      if (ibv_query_port(devs[d].ctx, (uint8_t)p, &pa) != 0) continue;
      int n = snprintf(out + used, len - used, "%s%s:%d %s", used ? ", " : "",
                       ibv_get_device_name(devs[d].dev), p, state_name(pa.state));
      if (n < 0 || (size_t)n >= len - used) return;
      used += (size_t)n;
    }
  }
}

static int hca_index(struct ibv_context *ctx, const char *name) {
  for (int h = 0; h < ibv.nhcas; h++)
    if (!strcmp(ibv.hca[h].name, name)) return h;
  if (ibv.nhcas == IBV_MAX_HCAS) return -1;
  ibv_hca_t *hca = &ibv.hca[ibv.nhcas];
  hca->ctx = ctx;
  snprintf(hca->name, sizeof hca->name, "%s", name);
  return ibv.nhcas++;
}

/* Adds port p of device d when it is active on InfiniBand; returns whether it did. */
static bool take_port(found_t *d, int p) {
  struct ibv_port_attr pa;
  if (ibv_query_port(d->ctx, (uint8_t)p, &pa) != 0 || pa.state != IBV_PORT_ACTIVE) return false;
  if (pa.link_layer == IBV_LINK_LAYER_ETHERNET) {
    gasneti_warning("ibv: %s port %d is RoCE (Ethernet); this conduit routes by LID on "
                    "InfiniBand only, so it is not used", ibv_get_device_name(d->dev), p);
    return false;
  }
  if (ibv.nports == IBV_MAX_RAILS) return false;
  for (int i = 0; i < ibv.nports; i++)
    if (!strcmp(ibv.hca[ibv.port[i].hca].name, ibv_get_device_name(d->dev)) &&
        ibv.port[i].num == p)
      return false; /* named twice */
  int h = hca_index(d->ctx, ibv_get_device_name(d->dev));
  if (h < 0) return false;
  ibv.port[ibv.nports++] = (ibv_port_t){.hca = h, .num = (uint8_t)p, .lid = pa.lid,
                                        .mtu = pa.active_mtu};
  return true;
}

void ibv_hca_open(void) {
  int ndevs = 0;
  struct ibv_device **list = ibv_get_device_list(&ndevs);
  if (!list || ndevs == 0)
    gasneti_fatalerror("ibv: no RDMA device on host %s (libibverbs lists none: no HCA, or its "
                       "driver is not loaded); run this program built for the udp conduit "
                       "instead", gasneti_hostname);
  found_t devs[16];
  int n = 0;
  for (int i = 0; i < ndevs && n < 16; i++) {
    struct ibv_context *ctx = ibv_open_device(list[i]);
    if (ctx) devs[n++] = (found_t){list[i], ctx};
  }
  /* Which variable applies: the rank's socket (NUMA node) one, else the general one. */
  bool numa = gasneti_knob_enum_is("GASNET_IBV_PORTS_TYPE", "numa");
  int dom = gasneti_cpu_domain(numa);
  char name[64] = "GASNET_IBV_PORTS";
  if (dom >= 0) {
    char per[64];
    snprintf(per, sizeof per, "GASNET_IBV_PORTS_%d", dom);
    if (gasneti_knob_is_set(per)) snprintf(name, sizeof name, "%s", per);
  }
  const char *spec = gasneti_knob_is_set(name) ? gasneti_knob_text(name) : "";
  if (*spec) {
    gasneti_port_entry_t entries[IBV_MAX_RAILS * 2];
    char err[256];
    int ne = gasneti_parse_ports(spec, entries, IBV_MAX_RAILS * 2, err, sizeof err);
    if (ne < 0) gasneti_fatalerror("ibv: %s", err);
    for (int e = 0; e < ne; e++) {
      found_t *d = NULL;
      for (int i = 0; i < n; i++)
        if (!strcmp(ibv_get_device_name(devs[i].dev), entries[e].hca)) d = &devs[i];
      if (!d) {
        gasneti_warning("ibv: %s names HCA '%s', which host %s does not have", name,
                        entries[e].hca, gasneti_hostname);
        continue;
      }
      if (entries[e].nports == 0) { /* the first active port */
        struct ibv_device_attr a;
        if (ibv_query_device(d->ctx, &a) == 0)
          for (int p = 1; p <= a.phys_port_cnt; p++)
            if (take_port(d, p)) break;
      } else {
        for (int k = 0; k < entries[e].nports; k++) take_port(d, entries[e].ports[k]);
      }
    }
  } else {
    for (int i = 0; i < n && ibv.nhcas < IBV_MAX_HCAS; i++) {
      struct ibv_device_attr a;
      if (ibv_query_device(devs[i].ctx, &a) != 0) continue;
      for (int p = 1; p <= a.phys_port_cnt; p++)
        if (take_port(&devs[i], p)) break;
    }
  }
  if (ibv.nports == 0) {
    char all[1024];
    describe_all(devs, n, all, sizeof all);
    gasneti_fatalerror("ibv: no active InfiniBand port to use on host %s%s%s%s (ports: %s)",
                       gasneti_hostname, *spec ? " with " : "", *spec ? name : "",
                       *spec ? "" : " (GASNET_IBV_PORTS unset: the first active port of each HCA)",
                       *all ? all : "none");
  }
  for (int i = 0; i < n; i++) { /* contexts of HCAs not chosen are closed */
    bool used = false;
    for (int h = 0; h < ibv.nhcas; h++) used |= ibv.hca[h].ctx == devs[i].ctx;
    if (!used) ibv_close_device(devs[i].ctx);
  }
  ibv_free_device_list(list);
  for (int h = 0; h < ibv.nhcas; h++) {
    ibv_hca_t *hca = &ibv.hca[h];
    if (ibv_query_device(hca->ctx, &hca->attr) != 0)
      gasneti_fatalerror("ibv: cannot query HCA %s", hca->name);
    hca->pd = ibv_alloc_pd(hca->ctx);
    if (!hca->pd) gasneti_fatalerror("ibv: cannot allocate a protection domain on %s", hca->name);
  }
  if (ibv.verbose) {
    char text[512];
    fprintf(stderr, "ibv: rank %d on %s uses %s (from %s%s)\n", (int)gasneti_mynode,
            gasneti_hostname, ibv_ports_text(text, sizeof text), *spec ? name : "the default",
            dom >= 0 ? "" : "; this rank is not bound to one socket");
  }
}

/* Completion queues and shared receive queues, once the buffer plan is known. */
void ibv_hca_queues(int scq_size, int rcq_size, int srq_size) {
  for (int h = 0; h < ibv.nhcas; h++) {
    ibv_hca_t *hca = &ibv.hca[h];
    int maxcqe = hca->attr.max_cqe;
    if (scq_size > maxcqe || rcq_size > maxcqe)
      gasneti_fatalerror("ibv: %s holds at most %d completions per queue, but this job needs %d "
                         "(GASNET_NETWORKDEPTH_TOTAL, GASNET_RBUF_COUNT): lower them", hca->name,
                         maxcqe, scq_size > rcq_size ? scq_size : rcq_size);
    hca->scq = ibv_create_cq(hca->ctx, scq_size, NULL, NULL, 0);
    hca->rcq = ibv_create_cq(hca->ctx, rcq_size, NULL, NULL, 0);
    if (!hca->scq || !hca->rcq)
      gasneti_fatalerror("ibv: cannot create completion queues of %d and %d entries on %s",
                         scq_size, rcq_size, hca->name);
    if (srq_size) {
      if (srq_size > hca->attr.max_srq_wr)
        gasneti_fatalerror("ibv: %s holds at most %d receive buffers in a shared receive queue, "
                           "but GASNET_RBUF_COUNT asks %d per HCA: lower it", hca->name,
                           hca->attr.max_srq_wr, srq_size);
      struct ibv_srq_init_attr sa = {.attr = {.max_wr = (uint32_t)srq_size, .max_sge = 1}};
      hca->srq = ibv_create_srq(hca->pd, &sa);
      if (!hca->srq) gasneti_fatalerror("ibv: cannot create a shared receive queue on %s", hca->name);
    }
  }
}

void ibv_hca_close(void) {
  for (int h = 0; h < ibv.nhcas; h++) {
    ibv_hca_t *hca = &ibv.hca[h];
    if (hca->seg_mr) ibv_dereg_mr(hca->seg_mr);
    if (hca->buf_mr) ibv_dereg_mr(hca->buf_mr);
    if (hca->srq) ibv_destroy_srq(hca->srq);
    if (hca->scq) ibv_destroy_cq(hca->scq);
    if (hca->rcq) ibv_destroy_cq(hca->rcq);
    if (hca->pd) ibv_dealloc_pd(hca->pd);
    ibv_close_device(hca->ctx);
  }
  ibv.nhcas = 0;
}

const char *ibv_ports_text(char *buf, size_t len) {
  size_t used = 0;
  buf[0] = 0;
  for (int i = 0; i < ibv.nports; i++) {
    int n = snprintf(buf + used, len - used, "%s%s:%d(lid %d)", i ? "+" : "",
                     ibv.hca[ibv.port[i].hca].name, ibv.port[i].num, ibv.port[i].lid);
    if (n < 0 || (size_t)n >= len - used) break;
    used += (size_t)n;
  }
  return buf;
}
