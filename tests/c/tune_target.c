/* tune_target.c: a benchmark-shaped GASNet program whose figure is a known function of four
 * udp knobs, with no noise, for testing gasnet-tune's search itself (resume gives the same
 * answer, the known optimum is found). Takes the bundled benchmarks' command line
 * (--quick --json --only NAME) and prints one record in their schema. Optimum:
 * GASNET_AM_CREDITS_PP=16, GASNET_NETWORKDEPTH_PP=32, GASNET_UDP_DATAGRAM=8192,
 * GASNET_UDP_COALESCE=1, where the figure is 10 us. */
#include <math.h>
#include <string.h>

#include "test_util.h"

static double knob(const char *name, double dflt) {
  const char *v = gasnet_getenv(name);
  return v && *v ? atof(v) : dflt;
}

int main(int argc, char **argv) {
  GASNET_SAFE(gasnet_init(&argc, &argv));
  GASNET_SAFE(gasnet_attach(NULL, 0, GASNET_PAGESIZE, 0));
  const char *only = "tune_target";
  int json = 0;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--json") == 0) json = 1;
    else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc) only = argv[++i];
    else if (strcmp(argv[i], "--quick") != 0) {
      fprintf(stderr, "tune_target: unknown argument '%s'\n", argv[i]);
      gasnet_exit(2);
    }
  }
  if (strcmp(only, "tune_target") != 0) {
    fprintf(stderr, "tune_target: --only %s: no such benchmark (accepted: tune_target)\n", only);
    gasnet_exit(2);
  }
  double pp = log2(knob("GASNET_AM_CREDITS_PP", 12)) - 4;
  double depth = log2(knob("GASNET_NETWORKDEPTH_PP", 24)) - 5;
  double dgram = knob("GASNET_UDP_DATAGRAM", 65507);
  double coalesce = knob("GASNET_UDP_COALESCE", 1);
  double figure = 10 * (1 + 0.3 * pp * pp / 9 + 0.2 * depth * depth / 9 +
                        0.1 * (dgram != 8192) + 0.05 * (coalesce == 0));
  if (gasnet_mynode() == 0) {
    if (json)
      printf("{\"bench\": \"tune_target\", \"path\": \"synthetic\", \"conduit\": \"%s\", "
             "\"ranks\": %d, \"hosts\": 1, \"size\": 0, \"unit\": \"us\", \"better\": \"lower\", "
             "\"median\": %.6f, \"min\": %.6f, \"max\": %.6f, \"n\": 1, \"iters\": 1, "
             "\"env\": {}}\n",
             GASNET_CORE_NAME_STR, (int)gasnet_nodes(), figure, figure, figure);
    else
      printf("tune_target %.6f us\n", figure);
    fflush(stdout);
  }
  /* Every rank exits only after rank 0 printed: an exit ends the whole job at once. */
  test_barrier();
  gasnet_exit(0);
  return 0;
}
