/* The sections of the self-test that cross to another rank: active messages (C), RMA (D) and
 * barriers (E). Each rank talks to its pair (rank ^ 1, itself when it has none), so that every
 * segment is written by one rank only and the sections need no locks between ranks. */
#include "diag.h"

#include <stdlib.h>
#include <string.h>

enum { MAX_THREADS = 256 };
enum { H_SHORT = GASNETI_DIAG_HIDX, H_MEDIUM, H_LONG, H_ACK, H_MEDIUM_ECHO };

/* What the payload of message `seq` of thread `t` of rank `src` holds at byte k: both sides
 * compute it, so a byte lost, moved or taken from another message shows. */
static uint8_t pattern(int src, int t, int seq, size_t k) {
  return (uint8_t)(seq * 131 + (int)k * 7 + t * 17 + src * 29 + (int)(k >> 8));
}

static size_t first_wrong(const uint8_t *p, size_t n, int src, int t, int seq) {
  for (size_t k = 0; k < n; k++)
    if (p[k] != pattern(src, t, seq, k)) return k;
  return n;
}

static gasnett_atomic_t acks[MAX_THREADS];

static int32_t check_word(int t, int seq) { return (int32_t)((uint32_t)seq * 2654435761u ^ (uint32_t)t); }

static void verify_args(const char *kind, gasnet_token_t token, int t, int seq, int32_t check) {
  gasnet_node_t src = 0;
  gasnet_AMGetMsgSource(token, &src);
  if (check != check_word(t, seq))
    gasneti_diag_fail("C", "an %s request from rank %u (thread %d, message %d) arrived with "
                           "argument 0x%x, sent as 0x%x", kind, (unsigned)src, t, seq,
                      (unsigned)check, (unsigned)check_word(t, seq));
}

static void h_short(gasnet_token_t token, gasnet_handlerarg_t t, gasnet_handlerarg_t seq,
                    gasnet_handlerarg_t check, gasnet_handlerarg_t zero) {
  verify_args("AMShort", token, t, seq, check);
  if (zero != 0) gasneti_diag_fail("C", "an AMShort's fourth argument arrived as %d, sent as 0", zero);
  gasnet_AMReplyShort1(token, H_ACK, t);
}

/* The arguments and payload of a Medium or Long request, checked where they arrived. */
static void verify_payload(const char *kind, gasnet_token_t token, const void *buf, size_t n,
                           int t, int seq, int32_t check, int sent) {
  gasnet_node_t src = 0;
  gasnet_AMGetMsgSource(token, &src);
  verify_args(kind, token, t, seq, check);
  size_t bad = first_wrong(buf, n, (int)src, t, seq);
  if (n != (size_t)sent || bad != n)
    gasneti_diag_fail("C", "an %s of %d bytes from rank %u arrived as %zu bytes at %p, the first "
                           "wrong at byte %zu", kind, sent, (unsigned)src, n, buf, bad);
}

static void h_medium(gasnet_token_t token, void *buf, size_t n, gasnet_handlerarg_t t,
                     gasnet_handlerarg_t seq, gasnet_handlerarg_t check,
                     gasnet_handlerarg_t sent) {
  verify_payload("AMMedium", token, buf, n, t, seq, check, sent);
  /* Echoed in a Medium reply, whose handler checks the same bytes on the way back. */
  gasnet_AMReplyMedium2(token, H_MEDIUM_ECHO, buf, n, t, seq);
}

static void h_long(gasnet_token_t token, void *buf, size_t n, gasnet_handlerarg_t t,
                   gasnet_handlerarg_t seq, gasnet_handlerarg_t check,
                   gasnet_handlerarg_t sent) {
  verify_payload("AMLong", token, buf, n, t, seq, check, sent);
  gasnet_AMReplyShort1(token, H_ACK, t);
}

static void h_ack(gasnet_token_t token, gasnet_handlerarg_t t);

static void h_medium_echo(gasnet_token_t token, void *buf, size_t n, gasnet_handlerarg_t t,
                          gasnet_handlerarg_t seq) {
  size_t bad = first_wrong(buf, n, (int)gasnet_mynode(), t, seq);
  if (bad != n)
    gasneti_diag_fail("C", "an AMMedium reply of %zu bytes came back wrong at byte %zu", n, bad);
  h_ack(token, t);
}

