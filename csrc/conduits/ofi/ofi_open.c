/* ofi_open.c: which libfabric provider and domain a rank uses, and opening them. Every rank
 * offers the providers libfabric gives it for what the conduit needs (RDM endpoints, messages
 * into posted receives, RMA where possible; no FI_MR_LOCAL), in libfabric's order; all
 * take the first of rank 0's offers that every rank has (GASNET_OFI_PROVIDER or libfabric's own
 * FI_PROVIDER narrow the offers). The domain is GASNET_OFI_DEVICE_<n> for a rank bound to
 * socket n, else GASNET_OFI_DEVICE, else the provider's first one (one that is not loopback when
 * the job spans hosts). Then the endpoint's address goes through the bootstrap into every
 * rank's address vector. */
#include <pthread.h>
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "knobs.h"
#include "ofi_hints.h"
#include "ofi_internal.h"
#include "placement.h"

static void note_shm_region(const void *addr, size_t len);
static void name_shm_region(void);

_Noreturn void ofi_fatal_rc(const char *what, int rc) {
  gasneti_fatalerror("ofi: %s failed: %s (provider %s, domain %s)", what, fi_strerror(rc < 0 ? -rc : rc),
                     ofi.provider[0] ? ofi.provider : "?", ofi.device[0] ? ofi.device : "?");
}

static struct fi_info *hints(uint64_t caps, uint64_t mr_modes) {
  struct fi_info *h = fi_allocinfo();
  if (!h) gasneti_fatalerror("ofi: out of memory for libfabric hints");
  ofi_fill_hints(h, caps);
  h->domain_attr->mr_mode = (int)mr_modes;
  const char *prov = gasneti_knob_text("GASNET_OFI_PROVIDER");
  if (prov) h->fabric_attr->prov_name = strdup(prov);
  return h;
}

static struct fi_info *query(uint64_t caps, uint64_t mr_modes) {
  struct fi_info *h = hints(caps, mr_modes), *info = NULL;
  if (fi_getinfo(OFI_API, NULL, NULL, 0, h, &info) != 0) info = NULL;
  fi_freeinfo(h);
  return info;
}

/* Why no provider fits, when one exists without what the conduit needs. */
static void explain_refusal(void) {
  const char *prov = gasneti_knob_text("GASNET_OFI_PROVIDER");
  struct fi_info *loose = query(FI_MSG, OFI_MR_MODES | FI_MR_LOCAL | FI_MR_RAW);
  const char *name = loose ? loose->fabric_attr->prov_name : prov;
  if (loose && (loose->domain_attr->mr_mode & (FI_MR_LOCAL | FI_MR_RAW)))
    gasneti_fatalerror("ofi: provider '%s' on host %s needs FI_MR_LOCAL (registered local "
                       "buffers), which this conduit does not use: choose another with "
                       "GASNET_OFI_PROVIDER (gasnetrun --probe lists them)", name,
                       gasneti_hostname);
  if (loose)
    gasneti_fatalerror("ofi: provider '%s' on host %s has no reliable datagram endpoint with "
                       "messages (FI_EP_RDM, FI_MSG), which this conduit needs: choose another with GASNET_OFI_PROVIDER", name,
                       gasneti_hostname);
  fi_freeinfo(loose);
  if (prov)
    gasneti_fatalerror("ofi: libfabric on host %s has no provider '%s' (GASNET_OFI_PROVIDER): "
                       "gasnetrun --probe lists the providers of each host", gasneti_hostname,
                       prov);
  gasneti_fatalerror("ofi: libfabric on host %s offers no provider at all for this conduit "
                     "(FI_PROVIDER=%s)", gasneti_hostname,
                     getenv("FI_PROVIDER") ? getenv("FI_PROVIDER") : "(unset)");
}

/* A provider's name as offered: FNV-1a, never 0 (0 ends an offer). Two names with one hash
 * would take a 1 in 2^32 chance per pair; ranks that then disagreed on the provider would fail
 * at fi_av_insert, naming it. */
static uint32_t name_hash(const char *name) {
  uint32_t h = 2166136261u;
  for (const unsigned char *c = (const unsigned char *)name; *c; c++) h = (h ^ *c) * 16777619u;
  return h ? h : 1;
}

