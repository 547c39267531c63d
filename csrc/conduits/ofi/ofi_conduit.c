/* ofi_conduit.c: the ofi conduit's side of the conduit contract: set-up (provider, endpoint,
 * addresses through the bootstrap, credits, buffers), the segment's registration at attach,
 * polling (reading the completion queue, then delivering), exit notices to other hosts' ranks
 * and the notice that this rank finished. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "knobs.h"
#include "ofi_internal.h"

#if GASNETI_THREADS
gasneti_spinlock_t ofi_lock = GASNETI_SPINLOCK_INIT;
gasneti_spinlock_t ofi_deliver_lock = GASNETI_SPINLOCK_INIT;
#endif

ofi_state_t ofi;
uint64_t gasnetc_pinned_bytes, gasnetc_segment_cap; /* nothing needs pinning up front */
size_t gasnetc_long_chunk = GASNETC_MAX_LONG;       /* without RMA: the largest Medium */

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int ofi_which(void) {
  return gasneti_am_context == GASNETI_CTX_CLIENT ? GASNETI_POLL_ALL : GASNETI_POLL_REPLIES;
}

void ofi_wait_step(int which) {
  if (!gasneti_poll(which)) gasneti_wait_backoff();
  gasneti_exit_check();
}

void ofi_wait_counter(_Atomic int64_t *counter, int which) {
  while (atomic_load_explicit(counter, memory_order_acquire)) ofi_wait_step(which);
}

static const char *const op_names[] = {"a send", "an RMA put", "an RMA get",
                                       "an RMA write of a Long payload"};

void ofi_settle(ofi_op_t *op) {
  if (op->buf) ofi_bbuf_put(op->buf);
  if (op->counter) atomic_fetch_sub_explicit(op->counter, 1, memory_order_release);
  ofi_op_put(op);
}

void ofi_failed(ofi_op_t *op, int err, int prov_errno, const void *err_data, size_t len) {
  if (ofi.peers[op->peer].finished || ofi.in_exit) { /* moot: settle it as done */
    ofi_settle(op);
    return;
  }
  char detail[256] = "";
  const char *prov = fi_cq_strerror(ofi.cq, prov_errno, err_data, detail, sizeof detail);
  (void)len;
  ofi_lock_drop();
  gasneti_fatalerror("ofi: %s to rank %d (host %s) failed: %s (%s; provider %s, domain %s): it "
                     "is unreachable", op_names[op->kind], op->peer,
                     gasneti_host_name((gasnet_node_t)op->peer), fi_strerror(err),
                     prov && *prov ? prov : "no detail", ofi.provider, ofi.device);
}

static bool is_rbuf(const void *ctx) {
  const ofi_rbuf_t *r = ctx;
  return r >= ofi.rbufs && r < ofi.rbufs + ofi.nrbufs;
}

int ofi_progress(void) {
  struct fi_cq_data_entry e[16];
  ofi_lock_take();
  ssize_t n = fi_cq_read(ofi.cq, e, 16);
  if (n == -FI_EAVAIL) {
    struct fi_cq_err_entry err = {0};
    if (fi_cq_readerr(ofi.cq, &err, 0) == 1) {
      if (is_rbuf(err.op_context)) {
        if (!ofi.in_exit && err.err != FI_ECANCELED)
          gasneti_fatalerror("ofi: a receive failed: %s (provider %s)", fi_strerror(err.err),
                             ofi.provider);
      } else {
        ofi_failed(err.op_context, err.err, err.prov_errno, err.err_data, err.err_data_size);
      }
    }
    n = 0;
  } else if (n < 0 && n != -FI_EAGAIN) {
    ofi_fatal_rc("reading the completion queue (fi_cq_read)", (int)n);
  }
  for (ssize_t i = 0; i < n; i++) {
    /* A receive's completion: its message waits for delivery, after which the receive is
     * posted again (at once if the message was dropped). */
    if (is_rbuf(e[i].op_context)) {
      ofi_rbuf_t *r = e[i].op_context;
      if (!ofi_arrive(r, r->mem, (uint32_t)e[i].len)) ofi_post_rbuf(r);
    } else {
      ofi_settle(e[i].op_context);
    }
  }
  ofi_lock_drop();
  return n > 0 ? (int)n : 0;
}