static void h_ack(gasnet_token_t token, gasnet_handlerarg_t t) {
  (void)token;
  if (t < 0 || t >= MAX_THREADS) {
    gasneti_diag_fail("C", "a reply named thread %d, which does not exist", t);
    return;
  }
  gasnett_atomic_increment(&acks[t], 0);
}

gasnet_handlerentry_t gasneti_diag_handlers[] = {
    {H_SHORT, (void (*)())h_short},
    {H_MEDIUM, (void (*)())h_medium},
    {H_LONG, (void (*)())h_long},
    {H_ACK, (void (*)())h_ack},
    {H_MEDIUM_ECHO, (void (*)())h_medium_echo},
};
const int gasneti_diag_handler_count =
    (int)(sizeof gasneti_diag_handlers / sizeof gasneti_diag_handlers[0]);

/* This thread's slice of the peer's segment in quarter q (2: AMLongs, 3: RMA), 8-aligned. */
static char *slice(gasnet_node_t rank, int quarter, int thread, size_t *len) {
  const gasnet_seginfo_t *s = &gasneti_diag.seg[rank];
  size_t per = (s->size / 4 / (size_t)gasneti_diag.nthreads) & ~(size_t)7;
  *len = per;
  return (char *)s->addr + s->size / 4 * (size_t)quarter + per * (size_t)thread;
}

void gasneti_diag_ams(int t) {
  if (t >= MAX_THREADS) return;
  gasnet_node_t peer = gasneti_diag.peer;
  int me = (int)gasnet_mynode();
  size_t long_room = 0;
  char *long_dest = slice(peer, 2, t, &long_room);
  size_t medium_sizes[] = {0, 1, 7, 512, gasnet_AMMaxMedium()};
  size_t long_max = gasnet_AMMaxLongRequest() < long_room ? gasnet_AMMaxLongRequest() : long_room;
  size_t long_sizes[] = {0, 1, 4099 < long_max ? 4099 : long_max, long_max};
  size_t biggest = gasnet_AMMaxMedium() > long_max ? gasnet_AMMaxMedium() : long_max;
  uint8_t *buf = malloc(biggest ? biggest : 1);
  if (!buf) {
    gasneti_diag_fail("C", "no memory for a %zu-byte payload", biggest);
    return;
  }
  gasnett_atomic_set(&acks[t], 0, 0);
  for (int seq = 0; seq < gasneti_diag.iters; seq++) {
    int32_t check = check_word(t, seq);
    switch (seq % 3) {
      case 0:
        gasnet_AMRequestShort4(peer, H_SHORT, t, seq, check, 0);
        break;
      case 1: {
        size_t n = medium_sizes[(seq / 3) % 5];
        for (size_t k = 0; k < n; k++) buf[k] = pattern(me, t, seq, k);
        gasnet_AMRequestMedium4(peer, H_MEDIUM, buf, n, t, seq, check, (int)n);
        break;
      }
      default: {
        size_t n = long_sizes[(seq / 3) % 4];
        for (size_t k = 0; k < n; k++) buf[k] = pattern(me, t, seq, k);
        gasnet_AMRequestLong4(peer, H_LONG, buf, n, long_dest, t, seq, check, (int)n);
      }
    }
    /* One message in flight per thread: a Long's bytes stay where they landed until its
     * handler has looked at them. */
    GASNET_BLOCKUNTIL(gasnett_atomic_read(&acks[t], 0) == (gasnett_atomic_val_t)(seq + 1));
  }
  free(buf);
}

/* ---- D: RMA --------------------------------------------------------------------------- */
static void expect(const char *what, const uint8_t *got, const uint8_t *want, size_t n) {
  for (size_t k = 0; k < n; k++)
    if (got[k] != want[k]) {
      gasneti_diag_fail("D", "%s of %zu bytes to rank %u: byte %zu read back as 0x%02x, written as "
                             "0x%02x", what, n, (unsigned)gasneti_diag.peer, k, got[k], want[k]);
      return;
    }
}

