/* udp_sock.c: the udp conduit's socket: choosing and binding its address, batched sends and
 * receives, and UDP segmentation offload (GSO out, GRO in) where the kernel has it. */
#include "udp_sock.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/udp.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#ifndef UDP_SEGMENT
#define UDP_SEGMENT 103
#endif
#ifndef UDP_GRO
#define UDP_GRO 104
#endif

enum { IP_UDP_HEADERS = 28, MAX_GSO_SEGMENTS = 64,
       SOCKET_BUFFER = 8 << 20 };

static int interface_mtu(int fd, const char *ifname) {
  struct ifreq req = {0};
  snprintf(req.ifr_name, sizeof req.ifr_name, "%.*s", (int)sizeof req.ifr_name - 1, ifname);
  return ioctl(fd, SIOCGIFMTU, &req) == 0 ? req.ifr_mtu : 1500;
}

/* Finds the IPv4 address to bind: by address, by interface name, or the first non-loopback
 * interface that is up. */
static bool choose_address(const char *want, struct sockaddr_in *addr, char *ifname,
                           size_t iflen, char *err, size_t errlen) {
  struct in_addr wanted;
  bool by_ip = want && *want && inet_pton(AF_INET, want, &wanted) == 1;
  struct ifaddrs *list;
  if (getifaddrs(&list) != 0) {
    snprintf(err, errlen, "cannot list network interfaces: %s", strerror(errno));
    return false;
  }
  const struct ifaddrs *found = NULL, *loopback = NULL;
  for (const struct ifaddrs *i = list; i; i = i->ifa_next) {
    if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET || !(i->ifa_flags & IFF_UP)) continue;
    const struct sockaddr_in *a = (const struct sockaddr_in *)i->ifa_addr;
    if (want && *want) {
      if ((by_ip && a->sin_addr.s_addr == wanted.s_addr) || (!by_ip && !strcmp(i->ifa_name, want))) {
        found = i;
        break;
      }
    } else if (i->ifa_flags & IFF_LOOPBACK) {
      if (!loopback) loopback = i;
    } else if (!found) {
      found = i;
    }
  }
  if (!found) found = want && *want ? NULL : loopback;
  if (!found) {
    if (want && *want)
      snprintf(err, errlen, "GASNET_UDP_ADDRESS='%s' names no IPv4 address or interface that is "
               "up on this host (accepted: an address such as 10.0.0.5 or an interface name "
               "such as eth0)", want);
    else
      snprintf(err, errlen, "this host has no IPv4 interface that is up");
    freeifaddrs(list);
    return false;
  }
  *addr = *(const struct sockaddr_in *)found->ifa_addr;
  addr->sin_port = 0;
  snprintf(ifname, iflen, "%s", found->ifa_name);
  freeifaddrs(list);
  return true;
}

bool udp_sock_open(udp_sock_t *s, const char *address, bool offload, char *err, size_t errlen) {
  *s = (udp_sock_t){.fd = -1};
  if (!choose_address(address, &s->self, s->ifname, sizeof s->ifname, err, errlen)) return false;
  s->fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (s->fd < 0) {
    snprintf(err, errlen, "cannot create a UDP socket: %s", strerror(errno));
    return false;
  }
  /* Large buffers keep bursts (a 1 MiB put is 16 datagrams on loopback) from being dropped;
   * the FORCE forms work for root, the plain ones up to the system's maximum otherwise. */
  int size = SOCKET_BUFFER;
  if (setsockopt(s->fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof size) != 0)
    setsockopt(s->fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof size);
  if (setsockopt(s->fd, SOL_SOCKET, SO_SNDBUFFORCE, &size, sizeof size) != 0)
    setsockopt(s->fd, SOL_SOCKET, SO_SNDBUF, &size, sizeof size);
  /* Never fragment at the IP level: an oversized datagram fails instead of crawling. */
  int pmtu = IP_PMTUDISC_DO;
  setsockopt(s->fd, IPPROTO_IP, IP_MTU_DISCOVER, &pmtu, sizeof pmtu);
  s->any = !(address && *address);
  struct sockaddr_in bound = s->self;
  if (s->any) bound.sin_addr.s_addr = htonl(INADDR_ANY);
  if (bind(s->fd, (struct sockaddr *)&bound, sizeof bound) != 0) {
    snprintf(err, errlen, "cannot bind a UDP socket to %s: %s", inet_ntoa(bound.sin_addr),
             strerror(errno));
    close(s->fd);
    s->fd = -1;
    return false;
  }
  socklen_t len = sizeof bound;
  getsockname(s->fd, (struct sockaddr *)&bound, &len);
  s->self.sin_port = bound.sin_port;
  s->mtu = interface_mtu(s->fd, s->ifname);
  if (offload) {
    int zero = 0, one = 1;
    /* Setting a 0 segment size probes for GSO without turning it on for plain sends. */
    s->gso = setsockopt(s->fd, IPPROTO_UDP, UDP_SEGMENT, &zero, sizeof zero) == 0;
    s->gro = setsockopt(s->fd, IPPROTO_UDP, UDP_GRO, &one, sizeof one) == 0;
  }
  return true;
}