static bool offers(const ofi_offer_t *o, uint32_t hash) {
  for (int k = 0; k < OFI_OFFERS_MAX && o->hash[k]; k++)
    if (o->hash[k] == hash) return true;
  return false;
}

/* This rank's providers, by name, in libfabric's order (names[k] has hash mine->hash[k]). */
static char names[OFI_OFFERS_MAX][64];

static void offer(struct fi_info *list, ofi_offer_t *mine) {
  for (struct fi_info *i = list; i; i = i->next) {
    const char *name = i->fabric_attr->prov_name;
    uint32_t h = name_hash(name);
    int k = 0;
    while (k < OFI_OFFERS_MAX && mine->hash[k] && mine->hash[k] != h) k++;
    if (k == OFI_OFFERS_MAX || mine->hash[k] || strlen(name) >= sizeof names[k]) continue;
    mine->hash[k] = h;
    snprintf(names[k], sizeof names[k], "%s", name);
  }
}

static const char *my_name(const ofi_offer_t *mine, uint32_t hash) {
  for (int k = 0; k < OFI_OFFERS_MAX && mine->hash[k]; k++)
    if (mine->hash[k] == hash) return names[k];
  return NULL;
}

/* The first of rank 0's providers every rank offers; fatal, naming who lacks what, if none. */
static void agree(const ofi_offer_t *all, char *out, size_t outlen) {
  int n = gasneti_nodes;
  const ofi_offer_t *mine = &all[gasneti_mynode];
  for (int k = 0; k < OFI_OFFERS_MAX && all[0].hash[k]; k++) {
    int r = 1;
    while (r < n && offers(&all[r], all[0].hash[k])) r++;
    if (r < n) continue;
    const char *name = my_name(mine, all[0].hash[k]); /* this rank offers it too */
    if (!name) gasneti_fatalerror("internal: ofi agreed on a provider this rank lacks");
    snprintf(out, outlen, "%s", name);
    return;
  }
  if (!all[0].hash[0])
    gasneti_fatalerror("ofi: rank 0 (host %s) offers no libfabric provider",
                       gasneti_host_name(0));
  int r = 1;
  while (r < n && offers(&all[r], all[0].hash[0])) r++;
  const char *first = my_name(mine, all[0].hash[0]);
  char has[512] = "";
  if (r == (int)gasneti_mynode)
    for (int k = 0; k < OFI_OFFERS_MAX && mine->hash[k]; k++)
      snprintf(has + strlen(has), sizeof has - strlen(has), "%s%s", k ? ", " : "", names[k]);
  gasneti_fatalerror("ofi: no libfabric provider is offered by every rank: rank 0 (host %s) "
                     "would use %s%s%s, which rank %d (host %s) lacks%s%s%s; set "
                     "GASNET_OFI_PROVIDER to one every host has (gasnetrun --probe)",
                     gasneti_host_name(0), first ? "'" : "", first ? first : "its first one",
                     first ? "'" : "", r, gasneti_host_name((gasnet_node_t)r),
                     r == (int)gasneti_mynode ? " (it has: " : "",
                     r == (int)gasneti_mynode ? (has[0] ? has : "none") : "",
                     r == (int)gasneti_mynode ? ")" : "");
}

static bool loopback(const struct fi_info *i) {
  if (!strcmp(i->domain_attr->name, "lo")) return true;
  if (i->addr_format == FI_SOCKADDR_IN && i->src_addr) {
    const struct sockaddr_in *a = i->src_addr;
    return (ntohl(a->sin_addr.s_addr) >> 24) == 127;
  }
  return false;
}

