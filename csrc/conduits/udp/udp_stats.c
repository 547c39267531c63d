/* udp_stats.c: the udp conduit's counters for the statistics (GASNET_STATSFILE, gasnetrun
 * --stats): what went out and came in on this rank's socket, and what the reliability layer
 * did with its data packets, summed over the peers it met. They answer why a job is slow on a
 * network: how many packets were sent again (after a timeout, or a hole in the selective
 * acknowledgements), how many arrived twice or early, and what the kernel dropped (a full
 * socket buffer on either side). */
#include <linux/sock_diag.h>
#include <sys/socket.h>

#include "udp_internal.h"

/* Datagrams the kernel dropped on arrival at this rank's socket (its receive buffer was full),
 * as SO_MEMINFO tells; -1 when the kernel does not say. */
static int64_t socket_drops(void) {
  uint32_t info[SK_MEMINFO_VARS] = {0};
  socklen_t len = sizeof info;
  if (udp.sock.fd < 0 || getsockopt(udp.sock.fd, SOL_SOCKET, SO_MEMINFO, info, &len) != 0 ||
      len <= SK_MEMINFO_DROPS * sizeof info[0])
    return -1;
  return info[SK_MEMINFO_DROPS];
}

void gasnetc_stats(gasnetc_stat_fn emit) {
  gasnetc_rel_counts_t sum = {0};
  if (udp.met)
    for (int i = 0; i < udp.nmet; i++) {
      const udp_peer_t *p = udp_peer(udp.met[i]);
      if (!p) continue;
      const gasnetc_rel_counts_t *c = &p->rel.counts;
      sum.sent += c->sent, sum.resent_timeout += c->resent_timeout;
      sum.resent_hole += c->resent_hole;
      sum.delivered += c->delivered, sum.held += c->held;
      sum.duplicates += c->duplicates, sum.beyond += c->beyond;
    }
  const udp_counts_t *u = &udp.counts;
  emit("UDP_PEERS_MET", (uint64_t)udp.nmet, -1);
  emit("UDP_DATAGRAMS_OUT", u->datagrams_out, (int64_t)u->bytes_out);
  emit("UDP_DATAGRAMS_IN", u->datagrams_in, (int64_t)u->bytes_in);
  emit("UDP_PACKETS_SENT", sum.sent, -1);
  emit("UDP_RESENT_TIMEOUT", sum.resent_timeout, -1);
  emit("UDP_RESENT_HOLE", sum.resent_hole, -1);
  emit("UDP_PACKETS_DELIVERED", sum.delivered, -1);
  emit("UDP_PACKETS_EARLY", sum.held, -1);
  emit("UDP_DUPLICATES", sum.duplicates, -1);
  emit("UDP_BEYOND_WINDOW", sum.beyond, -1);
  emit("UDP_ACKS_ALONE", u->acks_alone, -1);
  emit("UDP_PIECES_OUT", u->pieces_out, -1);
  emit("UDP_PROBES_OUT", u->probes_out, -1);
  emit("UDP_DROPPED_IN", u->dropped_in, -1);
  emit("UDP_NO_BUFFER", u->no_buffer, -1);
  emit("UDP_COPIED_IN", u->copied_in, -1);
  emit("UDP_REFUSED_OUT", udp.sock.refused, -1);
  int64_t drops = socket_drops();
  if (drops >= 0) emit("UDP_SOCKET_DROPS", (uint64_t)drops, -1);
}