void udp_sock_gro_off(udp_sock_t *s) {
  int zero = 0;
  if (s->gro && setsockopt(s->fd, IPPROTO_UDP, UDP_GRO, &zero, sizeof zero) == 0) s->gro = false;
}

void udp_sock_close(udp_sock_t *s) {
  if (s->fd >= 0) close(s->fd);
  s->fd = -1;
}

uint32_t udp_datagram_limit(int my_mtu, int peer_mtu, bool same_host) {
  if (same_host) return UDP_MAX_PAYLOAD; /* loopback: the kernel's largest datagram */
  int mtu = my_mtu < peer_mtu ? my_mtu : peer_mtu;
  int limit = mtu - IP_UDP_HEADERS;
  if (limit > UDP_MAX_PAYLOAD) limit = UDP_MAX_PAYLOAD;
  return limit < 512 ? 512 : (uint32_t)limit;
}

int udp_sock_mtu_now(const udp_sock_t *s) { return interface_mtu(s->fd, s->ifname); }

uint32_t udp_datagram_below(uint32_t size) {
  /* Jumbo, Ethernet, VXLAN, IPsec and WireGuard-like tunnels, IPv6's minimum, IPv4's minimum */
  static const int mtus[] = {9000, 1500, 1450, 1400, 1280, 576};
  for (size_t i = 0; i < sizeof mtus / sizeof mtus[0]; i++)
    if ((uint32_t)(mtus[i] - IP_UDP_HEADERS) < size) return (uint32_t)(mtus[i] - IP_UDP_HEADERS);
  return UDP_MIN_PATH_PAYLOAD;
}

/* ---- sending -------------------------------------------------------------------------------- */
enum { BATCH = 64 };

/* How many datagrams from out[i] can go as one GSO send: same peer, same size (the last may be
 * shorter), at most 64 and 64 KiB in all. */
static int gso_run(const udp_out_t *out, int i, int n) {
  int j = i + 1;
  uint32_t total = out[i].len;
  while (j < n && j - i < MAX_GSO_SEGMENTS && out[j].to == out[i].to &&
         out[j].len <= out[i].len && out[j - 1].len == out[i].len &&
         total + out[j].len <= UDP_MAX_PAYLOAD) {
    total += out[j].len;
    j++;
  }
  return j - i;
}

/* A datagram as up to 3 pieces: what is at buf, the payload sent from where it lies (the
 * kernel copies it straight from there), and the zeros that pad it. */
enum { MAX_PIECES = 3 };
static int pieces(const udp_out_t *o, struct iovec *iov) {
  static const uint8_t zeros[8];
  iov[0] = (struct iovec){(void *)o->buf, o->head};
  if (!o->ext) return 1;
  iov[1] = (struct iovec){(void *)o->ext, o->ext_len};
  uint32_t pad = o->len - o->head - o->ext_len;
  if (!pad) return 2;
  iov[2] = (struct iovec){(void *)zeros, pad};
  return 3;
}

/* Room for a datagram's control messages: its GSO segment size and its source address. */
enum { CONTROL = CMSG_SPACE(sizeof(uint16_t)) + CMSG_SPACE(sizeof(struct in_pktinfo)) };

/* A socket bound to every address sends to another host from the address that host knows
 * (a multi-homed host's route could pick another, and the peer would drop the datagram). */
static bool pinned(const udp_sock_t *s, const struct sockaddr_in *to) {
  return s->any && to->sin_addr.s_addr != htonl(INADDR_LOOPBACK);
}

/* Fills msg's control messages (into control, CONTROL bytes): a GSO segment size if segment,
 * the source address if pinned. */