/* The domain (of the agreed provider) this rank opens. */
static struct fi_info *pick(struct fi_info *list, const char *provider) {
  char per[64] = "";
  int dom = gasneti_cpu_domain(false);
  if (dom >= 0) snprintf(per, sizeof per, "GASNET_OFI_DEVICE_%d", dom);
  const char *knob = per[0] && gasneti_knob_is_set(per) ? per : "GASNET_OFI_DEVICE";
  const char *want = gasneti_knob_text(knob);
  bool spans = gasneti_host_count > 1;
  struct fi_info *best = NULL;
  int best_score = -1;
  char seen[512] = "";
  for (struct fi_info *i = list; i; i = i->next) {
    if (strcmp(i->fabric_attr->prov_name, provider)) continue;
    const char *name = i->domain_attr->name;
    if (!strstr(seen, name) && strlen(seen) + strlen(name) + 3 < sizeof seen)
      strcat(strcat(seen, seen[0] ? ", " : ""), name);
    if (want && strcmp(name, want)) continue;
    /* IPv4 first (IPv6 link-local addresses need a scope), then one other hosts can reach. */
    int score = (i->addr_format != FI_SOCKADDR_IN6) + 2 * !(spans && loopback(i));
    if (score > best_score) best = i, best_score = score;
  }
  if (!best)
    gasneti_fatalerror("ofi: provider '%s' on host %s has no domain '%s' (%s); it has: %s",
                       provider, gasneti_hostname, want ? want : "?", knob, seen);
  if (spans && loopback(best))
    gasneti_fatalerror("ofi: this job spans %d hosts, but provider '%s' on host %s offers only "
                       "its loopback domain '%s', which other hosts cannot reach",
                       (int)gasneti_host_count, provider, gasneti_hostname, best->domain_attr->name);
  return best;
}

/* Provider settings libfabric reads once, at its first fi_getinfo in the process; a value the
 * user set wins. ofi_rxm posts FI_OFI_RXM_MSG_RX_SIZE receive buffers of 16 KiB on its shared
 * receive context: its default, 4096, is 64 MiB in every rank whatever the job does (a rank of
 * alltoall_test held 88 MiB of private memory, 36 MiB with 256), and 512 ranks on one host ran
 * out of memory. The conduit's own posted receives take the messages; rxm's only stage
 * them. */
static void provider_defaults(void) {
  setenv("FI_OFI_RXM_MSG_RX_SIZE", "256", 0);
  /* ofi_rxm looks at connection requests at most every FI_OFI_RXM_CM_PROGRESS_INTERVAL us
   * while it has no connection of its own under way: with its 10,000, every first message
   * between two ranks waited up to 10 ms (rank 0's first AMs to 3 ranks arrived after 10, 21
   * and 31 ms; 1-2 ms with 100), and an idle rank's look costs one empty epoll_wait. */
  setenv("FI_OFI_RXM_CM_PROGRESS_INTERVAL", "100", 0);
}

/* The completion queue; with a descriptor to sleep on where the rank may sleep and the
 * provider gives one (tcp;ofi_rxm does; ofi_rxd opens the queue but gives no descriptor, shm
 * refuses the wait object: there the rank yields). Without one where it never sleeps: a wait
 * object makes the provider signal it for every completion. */
static void open_cq(void) {
  struct fi_cq_attr cqa = {.format = FI_CQ_FORMAT_DATA,
                           .size = (size_t)gasneti_knob_int("GASNET_OFI_CQ_SIZE")};
  int rc;
  ofi.wait_fd = -1;
  if (gasneti_wait_may_sleep()) {
    cqa.wait_obj = FI_WAIT_FD;
    if (fi_cq_open(ofi.domain, &cqa, &ofi.cq, NULL) == 0) {
      int fd = -1;
      if (fi_control(&ofi.cq->fid, FI_GETWAIT, &fd) == 0 && fd >= 0) {
        ofi.wait_fd = fd;
        return;
      }
      fi_close(&ofi.cq->fid);
    }
    cqa.wait_obj = FI_WAIT_NONE;
  }
  if ((rc = fi_cq_open(ofi.domain, &cqa, &ofi.cq, NULL))) ofi_fatal_rc("fi_cq_open", rc);
}

