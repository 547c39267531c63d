/* mpi_knobs.c: the mpi conduit's rows of the knob table (the build collects them with the
 * core's and every other conduit's into the one table). GASNET_MPI_THREAD is the core's: the
 * mpi spawner reads it for every conduit. */
#include "knob_api.h"

static const gasneti_knob_t rows[] = {
    {"GASNET_MPI_RECV_BUFFERS", GASNETI_KNOB_INT, "32", 2, 4096, NULL, "buffers",
     GASNETI_SCOPE_JOB, "mpi",
     "mpi: receives each rank keeps posted for any source, each of the largest message "
     "(64 KiB and its header); messages beyond them wait in MPI's own unexpected queue. 32 "
     "stays the default: gasnet-tune (PSHM off) found no significant gain and pointed to "
     "fewer at 2 ranks (8) but more at 8 ranks (64-128); they cost memory per rank, not per "
     "peer (32: about 2 MiB) (docs/knob-defaults.md).",
     GASNETI_TUNED("8,16,32,64,128", NULL)},
};

const gasneti_knob_group_t gasnetc_mpi_knobs = {"mpi", rows, sizeof rows / sizeof rows[0]};