static void add_control(const udp_sock_t *s, struct msghdr *msg, char *control, uint16_t segment) {
  msg->msg_control = control;
  msg->msg_controllen = CONTROL;
  memset(control, 0, CONTROL);
  size_t used = 0;
  struct cmsghdr *c = CMSG_FIRSTHDR(msg);
  if (segment) {
    c->cmsg_level = IPPROTO_UDP;
    c->cmsg_type = UDP_SEGMENT;
    c->cmsg_len = CMSG_LEN(sizeof segment);
    memcpy(CMSG_DATA(c), &segment, sizeof segment);
    used += CMSG_SPACE(sizeof segment);
    c = CMSG_NXTHDR(msg, c);
  }
  if (pinned(s, msg->msg_name)) {
    struct in_pktinfo info = {.ipi_spec_dst = s->self.sin_addr};
    c->cmsg_level = IPPROTO_IP;
    c->cmsg_type = IP_PKTINFO;
    c->cmsg_len = CMSG_LEN(sizeof info);
    memcpy(CMSG_DATA(c), &info, sizeof info);
    used += CMSG_SPACE(sizeof info);
  }
  msg->msg_controllen = used;
  if (!used) msg->msg_control = NULL;
}

static void send_gso(udp_sock_t *s, const udp_out_t *out, int count) {
  struct iovec iov[MAX_PIECES * MAX_GSO_SEGMENTS];
  size_t niov = 0;
  for (int k = 0; k < count; k++) niov += (size_t)pieces(&out[k], &iov[niov]);
  char control[CONTROL];
  struct msghdr msg = {.msg_name = (void *)out[0].to, .msg_namelen = sizeof *out[0].to,
                       .msg_iov = iov, .msg_iovlen = niov};
  add_control(s, &msg, control, (uint16_t)out[0].len);
  if (sendmsg(s->fd, &msg, 0) < 0 &&
      (errno == EINVAL || errno == EIO || errno == EOPNOTSUPP || errno == EMSGSIZE)) {
    s->gso = false; /* this path cannot: from now on, plain datagrams */
    const struct sockaddr_in *before = s->refused_to;
    uint32_t before_len = s->refused_len;
    s->refused_to = NULL;
    udp_sock_send(s, out, count);
    /* Unless the segments were only too large for a path whose MTU dropped (the kernel says
     * EINVAL for that too): the caller re-sizes them, and GSO goes on. */
    if (s->refused_to) s->gso = true;
    else s->refused_to = before, s->refused_len = before_len;
  }
}

void udp_sock_send(udp_sock_t *s, const udp_out_t *out, int n) {
  struct mmsghdr msgs[BATCH];
  struct iovec iov[MAX_PIECES * BATCH];
  char control[BATCH][CONTROL];
  int i = 0;
  while (i < n) {
    int run = s->gso ? gso_run(out, i, n) : 1;
    if (run > 1) {
      send_gso(s, &out[i], run);
      i += run;
      continue;
    }
    int m = 0;
    while (i < n && m < BATCH && (!s->gso || gso_run(out, i, n) == 1)) {
      struct iovec *own = &iov[MAX_PIECES * m];
      int count = pieces(&out[i], own);
      msgs[m] = (struct mmsghdr){.msg_hdr = {.msg_name = (void *)out[i].to,
                                             .msg_namelen = sizeof *out[i].to,
                                             .msg_iov = own, .msg_iovlen = (size_t)count}};
      add_control(s, &msgs[m].msg_hdr, control[m], 0);
      m++, i++;
    }
    int sent = 0;
    while (sent < m) {
      /* A lone datagram (a round trip's) goes by sendto, which is cheaper than a batch of one. */
      const struct msghdr *one = &msgs[sent].msg_hdr;
      int r = m - sent > 1 ? sendmmsg(s->fd, msgs + sent, (unsigned)(m - sent), 0)
              : one->msg_iovlen == 1 && !one->msg_control
                  ? (sendto(s->fd, one->msg_iov[0].iov_base, one->msg_iov[0].iov_len, 0,
                            one->msg_name, one->msg_namelen) < 0 ? -1 : 1)
                  : (sendmsg(s->fd, one, 0) < 0 ? -1 : 1);
      if (r > 0) {
        sent += r;
      } else if (r < 0 && errno == EINTR) {
        continue;
      } else if (r < 0 && errno == EMSGSIZE) {
        s->refused_to = msgs[sent].msg_hdr.msg_name;
        size_t len = 0;
        for (size_t k = 0; k < msgs[sent].msg_hdr.msg_iovlen; k++)
          len += msgs[sent].msg_hdr.msg_iov[k].iov_len;
        s->refused_len = (uint32_t)len;
        s->refused++;
        sent++; /* lost, until the caller sends it again re-sized */
      } else {
        s->refused++;
        sent++; /* refused (a full buffer, a dead peer's port): it counts as lost */
      }
    }
  }
}

