/* hostmap.c: which ranks share a host, and how a host's ranks split into supernodes.
 * Hosts and supernodes are numbered in the order of their lowest rank. */
#include <sched.h>
#include <string.h>

#include "gasnet_internal.h"
#include "knobs.h"
#include "siphash.h"

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

/* What each rank says of itself: its host's name as a key, and the CPUs it may run on as a
 * progression (first, count, stride: all of a host's, one core, a core's hardware threads, a
 * socket's cores), 14 bytes on the wire. The key is the name's length in its top byte and a
 * hash of the name below: ranks are grouped by key, and the names themselves follow cut among
 * each host's ranks (names_by_slices), so that a rank receives a host's name once rather than
 * once per rank of it (docs/scale.md). CPUs that are no progression say only how many they
 * are (stride 0); no affinity known, none (count 0). */
enum { NAMELEN = sizeof gasneti_hostname, CARD_BYTES = 14 };
typedef struct {
  uint64_t key;
  uint16_t first, count, stride;
} host_card_t;

static size_t name_len(const char *name) { return strnlen(name, NAMELEN - 1); }

static uint64_t name_key(const char *name) {
  static const uint8_t no_key[16]; /* a hash, not a secret */
  size_t len = name_len(name);
  return ((uint64_t)len << 56) | (gasneti_siphash24(no_key, name, len) >> 8);
}

static bool my_affinity(cpu_set_t *set) {
  return sched_getaffinity(0, sizeof *set, set) == 0 && CPU_COUNT(set) > 0;
}

/* This rank's CPUs into its card. */
static void my_progression(host_card_t *card) {
  cpu_set_t set;
  card->first = card->count = card->stride = 0;
  if (!my_affinity(&set)) return;
  int first = -1, prev = -1, stride = 0, count = 0;
  bool progression = true;
  for (int c = 0; c < CPU_SETSIZE; c++) {
    if (!CPU_ISSET(c, &set)) continue;
    if (first < 0) first = c;
    else if (count == 1) stride = c - prev;
    else if (c - prev != stride) progression = false;
    prev = c;
    count++;
  }
  card->first = (uint16_t)first; /* CPU_SETSIZE (1024) keeps every value in 16 bits */
  card->count = (uint16_t)count;
  card->stride = (uint16_t)(!progression ? 0 : count > 1 ? stride : 1);
}

static void card_pack(const host_card_t *c, uint8_t out[CARD_BYTES]) {
  memcpy(out, &c->key, 8);
  memcpy(out + 8, &c->first, 2);
  memcpy(out + 10, &c->count, 2);
  memcpy(out + 12, &c->stride, 2);
}

static void card_unpack(const uint8_t in[CARD_BYTES], host_card_t *c) {
  memcpy(&c->key, in, 8);
  memcpy(&c->first, in + 8, 2);
  memcpy(&c->count, in + 10, 2);
  memcpy(&c->stride, in + 12, 2);
}

/* The CPUs this host's ranks may run on together: a launcher that binds each rank to a core
 * of its own (Open MPI's mpirun does for two ranks) leaves every rank one CPU, which alone
 * would make the ranks look as if they outnumbered the host's cores. The union of the
 * progressions; a rank whose CPUs are no progression adds only their number (as a floor), so
 * the result is at worst too low (the ranks then yield when they need not: slower, never
 * stuck). 0: unknown. */
static int host_cpus(const host_card_t *cards, int n, int me) {
  cpu_set_t all;
  CPU_ZERO(&all);
  int least = 0;
  for (int r = 0; r < n; r++) {
    const host_card_t *c = &cards[r];
    if (gasneti_host_of[r] != gasneti_host_of[me]) continue;
    if (!c->stride) {
      if (c->count > least) least = c->count;
      continue;
    }
    for (int i = 0, cpu = c->first; i < c->count && cpu < CPU_SETSIZE; i++, cpu += c->stride)
      CPU_SET(cpu, &all);
  }
  return CPU_COUNT(&all) > least ? CPU_COUNT(&all) : least;
}

/* Numbers the hosts in the order of their lowest rank: ranks of one key (and, given names,
 * of one name) share a host. A hash table: 100,000 ranks on 10,000 hosts group in one pass.
 * Returns the number of hosts; first_of[h] is host h's lowest rank. */
