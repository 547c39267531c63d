/* name_tag.c: the part of a job's shared names (its /dev/shm objects, its wake sockets, a
 * conduit library's regions) that no other user can compute. The job id is visible to every
 * local user (gasnetrun's control socket is listed in /proc/net/unix), so a name made of the
 * job id, the host and the rank alone can be created first by a hostile process, and every
 * rank's O_EXCL create then fails. Each object's tag is its own (a keyed hash of its kind and
 * rank): the names that exist are visible too (/dev/shm can be listed, abstract sockets are in
 * /proc/net/unix), and one of them must tell nothing of the next. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "bootstrap.h"
#include "pshm.h"
#include "siphash.h"

static uint8_t name_key[16];
static bool have_key;

void gasneti_name_tag_init(void) {
  if (gasneti_boot->has_secret) {
    /* gasnetrun's cookie never crossed the network in the clear nor sits in a visible name. */
    gasneti_derive_key(gasneti_boot->secret, "gasnet-shared-names", name_key);
  } else {
    /* Rank 0's random key, through the spawner's exchange: as private as its channel. */
    uint8_t mine[16], *all = gasneti_calloc(gasneti_nodes, sizeof mine);
    if (getrandom(mine, sizeof mine, 0) != (ssize_t)sizeof mine)
      gasneti_fatalerror("cannot read random bytes for the job's shared-memory names: %s",
                         strerror(errno));
    gasneti_bootstrap_exchange(mine, sizeof mine, all);
    memcpy(name_key, all, sizeof name_key);
    free(all);
  }
  have_key = true;
}

void gasneti_name_tag(char kind, int rank, char out[17]) {
  if (!have_key) gasneti_fatalerror("internal: a shared name before the job's name key");
  char what[32];
  int n = snprintf(what, sizeof what, "%c:%d", kind, rank);
  uint64_t h = gasneti_siphash24(name_key, what, (size_t)n);
  snprintf(out, 17, "%016llx", (unsigned long long)h);
}
