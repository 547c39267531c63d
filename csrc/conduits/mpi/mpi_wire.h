/* mpi_wire.h: what travels between ranks of the mpi conduit: every message on its private
 * communicator is this header, the handler's arguments, then the payload it carries (a
 * Medium's, or one piece of a Long's, unless MPIC_DIRECT sends it after the header as its own
 * message). A Short (not runtime traffic) carries only the header's first 8 bytes. Runtime
 * traffic (credits, exit and "finished" notices) is a whole header alone. Tests that read or forge messages include this; nothing else lays them
 * out. Both ends run the same build, so fields are in host byte order. */
#ifndef GASNETC_MPI_WIRE_H
#define GASNETC_MPI_WIRE_H

#include <stdbool.h>
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

/* A Short's header stops after pad: its nbytes, chunk and dst would all be 0. The AM sent most
 * then travels in 8 bytes with no argument, and Open MPI's shared-memory path takes an 8-byte
 * message markedly faster than one of 16 bytes or more (its 8-byte ping-pong is 0.85x its
 * 16-byte one on one host here: tests/perf, docs in the conduit's README). */
enum { MPIC_SHORT_HEAD = 8 };
static inline bool gasnetc_mpi_compact(uint8_t category, uint8_t flags) {
  return category == 0 /* GASNETI_AM_SHORT */ && !(flags & MPIC_CTRL);
}
/* Header and arguments; a whole header's are rounded up so that the payload is 8-byte
 * aligned (a Short has no payload). */
static inline uint32_t gasnetc_mpi_head_bytes(bool compact, int nargs) {
  if (compact) return MPIC_SHORT_HEAD + 4u * (uint32_t)nargs;
  return (uint32_t)(sizeof(gasnetc_mpi_msg_t) + 4u * (uint32_t)nargs + 7u) & ~7u;
}
static inline const int32_t *gasnetc_mpi_args(const gasnetc_mpi_msg_t *m) {
  bool compact = gasnetc_mpi_compact(m->category, m->flags);
  return (const int32_t *)(const void *)((const uint8_t *)m +
                                         (compact ? MPIC_SHORT_HEAD : sizeof(gasnetc_mpi_msg_t)));
}
/* The largest message: 16 arguments and the largest Medium (GASNETC_MAX_MEDIUM). */
#define MPIC_MAX_MESSAGE(max_medium) (gasnetc_mpi_head_bytes(false, 16) + (uint32_t)(max_medium))

#endif