static int group(int n, const uint64_t *keys, const char *names, int *first_of) {
  size_t cap = 16;
  while (cap < 2 * (size_t)n) cap *= 2;
  int *slot = gasneti_calloc(cap, sizeof(int)); /* a host's number + 1; 0: free */
  int hosts = 0;
  for (int r = 0; r < n; r++) {
    size_t i = (size_t)keys[r] & (cap - 1);
    for (;; i = (i + 1) & (cap - 1)) {
      int h = slot[i] - 1;
      if (h < 0) {
        first_of[hosts] = r;
        slot[i] = ++hosts;
        gasneti_host_of[r] = (gasnet_node_t)(hosts - 1);
        break;
      }
      int f = first_of[h];
      if (keys[f] == keys[r] &&
          (!names || strncmp(&names[(size_t)f * NAMELEN], &names[(size_t)r * NAMELEN], NAMELEN) == 0)) {
        gasneti_host_of[r] = (gasnet_node_t)h;
        break;
      }
    }
  }
  free(slot);
  return hosts;
}

/* A second hash of a name, independent of its key's: what each rank says its own host's name
 * is alongside its slice, against which every name put together is checked. */
static uint16_t name_check(const char *name) {
  static const uint8_t other_key[16] = {1};
  return (uint16_t)gasneti_siphash24(other_key, name, name_len(name));
}

/* Every host's name, cut among its ranks: the rank i-th on its host sends bytes [i*k, (i+1)*k)
 * of the name, k the longest name over the fewest ranks any host has (16 ranks a host with
 * names of up to 16 characters: a byte a rank), and a 16-bit check of its whole name. Two
 * hosts whose keys collided look like one here; the name put together is then one of theirs
 * at best, and a rank of the other says a check that does not match it (but for one collision
 * of the checks in 65,536). Every rank checks every rank's check, on the same data: all of them
 * agree whether a collision happened. */
static bool names_by_slices(int n, int hosts, const uint64_t *keys, const int *first_of,
                            char (*names)[NAMELEN]) {
  int *size = gasneti_calloc((size_t)hosts, sizeof(int)), *pos = gasneti_calloc((size_t)n, sizeof(int));
  for (int r = 0; r < n; r++) pos[r] = size[gasneti_host_of[r]]++;
  int fewest = n;
  size_t longest = 1;
  for (int h = 0; h < hosts; h++) {
    if (size[h] < fewest) fewest = size[h];
    size_t len = (size_t)(keys[first_of[h]] >> 56);
    if (len > longest) longest = len;
  }
  size_t k = (longest + (size_t)fewest - 1) / (size_t)fewest, blob = k + 2;
  uint8_t *mine = gasneti_calloc(blob, 1), *all = gasneti_calloc((size_t)n, blob);
  size_t from = (size_t)pos[gasneti_mynode] * k, mylen = name_len(gasneti_hostname);
  if (from < mylen) memcpy(mine, gasneti_hostname + from, mylen - from < k ? mylen - from : k);
  uint16_t check = name_check(gasneti_hostname);
  memcpy(mine + k, &check, 2);
  gasneti_bootstrap_exchange(mine, blob, all);
  for (int r = 0; r < n; r++) {
    int h = gasneti_host_of[r];
    size_t at = (size_t)pos[r] * k, len = (size_t)(keys[first_of[h]] >> 56);
    if (at < len) memcpy(&names[h][at], &all[(size_t)r * blob], len - at < k ? len - at : k);
  }
  bool ok = true;
  for (int h = 0; h < hosts && ok; h++) ok = name_key(names[h]) == keys[first_of[h]];
  for (int r = 0; r < n && ok; r++) {
    memcpy(&check, &all[(size_t)r * blob + k], 2);
    ok = check == name_check(names[gasneti_host_of[r]]);
  }
  free(all);
  free(mine);
  free(pos);
  free(size);
  return ok;
}