void gasnetc_init(const gasneti_bootstrap_t *boot) {
  ofi.verbose = gasneti_knob_bool("GASNET_OFI_VERBOSE");
  ofi_open();
  /* Every peer has mapped this rank's shm region once all have inserted the addresses:
   * from then on its name is not needed, and a rank that is killed leaves nothing behind. So
   * on shm (one host) every peer is met now, not on first contact. */
  if (ofi.cards_at_init) {
    for (int r = 0; r < (int)gasneti_nodes; r++)
      if (ofi.peers[r].network) ofi_meet(r);
    boot->barrier();
    ofi_unlink_shm_region();
  }
  ofi_drop_foreign_handlers();
  size_t inject = ofi.info->tx_attr->inject_size;
  if (gasneti_knob_is_set("GASNET_OFI_INJECT_LIMIT") &&
      (size_t)gasneti_knob_size("GASNET_OFI_INJECT_LIMIT") < inject)
    inject = (size_t)gasneti_knob_size("GASNET_OFI_INJECT_LIMIT");
  ofi.inject_limit = inject < 4096 ? inject : 4096;
  /* libfabric 1.17's shm provider deadlocks on injected writes that ask for delivery
   * completion: there small puts are bounced. */
  ofi.inject_puts = strcmp(ofi.provider, "shm") != 0;
  ofi.bbuf_threshold = (size_t)gasneti_knob_size("GASNET_OFI_BBUF_THRESHOLD");
  if (!ofi.long_rma) gasnetc_long_chunk = GASNETC_MAX_MEDIUM;
  gasneti_credits_setup(&ofi.credits, "ofi");
  int nbbufs = (int)gasneti_knob_int("GASNET_OFI_NUM_BBUFS");
  int nops = 4 * nbbufs + (int)gasneti_knob_int("GASNET_NETWORKDEPTH_TOTAL");
  /* libfabric 1.17's ofi_rxd stalls for good (or corrupts read data) with more than a few
   * dozen operations in flight between two ranks, e.g. 10,000 outstanding 8-byte gets; at 32
   * it has not failed here. */
  if (strstr(ofi.provider, "ofi_rxd") && nops > OFI_RXD_MAX_OPS) nops = OFI_RXD_MAX_OPS;
  ofi.max_ops = nops;
  ofi_bufs_init(nbbufs, nops);
  ofi_rbufs_init((int)gasneti_knob_int("GASNET_OFI_RECV_BUFFERS"));
  if (ofi.verbose)
    fprintf(stderr, "ofi: rank %d on host %s uses provider %s, domain %s (RMA %s, %s "
            "addresses, send-after-write order %s: Longs %s, inject up to %zu bytes%s, %d "
            "operations in flight)\n",
            (int)gasneti_mynode, gasneti_hostname, ofi.provider, ofi.device,
            ofi.rma ? "yes" : "no: puts and gets as AMs",
            ofi.virt_addr ? "virtual" : "offset", ofi.saw ? "yes" : "no",
            ofi.long_rma ? "by RMA write" : "in pieces inside messages", ofi.inject_limit,
            ofi.inject_puts ? " (messages and puts)" : " (messages)", ofi.max_ops);
  /* No AM goes out before the barrier that ends attach (the cards are published there): every
   * rank's buffers are posted by then. On shm the cards went out in ofi_open. */
}

/* The segment is registered for remote reads and writes. Its base and key go in this rank's
 * card, which peers look up the first time they talk to it (ofi_meet); on shm, whose cards
 * went out at init, every rank learns every segment in an exchange. */
void gasnetc_attach(void *segment, uintptr_t size) {
  ofi_segcard_t mine = {.base = (uint64_t)(uintptr_t)segment, .size = size};
  if (ofi.rma && size) {
    int rc = fi_mr_reg(ofi.domain, segment, size, FI_REMOTE_READ | FI_REMOTE_WRITE, 0,
                       (uint64_t)gasneti_mynode + 1, 0, &ofi.seg_mr, NULL);
    if (rc)
      gasneti_fatalerror("ofi: registering the %zu-byte segment with provider %s failed: %s",
                         (size_t)size, ofi.provider, fi_strerror(-rc));
    if (ofi.info->domain_attr->mr_mode & FI_MR_ENDPOINT) {
      if ((rc = fi_mr_bind(ofi.seg_mr, &ofi.ep->fid, 0)) || (rc = fi_mr_enable(ofi.seg_mr)))
        ofi_fatal_rc("binding the segment's registration to the endpoint", rc);
    }
    mine.key = fi_mr_key(ofi.seg_mr);
  }
  if (!ofi.cards_at_init) {
    ofi.card.seg = mine;
    ofi.card.has_seg = 1;
    gasneti_bootstrap_publish(&ofi.card, sizeof ofi.card); /* the core's barrier follows */
    return;
  }
  ofi_segcard_t *all = gasneti_calloc(gasneti_nodes, sizeof *all);
  gasneti_bootstrap_exchange(&mine, sizeof mine, all);
  for (int r = 0; r < (int)gasneti_nodes; r++)
    ofi.peers[r].seg_base = all[r].base, ofi.peers[r].seg_key = all[r].key;
  free(all);
}

