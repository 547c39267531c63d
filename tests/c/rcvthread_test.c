/* rcvthread_test.c: with GASNET_RCV_THREAD=1, a rank that computes without calling GASNet still
 * serves AMs: rank 1 spins on a flag only an AM handler sets, while rank 0 sends the request
 * and waits for the reply. Without the thread rank 1 would spin forever (the job's timeout
 * would end it). The handler must run on a thread other than rank 1's main one. */
#include <pthread.h>
#include <unistd.h>

#include "test_util.h"

static volatile int flag, replied;
static pthread_t main_thread;
static volatile int on_other_thread;
static gasnet_handler_t h_set, h_done;

static void on_set(gasnet_token_t t) {
  on_other_thread = !pthread_equal(pthread_self(), main_thread);
  flag = 1;
  GASNET_SAFE(gasnet_AMReplyShort0(t, h_done));
}

static void on_done(gasnet_token_t t) {
  (void)t;
  replied = 1;
}

int main(int argc, char **argv) {
  GASNET_SAFE(gasnet_init(&argc, &argv));
  main_thread = pthread_self();
  gasnet_handlerentry_t table[] = {{0, (void (*)())on_set}, {0, (void (*)())on_done}};
  GASNET_SAFE(gasnet_attach(table, 2, GASNET_PAGESIZE, 0));
  h_set = table[0].index, h_done = table[1].index;
  test_barrier();
  if (gasnet_mynode() == 0) {
    usleep(200000); /* rank 1 has left the barrier's polls and computes */
    GASNET_SAFE(gasnet_AMRequestShort0(1, h_set));
    GASNET_BLOCKUNTIL(replied);
  } else if (gasnet_mynode() == 1) {
    while (!flag) { /* computing: no GASNet call in this loop */
    }
    CHECK(on_other_thread, "the handler ran on the main thread");
    printf("rcvthread_test: rank 1 was reached while computing\n");
  }
  test_finish("rcvthread_test");
}
