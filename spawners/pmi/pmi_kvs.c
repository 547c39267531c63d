/* pmi_kvs.c: the bootstrap collectives over a string key-value store (PMI-1, PMI-2). An
 * exchange puts this rank's blob as hex under keys g<exchange>.<rank>.<part>, each part short
 * enough for the protocol's value limit, fences, and reads every rank's parts back. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "pmi_kvs.h"

#include "gasnet_internal.h"

/* Raw bytes per value: two hex digits each plus a leading 'x' (so no value is empty, which
 * some servers refuse), within the protocol's limit and a size every server accepts. */
#define PART_MAX 256

static const gasneti_pmi_kvs_t *kvs;
static unsigned long exchanges;
static int finalized;

static size_t part_size(void) {
  size_t n = kvs->value_max > 2 ? (kvs->value_max - 1) / 2 : 0;
  return n > PART_MAX ? PART_MAX : n;
}

static void encode(const unsigned char *in, size_t len, char *out) {
  static const char digits[] = "0123456789abcdef";
  *out++ = 'x';
  for (size_t i = 0; i < len; i++) {
    *out++ = digits[in[i] >> 4];
    *out++ = digits[in[i] & 15];
  }
  *out = 0;
}

static int nibble(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

/* Decodes exactly len bytes, or says why the value is not what this rank's peer put. */
static void decode(const char *value, unsigned char *out, size_t len, int rank) {
  if (value[0] != 'x' || strlen(value + 1) != 2 * len)
    gasneti_fatalerror("pmi spawner (%s): rank %d's part of exchange %lu is malformed "
                       "(%zu characters, expected %zu)", kvs->protocol, rank, exchanges,
                       strlen(value), 2 * len + 1);
  for (size_t i = 0; i < len; i++) {
    int hi = nibble(value[1 + 2 * i]), lo = nibble(value[2 + 2 * i]);
    if (hi < 0 || lo < 0)
      gasneti_fatalerror("pmi spawner (%s): rank %d's part of exchange %lu is not hex",
                         kvs->protocol, rank, exchanges);
    out[i] = (unsigned char)(hi << 4 | lo);
  }
}

static void kvs_exchange(const void *mine, size_t len, void *all) {
  size_t part = part_size();
  size_t parts = len ? (len + part - 1) / part : 1;
  char key[64], value[2 * PART_MAX + 2];
  exchanges++;
  for (size_t p = 0; p < parts; p++) {
    size_t off = p * part, n = len - off < part ? len - off : part;
    snprintf(key, sizeof key, "g%lu.%d.%zu", exchanges, kvs->rank, p);
    encode((const unsigned char *)mine + off, len ? n : 0, value);
    kvs->put(key, value);
  }
  kvs->fence();
  for (int r = 0; r < kvs->size; r++) {
    for (size_t p = 0; p < parts; p++) {
      size_t off = p * part, n = len - off < part ? len - off : part;
      snprintf(key, sizeof key, "g%lu.%d.%zu", exchanges, r, p);
      kvs->get(r, key, value, sizeof value);
      decode(value, (unsigned char *)all + (size_t)r * len + off, len ? n : 0, r);
    }
  }
}

static void kvs_barrier(void) { kvs->fence(); }

/* The card under keys c.<rank>.<part>: a lookup reads one rank's parts from the server. */
static void kvs_publish(const void *card, size_t len) {
  size_t part = part_size();
  char key[64], value[2 * PART_MAX + 2];
  for (size_t off = 0, p = 0; off < len; off += part, p++) {
    size_t n = len - off < part ? len - off : part;
    snprintf(key, sizeof key, "c.%d.%zu", kvs->rank, p);
    encode((const unsigned char *)card + off, n, value);
    kvs->put(key, value);
  }
}

static int kvs_lookup(int rank, void *card, size_t len, int *ended) {
  (void)ended; /* a key-value store does not say */
  size_t part = part_size();
  char key[64], value[2 * PART_MAX + 2];
  for (size_t off = 0, p = 0; off < len; off += part, p++) {
    size_t n = len - off < part ? len - off : part;
    snprintf(key, sizeof key, "c.%d.%zu", rank, p);
    kvs->get(rank, key, value, sizeof value);
    decode(value, (unsigned char *)card + off, n, rank);
  }
  return 1;
}

/* Hydra drops the output its proxies have not yet forwarded when a rank aborts: the rank's
 * last words (a usage message, a fatal error) are handed over first. Error paths only. */
static void hand_over_output_then_abort(int code) {
  fflush(NULL);
  struct timespec pause = {0, 200 * 1000 * 1000};
  nanosleep(&pause, NULL);
  kvs->abort(code);
}

/* A rank leaving with 0 says goodbye; one leaving with an error does not, which the process
 * manager takes as an abnormal end: it ends the others and reports this code (srun with
 * --kill-on-bad-exit, which gasnetrun gives it). Hydra instead reports the signal it killed
 * the others with, so there a rank ending the job asks it to abort with the job's code. */
static void kvs_leaving(int code, int ends_job) {
  if (finalized) return;
  finalized = 1;
  if (code == 0)
    kvs->finalize();
  else if (ends_job && kvs->abort_on_error_exit)
    hand_over_output_then_abort(code);
}

static void kvs_abort(int code) {
  if (finalized) return;
  if (kvs->abort_on_error_exit)
    hand_over_output_then_abort(code);
  else
    kvs->abort(code);
}

void gasneti_pmi_kvs_bootstrap(const gasneti_pmi_kvs_t *k, gasneti_bootstrap_t *boot) {
  kvs = k;
  if (part_size() < 8)
    gasneti_fatalerror("pmi spawner (%s): the server's value limit (%zu bytes) is too small",
                       k->protocol, k->value_max);
  *boot = (gasneti_bootstrap_t){.name = "pmi",
                                .rank = k->rank,
                                .size = k->size,
                                .exchange = kvs_exchange,
                                .barrier = kvs_barrier,
                                .leaving = kvs_leaving,
                                .abort = kvs_abort,
                                .publish = kvs_publish,
                                .lookup = kvs_lookup};
  /* The job id names shared-memory objects: a short hash of the process manager's name for
   * the job, which is the same on every host of the job. */
  uint64_t h = 1469598103934665603ull;
  for (const char *p = k->job; *p; p++) h = (h ^ (unsigned char)*p) * 1099511628211ull;
  snprintf(boot->jobid, sizeof boot->jobid, "p%016llx", (unsigned long long)h);
}
