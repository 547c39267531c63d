/* mpi_hello.c: the MPI counterpart of examples/hello_ring for launch_bench.py and
 * scale_bench.py: every rank starts, meets the others once, says hello and ends, so mpirun's
 * start-to-exit is measured on the same work as gasnetrun's.
 *
 * With "sleep" as its argument it waits as gasnetrun's ranks do in GASNET_WAIT_MODE=block:
 * a nonblocking exchange and barrier, tested every 50 us and slept on in between. MPI's own
 * waits poll, and 512 polling ranks on this machine's 2 cores never finished (docs/scale.md);
 * the sleeping form is the same work, with the waits GASNet's ranks get. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static void wait_sleeping(int n, MPI_Request *reqs) {
  const struct timespec pause = {0, 50000};
  for (;;) {
    int done = 0;
    MPI_Testall(n, reqs, &done, MPI_STATUSES_IGNORE);
    if (done) return;
    nanosleep(&pause, NULL);
  }
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int sleeping = argc > 1 && strcmp(argv[1], "sleep") == 0;
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int token = rank, got = -1;
  if (sleeping) {
    MPI_Request reqs[2];
    MPI_Irecv(&got, 1, MPI_INT, (rank + size - 1) % size, 0, MPI_COMM_WORLD, &reqs[0]);
    MPI_Isend(&token, 1, MPI_INT, (rank + 1) % size, 0, MPI_COMM_WORLD, &reqs[1]);
    wait_sleeping(2, reqs);
    MPI_Ibarrier(MPI_COMM_WORLD, &reqs[0]);
    wait_sleeping(1, reqs);
  } else {
    MPI_Sendrecv(&token, 1, MPI_INT, (rank + 1) % size, 0, &got, 1, MPI_INT,
                 (rank + size - 1) % size, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Barrier(MPI_COMM_WORLD);
  }
  printf("rank %d of %d: hello from rank %d\n", rank, size, got);
  MPI_Finalize();
  return 0;
}
