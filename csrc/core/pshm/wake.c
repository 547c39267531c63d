/* wake.c: the wake sockets and sleeping words of a host's ranks (the protocol: wake.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "pshm.h"
#include "wake.h"

bool gasneti_wake_on;
static int wake_fd = -1; /* this rank's, bound to its name */
static int send_fd = -1; /* unbound: wakes leave from it */
static struct sockaddr_un *peer_addr; /* [host index] */
static socklen_t *peer_len;

/* An abstract name (a leading NUL: the kernel forgets it with the socket), per network
 * namespace, which is per host here; the job id and host name keep fake hosts that share one
 * apart, and the name tag (name_tag.c) keeps an outsider from binding it first. The host comes
 * last: a long one is cut, never the rank or the tag. */
static socklen_t name_of(struct sockaddr_un *a, int rank) {
  memset(a, 0, sizeof *a);
  a->sun_family = AF_UNIX;
  char tag[17];
  gasneti_name_tag('w', rank, tag);
  int n = snprintf(a->sun_path + 1, sizeof a->sun_path - 1, "gasnet-%s-w%d-%s-%s", gasneti_jobid,
                   rank, tag, gasneti_hostname);
  if (n < 0 || (size_t)n >= sizeof a->sun_path - 1) n = (int)sizeof a->sun_path - 2;
  return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n);
}

bool gasneti_wake_init(bool sleep) {
  if (!sleep) return false;
  struct sockaddr_un me;
  socklen_t len = name_of(&me, (int)gasneti_mynode);
  wake_fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (wake_fd < 0 || bind(wake_fd, (const struct sockaddr *)&me, len) != 0) {
    gasneti_warning("rank %d cannot open its wake socket (@%s): %s; it yields instead of "
                    "sleeping while it waits", (int)gasneti_mynode, me.sun_path + 1,
                    strerror(errno));
    if (wake_fd >= 0) close(wake_fd);
    wake_fd = -1;
    return false;
  }
  atomic_fetch_or(&gasneti_host_leader_region->host_sleeps, 1);
  return true;
}

void gasneti_wake_attach(void) {
  if (!atomic_load(&gasneti_host_leader_region->host_sleeps)) return;
  int n = gasneti_host_size;
  peer_addr = gasneti_calloc((size_t)n, sizeof *peer_addr);
  peer_len = gasneti_calloc((size_t)n, sizeof *peer_len);
  for (int i = 0; i < n; i++) peer_len[i] = name_of(&peer_addr[i], (int)gasneti_host_peers[i]);
  send_fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (send_fd < 0) gasneti_fatalerror("cannot open a socket to wake host peers: %s", strerror(errno));
  gasneti_wake_on = true;
}

void gasneti_wake_peer_slow(int i) {
  /* Orders this rank's earlier stores (the message, the slot) before the look at the word:
   * the sleeper fences between its word and its last look, so one of the two sees the other. */
  atomic_thread_fence(memory_order_seq_cst);
  _Atomic uint32_t *word = &gasneti_regions[i]->sleeping;
  if (!atomic_load_explicit(word, memory_order_relaxed) || !atomic_exchange(word, 0)) return;
  char b = 0;
  /* A full socket already holds a wake. */
  (void)!sendto(send_fd, &b, 1, MSG_DONTWAIT, (const struct sockaddr *)&peer_addr[i], peer_len[i]);
}

void gasneti_wake_host(void) {
  if (!gasneti_wake_on) return;
  for (int i = 0; i < gasneti_host_size; i++)
    if (i != gasneti_host_index) gasneti_wake_peer_slow(i);
}

int gasneti_wake_fd(void) { return wake_fd; }

void gasneti_wake_arm(void) {
  atomic_store_explicit(&gasneti_regions[gasneti_host_index]->sleeping, 1, memory_order_relaxed);
  atomic_thread_fence(memory_order_seq_cst);
}

void gasneti_wake_disarm(void) {
  atomic_store_explicit(&gasneti_regions[gasneti_host_index]->sleeping, 0, memory_order_relaxed);
}

/* Bounded: a local process that floods the socket (it has a name anyone on the host can send
 * to) only keeps the rank awake, as yielding would; the bytes mean nothing. */
void gasneti_wake_drain(void) {
  char buf[64];
  for (int i = 0; i < 256 && recv(wake_fd, buf, sizeof buf, MSG_DONTWAIT) > 0; i++) {
  }
}
