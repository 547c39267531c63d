/* mpi_wire.h: what travels between ranks of the mpi conduit: every message on its private
 * communicator is this header, the handler's arguments, then the payload it carries (a
 * Medium's, or one piece of a Long's, unless MPIC_DIRECT sends it after the header as its own
 * message). Runtime traffic (credits, exit and "finished" notices) is a header alone. Tests that read or forge messages include this; nothing else lays them
 * out. Both ends run the same build, so fields are in host byte order. */
#ifndef GASNETC_MPI_WIRE_H
#define GASNETC_MPI_WIRE_H

#include <stdint.h>

enum {
  /* flags (GASNETI_AM_FRAG and GASNETI_AM_TAIL, 0x1 and 0x2, say how a Long piece relates to
   * its Long, as the core cut it) */
  MPIC_REPLY = 0x80,  /* a reply: returns its request's credit */
  MPIC_CTRL = 0x40,   /* runtime traffic, its kind in handler */
  MPIC_DIRECT = 0x20, /* a Long piece whose chunk bytes follow as a message of their own (on
                       * the data tag), which the receiver takes straight into its segment */
};
enum { MPIC_CREDITS = 1, MPIC_EXIT = 2, MPIC_FINISHED = 3 };

typedef struct {
  uint8_t category, handler, nargs, flags;
  uint16_t credits; /* returned to the receiver with this message */
  uint16_t pad;
  uint32_t nbytes;  /* what the handler sees (a Long: all of it); MPIC_EXIT: the exit code */
  uint32_t chunk;   /* payload bytes after the arguments; MPIC_EXIT: the exit phase */
  uint64_t dst;     /* a Long piece's place in the receiver's segment */
} gasnetc_mpi_msg_t;
_Static_assert(sizeof(gasnetc_mpi_msg_t) == 24, "message header");

/* Header and arguments, rounded up so that the payload is 8-byte aligned. */
static inline uint32_t gasnetc_mpi_head_bytes(int nargs) {
  return (uint32_t)(sizeof(gasnetc_mpi_msg_t) + 4u * (uint32_t)nargs + 7u) & ~7u;
}
#define MPIC_ARGS(m) ((const int32_t *)((const uint8_t *)(m) + sizeof(gasnetc_mpi_msg_t)))
/* The largest message: 16 arguments and the largest Medium (GASNETC_MAX_MEDIUM). */
#define MPIC_MAX_MESSAGE(max_medium) (gasnetc_mpi_head_bytes(16) + (uint32_t)(max_medium))

#endif
