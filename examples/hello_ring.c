/* hello_ring.c: the bundled demo. Each rank passes a token around the ring with AMs,
 * puts a greeting into its right neighbour's segment with a Long AM, and reports. */
#include <gasnet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TOKEN_HANDLER 201
#define GREET_HANDLER 202

static volatile int token_seen = 0;
static volatile int greeted = 0;

static void token_handler(gasnet_token_t token, gasnet_handlerarg_t hops) {
  (void)token;
  token_seen = (int)hops;
}

static void greet_handler(gasnet_token_t token, void *buf, size_t nbytes) {
  (void)token;
  (void)buf;
  (void)nbytes;
  greeted = 1;
}

int main(int argc, char **argv) {
  gasnet_init(&argc, &argv);
  gasnet_handlerentry_t handlers[] = {{TOKEN_HANDLER, (void (*)())token_handler},
                                      {GREET_HANDLER, (void (*)())greet_handler}};
  if (gasnet_attach(handlers, 2, GASNET_PAGESIZE, 0) != GASNET_OK) gasnet_exit(1);
  gasnet_node_t me = gasnet_mynode(), n = gasnet_nodes(), right = (gasnet_node_t)((me + 1) % n);
  gasnet_seginfo_t *seg = calloc(n, sizeof *seg);
  gasnet_getSegmentInfo(seg, n);

  /* The token starts at rank 0 and travels once around the ring. */
  if (me == 0) gasnet_AMRequestShort1(right, TOKEN_HANDLER, 1);
  GASNET_BLOCKUNTIL(token_seen != 0);
  if (me != 0) gasnet_AMRequestShort1(right, TOKEN_HANDLER, token_seen + 1);

  char greeting[64];
  snprintf(greeting, sizeof greeting, "hello from rank %d", (int)me);
  gasnet_AMRequestLong0(right, GREET_HANDLER, greeting, strlen(greeting) + 1, seg[right].addr);
  GASNET_BLOCKUNTIL(greeted);
  gasnet_barrier_notify(0, GASNET_BARRIERFLAG_ANONYMOUS);
  gasnet_barrier_wait(0, GASNET_BARRIERFLAG_ANONYMOUS);
  printf("rank %d of %d: token went %d hops; my segment says \"%s\"\n", (int)me, (int)n,
         me == 0 ? token_seen : token_seen, (char *)seg[me].addr);
  fflush(stdout);
  gasnet_barrier_notify(0, GASNET_BARRIERFLAG_ANONYMOUS);
  gasnet_barrier_wait(0, GASNET_BARRIERFLAG_ANONYMOUS);
  free(seg);
  gasnet_exit(0);
}
