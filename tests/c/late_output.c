/* late_output.c: a rank's normal end must not cut its peers short. Rank 1 returns from main at
 * once; rank 0 has a second thread polling GASNet (so it would see any exit notice at once)
 * while its main thread prints its result after a delay, then returns. The line must always
 * reach the launcher's output and the job end with 0.
 *   late_output [DELAY_MS]   (PAR library; in SEQ the poller is the main thread's own loop) */
#include <time.h>

#include "test_util.h"

#ifdef GASNET_PAR
#include <pthread.h>

static volatile int stop;

static void *poller(void *arg) {
  (void)arg;
  while (!stop) gasnet_AMPoll();
  return NULL;
}

static void sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) != 0) {
  }
}
#endif

int main(int argc, char **argv) {
  GASNET_SAFE(gasnet_init(&argc, &argv));
  GASNET_SAFE(gasnet_attach(NULL, 0, 0, 0));
  long delay = argc > 1 ? atol(argv[1]) : 20;
  test_barrier();
  if (gasnet_mynode() != 0) return 0;
#ifdef GASNET_PAR
  pthread_t th;
  pthread_create(&th, NULL, poller, NULL);
  sleep_ms(delay);
#else
  struct timespec start, now;
  clock_gettime(CLOCK_MONOTONIC, &start);
  do {
    gasnet_AMPoll();
    clock_gettime(CLOCK_MONOTONIC, &now);
  } while ((now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000 < delay);
#endif
  printf("late_output: rank 0 result after %ld ms\n", delay);
#ifdef GASNET_PAR
  stop = 1;
  pthread_join(th, NULL);
#endif
  return 0;
}
