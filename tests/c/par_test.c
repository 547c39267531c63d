/* par_test.c (GASNET_PAR): 4 threads per rank send requests concurrently to every rank, the
 * handlers reply, and handler-safe locks guard the shared tallies; nothing may be lost. The
 * main thread is one of the 4 and is half-way through its sends when it starts the others:
 * the queues' locks it has been skipping as their only user (solo.h) must be taken from then
 * on, while it keeps sending. Every fourth request is a Medium whose payload is checked. */
#include "test_util.h"

#ifdef GASNET_PAR
#include <pthread.h>

#define THREADS 4
#define PER_THREAD 3000

static gasnet_handler_t h_req, h_rep, h_medium;
static gasnet_hsl_t lock = GASNET_HSL_INITIALIZER;
static int64_t served_sum;       /* under lock: values of requests served here */
static volatile int done[THREADS]; /* replies per sending thread */
static int bad_payloads;           /* under lock */

enum { MEDIUM_BYTES = 512 };
static uint8_t pattern(int thread, int i, int k) { return (uint8_t)(thread * 131 + i * 7 + k); }

static void on_req(gasnet_token_t t, gasnet_handlerarg_t thread, gasnet_handlerarg_t v) {
  gasnet_hsl_lock(&lock);
  served_sum += v;
  gasnet_hsl_unlock(&lock);
  GASNET_SAFE(gasnet_AMReplyShort2(t, h_rep, thread, v));
}

static void on_medium(gasnet_token_t t, void *buf, size_t n, gasnet_handlerarg_t thread,
                      gasnet_handlerarg_t v) {
  int bad = n != MEDIUM_BYTES;
  for (size_t k = 0; k < n && !bad; k++) bad = ((uint8_t *)buf)[k] != pattern(thread, v, (int)k);
  gasnet_hsl_lock(&lock);
  served_sum += v;
  bad_payloads += bad;
  gasnet_hsl_unlock(&lock);
  GASNET_SAFE(gasnet_AMReplyShort2(t, h_rep, thread, v));
}

static void on_rep(gasnet_token_t t, gasnet_handlerarg_t thread, gasnet_handlerarg_t v) {
  (void)t;
  (void)v;
  __atomic_add_fetch(&done[thread], 1, __ATOMIC_RELAXED);
}

static void send_range(int thread, int from, int to) {
  int n = gasnet_nodes(), me = gasnet_mynode();
  uint8_t payload[MEDIUM_BYTES];
  for (int i = from; i < to; i++) {
    gasnet_node_t dest = (gasnet_node_t)((me + thread + i) % n);
    if (i % 4 == 3) {
      for (int k = 0; k < MEDIUM_BYTES; k++) payload[k] = pattern(thread, i, k);
      GASNET_SAFE(gasnet_AMRequestMedium2(dest, h_medium, payload, MEDIUM_BYTES, thread, i));
    } else {
      GASNET_SAFE(gasnet_AMRequestShort2(dest, h_req, thread, i));
    }
    if (i % 64 == 63) gasnet_AMPoll();
  }
}

static void *sender(void *arg) {
  int thread = (int)(intptr_t)arg;
  send_range(thread, 0, PER_THREAD);
  GASNET_BLOCKUNTIL(__atomic_load_n(&done[thread], __ATOMIC_RELAXED) == PER_THREAD);
  return NULL;
}

int main(int argc, char **argv) {
  GASNET_SAFE(gasnet_init(&argc, &argv));
  gasnet_handlerentry_t table[] = {{0, (void (*)())on_req}, {0, (void (*)())on_rep},
                                   {0, (void (*)())on_medium}};
  GASNET_SAFE(gasnet_attach(table, 3, 0, 0));
  h_req = table[0].index, h_rep = table[1].index, h_medium = table[2].index;
  test_barrier();
  send_range(0, 0, PER_THREAD / 2); /* alone so far */
  pthread_t th[THREADS];
  for (int t = 1; t < THREADS; t++) pthread_create(&th[t], NULL, sender, (void *)(intptr_t)t);
  send_range(0, PER_THREAD / 2, PER_THREAD); /* while the others start */
  GASNET_BLOCKUNTIL(__atomic_load_n(&done[0], __ATOMIC_RELAXED) == PER_THREAD);
  for (int t = 1; t < THREADS; t++) pthread_join(th[t], NULL);
  test_barrier(); /* every request everywhere has been answered, so served here */
  int n = gasnet_nodes(), me = gasnet_mynode();
  int64_t expected = 0;
  for (int r = 0; r < n; r++)
    for (int t = 0; t < THREADS; t++)
      for (int i = 0; i < PER_THREAD; i++)
        if ((r + t + i) % n == me) expected += i;
  gasnet_hsl_lock(&lock);
  CHECK(served_sum == expected, "served sum %lld, expected %lld", (long long)served_sum,
        (long long)expected);
  CHECK(bad_payloads == 0, "%d Medium payloads arrived damaged", bad_payloads);
  gasnet_hsl_unlock(&lock);
  CHECK(gasnet_hsl_trylock(&lock) == GASNET_OK, "trylock of a free lock failed");
  gasnet_hsl_unlock(&lock);
  test_finish("par_test");
}
#else
int main(void) {
  puts("par_test: needs the PAR library; nothing to do in SEQ");
  return 0;
}
#endif
