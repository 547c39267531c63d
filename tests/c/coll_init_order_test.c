/* coll_init_order_test: gasnet_coll_init is collective with a barrier inside, as GASNet 1.x's
 * is: clients set up what their handlers need before it and start sending after it (Realm's
 * start-up). Rank 0, before its own gasnet_coll_init, asks every other rank whether it has
 * already left gasnet_coll_init; a rank that answers yes left it while rank 0 had not entered.
 * Prints "left early N" (rank 0) and exits 1 when N > 0. */
#include "test_util.h"

enum { H_ASK = 201, H_ANSWER };
static volatile int passed, answers, early;

static void on_ask(gasnet_token_t token) { gasnet_AMReplyShort1(token, H_ANSWER, passed); }
static void on_answer(gasnet_token_t token, gasnet_handlerarg_t left) {
  (void)token;
  early += left;
  answers++;
}

int main(int argc, char **argv) {
  GASNET_SAFE(gasnet_init(&argc, &argv));
  gasnet_handlerentry_t table[] = {{H_ASK, (void (*)())on_ask}, {H_ANSWER, (void (*)())on_answer}};
  GASNET_SAFE(gasnet_attach(table, 2, GASNET_PAGESIZE, 0));
  test_barrier();
  if (gasnet_mynode() == 0) {
    for (gasnet_node_t peer = 1; peer < gasnet_nodes(); peer++)
      GASNET_SAFE(gasnet_AMRequestShort0(peer, H_ASK));
    GASNET_BLOCKUNTIL(answers == (int)gasnet_nodes() - 1);
  }
  gasnet_coll_init(NULL, 0, NULL, 0, 0);
  passed = 1;
  test_barrier(); /* the others keep answering meanwhile */
  if (gasnet_mynode() == 0) printf("left early %d\n", early);
  fflush(stdout);
  test_barrier();
  gasnet_exit(early ? 1 : 0);
  return 0;
}
