/* raw_udp.h: the physical baselines of the udp conduit, measured between ranks 0 and 1 of the
 * same job with plain sockets and no GASNet code on the path: a busy-polled UDP ping-pong
 * (raw_udp_rtt) and a UDP stream of 1 MiB messages, each acknowledged (raw_udp_stream). The
 * conduit's figures are read as ratios to these, taken in the same run. Loopback only: both
 * ranks must share a host (the benchmark setting of the conduit's targets). */
#ifndef RAW_UDP_H
#define RAW_UDP_H

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bench_util.h"

typedef struct {
  int fd;
  struct sockaddr_in peer;
} raw_udp_t;

/* Collective: opens rank 0's and rank 1's sockets and tells each the other's port through
 * their segments (offset off of each segment is scratch). Returns whether this rank takes part
 * (ranks 0 and 1, when they share a host). */
static inline int raw_udp_open(raw_udp_t *u, gasnet_seginfo_t *seg, size_t off) {
  gasnet_nodeinfo_t info[2];
  gasnet_getNodeInfo(info, 2);
  int me = (int)gasnet_mynode();
  if (info[0].host != info[1].host || me > 1) {
    for (int i = 0; i < 2; i++) {
      gasnet_barrier_notify(0, GASNET_BARRIERFLAG_ANONYMOUS);
      gasnet_barrier_wait(0, GASNET_BARRIERFLAG_ANONYMOUS);
    }
    return 0;
  }
  u->fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0);
  struct sockaddr_in addr = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  int size = 8 << 20;
  if (setsockopt(u->fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof size) != 0)
    setsockopt(u->fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof size);
  if (u->fd < 0 || bind(u->fd, (struct sockaddr *)&addr, sizeof addr) != 0) {
    perror("raw_udp: socket");
    gasnet_exit(1);
  }
  socklen_t len = sizeof addr;
  getsockname(u->fd, (struct sockaddr *)&addr, &len);
  uint16_t port = addr.sin_port, peer_port = 0;
  *(volatile uint16_t *)((char *)seg[me].addr + off) = port;
  gasnet_barrier_notify(0, GASNET_BARRIERFLAG_ANONYMOUS);
  gasnet_barrier_wait(0, GASNET_BARRIERFLAG_ANONYMOUS);
  gasnet_get(&peer_port, (gasnet_node_t)(1 - me), (char *)seg[1 - me].addr + off, sizeof port);
  /* The peer's get may still need this rank to serve it: poll until both have their answer
   * (the benchmarks below leave GASNet alone). */
  gasnet_barrier_notify(0, GASNET_BARRIERFLAG_ANONYMOUS);
  gasnet_barrier_wait(0, GASNET_BARRIERFLAG_ANONYMOUS);
  u->peer = addr;
  u->peer.sin_port = peer_port;
  return 1;
}

static inline void raw_udp_send(raw_udp_t *u, const void *buf, size_t n) {
  while (sendto(u->fd, buf, n, 0, (struct sockaddr *)&u->peer, sizeof u->peer) < 0) {
    if (errno != EAGAIN && errno != EWOULDBLOCK && errno != ENOBUFS && errno != EINTR) {
      perror("raw_udp: sendto");
      gasnet_exit(1);
    }
  }
}

/* Busy-polls for one datagram; returns its length. */
static inline size_t raw_udp_recv(raw_udp_t *u, void *buf, size_t cap) {
  for (;;) {
    ssize_t got = recv(u->fd, buf, cap, MSG_DONTWAIT);
    if (got >= 0) return (size_t)got;
    if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
      perror("raw_udp: recv");
      gasnet_exit(1);
    }
  }
}

/* Round trips of a datagram of size bytes (an AMShort's size on the wire is about 32). */
static inline void raw_udp_rtt_bench(raw_udp_t *u, size_t size, long iters) {
  char buf[2048] = {0};
  double samples[64];
  for (int r = -1; r < repeats; r++) {
    double t0 = now_us();
    for (long i = 0; i < iters; i++) {
      if (gasnet_mynode() == 0) {
        raw_udp_send(u, buf, size);
        raw_udp_recv(u, buf, sizeof buf);
      } else {
        raw_udp_recv(u, buf, sizeof buf);
        raw_udp_send(u, buf, size);
      }
    }
    if (r >= 0) samples[r] = (now_us() - t0) / (double)iters;
  }
  if (gasnet_mynode() == 0) bench_report("raw_udp_rtt", "raw", size, "us", samples, iters);
}

/* Rank 0 streams messages of size bytes in datagrams of at most 65000 bytes; rank 1 answers
 * each complete message with one byte (the socket buffers hold a whole message, so loopback
 * drops nothing). */
static inline void raw_udp_stream_bench(raw_udp_t *u, char *buf, size_t size, long iters) {
  const size_t datagram = 65000;
  char ack = 0;
  double samples[64];
  for (int r = -1; r < repeats; r++) {
    double t0 = now_us();
    for (long i = 0; i < iters; i++) {
      if (gasnet_mynode() == 0) {
        for (size_t off = 0; off < size; off += datagram)
          raw_udp_send(u, buf + off, size - off < datagram ? size - off : datagram);
        raw_udp_recv(u, &ack, 1);
      } else {
        for (size_t got = 0; got < size;) got += raw_udp_recv(u, buf + got, datagram);
        raw_udp_send(u, &ack, 1);
      }
    }
    if (r >= 0) samples[r] = (now_us() - t0) / (double)iters;
  }
  if (gasnet_mynode() == 0)
    bench_report("raw_udp_stream", "raw", size, "GiB/s", samples, iters);
}

static inline void raw_udp_close(raw_udp_t *u) { close(u->fd); }

#endif
