/* par_test.c (GASNET_PAR): 4 threads per rank send requests concurrently to every rank, the
 * handlers reply, and handler-safe locks guard the shared tallies; nothing may be lost. */
#include "test_util.h"

#ifdef GASNET_PAR
#include <pthread.h>

#define THREADS 4
#define PER_THREAD 3000

static gasnet_handler_t h_req, h_rep;
static gasnet_hsl_t lock = GASNET_HSL_INITIALIZER;
static int64_t served_sum;       /* under lock: values of requests served here */
static volatile int done[THREADS]; /* replies per sending thread */

static void on_req(gasnet_token_t t, gasnet_handlerarg_t thread, gasnet_handlerarg_t v) {
  gasnet_hsl_lock(&lock);
  served_sum += v;
  gasnet_hsl_unlock(&lock);
  GASNET_SAFE(gasnet_AMReplyShort2(t, h_rep, thread, v));
}

static void on_rep(gasnet_token_t t, gasnet_handlerarg_t thread, gasnet_handlerarg_t v) {
  (void)t;
  (void)v;
  __atomic_add_fetch(&done[thread], 1, __ATOMIC_RELAXED);
}

static void *sender(void *arg) {
  int thread = (int)(intptr_t)arg, n = gasnet_nodes(), me = gasnet_mynode();
  for (int i = 0; i < PER_THREAD; i++) {
    gasnet_node_t dest = (gasnet_node_t)((me + thread + i) % n);
    GASNET_SAFE(gasnet_AMRequestShort2(dest, h_req, thread, i));
    if (i % 64 == 63) gasnet_AMPoll();
  }
  GASNET_BLOCKUNTIL(__atomic_load_n(&done[thread], __ATOMIC_RELAXED) == PER_THREAD);
  return NULL;
}

int main(int argc, char **argv) {
  GASNET_SAFE(gasnet_init(&argc, &argv));
  gasnet_handlerentry_t table[] = {{0, (void (*)())on_req}, {0, (void (*)())on_rep}};
  GASNET_SAFE(gasnet_attach(table, 2, 0, 0));
  h_req = table[0].index, h_rep = table[1].index;
  test_barrier();
  pthread_t th[THREADS];
  for (int t = 0; t < THREADS; t++) pthread_create(&th[t], NULL, sender, (void *)(intptr_t)t);
  for (int t = 0; t < THREADS; t++) pthread_join(th[t], NULL);
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
