/* ibv_conduit.c: the ibv conduit's side of the conduit contract: set-up (ports, buffers and
 * their PHYSMEM budget, addresses through the bootstrap, start-up connections, credits), the
 * segment's registration at attach, polling, exit notices and a clean finish. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "knobs.h"
#include "ibv_internal.h"

ibv_state_t ibv;
#if GASNETI_THREADS
gasneti_spinlock_t ibv_lock = GASNETI_SPINLOCK_INIT;
/* One thread drains the receive queues at a time; the one that does may drain them again from
 * inside a handler it runs (a handler waiting for send room must free receive buffers, or two
 * ranks whose handlers both wait could hold each other's buffers forever). */
static gasneti_spinlock_t ibv_poller = GASNETI_SPINLOCK_INIT;
static GASNETI_TLS int poller_depth;
#endif
uint64_t gasnetc_pinned_bytes, gasnetc_segment_cap;
size_t gasnetc_long_chunk = GASNETC_MAX_LONG; /* Longs go whole: RDMA carries any size */

double ibv_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static const char *advice(enum ibv_wc_status st) {
  switch (st) {
    case IBV_WC_RETRY_EXC_ERR:
      return ": it is unreachable (its process or host is gone, or the fabric lost the path; "
             "GASNET_QP_TIMEOUT and GASNET_QP_RETRY_COUNT set how long it is waited for)";
    case IBV_WC_REM_ACCESS_ERR:
      return ": it refused the access (an address outside its registered segment)";
    case IBV_WC_RNR_RETRY_EXC_ERR: return ": it posted no receive buffer in time";
    default: return "";
  }
}

void ibv_fatal_wc(const struct ibv_wc *wc, int peer, const char *what) {
  if (peer >= 0)
    gasneti_fatalerror("ibv: %s to rank %d (host %s) failed: %s%s", what, peer,
                       gasneti_host_name((gasnet_node_t)peer), ibv_wc_status_str(wc->status),
                       advice(wc->status));
  gasneti_fatalerror("ibv: %s failed: %s (vendor error 0x%x)", what,
                     ibv_wc_status_str(wc->status), wc->vendor_err);
}

/* ---- set-up ----------------------------------------------------------------------------------- */
static void read_knobs(void) {
  ibv.verbose = gasneti_knob_bool("GASNET_IBV_VERBOSE");
  ibv.depth_pp = (int)gasneti_knob_int("GASNET_NETWORKDEPTH_PP");
  ibv.qp_timeout = (int)gasneti_knob_int("GASNET_QP_TIMEOUT");
  ibv.qp_retry = (int)gasneti_knob_int("GASNET_QP_RETRY_COUNT");
  static const char *const mtus[] = {"256", "512", "1024", "2048"};
  ibv.max_mtu = IBV_MTU_4096; /* 0 and -1: the port's own */
  for (int i = 0; i < 4; i++)
    if (gasneti_knob_enum_is("GASNET_MAX_MTU", mtus[i])) ibv.max_mtu = (enum ibv_mtu)(IBV_MTU_256 + i);
  uint64_t inl = gasneti_knob_size("GASNET_INLINESEND_LIMIT");
  ibv.inline_limit = (uint32_t)(inl > 256 ? 256 : inl);
  uint64_t packed = gasneti_knob_size("GASNET_PACKEDLONG_LIMIT");
  ibv.packed_limit = (uint32_t)(packed > GASNETC_MAX_MEDIUM ? GASNETC_MAX_MEDIUM : packed);
  ibv.bounce_limit = (uint32_t)gasneti_knob_size("GASNET_NONBULKPUT_BOUNCE_LIMIT");
  ibv.dynamic = gasneti_knob_bool("GASNET_CONNECT_DYNAMIC");
  ibv.retrans_min = gasneti_knob_double("GASNET_CONNECT_RETRANS_MIN") * 1e-6;
  ibv.retrans_max = gasneti_knob_double("GASNET_CONNECT_RETRANS_MAX") * 1e-6;
  if (ibv.retrans_max < ibv.retrans_min) ibv.retrans_max = ibv.retrans_min;
}

/* This rank's share of GASNET_PHYSMEM_MAX (what its segment and buffers may pin). */
static uint64_t physmem_share(void) {
  uint64_t phys = (uint64_t)sysconf(_SC_PHYS_PAGES) * (uint64_t)sysconf(_SC_PAGESIZE);
  gasneti_memsize_t m;
  char err[256];
  const char *text = gasneti_knob_text("GASNET_PHYSMEM_MAX");
  if (!text) text = gasneti_knob_find("GASNET_PHYSMEM_MAX")->dflt;
  if (!gasneti_parse_memsize(text, 0, &m, err, sizeof err))
    gasneti_fatalerror("GASNET_PHYSMEM_MAX='%s': %s", text, err);
  double bytes = m.is_fraction ? m.value * (double)phys : m.value;
  return (uint64_t)(bytes / (gasneti_host_size > 0 ? gasneti_host_size : 1));
}

