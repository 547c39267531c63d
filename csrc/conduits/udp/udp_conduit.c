/* udp_conduit.c: the udp conduit's side of the conduit contract: set-up (socket, addresses
 * through the bootstrap, credits, windows), polling, the exit notice to other hosts, a clean
 * finish, and the optional receive thread (GASNET_RCV_THREAD, PAR builds only). */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/sock_diag.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "knobs.h"
#include "udp_internal.h"

#if GASNETI_THREADS
gasneti_spinlock_t udp_lock = GASNETI_SPINLOCK_INIT;
gasneti_spinlock_t udp_deliver = GASNETI_SPINLOCK_INIT;
#endif

udp_state_t udp;
uint64_t gasnetc_pinned_bytes, gasnetc_segment_cap; /* nothing is registered with a network */
size_t gasnetc_long_chunk = GASNETC_MAX_LONG; /* the conduit cuts Longs to its datagrams itself */
void udp_recv_init(void);

/* What each rank tells the others about itself (through the bootstrap). */
typedef struct {
  uint32_t ip, tag;
  uint16_t port, live_port; /* live_port: its liveness socket (see liveness_thread) */
  int32_t mtu;
  uint32_t loopback; /* 1: bound to every address, so reachable on 127.0.0.1 from its netns */
  uint64_t netns;    /* its network namespace (the inode of /proc/self/ns/net), 0 unknown */
  uint8_t key[16];   /* rank 0's: the control key when the spawner has no secret */
} udp_card_t;

/* Fake hosts that share a kernel (network namespaces) may share a host name too; 127.0.0.1
 * is only the same socket inside one namespace. */
static uint64_t network_namespace(void) {
  struct stat st;
  return stat("/proc/self/ns/net", &st) == 0 ? (uint64_t)st.st_ino : 0;
}

static uint32_t pow2_at_least(uint32_t x) {
  uint32_t p = 1;
  while (p < x && p < 65536) p <<= 1;
  return p;
}

static void read_timeouts(void) {
  static gasnetc_rel_rtt_t learnt; /* from all of this rank's streams */
  udp.timeouts = (gasnetc_rel_timeouts_t){
      .learnt = &learnt,
      .initial = gasneti_knob_double("GASNET_REQUESTTIMEOUT_INITIAL"),
      .backoff = gasneti_knob_double("GASNET_REQUESTTIMEOUT_BACKOFF"),
      .max = gasneti_knob_double("GASNET_REQUESTTIMEOUT_MAX"),
      .floor = 200e-6}; /* well above UDP_ACK_DELAY: delayed acknowledgements never look lost */
}

/* ---- peers, met on first contact ----------------------------------------------------------- */
static udp_card_t my_card, first_card; /* first_card: rank 0's, if looked up at start-up */
static bool have_first_card;
static uint32_t forced_dgram; /* GASNET_UDP_DATAGRAM, 0: unset */

static udp_peer_t *new_peer(int r, const udp_card_t *card) {
  udp_peer_t *p = gasneti_calloc(1, sizeof *p);
  p->network = true;
  p->addr = (struct sockaddr_in){.sin_family = AF_INET, .sin_port = card->port,
                                 .sin_addr.s_addr = card->ip};
  bool same_host = gasneti_host_of[r] == gasneti_host_of[gasneti_mynode];
  if (same_host && my_card.loopback && card->loopback && my_card.netns &&
      card->netns == my_card.netns)
    p->addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK); /* the short way (udp_sock.h) */
  p->dgram = udp_datagram_limit(udp.sock.mtu, card->mtu, same_host);
  p->other_host = !same_host;
  if (forced_dgram && forced_dgram < p->dgram) p->dgram = forced_dgram;
  p->live_addr = p->addr;
  p->live_addr.sin_port = card->live_port;
  p->pinged = p->alive_at = p->reading_at = -1;
  if (!gasnetc_rel_init(&p->rel, udp.window, &udp.timeouts))
    gasneti_fatalerror("udp: out of memory for the reliability window of rank %d", r);
  return p;
}

/* One meeting at a time: two threads meeting the same peer at once (a send, and the receive
 * thread holding that peer's first datagram) look it up once. */
static pthread_mutex_t meet_lock = PTHREAD_MUTEX_INITIALIZER;