void gasneti_hostmap_build(void) {
  int n = gasneti_nodes;
  host_card_t mine = {.key = name_key(gasneti_hostname)};
  my_progression(&mine);
  uint8_t packed[CARD_BYTES], *wire = gasneti_calloc((size_t)n, CARD_BYTES);
  card_pack(&mine, packed);
  gasneti_bootstrap_exchange(packed, CARD_BYTES, wire);
  host_card_t *cards = gasneti_calloc((size_t)n, sizeof *cards);
  for (int r = 0; r < n; r++) card_unpack(&wire[(size_t)r * CARD_BYTES], &cards[r]);
  free(wire);
  uint64_t *keys = gasneti_calloc((size_t)n, sizeof *keys);
  for (int r = 0; r < n; r++) keys[r] = cards[r].key;

  gasneti_host_of = gasneti_calloc((size_t)n, sizeof *gasneti_host_of);
  int *first_of_host = gasneti_calloc((size_t)n, sizeof(int));
  int hosts = group(n, keys, NULL, first_of_host);
  host_names = gasneti_calloc((size_t)hosts, sizeof *host_names);
  if (!names_by_slices(n, hosts, keys, first_of_host, host_names)) {
    /* Two hosts' keys collided (about one job in 10^9 at 10,000 hosts: 5 x 10^7 pairs of
     * hosts, 2^56 keys): every rank says its whole name, and ranks group by name. */
    char *all = gasneti_calloc((size_t)n, NAMELEN);
    gasneti_bootstrap_exchange(gasneti_hostname, NAMELEN, all);
    hosts = group(n, keys, all, first_of_host);
    free(host_names);
    host_names = gasneti_calloc((size_t)hosts, sizeof *host_names);
    for (int h = 0; h < hosts; h++)
      memcpy(host_names[h], &all[(size_t)first_of_host[h] * NAMELEN], NAMELEN - 1);
    free(all);
  }
  free(keys);
  gasneti_host_cpus = host_cpus(cards, n, gasneti_mynode);
  free(cards);
  gasneti_host_count = (gasnet_node_t)hosts;

  gasneti_supernode_of = gasneti_calloc((size_t)n, sizeof *gasneti_supernode_of);
  gasneti_host_local = gasneti_calloc((size_t)n, sizeof *gasneti_host_local);
  gasneti_pshm_offset = gasneti_calloc((size_t)n, sizeof *gasneti_pshm_offset);
  gasneti_pshm_reach = gasneti_calloc((size_t)n, sizeof *gasneti_pshm_reach);
  gasneti_pshm_direct = gasneti_calloc((size_t)n, sizeof *gasneti_pshm_direct);
  for (int r = 0; r < n; r++) gasneti_pshm_direct[r] = GASNETI_PSHM_FAR; /* until attach */
  int *ranks_seen = gasneti_calloc((size_t)n, sizeof(int)); /* per host, so far */
  int64_t maxsize = gasneti_knob_int("GASNET_SUPERNODE_MAXSIZE");
  if (maxsize == 0) maxsize = n;

  int snodes = 0;
  int *open_snode = gasneti_calloc((size_t)n, sizeof(int)); /* per host: its newest supernode */
  for (int r = 0; r < n; r++) {
    int h = gasneti_host_of[r];
    /* Every maxsize-th rank of a host opens the host's next supernode. */
    if (ranks_seen[h]++ % maxsize == 0) open_snode[h] = snodes++;
    gasneti_supernode_of[r] = (gasnet_node_t)open_snode[h];
  }
  gasneti_supernode_count = (gasnet_node_t)snodes;

  gasnet_node_t me = gasneti_mynode;
  gasneti_host_peers = gasneti_calloc((size_t)n, sizeof(gasnet_node_t));
  gasneti_snode_peers = gasneti_calloc((size_t)n, sizeof(gasnet_node_t));
  gasneti_host_size = gasneti_snode_size = 0;
  for (int r = 0; r < n; r++) {
    gasneti_host_local[r] = -1;
    if (gasneti_host_of[r] == gasneti_host_of[me]) {
      if ((gasnet_node_t)r == me) gasneti_host_index = gasneti_host_size;
      gasneti_host_local[r] = gasneti_host_size;
      gasneti_host_peers[gasneti_host_size++] = (gasnet_node_t)r;
    }
    if (gasneti_supernode_of[r] == gasneti_supernode_of[me]) {
      gasneti_pshm_reach[r] = 1; /* the extended API reaches it by load/store */
      if ((gasnet_node_t)r == me) gasneti_snode_index = gasneti_snode_size;
      gasneti_snode_peers[gasneti_snode_size++] = (gasnet_node_t)r;
    }
  }
  free(open_snode);
  free(ranks_seen);
  free(first_of_host);
}