void gasneti_diag_rma(int t) {
  gasnet_node_t peer = gasneti_diag.peer;
  size_t room = 0;
  uint8_t *remote = (uint8_t *)slice(peer, 3, t, &room);
  size_t n = room < 65536 ? room : 65536;
  if (n < 64) {
    gasneti_diag_fail("D", "the segment of rank %u is too small for %d threads' RMA (%zu bytes "
                           "each)", (unsigned)peer, gasneti_diag.nthreads, room);
    return;
  }
  uint8_t *src = malloc(n), *back = malloc(n), *want = malloc(n);
  if (!src || !back || !want) {
    gasneti_diag_fail("D", "no memory for %zu-byte buffers", n);
    free(src), free(back), free(want);
    return;
  }
  for (int i = 0; i < gasneti_diag.iters; i++) {
    size_t len = 1 + (size_t)(i * 7919) % n, off = (size_t)(i * 13) % (n - len + 1);
    for (size_t k = 0; k < len; k++) src[k] = pattern((int)gasnet_mynode(), t, i, k);
    switch (i % 5) {
      case 0:
        gasnet_put(peer, remote + off, src, len);
        gasnet_get(back, peer, remote + off, len);
        expect("gasnet_put/gasnet_get", back, src, len);
        break;
      case 1: {
        gasnet_handle_t h = gasnet_put_nb_bulk(peer, remote + off, src, len);
        gasnet_wait_syncnb(h);
        h = gasnet_get_nb_bulk(back, peer, remote + off, len);
        gasnet_wait_syncnb(h);
        expect("gasnet_put_nb_bulk/gasnet_get_nb_bulk", back, src, len);
        break;
      }
      case 2:
        gasnet_put_nbi_bulk(peer, remote + off, src, len);
        gasnet_wait_syncnbi_puts();
        gasnet_get_nbi_bulk(back, peer, remote + off, len);
        gasnet_wait_syncnbi_all();
        expect("gasnet_put_nbi_bulk/gasnet_get_nbi_bulk", back, src, len);
        break;
      case 3:
        gasnet_memset(peer, remote + off, (int)(i & 0xff), len);
        gasnet_get(back, peer, remote + off, len);
        memset(want, i & 0xff, len);
        expect("gasnet_memset", back, want, len);
        break;
      default:
        for (size_t width = 1; width <= sizeof(gasnet_register_value_t); width *= 2) {
          gasnet_register_value_t v = 0;
          memcpy(&v, src, width);
          uint8_t *at = remote + (off & ~(size_t)7);
          if ((size_t)(at - remote) + width > n) at = remote;
          gasnet_put_val(peer, at, v, width);
          gasnet_register_value_t got = gasnet_get_val(peer, at, width);
          if (got != v)
            gasneti_diag_fail("D", "gasnet_put_val/gasnet_get_val of %zu bytes to rank %u: read "
                                   "back 0x%llx, written 0x%llx", width, (unsigned)peer,
                              (unsigned long long)got, (unsigned long long)v);
        }
    }
  }
  free(src), free(back), free(want);
}

/* ---- E: barriers ------------------------------------------------------------------------ */
void gasneti_diag_barriers(void) {
  int n = (int)gasnet_nodes(), me = (int)gasnet_mynode();
  for (int i = 0; i < gasneti_diag.iters; i++) {
    int id = i * 7 + 1, flags = 0, rc;
    if (i % 3 == 1 && me % 2 == 1) flags = GASNET_BARRIERFLAG_ANONYMOUS; /* some anonymous */
    gasnet_barrier_notify(flags ? 0 : id, flags);
    if (i % 2 == 0) rc = gasnet_barrier_wait(flags ? 0 : id, flags);
    else
      while ((rc = gasnet_barrier_try(flags ? 0 : id, flags)) == GASNET_ERR_NOT_READY) continue;
    if (rc != GASNET_OK)
      gasneti_diag_fail("E", "barrier %d (id %d%s) answered %d where every rank agreed", i, id,
                        flags ? ", anonymous here" : "", rc);
  }
  if (n < 2) return;
  /* Names that differ: every rank must be told, not only the ones that saw both names. */
  int id = me == n - 1 ? 2 : 1;
  gasnet_barrier_notify(id, 0);
  int rc = gasnet_barrier_wait(id, 0);
  if (rc != GASNET_ERR_BARRIER_MISMATCH)
    gasneti_diag_fail("E", "a barrier named 1 by ranks 0-%d and 2 by rank %d answered %d, not "
                           "GASNET_ERR_BARRIER_MISMATCH", n - 2, n - 1, rc);
  gasnet_barrier(0, GASNET_BARRIERFLAG_ANONYMOUS);
}