udp_peer_t *udp_meet(int r) {
  if (r < 0 || r >= (int)gasneti_nodes || !udp_is_network(r))
    gasneti_fatalerror("internal: udp has no network path to rank %d", r);
  udp_peer_t *p = udp_peer(r);
  if (p) return p;
  pthread_mutex_lock(&meet_lock);
  p = udp_peer(r);
  if (p) {
    pthread_mutex_unlock(&meet_lock);
    return p;
  }
  udp_card_t card = first_card;
  bool ended = (r != 0 || !have_first_card) && gasneti_bootstrap_lookup(r, &card, sizeof card);
  p = new_peer(r, &card);
  p->ended = ended;
  udp_lock_take();
  if (udp.nmet == udp.met_cap) {
    int cap = udp.met_cap ? 2 * udp.met_cap : 16;
    int *grown = gasneti_malloc((size_t)cap * sizeof *grown);
    if (udp.nmet) memcpy(grown, udp.met, (size_t)udp.nmet * sizeof *grown);
    free(udp.met);
    udp.met = grown, udp.met_cap = cap;
  }
  udp.met[udp.nmet++] = r;
  atomic_store_explicit(&udp.peer_at[r], p, memory_order_release);
  udp_lock_drop();
  pthread_mutex_unlock(&meet_lock);
  return p;
}

/* A GSO run (and so a GRO merge) holds datagrams of at most 64 KiB in all: between ranks of
 * one host, whose datagrams are that large already, GRO only slows each receive. Peers are
 * met later: a peer on another host is taken to have this rank's MTU. */
static void choose_gro(void) {
  for (int r = 0; r < (int)gasneti_nodes; r++) {
    if (!udp_is_network(r)) continue;
    bool same_host = gasneti_host_of[r] == gasneti_host_of[gasneti_mynode];
    uint32_t dgram = udp_datagram_limit(udp.sock.mtu, udp.sock.mtu, same_host);
    if (forced_dgram && forced_dgram < dgram) dgram = forced_dgram;
    if (2 * dgram <= UDP_MAX_PAYLOAD) return;
  }
  udp_sock_gro_off(&udp.sock);
}

/* ---- liveness ------------------------------------------------------------------------------ *
 * A rank that computes without calling GASNet reads no datagram and acknowledges nothing, yet
 * it is alive, and its peers must wait for it however long it computes. Each rank therefore
 * has a second, blocking socket served by a thread of its own that does nothing but answer
 * probes (UDP_PING) with UDP_ALIVE, whatever the application does, and take the answers to
 * this rank's own probes. Probes and answers go between these sockets only: an answer that
 * queued behind megabytes of data in a starved rank's own socket (hundreds of ranks on two
 * cores) came too late, and the job ended naming a live rank. The thread touches no conduit
 * state beyond what is fixed before it starts (the tag, the key), the peers' state pointers
 * and a few atomics of theirs, so it needs no lock and runs in the SEQ library as well (no
 * handler ever runs on it). A process that is gone or stopped, or a host cut off, answers
 * nothing: its peers still end the job after GASNET_REQUESTTIMEOUT_MAX, naming it. */
int udp_live_fd = -1;

static bool open_liveness_socket(uint16_t *port) {
  udp_live_fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (udp_live_fd < 0) return false;
  struct sockaddr_in at = udp.sock.self; /* the address peers reach this rank at */
  if (udp.sock.any) at.sin_addr.s_addr = htonl(INADDR_ANY);
  at.sin_port = 0;
  socklen_t len = sizeof at;
  if (bind(udp_live_fd, (struct sockaddr *)&at, sizeof at) != 0 ||
      getsockname(udp_live_fd, (struct sockaddr *)&at, &len) != 0)
    return false;
  *port = at.sin_port;
  return true;
}

/* What waits unread in this rank's own socket, in KiB (at most 65535): a rank behind on
 * reading holds its peers' datagrams there, and the probers' answer says so. */
uint16_t udp_backlog_kib(void) {
  uint32_t info[SK_MEMINFO_VARS];
  socklen_t len = sizeof info;
  if (getsockopt(udp.sock.fd, SOL_SOCKET, SO_MEMINFO, info, &len) != 0 ||
      len < sizeof(uint32_t) * (SK_MEMINFO_RMEM_ALLOC + 1))
    return 0;
  uint32_t kib = (info[SK_MEMINFO_RMEM_ALLOC] + 1023) / 1024;
  return (uint16_t)(kib > 65535 ? 65535 : kib);
}

