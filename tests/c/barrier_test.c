/* barrier_test.c: anonymous, unnamed, named, mixed and mismatched barriers, the blocking
 * gasnet_barrier, gasnet_barrier_try, and
 * split-phase barriers with AM traffic in between; every rank checks every result. */
#include "test_util.h"

static volatile int pings;
static gasnet_handler_t h_ping;
static void on_ping(gasnet_token_t t) {
  (void)t;
  pings++;
}

static int barrier(int id, int flags) {
  gasnet_barrier_notify(id, flags);
  return gasnet_barrier_wait(id, flags);
}

int main(int argc, char **argv) {
  GASNET_SAFE(gasnet_init(&argc, &argv));
  gasnet_handlerentry_t table[] = {{0, (void (*)())on_ping}};
  GASNET_SAFE(gasnet_attach(table, 1, 0, 0));
  h_ping = table[0].index;
  int me = gasnet_mynode(), n = gasnet_nodes(), id = 0, rc;
  /* argv[1]: anonymous barriers to run (named ones: a quarter as many), for big jobs. */
  int rounds = argc > 1 ? atoi(argv[1]) : 2000;
  if (rounds < 4) rounds = 4;

  for (int i = 0; i < rounds; i++) {
    rc = barrier(0, GASNET_BARRIERFLAG_ANONYMOUS);
    CHECK(rc == GASNET_OK, "anonymous barrier %d: %s", i, gasnet_ErrorName(rc));
  }
  CHECK(gasnet_barrier_result(&id) == GASNET_BARRIERFLAG_ANONYMOUS, "result not anonymous");

  for (int i = 0; i < rounds / 4; i++) {
    rc = barrier(i * 7 - 100, 0);
    CHECK(rc == GASNET_OK, "named barrier %d: %s", i, gasnet_ErrorName(rc));
    CHECK(gasnet_barrier_result(&id) == 0 && id == i * 7 - 100, "result id %d", id);
  }

  /* Half the ranks anonymous, half named alike: matches, and the result carries the name. */
  rc = barrier(42, me % 2 ? GASNET_BARRIERFLAG_ANONYMOUS : 0);
  CHECK(rc == GASNET_OK, "mixed barrier: %s", gasnet_ErrorName(rc));
  CHECK(gasnet_barrier_result(&id) == 0 && id == 42, "mixed result id %d", id);

  if (n > 1) {
    /* Different names: every rank sees the mismatch. */
    rc = barrier(me == n - 1 ? 7 : 8, 0);
    CHECK(rc == GASNET_ERR_BARRIER_MISMATCH, "differing names gave %s", gasnet_ErrorName(rc));
  }
  /* One rank forces a mismatch. */
  rc = barrier(0, me == 0 ? GASNET_BARRIERFLAG_MISMATCH : GASNET_BARRIERFLAG_ANONYMOUS);
  CHECK(rc == GASNET_ERR_BARRIER_MISMATCH, "forced mismatch gave %s", gasnet_ErrorName(rc));
  /* A wait that disagrees with its own notify mismatches locally only. */
  gasnet_barrier_notify(5, 0);
  rc = gasnet_barrier_wait(me == 0 ? 6 : 5, 0);
  CHECK(rc == (me == 0 ? GASNET_ERR_BARRIER_MISMATCH : GASNET_OK), "local mismatch gave %s",
        gasnet_ErrorName(rc));
  /* Flags may differ between notify and wait (GASNet 1.20): the wait is judged against what
   * the barrier agreed. Anonymous notify, named wait: matches, and the result is anonymous. */
  gasnet_barrier_notify(0, GASNET_BARRIERFLAG_ANONYMOUS);
  rc = gasnet_barrier_wait(0, 0);
  CHECK(rc == GASNET_OK, "anonymous notify, named wait gave %s", gasnet_ErrorName(rc));
  CHECK(gasnet_barrier_result(&id) == GASNET_BARRIERFLAG_ANONYMOUS, "its result is named");
  /* Named notify, anonymous wait: matches, and the result carries the name. */
  gasnet_barrier_notify(0, 0);
  rc = gasnet_barrier_wait(0, GASNET_BARRIERFLAG_ANONYMOUS);
  id = -1;
  CHECK(rc == GASNET_OK && gasnet_barrier_result(&id) == 0 && id == 0,
        "named notify, anonymous wait gave %s, id %d", gasnet_ErrorName(rc), id);
  /* Rank 0 notifies anonymously and waits with the name the others gave: matches. */
  gasnet_barrier_notify(12345, me == 0 ? GASNET_BARRIERFLAG_ANONYMOUS : 0);
  rc = gasnet_barrier_wait(12345, 0);
  CHECK(rc == GASNET_OK, "anonymous notify, the others' name in the wait gave %s",
        gasnet_ErrorName(rc));
  if (n > 1) {
    /* ... and with another name: rank 0 alone mismatches. */
    gasnet_barrier_notify(12345, me == 0 ? GASNET_BARRIERFLAG_ANONYMOUS : 0);
    rc = gasnet_barrier_wait(me == 0 ? 54321 : 12345, 0);
    CHECK(rc == (me == 0 ? GASNET_ERR_BARRIER_MISMATCH : GASNET_OK),
          "anonymous notify, another name in the wait gave %s", gasnet_ErrorName(rc));
  }
  /* Unnamed is GASNet 1.30's value (anonymous plus its own bit), IMAGES is 4. */
  CHECK(GASNET_BARRIERFLAG_UNNAMED == 9 && GASNET_BARRIERFLAG_IMAGES == 4,
        "flag values UNNAMED %d IMAGES %d", GASNET_BARRIERFLAG_UNNAMED, GASNET_BARRIERFLAG_IMAGES);
  /* After mismatches the barrier works as before. */
  rc = barrier(9, 0);
  CHECK(rc == GASNET_OK, "barrier after mismatches: %s", gasnet_ErrorName(rc));

  /* The blocking form and unnamed barriers (GASNet 1.30): unnamed matches anything, as
   * anonymous does, and mixed with named ones the result carries the name. */
  for (int i = 0; i < 100; i++) {
    rc = gasnet_barrier(0, GASNET_BARRIERFLAG_UNNAMED);
    CHECK(rc == GASNET_OK, "unnamed barrier %d: %s", i, gasnet_ErrorName(rc));
  }
  CHECK(gasnet_barrier_result(&id) == GASNET_BARRIERFLAG_ANONYMOUS, "unnamed result is named");
  rc = gasnet_barrier(77, me % 2 ? GASNET_BARRIERFLAG_UNNAMED : 0);
  CHECK(rc == GASNET_OK && gasnet_barrier_result(&id) == 0 && id == 77,
        "named+unnamed barrier: %s, id %d", gasnet_ErrorName(rc), id);

  /* try: poll until complete; AMs sent between notify and wait are served meanwhile. */
  for (int i = 0; i < 200; i++) {
    gasnet_barrier_notify(i, 0);
    GASNET_SAFE(gasnet_AMRequestShort0((gasnet_node_t)((me + 1) % n), h_ping));
    while ((rc = gasnet_barrier_try(i, 0)) == GASNET_ERR_NOT_READY) gasnet_AMPoll();
    CHECK(rc == GASNET_OK, "barrier_try %d: %s", i, gasnet_ErrorName(rc));
  }
  GASNET_BLOCKUNTIL(pings == 200);
  test_finish("barrier_test");
}
