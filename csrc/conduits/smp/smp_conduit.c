/* smp_conduit.c: the smp conduit: every rank on one host. Supernode peers are PSHM's; the
 * conduit carries messages to the host's other ranks (when GASNET_SUPERNODE_MAXSIZE splits
 * it) through the same shared queues, without cross-mapped segments: Long payloads travel in
 * pieces the core cuts to the largest Medium. */
#include "conduit.h"
#include "pshm/queue.h"

uint64_t gasnetc_pinned_bytes, gasnetc_segment_cap; /* nothing is registered with a network */
size_t gasnetc_long_chunk = GASNETC_MAX_MEDIUM;

void gasnetc_init(const gasneti_bootstrap_t *boot) {
  (void)boot;
  if (gasneti_host_count != 1)
    gasneti_fatalerror("the smp conduit runs on one host, but this job's ranks are on %d hosts "
                       "(build the program with a network conduit, e.g. udp)",
                       (int)gasneti_host_count);
}

void gasnetc_attach(void *segment, uintptr_t size) { (void)segment, (void)size; }

static bool send(int host_index, int reply, const gasneti_am_t *am) {
  if (am->flags & GASNETI_AM_IMMEDIATE) /* a full ring or outbox refuses it */
    return gasneti_pshm_try_send(&gasneti_queues.tx[reply][host_index], reply, am, NULL);
  gasneti_pshm_send(host_index, reply, am, NULL);
  return true;
}

bool gasnetc_am_request(gasnet_node_t dest, const gasneti_am_t *am) {
  return send(gasneti_host_local[dest], 0, am);
}

bool gasnetc_am_reply(gasneti_token_t *request, const gasneti_am_t *am) {
  return send(gasneti_host_local[request->src], 1, am);
}

/* The host's queues are PSHM's, served by its poll; nothing else to serve. */
int gasnetc_poll(int which) {
  (void)which;
  return 0;
}

/* Nothing but the host's queues, whose writers wake a sleeping rank. */
int gasnetc_wait_fds(struct pollfd *fds, double *deadline) {
  (void)fds, (void)deadline;
  return 0;
}

/* Every rank shares the host's exit word: nobody else to tell. */
void gasnetc_exit_notify(int code) { (void)code; }

void gasnetc_fini(void) {}
/* No start-up convention of its own: a process no launcher started is a 1-rank job. */
void gasnetc_unlaunched(int *argc, char ***argv) { (void)argc, (void)argv; }