static bool same_address(const struct sockaddr_in *a, const struct sockaddr_in *b) {
  return a->sin_addr.s_addr == b->sin_addr.s_addr && a->sin_port == b->sin_port;
}

/* A probe from a peer's liveness socket: the answer. A prober not met yet (its probe's MAC
 * proves it is of this job) is told so, at the address the probe came from, and the
 * application side meets it at its next poll. */
static void answer_probe(const udp_pkt_hdr_t *h, const struct sockaddr_in *from) {
  udp_peer_t *p = udp_peer(h->src);
  if (p && !same_address(&p->live_addr, from)) return; /* not that rank's socket: no answer */
  udp_ctl_t a = {.h = {.tag = udp.tag, .src = (uint16_t)gasneti_mynode, .type = UDP_ALIVE,
                       .seq = h->seq,
                       .ack = p ? atomic_load_explicit(&p->got, memory_order_relaxed) : 0,
                       .sack = p ? 0 : UDP_ALIVE_UNMET, .credits = udp_backlog_kib(),
                       .code = (int32_t)atomic_load_explicit(&udp_reads, memory_order_relaxed)}};
  if (!p) udp_ask_to_meet(h->src);
  udp_ctl_seal(&a);
  (void)!sendto(udp_live_fd, &a, sizeof a, 0, (const struct sockaddr *)from, sizeof *from);
}

/* An answer to one of this rank's probes: kept for udp_check_timers. */
static void take_answer(const udp_pkt_hdr_t *h, const struct sockaddr_in *from) {
  udp_peer_t *p = udp_peer(h->src);
  if (!p || !same_address(&p->live_addr, from)) return;
  atomic_store_explicit(&p->answer, (uint64_t)(uint32_t)h->code << 32 | h->ack,
                        memory_order_relaxed);
  atomic_store_explicit(&p->answer_backlog, h->credits, memory_order_relaxed);
  atomic_store_explicit(&p->answer_seq, h->seq << 1 | (h->sack == UDP_ALIVE_UNMET),
                        memory_order_release);
}

static void *liveness_thread(void *arg) {
  (void)arg;
  for (;;) {
    udp_ctl_t c;
    struct sockaddr_in from;
    socklen_t fromlen = sizeof from;
    ssize_t n = recvfrom(udp_live_fd, &c, sizeof c, 0, (struct sockaddr *)&from, &fromlen);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return NULL;
    const udp_pkt_hdr_t h = c.h;
    if (n != sizeof c || h.tag != udp.tag || (h.type != UDP_PING && h.type != UDP_ALIVE) ||
        h.src >= gasneti_nodes || !udp_is_network(h.src) || !udp_ctl_valid(&c, (uint32_t)n))
      continue;
    if (h.type == UDP_PING) answer_probe(&h, &from);
    else take_answer(&h, &from);
  }
}

static void start_liveness_thread(void) {
  bool any = false;
  for (int r = 0; r < (int)gasneti_nodes; r++) any |= udp_is_network(r);
  if (!any) return; /* no peer would probe it */
  /* Signals stay with the application's threads (the exit and signal paths expect them). */
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  pthread_t t;
  int err = pthread_create(&t, NULL, liveness_thread, NULL);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (err != 0) gasneti_fatalerror("udp: cannot start the liveness thread: %s", strerror(err));
  pthread_detach(t);
}