static void plan_buffers(void) {
  int remote = (int)gasneti_nodes - gasneti_snode_size;
  gasneti_ibv_plan_t plan;
  gasneti_ibv_plan((int)gasneti_nodes, remote, (int)gasneti_knob_int("GASNET_AM_CREDITS_PP"),
                   (int)gasneti_knob_int("GASNET_RBUF_COUNT"),
                   (int)gasneti_knob_int("GASNET_BBUF_COUNT"),
                   (int)gasneti_knob_int("GASNET_USE_SRQ"), ibv.depth_pp,
                   (int)gasneti_knob_int("GASNET_NETWORKDEPTH_TOTAL"), &plan);
  ibv.use_srq = plan.use_srq;
  ibv.rq_depth = plan.rq_depth;
  ibv.depth_total = plan.depth_total;
  ibv.pool.nrbufs = plan.rbufs;
  ibv.pool.nbbufs = plan.bbufs;
  gasnetc_pinned_bytes = plan.pool_bytes;
  for (int h = 0; h < ibv.nhcas; h++) {
    ibv_hca_t *hca = &ibv.hca[h];
    if (ibv.depth_pp + 2 > hca->attr.max_qp_wr || ibv.rq_depth > hca->attr.max_qp_wr)
      gasneti_fatalerror("ibv: %s takes at most %d work requests per queue pair, but "
                         "GASNET_NETWORKDEPTH_PP=%d (+2) or GASNET_AM_CREDITS_PP (receive depth "
                         "%d) asks more: lower them", hca->name, hca->attr.max_qp_wr,
                         ibv.depth_pp, ibv.rq_depth);
  }
  int srq_per_hca = ibv.use_srq ? (plan.rbufs + ibv.nhcas - 1) / ibv.nhcas : 0;
  ibv_hca_queues(ibv.depth_total + IBV_UD_SBUFS + 16,
                 plan.rbufs + IBV_UD_RBUFS + 16, srq_per_hca);
  ibv_bufs_init();
  if (gasneti_knob_bool("GASNET_PHYSMEM_PROBE")) {
    uint64_t share = physmem_share(), pinnable = ibv_physmem_probe(share);
    if (pinnable <= plan.pool_bytes)
      gasneti_fatalerror("ibv: GASNET_PHYSMEM_PROBE could pin only %llu bytes, not even the "
                         "%llu bytes of buffers this rank needs (raise the memlock limit, "
                         "ulimit -l)", (unsigned long long)pinnable,
                         (unsigned long long)plan.pool_bytes);
    if (pinnable < share) gasnetc_segment_cap = pinnable - plan.pool_bytes;
    if (ibv.verbose)
      fprintf(stderr, "ibv: rank %d could pin %llu of its %llu-byte GASNET_PHYSMEM_MAX share\n",
              (int)gasneti_mynode, (unsigned long long)pinnable, (unsigned long long)share);
  }
}

void gasnetc_init(const gasneti_bootstrap_t *boot) {
  (void)boot;
  read_knobs();
  ibv_hca_open();
  plan_buffers();
  ibv_conn_init();
  gasneti_credits_setup(&ibv.credits, "ibv");
}

/* The card goes out once the segment's keys are known: with them, a peer met later needs no
 * second exchange; then the start-up connections. */
void gasnetc_attach(void *segment, uintptr_t size) {
  ibv_bufs_register_segment(segment, size);
  ibv_card_t mine = {.nports = (uint8_t)ibv.nports, .ud_qpn = ibv_ud_qpn(),
                     .seg = {.base = (uint64_t)(uintptr_t)segment, .size = size}};
  for (int i = 0; i < ibv.nports; i++) {
    struct ibv_mr *mr = ibv.hca[ibv.port[i].hca].seg_mr;
    mine.lid[i] = ibv.port[i].lid;
    mine.seg.rkey[i] = mr ? mr->rkey : 0;
  }
  if (ibv.verbose)
    fprintf(stderr, "ibv: rank %d pins %llu bytes (segment %lu, buffers %llu), registered on "
            "%d HCA%s\n", (int)gasneti_mynode,
            (unsigned long long)(size + ibv.pool.size), (unsigned long)size,
            (unsigned long long)ibv.pool.size, ibv.nhcas, ibv.nhcas > 1 ? "s" : "");
  double t0 = ibv_now();
  ibv_conn_start(&mine);
  if (ibv.verbose)
    fprintf(stderr, "ibv: rank %d made %d connections at start-up in %.6f s (%s receive queue%s, "
            "%d receive buffers); peers' addresses %s\n", (int)gasneti_mynode,
            ibv.static_connections, ibv_now() - t0, ibv.use_srq ? "shared" : "per-peer",
            ibv.use_srq ? "s" : "s", ibv.pool.nrbufs,
            ibv.lookups ? "looked up on first contact" : "all received at start-up");
}

