/* mpi_interop_test.c: a hybrid client: MPI and GASNet AMs on every rank, interleaved. MPI is
 * started before gasnet_init, after it, or never, and ended by MPI_Finalize before gasnet_exit,
 * by gasnet_exit alone, or by returning from main (with or without MPI_Finalize first). The
 * client's MPI traffic receives from any source with any tag on MPI_COMM_WORLD while AMs flow,
 * so a GASNet message reaching it would show. Built once per MPI (SConstruct: a conduit's
 * flavour programs), linked against that MPI after the GASNet library.
 * Usage: mpi_interop_test before|after|never finalize-exit|exit|finalize-return|return
 *        [SINGLE|FUNNELED|SERIALIZED|MULTIPLE: the level the client asks for] */
#include <mpi.h>
#include <string.h>

#include "test_util.h"

enum { ROUNDS = 200, MEDIUM = 1000 };
static const char *const level_names[] = {"SINGLE", "FUNNELED", "SERIALIZED", "MULTIPLE"};
static const int levels[] = {MPI_THREAD_SINGLE, MPI_THREAD_FUNNELED, MPI_THREAD_SERIALIZED,
                             MPI_THREAD_MULTIPLE};
/* What the client asks by default: what the library runs MPI at (GASNET_MPI_THREAD's). */
#if defined(GASNET_PAR) || defined(GASNET_PARSYNC)
#define DEFAULT_LEVEL 2
#else
#define DEFAULT_LEVEL 0
#endif

static volatile long got, replies;
static gasnet_handler_t h_ping, h_pong;

/* A Medium from the previous rank: its payload is pattern (round, sender). */
static void ping(gasnet_token_t t, void *buf, size_t n, gasnet_handlerarg_t round) {
  gasnet_node_t src;
  gasnet_AMGetMsgSource(t, &src);
  size_t bad = check_pattern(buf, n, (uint32_t)(round * 1000 + (int)src));
  CHECK(n == MEDIUM && bad == n, "round %d from %d: %zu bytes, first wrong byte %zu", (int)round,
        (int)src, n, bad);
  got++;
  gasnet_AMReplyShort1(t, h_pong, round);
}
static void pong(gasnet_token_t t, gasnet_handlerarg_t round) { (void)t, (void)round, replies++; }

static void usage(void) {
  fprintf(stderr, "usage: mpi_interop_test before|after|never "
                  "finalize-exit|exit|finalize-return|return [SINGLE|FUNNELED|SERIALIZED|MULTIPLE]\n");
  exit(2);
}

static int start_mpi(int *argc, char ***argv, int level) {
  int provided = -1, flag = 0;
  MPI_Init_thread(argc, argv, levels[level], &provided);
  for (int i = 0; i < 4; i++)
    if (provided == levels[i]) provided = i;
  MPI_Initialized(&flag);
  if (!flag) {
    fprintf(stderr, "mpi_interop_test: MPI_Initialized says no after MPI_Init_thread\n");
    exit(1);
  }
  return provided;
}

/* Every round: an MPI receive from any source and tag is posted, a Medium AM goes to the next
 * rank, an MPI message to the next rank; the MPI receive must hold the previous rank's message,
 * and the AMs all arrive. MPI is called only from this thread. */
static void interleave(int me, int n) {
  int next = (me + 1) % n, prev = (me + n - 1) % n;
  char *payload = malloc(MEDIUM);
  for (int round = 0; round < ROUNDS; round++) {
    int token[2] = {-1, -1}, mine[2] = {me, round};
    MPI_Request req;
    MPI_Status st;
    MPI_Irecv(token, 2, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &req);
    fill_pattern(payload, MEDIUM, (uint32_t)(round * 1000 + me));
    gasnet_AMRequestMedium1((gasnet_node_t)next, h_ping, payload, MEDIUM, round);
    MPI_Send(mine, 2, MPI_INT, next, 100 + round, MPI_COMM_WORLD);
    for (int done = 0; !done;) {
      MPI_Test(&req, &done, &st);
      gasnet_AMPoll();
    }
    CHECK(st.MPI_SOURCE == prev && st.MPI_TAG == 100 + round && token[0] == prev &&
              token[1] == round,
          "round %d: MPI message from %d tag %d holds (%d, %d)", round, st.MPI_SOURCE,
          st.MPI_TAG, token[0], token[1]);
  }
  GASNET_BLOCKUNTIL(replies == ROUNDS && got == ROUNDS);
  int sum = 0, one = 1;
  MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  CHECK(sum == n, "MPI_Allreduce gave %d of %d ranks", sum, n);
  free(payload);
}

/* AMs alone: the client never touches MPI. */
static void ams_only(int me, int n) {
  char *payload = malloc(MEDIUM);
  for (int round = 0; round < ROUNDS; round++) {
    fill_pattern(payload, MEDIUM, (uint32_t)(round * 1000 + me));
    gasnet_AMRequestMedium1((gasnet_node_t)((me + 1) % n), h_ping, payload, MEDIUM, round);
  }
  GASNET_BLOCKUNTIL(replies == ROUNDS && got == ROUNDS);
  free(payload);
}

int main(int argc, char **argv) {
  if (argc < 3) usage();
  const char *order = argv[1], *finish = argv[2];
  int level = DEFAULT_LEVEL;
  if (argc > 3) {
    level = -1;
    for (int i = 0; i < 4; i++)
      if (!strcmp(argv[3], level_names[i])) level = i;
    if (level < 0) usage();
  }
  int before = !strcmp(order, "before"), after = !strcmp(order, "after");
  if (!before && !after && strcmp(order, "never")) usage();
  int finalize = !strcmp(finish, "finalize-exit") || !strcmp(finish, "finalize-return");
  if (!finalize && strcmp(finish, "exit") && strcmp(finish, "return")) usage();
  if (finalize && !before && !after) usage(); /* MPI_Finalize without MPI_Init is an error */
  int provided = -1;
  if (before) provided = start_mpi(&argc, &argv, level);
  GASNET_SAFE(gasnet_init(&argc, &argv));
  gasnet_handlerentry_t table[] = {{0, (void (*)())ping}, {0, (void (*)())pong}};
  GASNET_SAFE(gasnet_attach(table, 2, GASNET_PAGESIZE, 0));
  h_ping = table[0].index, h_pong = table[1].index;
  if (after) provided = start_mpi(&argc, &argv, level);
  int me = (int)gasnet_mynode(), n = (int)gasnet_nodes();
  if (before || after) {
    int mpi_rank = -1, mpi_size = -1;
    MPI_Comm_rank(MPI_COMM_WORLD, &mpi_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &mpi_size);
    CHECK(mpi_rank == me && mpi_size == n, "MPI rank %d of %d, GASNet rank %d of %d", mpi_rank,
          mpi_size, me, n);
    interleave(me, n);
  } else {
    ams_only(me, n);
  }
  test_barrier();
  printf("mpi_interop_test: rank %d OK (%s, %s, provided %s)\n", me, order, finish,
         provided >= 0 && provided < 4 ? level_names[provided] : "-");
  fflush(stdout);
  if (test_failures) gasnet_exit(1);
  if (finalize) {
    int flag = 0;
    MPI_Finalize();
    MPI_Finalized(&flag);
    if (!flag) {
      fprintf(stderr, "rank %d: MPI_Finalized says no after MPI_Finalize\n", me);
      gasnet_exit(1);
    }
  }
  if (!strcmp(finish, "finalize-exit") || !strcmp(finish, "exit")) gasnet_exit(0);
  return 0;
}