void gasnetc_init(const gasneti_bootstrap_t *boot) {
  (void)boot;
  char err[512];
  const char *address = gasneti_knob_text("GASNET_UDP_ADDRESS");
  if (!udp_sock_open(&udp.sock, address, gasneti_knob_bool("GASNET_UDP_GSO"), err, sizeof err))
    gasneti_fatalerror("udp: %s", err);
  read_timeouts();
  udp.coalesce = gasneti_knob_bool("GASNET_UDP_COALESCE");
  udp.window = pow2_at_least((uint32_t)gasneti_knob_int("GASNET_NETWORKDEPTH_PP"));
  int64_t total = gasneti_knob_int("GASNET_NETWORKDEPTH_TOTAL");
  udp.depth_total = total > 0 ? (uint32_t)total : 65535;

  /* This rank's address, port and MTU, published for its peers to look up when they first
   * talk to it; rank 0's random tag marks this job's datagrams. */
  udp_card_t mine = {.ip = udp.sock.self.sin_addr.s_addr, .port = udp.sock.self.sin_port,
                     .mtu = udp.sock.mtu, .loopback = udp.sock.any,
                     .netns = network_namespace()};
  if (!open_liveness_socket(&mine.live_port))
    gasneti_fatalerror("udp: cannot open the liveness socket: %s", strerror(errno));
  FILE *rnd = fopen("/dev/urandom", "rb");
  if (!rnd || fread(&mine.tag, sizeof mine.tag, 1, rnd) != 1) mine.tag = (uint32_t)getpid();
  bool keyed = gasneti_boot->has_secret;
  if (!keyed && gasneti_mynode == 0 && (!rnd || fread(mine.key, sizeof mine.key, 1, rnd) != 1))
    gasneti_fatalerror("udp: cannot read /dev/urandom for the job's control key");
  if (rnd) fclose(rnd);
  my_card = mine;
  forced_dgram = gasneti_knob_is_set("GASNET_UDP_DATAGRAM")
                     ? (uint32_t)gasneti_knob_size("GASNET_UDP_DATAGRAM") : 0;
  udp.peer_at = gasneti_calloc(gasneti_nodes, sizeof *udp.peer_at);
  gasneti_bootstrap_publish(&mine, sizeof mine);
  /* The job's tag and control key: from the spawner's secret (it never crossed the network in
   * the clear), else rank 0's random ones, as private as the spawner's channel that carries its
   * card (then every rank looks rank 0 up now). */
  if (keyed) {
    uint8_t tag[16];
    gasneti_derive_key(gasneti_boot->secret, "gasnet-udp-tag", tag);
    memcpy(&udp.tag, tag, sizeof udp.tag);
    gasneti_derive_key(gasneti_boot->secret, "gasnet-udp-control", udp.ctl_key);
  } else {
    udp_card_t first = mine;
    if (gasneti_mynode != 0) gasneti_bootstrap_lookup(0, &first, sizeof first);
    first_card = first;
    have_first_card = true;
    udp.tag = first.tag;
    memcpy(udp.ctl_key, first.key, sizeof udp.ctl_key);
  }
  udp.tag |= 1; /* never 0 */
  choose_gro();
  udp.timers_at = udp_now(); /* a first send followed by long computing is an absence too */
  start_liveness_thread();

  gasneti_credits_setup(&udp.credits, "udp");
  /* Datagrams in flight, received ones waiting for delivery, and a receive batch. */
  uint32_t blocks = udp.depth_total < 4096 ? udp.depth_total + 128 : 4096;
  if (!udp_pool_init(&udp.pool, blocks))
    gasneti_fatalerror("udp: cannot reserve %u packet buffers of 64 KiB", blocks);
  udp.active = gasneti_calloc(gasneti_nodes, sizeof *udp.active);
  udp.dirty = gasneti_calloc(gasneti_nodes, sizeof *udp.dirty);
  udp.dirty_spare = gasneti_calloc(gasneti_nodes, sizeof *udp.dirty_spare);
  udp.outcap = 256;
  udp.out = gasneti_calloc((size_t)udp.outcap, sizeof *udp.out);
  udp.acks = gasneti_calloc((size_t)udp.outcap, sizeof *udp.acks);
  udp.next_check = -1;
  udp_recv_init();
  gasneti_boot->barrier(); /* every socket is open before anyone sends */
}

void gasnetc_udp_start_receive_thread(void);
/* Nothing to register with the network; the receive thread starts now that handlers exist. */
void gasnetc_attach(void *segment, uintptr_t size) {
  (void)segment, (void)size;
  gasnetc_udp_start_receive_thread();
}

bool gasnetc_am_request(gasnet_node_t dest, const gasneti_am_t *am) {
  return udp_send_am(dest, am, NULL);
}

bool gasnetc_am_reply(gasneti_token_t *request, const gasneti_am_t *am) {
  return udp_send_am(request->src, am, request);
}

