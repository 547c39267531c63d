/* medium_split_test.c: Mediums of every size around a datagram's room, with 0, 5 and 16
 * arguments, each sent right behind two Shorts (which leave a partly filled packet open on
 * conduits that gather messages), so that some Mediums fit a packet's room only without their
 * arguments and are cut into pieces at every possible point. Every odd rank sends to the even
 * rank below it, without polling between sends; the receiver checks every payload byte and
 * argument. Usage: medium_split_test [LOW HIGH] (payload sizes, default around 2048 bytes). */
#include <string.h>

#include "test_util.h"

#define H_SHORT 201
#define H_MEDIUM 202

static volatile int shorts, mediums;

static void short_handler(gasnet_token_t token) {
  (void)token;
  shorts++;
}

/* Arguments: the payload size, then argument i is size * 31 + i. */
static void check_medium(void *buf, size_t n, const gasnet_handlerarg_t *a, int nargs) {
  if (nargs) CHECK((size_t)a[0] == n, "Medium of %zu bytes says %d", n, (int)a[0]);
  for (int i = 1; i < nargs; i++)
    CHECK(a[i] == (gasnet_handlerarg_t)(n * 31 + (size_t)i), "arg %d of the %zu-byte Medium", i, n);
  size_t bad = check_pattern(buf, n, (uint32_t)n);
  CHECK(bad == n, "Medium of %zu bytes (%d args): byte %zu wrong", n, nargs, bad);
  mediums++;
}

static void medium0(gasnet_token_t t, void *buf, size_t n) {
  (void)t;
  check_medium(buf, n, NULL, 0);
}

static void medium5(gasnet_token_t t, void *buf, size_t n, gasnet_handlerarg_t a0,
                    gasnet_handlerarg_t a1, gasnet_handlerarg_t a2, gasnet_handlerarg_t a3,
                    gasnet_handlerarg_t a4) {
  (void)t;
  gasnet_handlerarg_t a[] = {a0, a1, a2, a3, a4};
  check_medium(buf, n, a, 5);
}

#define A gasnet_handlerarg_t
static void medium16(gasnet_token_t t, void *buf, size_t n, A a0, A a1, A a2, A a3, A a4, A a5,
                     A a6, A a7, A a8, A a9, A a10, A a11, A a12, A a13, A a14, A a15) {
  (void)t;
  A a[] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15};
  check_medium(buf, n, a, 16);
}
#undef A

#define ARG(i) (gasnet_handlerarg_t)(n * 31 + (i))

int main(int argc, char **argv) {
  GASNET_SAFE(gasnet_init(&argc, &argv));
  size_t low = argc > 2 ? (size_t)atol(argv[1]) : 1500;
  size_t high = argc > 2 ? (size_t)atol(argv[2]) : 2200;
  if (high > gasnet_AMMaxMedium()) high = gasnet_AMMaxMedium();
  gasnet_handlerentry_t handlers[] = {{H_SHORT, (void (*)())short_handler},
                                      {H_MEDIUM, (void (*)())medium0},
                                      {H_MEDIUM + 1, (void (*)())medium5},
                                      {H_MEDIUM + 2, (void (*)())medium16}};
  GASNET_SAFE(gasnet_attach(handlers, 4, GASNET_PAGESIZE, 0));
  gasnet_node_t me = gasnet_mynode();
  int sender = me % 2 == 1, receiver = me % 2 == 0 && me + 1 < gasnet_nodes();
  uint8_t *buf = malloc(high + 1);
  test_barrier();
  if (sender) {
    gasnet_node_t peer = (gasnet_node_t)(me - 1);
    for (size_t n = low; n <= high; n++) {
      fill_pattern(buf, n, (uint32_t)n);
      for (int form = 0; form < 3; form++) {
        GASNET_SAFE(gasnet_AMRequestShort0(peer, H_SHORT));
        GASNET_SAFE(gasnet_AMRequestShort0(peer, H_SHORT));
        if (form == 0) {
          GASNET_SAFE(gasnet_AMRequestMedium0(peer, H_MEDIUM, buf, n));
        } else if (form == 1) {
          GASNET_SAFE(gasnet_AMRequestMedium5(peer, H_MEDIUM + 1, buf, n, n, ARG(1), ARG(2),
                                              ARG(3), ARG(4)));
        } else {
          GASNET_SAFE(gasnet_AMRequestMedium16(peer, H_MEDIUM + 2, buf, n, n, ARG(1), ARG(2),
                                               ARG(3), ARG(4), ARG(5), ARG(6), ARG(7), ARG(8),
                                               ARG(9), ARG(10), ARG(11), ARG(12), ARG(13),
                                               ARG(14), ARG(15)));
        }
      }
    }
  }
  if (receiver) {
    int expect = (int)(high - low + 1) * 3;
    GASNET_BLOCKUNTIL(mediums == expect && shorts == 2 * expect);
  }
  free(buf);
  test_barrier();
  if (receiver) printf("medium_split_test: rank %d received %d Mediums\n", (int)me, mediums);
  test_finish("medium_split_test");
  return 0;
}
