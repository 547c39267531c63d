/* udp_sock.h: the udp conduit's socket I/O: one non-blocking UDP socket per rank, batches of
 * datagrams out with sendmmsg (runs of equal-size datagrams to one peer with UDP_SEGMENT) and
 * in with recvmmsg (coalesced runs split again when UDP_GRO is on). Knows nothing of AMs. */
#ifndef GASNETC_UDP_SOCK_H
#define GASNETC_UDP_SOCK_H

#include <netinet/in.h>
#include <sys/socket.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The largest UDP payload over IPv4, and so of a datagram, or of a GSO run of them, here. */
enum { UDP_MAX_PAYLOAD = 65507 };

typedef struct {
  int fd;
  struct sockaddr_in self; /* the address peers send to */
  char ifname[32];         /* its interface */
  int mtu;                 /* that interface's MTU */
  bool gso, gro;           /* segmentation offload in use, each way */
  /* Bound to every local address (no GASNET_UDP_ADDRESS): ranks of this host (and network
   * namespace) reach it on 127.0.0.1, the short way through the kernel; to other hosts it
   * sends from self's address (IP_PKTINFO), the one they know it by. */
  bool any;
  uint64_t refused;        /* datagrams the kernel refused (a full buffer, a dead port): lost */
  /* The kernel refused a datagram as larger than its path's MTU (EMSGSIZE: the interface's
   * MTU, or a route's that an ICMP "fragmentation needed" lowered, dropped mid-job): its
   * destination and size, for the caller to re-size what it sends there (NULL: none since the
   * caller last cleared it). The datagram counts as lost. */
  const struct sockaddr_in *refused_to;
  uint32_t refused_len;
} udp_sock_t;

/* Binds a socket on the address GASNET_UDP_ADDRESS names (an IPv4 address or an interface);
 * without one, on every local address, self being the first non-loopback interface that is
 * up, else 127.0.0.1. Returns false with a message naming the knob, the value and the
 * accepted form. */
bool udp_sock_open(udp_sock_t *s, const char *address, bool offload, char *err, size_t errlen);
/* Receives without GRO (no peer can send a run of two datagrams: a GRO socket's receive
 * costs ~0.4 us more here, and there would be nothing to merge). */
void udp_sock_gro_off(udp_sock_t *s);
void udp_sock_close(udp_sock_t *s);

typedef struct {
  const struct sockaddr_in *to;
  const void *buf;
  uint32_t len;     /* the whole datagram */
  uint32_t head;    /* bytes at buf: all of it, unless the rest is elsewhere (ext) */
  const void *ext;  /* the rest: ext_len bytes here, then zeros up to len */
  uint32_t ext_len;
} udp_out_t;

/* Sends every datagram (best effort: a datagram the kernel refuses is as good as lost, and the
 * reliability layer sends it again). Consecutive full datagrams of one size to one peer go in
 * one system call when GSO is on. */
void udp_sock_send(udp_sock_t *s, const udp_out_t *out, int n);

typedef struct {
  uint8_t *buf;     /* where the datagram(s) landed */
  uint32_t len;     /* bytes received */
  uint32_t segment; /* GRO: size of each datagram in buf (the last may be shorter); 0: one */
  struct sockaddr_in from;
} udp_in_t;

/* Receives up to n datagrams (or GRO runs) into bufs[0..n-1] of cap bytes each, without
 * waiting; returns how many. */
int udp_sock_recv(udp_sock_t *s, uint8_t *const *bufs, uint32_t cap, udp_in_t *in, int n);

/* A batch of receive buffers that stays armed from one poll to the next: the message headers
 * are written when a slot gets a buffer, not at every receive (an idle poll is one system
 * call). Received datagrams fill slots 0..got-1, which the caller then refills. */
enum { UDP_RX_BATCH = 32 };
typedef struct {
  int n;                                  /* armed slots: 0..n-1 */
  uint8_t *bufs[UDP_RX_BATCH];
  uint32_t cap;
  struct mmsghdr msgs[UDP_RX_BATCH];
  struct iovec iov[UDP_RX_BATCH];
  struct sockaddr_in from[UDP_RX_BATCH];
  char control[UDP_RX_BATCH][32];         /* one UDP_GRO cmsg */
  int want; /* slots offered to the next receive (1..n; 0 counts as 1): see udp_rx_recv */
} udp_rx_t;
void udp_rx_arm(const udp_sock_t *s, udp_rx_t *rx, int slot, uint8_t *buf);
/* Receives into the armed slots; in[i] describes slot i (i < the result). Offers the kernel
 * one slot while datagrams come one at a time (each slot beyond the first costs a receive
 * attempt, ~0.4 us on this VM, measured with sendto + recvmmsg ping-pongs) and doubles the
 * offer while every slot offered gets filled (a flood), back to one at the first empty poll. */
int udp_rx_recv(udp_sock_t *s, udp_rx_t *rx, udp_in_t *in);

/* The largest UDP payload to a peer: on one host the loopback's, else min of both MTUs. */
uint32_t udp_datagram_limit(int my_mtu, int peer_mtu, bool same_host);
/* The interface's MTU now (it may have dropped since udp_sock_open). */
int udp_sock_mtu_now(const udp_sock_t *s);
/* The largest UDP payload of the next common path MTU below a payload of size bytes (9000,
 * 1500, 1450, 1400, 1280, 576); UDP_MIN_PATH_PAYLOAD for sizes at or below it. */
enum { UDP_MIN_PATH_PAYLOAD = 576 - 28 };
uint32_t udp_datagram_below(uint32_t size);

#endif