bool gasnetc_am_request(gasnet_node_t dest, const gasneti_am_t *am) {
  return ofi_send_am(dest, am, NULL);
}

bool gasnetc_am_reply(gasneti_token_t *request, const gasneti_am_t *am) {
  return ofi_send_am(request->src, am, request);
}

#if GASNETI_THREADS
/* This thread holds ofi_deliver_lock: a handler's reply that waits on a full transmit queue
 * (OFI_SEND) delivers from inside that delivery, as the one thread delivering. */
static _Thread_local bool delivering;
#endif

int gasnetc_poll(int which) {
  /* A completion counts as work done: the loop around may wait for it (a put's counter), and
   * found nothing else would let the rank sleep past it. */
  int ran = 0;
  if (GASNETI_UNLIKELY(ofi.wait_armed)) ofi.wait_armed = false; /* see gasnetc_wait_arm */
  else ran = ofi_progress();
#if GASNETI_THREADS
  bool outer = !delivering;
  if (outer && !gasneti_spin_trylock(&ofi_deliver_lock)) return 0; /* another thread delivers */
  delivering = true;
#endif
  if (which & GASNETI_POLL_REQUESTS) ran += ofi_run_deferred();
  ran += ofi_deliver(which);
#if GASNETI_THREADS
  if (outer) {
    delivering = false;
    gasneti_spin_unlock(&ofi_deliver_lock);
  }
#endif
  return ran;
}

/* Sleeping waits (SEQ builds only). fi_trywait runs the provider's progress, which may land a
 * put in this rank's segment without a completion: it is asked when the rank arms, before its
 * caller's last look (conduit.h), and the poll between that look and the sleep leaves the
 * provider alone: what arrives after fi_trywait makes the descriptor readable. */
int gasnetc_wait_arm(void) {
  if (ofi.wait_fd < 0 || ofi.arrived_count || ofi_deferred_pending()) return -1;
  struct fid *cq = &ofi.cq->fid;
  if (fi_trywait(ofi.fabric, &cq, 1) != FI_SUCCESS) return -1;
  ofi.wait_armed = true;
  return 0;
}

int gasnetc_wait_fds(struct pollfd *fds, double *deadline) {
  (void)deadline; /* nothing of the conduit's falls due by itself */
  ofi.wait_armed = false;
  if (ofi.wait_fd < 0) return -1;
  fds[0] = (struct pollfd){.fd = ofi.wait_fd, .events = POLLIN};
  return 1;
}

static bool take_lock_briefly(void) {
#if GASNETI_THREADS
  double until = now() + 0.1;
  while (!gasneti_spin_trylock(&ofi_lock))
    if (now() > until) return false;
#endif
  return true;
}

/* Best effort and prompt: each other-host peer hears it once. Not from a signal handler (the
 * provider's own locks may be held by what the signal interrupted): every rank receives the
 * launcher's signal anyway. */
void gasnetc_exit_notify(int code) {
  if (gasneti_exit_in_signal || !ofi.ep || !take_lock_briefly()) return;
  for (int r = 0; r < (int)gasneti_nodes; r++)
    if (ofi.peers[r].met && !ofi.peers[r].finished &&
        gasneti_host_of[r] != gasneti_host_of[gasneti_mynode]) /* the others: their agents */
      ofi_send_ctrl(r, OFI_CTRL_EXIT, code);
  ofi_lock_drop();
}

/* Returning from main: what this rank sent should still arrive, so it waits (at most a second)
 * for its transmits, then tells its peers to send it nothing more. The endpoint stays open
 * until the process ends: a peer's message already on its way finds it still there. */
void gasnetc_fini(void) {
  double until = now() + 1.0;
  while (ofi.ops_busy && now() < until) gasnetc_poll(GASNETI_POLL_REPLIES);
  ofi.in_exit = true;
  /* A peer whose requests this rank only banked credits for (up to GASNET_AM_CREDITS_SLACK of
   * them, no hidden reply yet) was never sent to, so never met: it must still hear that this
   * rank finished, or its next requests would wait for credits that never come back. */
  for (int r = 0; r < (int)gasneti_nodes; r++)
    if (atomic_load_explicit(&ofi.peers[r].heard, memory_order_relaxed) &&
        !atomic_load_explicit(&ofi.peers[r].met, memory_order_acquire))
      ofi_meet_peer(r, true);
  if (!take_lock_briefly()) return;
  for (int r = 0; r < (int)gasneti_nodes; r++)
    if (ofi.peers[r].met && !ofi.peers[r].finished) ofi_send_ctrl(r, OFI_CTRL_FIN, 0);
  ofi_lock_drop();
}

/* A process no launcher started: a job of one; the conduit has no start-up convention of its
 * own. */
void gasnetc_unlaunched(int *argc, char ***argv) { (void)argc, (void)argv; }
