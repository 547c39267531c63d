/* mpi_hello.c: the MPI counterpart of examples/hello_ring for launch_bench.py: every rank
 * starts, meets the others once, says hello and ends, so mpirun's start-to-exit is measured
 * on the same work as gasnetrun's. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int token = rank, got = -1;
  MPI_Sendrecv(&token, 1, MPI_INT, (rank + 1) % size, 0, &got, 1, MPI_INT,
               (rank + size - 1) % size, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Barrier(MPI_COMM_WORLD);
  printf("rank %d of %d: hello from rank %d\n", rank, size, got);
  MPI_Finalize();
  return 0;
}