void ofi_open(void) {
  provider_defaults();
  struct fi_info *list = query(OFI_CAPS_AM | FI_RMA, OFI_MR_MODES);
  struct fi_info *without_rma = query(OFI_CAPS_AM, OFI_MR_MODES);
  if (!list && !without_rma) explain_refusal();
  /* Providers with RMA come first; those without it carry puts, gets and Longs as AMs. */
  ofi_offer_t mine = {{0}}, *all = gasneti_calloc(gasneti_nodes, sizeof *all);
  offer(list, &mine);
  offer(without_rma, &mine);
  gasneti_bootstrap_exchange(&mine, sizeof mine, all);
  agree(all, ofi.provider, sizeof ofi.provider);
  free(all);
  struct fi_info *from = list;
  bool has_rma = false;
  for (struct fi_info *i = list; i && !has_rma; i = i->next)
    has_rma = !strcmp(i->fabric_attr->prov_name, ofi.provider);
  if (!has_rma) from = without_rma;
  struct fi_info *chosen = pick(from, ofi.provider);
  ofi.info = fi_dupinfo(chosen);
  fi_freeinfo(list);
  fi_freeinfo(without_rma);
  snprintf(ofi.device, sizeof ofi.device, "%s", ofi.info->domain_attr->name);
  ofi.rma = has_rma;
  ofi.virt_addr = ofi.info->domain_attr->mr_mode & FI_MR_VIRT_ADDR;
  ofi.saw = ofi.info->tx_attr->msg_order & FI_ORDER_SAW;
  ofi.long_rma = ofi.rma && ofi.saw;

  int rc;
  if ((rc = fi_fabric(ofi.info->fabric_attr, &ofi.fabric, NULL))) ofi_fatal_rc("fi_fabric", rc);
  if ((rc = fi_domain(ofi.fabric, ofi.info, &ofi.domain, NULL))) ofi_fatal_rc("fi_domain", rc);
  open_cq();
  struct fi_av_attr ava = {.type = FI_AV_TABLE, .count = gasneti_nodes};
  if ((rc = fi_av_open(ofi.domain, &ava, &ofi.av, NULL))) ofi_fatal_rc("fi_av_open", rc);
  if ((rc = fi_endpoint(ofi.domain, ofi.info, &ofi.ep, NULL))) ofi_fatal_rc("fi_endpoint", rc);
  if ((rc = fi_ep_bind(ofi.ep, &ofi.cq->fid, FI_TRANSMIT | FI_RECV)))
    ofi_fatal_rc("fi_ep_bind (completion queue)", rc);
  if ((rc = fi_ep_bind(ofi.ep, &ofi.av->fid, 0))) ofi_fatal_rc("fi_ep_bind (address vector)", rc);
  name_shm_region();
  if ((rc = fi_enable(ofi.ep))) ofi_fatal_rc("fi_enable", rc);

  size_t len = sizeof ofi.card.addr;
  if ((rc = fi_getname(&ofi.ep->fid, ofi.card.addr, &len))) ofi_fatal_rc("fi_getname", rc);
  ofi.card.addrlen = (uint32_t)len;
  note_shm_region(ofi.card.addr, len);
  ofi.peers = gasneti_calloc(gasneti_nodes, sizeof *ofi.peers);
  for (int r = 0; r < (int)gasneti_nodes; r++)
    ofi.peers[r].network = (gasnet_node_t)r != gasneti_mynode && !gasneti_pshm_reach[r];
  /* On shm every peer is met at once (gasnetc_init), so its card goes out now, without the
   * segment; elsewhere at attach, with it (gasnetc_attach). */
  ofi.cards_at_init = ofi.shm_region[0] != 0;
  if (ofi.cards_at_init) gasneti_bootstrap_publish(&ofi.card, sizeof ofi.card);
}

/* One meeting at a time: two threads meeting one peer at once look it up once. */
static pthread_mutex_t meet_lock = PTHREAD_MUTEX_INITIALIZER;

void ofi_meet_peer(int r, bool quiet) {
  ofi_peer_t *p = &ofi.peers[r];
  if (!p->network) gasneti_fatalerror("internal: ofi has no network path to rank %d", r);
  pthread_mutex_lock(&meet_lock);
  if (atomic_load_explicit(&p->met, memory_order_acquire)) {
    pthread_mutex_unlock(&meet_lock);
    return;
  }
  ofi_card_t card;
  bool ended = gasneti_bootstrap_lookup(r, &card, sizeof card);
  if (card.addrlen == 0 || card.addrlen > OFI_ADDR_MAX)
    gasneti_fatalerror("ofi: rank %d (host %s) published an address of %u bytes", r,
                       gasneti_host_name((gasnet_node_t)r), card.addrlen);
  ofi_lock_take();
  fi_addr_t addr;
  int got = fi_av_insert(ofi.av, card.addr, 1, &addr, 0, NULL);
  if (got == 1) {
    p->addr = addr;
    if (card.has_seg) p->seg_base = card.seg.base, p->seg_key = card.seg.key;
    if (ended) p->finished = true; /* it returned from main: nothing will go to it */
    atomic_store_explicit(&p->met, true, memory_order_release);
  }
  ofi_lock_drop();
  pthread_mutex_unlock(&meet_lock);
  if (got != 1)
    gasneti_fatalerror("ofi: the address of rank %d (host %s) is not one provider '%s' "
                       "(domain %s) can reach", r, gasneti_host_name((gasnet_node_t)r),
                       ofi.provider, ofi.device);
  if (ended && !quiet)
    gasneti_warning("ofi: rank %d had already exited when this rank first sent to it: what "
                    "is sent to it is dropped", r);
}

