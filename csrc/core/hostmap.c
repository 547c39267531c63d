/* hostmap.c: which ranks share a host, and how a host's ranks split into supernodes.
 * Hosts and supernodes are numbered in the order of their lowest rank. */
#include <sched.h>
#include <string.h>

#include "gasnet_internal.h"
#include "knobs.h"

gasnet_node_t *gasneti_host_of, *gasneti_supernode_of;
gasnet_node_t gasneti_host_count, gasneti_supernode_count;
gasnet_node_t *gasneti_host_peers, *gasneti_snode_peers;
int gasneti_host_size, gasneti_host_index, gasneti_snode_size, gasneti_snode_index;
int *gasneti_host_local;
uintptr_t *gasneti_pshm_offset;
uint8_t *gasneti_pshm_reach;
uintptr_t *gasneti_pshm_direct;
static char (*host_names)[64]; /* per host index, for messages */

const char *gasneti_host_name(gasnet_node_t rank) { return host_names[gasneti_host_of[rank]]; }

int gasneti_host_cpus;

/* What each rank says of itself: its host's name, and the CPUs it may run on (the first 128;
 * bit 127 set means "more": then the host's count stays unknown). */
enum { NAMELEN = sizeof gasneti_hostname };
typedef struct {
  char name[NAMELEN];
  uint64_t cpus[2];
} host_card_t;

static void my_cpus(uint64_t cpus[2]) {
  cpu_set_t set;
  cpus[0] = cpus[1] = 0;
  if (sched_getaffinity(0, sizeof set, &set) != 0) return;
  for (int c = 0; c < CPU_SETSIZE; c++)
    if (CPU_ISSET(c, &set)) cpus[c < 127 ? c / 64 : 1] |= 1ull << (c < 127 ? c % 64 : 63);
}

/* The CPUs this host's ranks may run on together: a launcher that binds each rank to a core
 * of its own (Open MPI's mpirun does for two ranks) leaves every rank one CPU, which alone
 * would make the ranks look as if they outnumbered the host's cores. 0: unknown. */
static int host_cpus(const host_card_t *cards, int n, int me) {
  uint64_t all[2] = {0, 0};
  for (int r = 0; r < n; r++) {
    if (strncmp(cards[r].name, cards[me].name, NAMELEN)) continue;
    if ((cards[r].cpus[1] >> 63) || !(cards[r].cpus[0] | cards[r].cpus[1])) return 0;
    all[0] |= cards[r].cpus[0];
    all[1] |= cards[r].cpus[1];
  }
  return __builtin_popcountll(all[0]) + __builtin_popcountll(all[1]);
}

void gasneti_hostmap_build(void) {
  int n = gasneti_nodes;
  host_card_t mine = {{0}, {0, 0}}, *cards = gasneti_calloc((size_t)n, sizeof *cards);
  memcpy(mine.name, gasneti_hostname, NAMELEN);
  my_cpus(mine.cpus);
  gasneti_bootstrap_exchange(&mine, sizeof mine, cards);
  gasneti_host_cpus = host_cpus(cards, n, gasneti_mynode);
  char *names = gasneti_calloc((size_t)n, NAMELEN);
  for (int r = 0; r < n; r++) memcpy(&names[r * NAMELEN], cards[r].name, NAMELEN);
  free(cards);

  gasneti_host_of = gasneti_calloc((size_t)n, sizeof *gasneti_host_of);
  gasneti_supernode_of = gasneti_calloc((size_t)n, sizeof *gasneti_supernode_of);
  gasneti_host_local = gasneti_calloc((size_t)n, sizeof *gasneti_host_local);
  gasneti_pshm_offset = gasneti_calloc((size_t)n, sizeof *gasneti_pshm_offset);
  gasneti_pshm_reach = gasneti_calloc((size_t)n, sizeof *gasneti_pshm_reach);
  gasneti_pshm_direct = gasneti_calloc((size_t)n, sizeof *gasneti_pshm_direct);
  for (int r = 0; r < n; r++) gasneti_pshm_direct[r] = GASNETI_PSHM_FAR; /* until attach */
  int *first_of_host = gasneti_calloc((size_t)n, sizeof(int));
  int *ranks_seen = gasneti_calloc((size_t)n, sizeof(int)); /* per host, so far */
  int64_t maxsize = gasneti_knob_int("GASNET_SUPERNODE_MAXSIZE");
  if (maxsize == 0) maxsize = n;

  int hosts = 0, snodes = 0;
  int *open_snode = gasneti_calloc((size_t)n, sizeof(int)); /* per host: its newest supernode */
  for (int r = 0; r < n; r++) {
    int h = 0;
    while (h < hosts && strncmp(&names[first_of_host[h] * NAMELEN], &names[r * NAMELEN], NAMELEN))
      h++;
    if (h == hosts) first_of_host[hosts++] = r;
    gasneti_host_of[r] = (gasnet_node_t)h;
    /* Every maxsize-th rank of a host opens the host's next supernode. */
    if (ranks_seen[h]++ % maxsize == 0) open_snode[h] = snodes++;
    gasneti_supernode_of[r] = (gasnet_node_t)open_snode[h];
  }
  gasneti_host_count = (gasnet_node_t)hosts;
  host_names = gasneti_calloc((size_t)hosts, sizeof *host_names);
  for (int h = 0; h < hosts; h++)
    snprintf(host_names[h], sizeof host_names[h], "%.63s", &names[first_of_host[h] * NAMELEN]);
  gasneti_supernode_count = (gasnet_node_t)snodes;

  gasnet_node_t me = gasneti_mynode;
  gasneti_host_peers = gasneti_calloc((size_t)n, sizeof(gasnet_node_t));
  gasneti_snode_peers = gasneti_calloc((size_t)n, sizeof(gasnet_node_t));
  gasneti_host_size = gasneti_snode_size = 0;
  for (int r = 0; r < n; r++) {
    gasneti_host_local[r] = -1;
    if (gasneti_host_of[r] == gasneti_host_of[me]) {
      if (r == me) gasneti_host_index = gasneti_host_size;
      gasneti_host_local[r] = gasneti_host_size;
      gasneti_host_peers[gasneti_host_size++] = (gasnet_node_t)r;
    }
    if (gasneti_supernode_of[r] == gasneti_supernode_of[me]) {
      gasneti_pshm_reach[r] = 1; /* the extended API reaches it by load/store */
      if (r == me) gasneti_snode_index = gasneti_snode_size;
      gasneti_snode_peers[gasneti_snode_size++] = (gasnet_node_t)r;
    }
  }
  free(open_snode);
  free(ranks_seen);
  free(first_of_host);
  free(names);
}
