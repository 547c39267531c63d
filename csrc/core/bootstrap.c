/* bootstrap.c: choosing how this rank was started (the first spawner in the build's list that
 * claims the process, else a 1-rank job), and the checked exchange every caller uses. */
#include <pthread.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "conduit.h"
#include "gasnet_internal.h"
#include "knobs.h"

/* ---- a 1-rank job: no launcher, every collective is a copy ------------------------------- */
static void single_exchange(const void *mine, size_t len, void *all) { memmove(all, mine, len); }
static void single_barrier(void) {}
static void single_leaving(int code, int ends_job) { (void)code, (void)ends_job; }
static void single_abort(int code) { (void)code; }

static gasneti_bootstrap_t single = {.name = "single",
                                     .rank = 0,
                                     .size = 1,
                                     .exchange = single_exchange,
                                     .barrier = single_barrier,
                                     .leaving = single_leaving,
                                     .abort = single_abort};

/* One question and its answer at a time on the spawner's channel: a collective of the
 * application's thread and a lookup of the receive thread (a datagram from a rank not met
 * yet, arriving while the last start-up barrier ends) would read each other's answers. A
 * collective holding it never waits on another rank's progress, only on the spawner. */
static pthread_mutex_t channel_lock = PTHREAD_MUTEX_INITIALIZER;
static const gasneti_bootstrap_t *chosen;
static gasneti_bootstrap_t serialized;

static void serialized_exchange(const void *mine, size_t len, void *all) {
  pthread_mutex_lock(&channel_lock);
  chosen->exchange(mine, len, all);
  pthread_mutex_unlock(&channel_lock);
}

static void serialized_barrier(void) {
  pthread_mutex_lock(&channel_lock);
  chosen->barrier();
  pthread_mutex_unlock(&channel_lock);
}

static const gasneti_bootstrap_t *serialize(const gasneti_bootstrap_t *boot) {
  chosen = boot;
  serialized = *boot;
  serialized.exchange = serialized_exchange;
  serialized.barrier = serialized_barrier;
  return &serialized;
}

const gasneti_bootstrap_t *gasneti_bootstrap_choose(int *argc, char ***argv) {
  for (const gasneti_bootstrap_opener_t *o = gasneti_bootstrap_openers; o->open; o++) {
    const gasneti_bootstrap_t *boot = o->open(argc, argv);
    if (boot) return serialize(boot);
  }
  gasnetc_unlaunched(argc, argv);
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  snprintf(single.jobid, sizeof single.jobid, "s%ld-%lx", (long)getpid(), (long)ts.tv_nsec);
  return serialize(&single);
}

gasneti_bootstrap_counts_t gasneti_bootstrap_counts;

void gasneti_bootstrap_exchange(const void *mine, size_t len, void *all) {
  if (len > GASNETI_BOOTSTRAP_BLOB_MAX)
    gasneti_fatalerror("internal: a bootstrap exchange of %zu bytes per rank exceeds "
                       "GASNETI_BOOTSTRAP_BLOB_MAX (%d)", len, GASNETI_BOOTSTRAP_BLOB_MAX);
  gasneti_boot->exchange(mine, len, all);
  gasneti_bootstrap_counts.exchanges++;
  gasneti_bootstrap_counts.bytes += (uint64_t)len * (uint64_t)gasneti_boot->size;
}

/* ---- cards on demand ------------------------------------------------------------------------ */
static size_t card_len;
static unsigned char *card_table; /* every rank's card: the fallback without on-demand lookups */

void gasneti_bootstrap_publish(const void *card, size_t len) {
  if (card_len)
    gasneti_fatalerror("internal: a second bootstrap card published (one per rank and job)");
  if (len == 0 || len > GASNETI_BOOTSTRAP_BLOB_MAX)
    gasneti_fatalerror("internal: a bootstrap card of %zu bytes (1 to %d)", len,
                       GASNETI_BOOTSTRAP_BLOB_MAX);
  card_len = len;
  if (gasneti_boot->publish && gasneti_knob_bool("GASNET_ON_DEMAND_ADDRESSES")) {
    pthread_mutex_lock(&channel_lock);
    gasneti_boot->publish(card, len);
    pthread_mutex_unlock(&channel_lock);
    gasneti_boot->barrier(); /* every card is with the spawner before anyone looks one up */
    return;
  }
  card_table = gasneti_malloc((size_t)gasneti_boot->size * len);
  gasneti_bootstrap_exchange(card, len, card_table);
}

bool gasneti_bootstrap_cards_local(void) { return card_table != NULL; }

bool gasneti_bootstrap_lookup(int rank, void *card, size_t len) {
  if (len != card_len || rank < 0 || rank >= gasneti_boot->size)
    gasneti_fatalerror("internal: a lookup of rank %d's %zu-byte card (%d ranks, %zu-byte cards "
                       "published)", rank, len, gasneti_boot->size, card_len);
  if (card_table) {
    memcpy(card, card_table + (size_t)rank * len, len);
    return false;
  }
  int ended = 0;
  pthread_mutex_lock(&channel_lock);
  int found = gasneti_boot->lookup(rank, card, len, &ended);
  gasneti_bootstrap_counts.lookups++;
  gasneti_bootstrap_counts.bytes += len;
  pthread_mutex_unlock(&channel_lock);
  if (!found)
    gasneti_fatalerror("the %s spawner has no address card for rank %d (it ended before "
                       "publishing one, in gasnet_init or gasnet_attach?)", gasneti_boot->name,
                       rank);
  return ended != 0;
}
