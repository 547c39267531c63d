/* startup_probe.c: when each step of a rank's start-up ended, by the wall clock (CLOCK_REALTIME,
 * which every host of a job shares closely enough and the namespace test hosts share exactly):
 * entering main (fork, exec and loading done), gasnet_init (the bootstrap exchange and the
 * conduit's set-up), gasnet_attach (segments), and one barrier. tests/perf/scale_bench.py reads
 * one line per rank to cost the phases of start-up:
 *   startup_probe: rank R main T init T attach T barrier T   (seconds since the epoch) */
#include <time.h>

#include "test_util.h"

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
  double t_main = now();
  GASNET_SAFE(gasnet_init(&argc, &argv));
  double t_init = now();
  GASNET_SAFE(gasnet_attach(NULL, 0, GASNET_PAGESIZE, 0));
  double t_attach = now();
  test_barrier();
  double t_barrier = now();
  printf("startup_probe: rank %d main %.6f init %.6f attach %.6f barrier %.6f\n",
         (int)gasnet_mynode(), t_main, t_init, t_attach, t_barrier);
  fflush(stdout);
  gasnet_exit(0);
}