int gasnetc_poll(int which) {
  udp_lock_take();
  if (!udp_send_waiting) udp.poll_epoch++;
  udp_receive();
  if (udp.next_check >= 0) {
    double now = udp_now();
    if (now >= udp.next_check) udp_check_timers(now);
  }
  bool held = udp.nheld != 0;
  udp_lock_drop();
  if (held) udp_meet_held(); /* first datagrams from ranks not met yet */
  if (atomic_load_explicit(&udp_probed, memory_order_relaxed)) udp_meet_probers();
  int ran = 0;
  if (which & GASNETI_POLL_REQUESTS) {
#if GASNETI_THREADS
    if (gasneti_spin_trylock(&udp_deliver)) {
      ran = udp_deliver_ready();
      gasneti_spin_unlock(&udp_deliver);
    }
#else
    ran = udp_deliver_ready();
#endif
  }
  udp_lock_take();
  if (udp.ndirty) udp_flush_all();
  udp_lock_drop();
  return ran;
}

/* A sleeping rank wakes on its socket, or when a retransmission falls due. Acknowledgements
 * that wait for a packet to ride on (UDP_ACK_DELAY), datagrams held while their sender is looked
 * up and probers to meet are work due now. */
int gasnetc_wait_fds(struct pollfd *fds, double *deadline) {
  if (udp.ndirty || udp.nheld || atomic_load_explicit(&udp_probed, memory_order_relaxed))
    return -1;
  fds[0] = (struct pollfd){.fd = udp.sock.fd, .events = POLLIN};
  *deadline = udp.next_check;
  return 1;
}

/* Best effort and prompt: each other-host peer hears it three times (a lost notice only costs
 * the agent's leave signal, within GASNET_EXITTIMEOUT). */
void gasnetc_exit_notify(int code) {
#if GASNETI_THREADS
  /* The send queue is shared with other threads, and with whatever a signal interrupted on
   * this one: only under its lock, and not at all if the lock stays taken (best effort). */
  double until = udp_now() + 0.1;
  while (!gasneti_spin_trylock(&udp_lock))
    if (udp_now() > until) return;
#endif
  /* Messages gathered in open packets go first (a barrier's last round may be among them:
   * the peers finish that barrier before they follow). Not from a signal handler: the code
   * it interrupted may be filling one of them. */
  if (!gasneti_exit_in_signal)
    for (int i = 0; i < udp.nmet; i++)
      if (!udp_peer(udp.met[i])->finished) udp_flush_peer(udp.met[i], false);
  /* The peers it met: the others hear of the exit from their agents. */
  for (int round = 0; round < 3; round++)
    for (int i = 0; i < udp.nmet; i++)
      if (gasneti_host_of[udp.met[i]] != gasneti_host_of[gasneti_mynode])
        udp_send_control(udp.met[i], UDP_EXIT, code);
  udp_send_now();
  udp_lock_drop();
}

/* Returning from main: what this rank sent should still arrive (its peers may wait for it),
 * so it lingers until everything is acknowledged (at most a second), then tells its peers not
 * to wait for its acknowledgements any more. */
void gasnetc_fini(void) {
  double until = udp_now() + 1.0;
  while (udp.in_flight && udp_now() < until) gasnetc_poll(GASNETI_POLL_REPLIES);
  udp_meet_held(); /* a peer whose first datagram is still held waits for this rank too */
  /* Only the peers it met can be waiting for it. */
  udp_lock_take();
  for (int round = 0; round < 2; round++)
    for (int i = 0; i < udp.nmet; i++) udp_send_control(udp.met[i], UDP_FINISHED, 0);
  udp_send_now();
  udp_lock_drop();
}

/* ---- GASNET_RCV_THREAD ------------------------------------------------------------------------ */
#if GASNETI_THREADS
static void *receive_thread(void *arg) {
  (void)arg;
  struct pollfd pfd = {.fd = udp.sock.fd, .events = POLLIN};
  for (;;) {
    poll(&pfd, 1, 100); /* asleep until a datagram comes (or a retransmission may be due) */
    gasneti_poll(GASNETI_POLL_ALL);
  }
  return NULL;
}
#endif

void gasnetc_udp_start_receive_thread(void) {
  if (!gasneti_knob_bool("GASNET_RCV_THREAD")) return;
#if GASNETI_THREADS
  pthread_t t;
  if (pthread_create(&t, NULL, receive_thread, NULL) != 0)
    gasneti_fatalerror("udp: cannot start the GASNET_RCV_THREAD thread");
  pthread_detach(t);
#else
  gasneti_fatalerror("GASNET_RCV_THREAD=1 needs the PAR library (handlers would run on a second "
                     "thread): build the program with udp-par.mak or unset it");
#endif
}