bool gasnetc_am_request(gasnet_node_t dest, const gasneti_am_t *am) {
  return ibv_send_am(dest, am, NULL);
}

bool gasnetc_am_reply(gasneti_token_t *request, const gasneti_am_t *am) {
  return ibv_send_am(request->src, am, request);
}

/* ---- polling ------------------------------------------------------------------------------------ */
int ibv_poll_network(int which) {
  int ran = 0;
  ibv_lock_take();
  ibv_poll_send();
#if GASNETI_THREADS
  if (poller_depth || gasneti_spin_trylock(&ibv_poller)) {
    poller_depth++;
#endif
    for (int h = 0; h < ibv.nhcas; h++) {
      struct ibv_wc wc[16];
      int got = ibv_poll_cq(ibv.hca[h].rcq, 16, wc);
      if (got < 0)
        gasneti_fatalerror("ibv: the receive completion queue of %s failed (overrun)",
                           ibv.hca[h].name);
      for (int i = 0; i < got; i++) {
        /* Once a barrier message stopped the poll (gasneti_poll_stop), the batch's requests
         * wait aside for the next poll, as a handler's poll keeps them. */
        int now = GASNETI_UNLIKELY(gasneti_poll_stop) ? which & ~GASNETI_POLL_REQUESTS : which;
        if (ibv.ud && wc[i].qp_num == ibv.ud->qp_num) ibv_ud_recv(&wc[i]);
        else ran += ibv_recv_am(&wc[i], h, now);
      }
    }
#if GASNETI_THREADS
    if (--poller_depth == 0) gasneti_spin_unlock(&ibv_poller);
  }
#endif
  if (ibv_conn_waiting()) ibv_conn_timers(ibv_now());
  ibv_lock_drop();
  if ((which & GASNETI_POLL_REQUESTS) && !gasneti_poll_stop && ibv_have_deferred())
    ran += ibv_run_deferred();
  return ran;
}

int gasnetc_poll(int which) {
  if (GASNETI_UNLIKELY(!ibv.nhcas)) return 0;
  return ibv_poll_network(which);
}

/* ---- leaving ------------------------------------------------------------------------------------- */
static void say_summary(void) {
  if (!ibv.verbose) return;
  char text[1024];
  size_t used = 0;
  text[0] = 0;
  for (int i = 0; i < ibv.nports && used < sizeof text; i++) {
    int n = snprintf(text + used, sizeof text - used, "%s%s:%d %llu requests %llu bytes",
                     i ? ", " : "", ibv.hca[ibv.port[i].hca].name, ibv.port[i].num,
                     (unsigned long long)ibv.port[i].wrs, (unsigned long long)ibv.port[i].bytes);
    if (n < 0) break;
    used += (size_t)n;
  }
  fprintf(stderr, "ibv: rank %d finished with %d connections (%d made at start-up); %s\n",
          (int)gasneti_mynode, ibv.connections, ibv.static_connections, text);
}

static bool take_lock_briefly(void) {
#if GASNETI_THREADS
  double until = ibv_now() + 0.1;
  while (!gasneti_spin_trylock(&ibv_lock))
    if (ibv_now() > until) return false;
#endif
  return true;
}

/* Other hosts' ranks hear it over UD (best effort, twice); a code-0 exit that is not a signal's
 * writes GASNET_CONNECTFILE_OUT. A rank leaving from a signal handler (an interrupt or the
 * launcher's leave signal, which every rank receives anyway) sends nothing: the provider's own
 * locks may be held by the code the signal interrupted. */
void gasnetc_exit_notify(int code) {
  ibv.in_exit = true;
  if (gasneti_exit_in_signal || !take_lock_briefly()) return;
  if (code == 0 && !gasneti_exit_in_signal) {
    ibv_connectfile_write();
    say_summary();
  }
  ibv_ud_exit_notice(code);
  ibv_lock_drop();
}

/* Returning from main: what this rank sent should arrive (at most a second), then its peers
 * learn not to send it anything more. */
/* No start-up convention of its own: a process no launcher started is a 1-rank job. */
void gasnetc_unlaunched(int *argc, char ***argv) { (void)argc, (void)argv; }

void gasnetc_fini(void) {
  double until = ibv_now() + 1.0;
  while (ibv.depth && ibv_now() < until) ibv_poll_network(GASNETI_POLL_REPLIES);
  ibv.in_exit = true;
  ibv_lock_take();
  ibv_connectfile_write();
  ibv_ud_finished_notice();
  ibv_lock_drop();
  say_summary();
}