/* ---- receiving ------------------------------------------------------------------------------ */
int udp_sock_recv(udp_sock_t *s, uint8_t *const *bufs, uint32_t cap, udp_in_t *in, int n) {
  struct mmsghdr msgs[BATCH];
  struct iovec iov[BATCH];
  char control[BATCH][CMSG_SPACE(sizeof(int))];
  if (n > BATCH) n = BATCH;
  for (int i = 0; i < n; i++) {
    iov[i] = (struct iovec){bufs[i], cap};
    msgs[i] = (struct mmsghdr){.msg_hdr = {.msg_name = &in[i].from,
                                           .msg_namelen = sizeof in[i].from, .msg_iov = &iov[i],
                                           .msg_iovlen = 1, .msg_control = s->gro ? control[i] : NULL,
                                           .msg_controllen = s->gro ? sizeof control[i] : 0}};
  }
  int got = recvmmsg(s->fd, msgs, (unsigned)n, MSG_DONTWAIT, NULL);
  if (got <= 0) return 0;
  for (int i = 0; i < got; i++) {
    in[i].buf = bufs[i];
    in[i].len = msgs[i].msg_len;
    in[i].segment = 0;
    if (msgs[i].msg_hdr.msg_flags & MSG_TRUNC) in[i].len = 0; /* not ours: too large */
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&msgs[i].msg_hdr); c;
         c = CMSG_NXTHDR(&msgs[i].msg_hdr, c))
      if (c->cmsg_level == IPPROTO_UDP && c->cmsg_type == UDP_GRO) {
        int segment;
        memcpy(&segment, CMSG_DATA(c), sizeof segment);
        in[i].segment = (uint32_t)segment;
      }
  }
  return got;
}

void udp_rx_arm(const udp_sock_t *s, udp_rx_t *rx, int slot, uint8_t *buf) {
  rx->bufs[slot] = buf;
  rx->iov[slot] = (struct iovec){buf, rx->cap};
  rx->msgs[slot] = (struct mmsghdr){.msg_hdr = {.msg_name = &rx->from[slot],
                                               .msg_namelen = sizeof rx->from[slot],
                                               .msg_iov = &rx->iov[slot], .msg_iovlen = 1,
                                               .msg_control = s->gro ? rx->control[slot] : NULL,
                                               .msg_controllen = s->gro ? sizeof rx->control[slot]
                                                                         : 0}};
}

int udp_rx_recv(udp_sock_t *s, udp_rx_t *rx, udp_in_t *in) {
  int offer = rx->want < 1 ? 1 : rx->want < rx->n ? rx->want : rx->n;
  int got;
  if (offer == 1) { /* recvmsg: a little cheaper than a batch of one */
    ssize_t len = recvmsg(s->fd, &rx->msgs[0].msg_hdr, MSG_DONTWAIT);
    got = len < 0 ? -1 : 1;
    if (len >= 0) rx->msgs[0].msg_len = (unsigned)len;
  } else {
    got = recvmmsg(s->fd, rx->msgs, (unsigned)offer, MSG_DONTWAIT, NULL);
  }
  if (got <= 0) {
    rx->want = 1;
    return 0;
  }
  if (got == offer) rx->want = 2 * offer < UDP_RX_BATCH ? 2 * offer : UDP_RX_BATCH;
  for (int i = 0; i < got; i++) {
    struct msghdr *h = &rx->msgs[i].msg_hdr;
    in[i].buf = rx->bufs[i];
    in[i].len = (h->msg_flags & MSG_TRUNC) ? 0 : rx->msgs[i].msg_len; /* too large: not ours */
    in[i].from = rx->from[i];
    in[i].segment = 0;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(h); c; c = CMSG_NXTHDR(h, c))
      if (c->cmsg_level == IPPROTO_UDP && c->cmsg_type == UDP_GRO) {
        int segment;
        memcpy(&segment, CMSG_DATA(c), sizeof segment);
        in[i].segment = (uint32_t)segment;
      }
    /* The kernel wrote these; the next receive into this slot needs them whole again. */
    h->msg_namelen = sizeof rx->from[i];
    h->msg_controllen = s->gro ? sizeof rx->control[i] : 0;
  }
  return got;
}
