/* vis_walk.h: one walker for the three VIS shapes. A side (vector, indexed or strided) is
 * walked as a sequence of contiguous pieces; a pair walks a destination and a source side in
 * step and yields runs that are contiguous on both. No socket or AM here: the transport
 * (vis.c) decides what to do with each run. */
#ifndef GASNETI_VIS_WALK_H
#define GASNETI_VIS_WALK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <gasnet.h>
#include <gasnet_vis.h>

enum { GASNETI_VIS_VECTOR, GASNETI_VIS_INDEXED, GASNETI_VIS_STRIDED };

typedef struct {
  int shape;
  size_t count; /* vector/indexed: entries */
  const gasnet_memvec_t *vec;
  void *const *list;
  size_t len; /* indexed: each entry's length */
  /* strided: contiguous bytes per piece, the higher levels (merged where contiguous), and the
   * odometer over them */
  uint8_t *base;
  size_t piece;
  size_t levels;
  const size_t *strides; /* levels entries, after merging */
  const size_t *counts;  /* levels entries: count[1..] after merging */
  size_t *index;         /* odometer (levels entries) */
  size_t inline_index[8];
  bool done;
  size_t next; /* vector/indexed: next entry */
} gasneti_vis_side_t;

/* A strided side whose odometer needs more than inline_index holds uses the heap; end frees. */
void gasneti_vis_side_vector(gasneti_vis_side_t *s, size_t count, const gasnet_memvec_t *vec);
void gasneti_vis_side_indexed(gasneti_vis_side_t *s, size_t count, void *const *list, size_t len);
void gasneti_vis_side_strided(gasneti_vis_side_t *s, void *base, const size_t *strides,
                              const size_t *count, size_t levels);
void gasneti_vis_side_end(gasneti_vis_side_t *s);
/* The bytes the side describes. */
uint64_t gasneti_vis_side_bytes(const gasneti_vis_side_t *s);
/* The next non-empty piece; false at the end. */
bool gasneti_vis_side_next(gasneti_vis_side_t *s, uint8_t **addr, size_t *len);

typedef struct {
  gasneti_vis_side_t dst, src;
  uint8_t *d, *s;
  size_t dleft, sleft;
} gasneti_vis_pair_t;

/* Checks that both sides describe the same number of bytes (fatal error naming the call and
 * both totals otherwise) and returns it. */
uint64_t gasneti_vis_pair_start(gasneti_vis_pair_t *p, const char *what);
/* The next run of at most max bytes contiguous on both sides; false at the end. */
bool gasneti_vis_pair_next(gasneti_vis_pair_t *p, uint8_t **dst, uint8_t **src, size_t *len,
                           size_t max);
void gasneti_vis_pair_end(gasneti_vis_pair_t *p);

#endif