bool ofi_gone(int r, double *since) {
  ofi_peer_t *p = &ofi.peers[r];
  if (p->finished) return true; /* its notice came while this rank served the network */
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  double now = (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
  if (*since == 0 || now - *since < 1.0) {
    if (*since == 0) *since = now;
    return false;
  }
  *since = now; /* the next question in a second */
  ofi_card_t card;
  if (!gasneti_bootstrap_lookup(r, &card, sizeof card)) return false;
  p->finished = true;
  gasneti_warning("ofi: rank %d exited while this rank waited to send to it: what is sent to "
                  "it is dropped", r);
  return true;
}

/* libfabric's shm provider names its /dev/shm region after the endpoint: by default
 * "<pid>:<n>:<n>", which any local user can compute and create first (the endpoint then fails
 * to open, or the rank dies of SIGBUS on a region of the wrong size). An FI_ADDR_STR name given
 * before fi_enable is used as it is: the pid, to tell whose it is, and the rank's name tag. */
static void name_shm_region(void) {
  if (strcmp(ofi.provider, "shm")) return;
  char name[96], tag[17];
  gasneti_name_tag('o', (int)gasneti_mynode, tag);
  snprintf(name, sizeof name, "fi_shm://%ld:gasnet-%s", (long)getpid(), tag);
  int rc = fi_setname(&ofi.ep->fid, name, strlen(name) + 1);
  if (rc) ofi_fatal_rc("fi_setname (the shm region's private name)", rc);
}

/* libfabric's shm provider names its region after the endpoint ("<pid>:<n>:<n>", its address
 * after any "fi_shm://") and removes it only in fi_close, which a rank that ends with _exit or
 * is killed never reaches: 16 MiB of /dev/shm per rank would outlive every job. */
static void note_shm_region(const void *addr, size_t len) {
  if (strcmp(ofi.provider, "shm")) return;
  char name[64];
  if (len == 0 || len >= sizeof name) return;
  memcpy(name, addr, len);
  name[len] = 0;
  const char *scheme = strstr(name, "://");
  const char *base = scheme ? scheme + 3 : name;
  char pid[24];
  snprintf(pid, sizeof pid, "%ld:", (long)getpid());
  /* Only a name that is this process's: never unlink what another owns. */
  if (strncmp(base, pid, strlen(pid)) || strchr(base, '/')) return;
  snprintf(ofi.shm_region, sizeof ofi.shm_region, "/dev/shm/%s", base);
}

void ofi_unlink_shm_region(void) {
  if (!ofi.shm_region[0]) return;
  if (unlink(ofi.shm_region) && errno != ENOENT)
    gasneti_fatalerror("ofi: cannot remove this rank's shm region %s: %s", ofi.shm_region,
                       strerror(errno));
  ofi.shm_region[0] = 0;
}

void ofi_close(void) {
  if (ofi.seg_mr) fi_close(&ofi.seg_mr->fid);
  if (ofi.ep) fi_close(&ofi.ep->fid);
  if (ofi.av) fi_close(&ofi.av->fid);
  if (ofi.cq) fi_close(&ofi.cq->fid);
  if (ofi.domain) fi_close(&ofi.domain->fid);
  if (ofi.fabric) fi_close(&ofi.fabric->fid);
  ofi.seg_mr = NULL, ofi.ep = NULL, ofi.av = NULL, ofi.cq = NULL;
  ofi.domain = NULL, ofi.fabric = NULL;
}
