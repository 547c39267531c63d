/* vis_walk.c: walking the VIS shapes as contiguous pieces, and two sides in step as runs. */
#include "vis_walk.h"

#include "gasnet_internal.h"

void gasneti_vis_side_vector(gasneti_vis_side_t *s, size_t count, const gasnet_memvec_t *vec) {
  *s = (gasneti_vis_side_t){.shape = GASNETI_VIS_VECTOR, .count = count, .vec = vec};
}

void gasneti_vis_side_indexed(gasneti_vis_side_t *s, size_t count, void *const *list, size_t len) {
  *s = (gasneti_vis_side_t){.shape = GASNETI_VIS_INDEXED, .count = count, .list = list,
                            .len = len};
}

void gasneti_vis_side_strided(gasneti_vis_side_t *s, void *base, const size_t *strides,
                              const size_t *count, size_t levels) {
  *s = (gasneti_vis_side_t){.shape = GASNETI_VIS_STRIDED, .base = base, .piece = count[0]};
  for (size_t k = 0; k <= levels; k++)
    if (count[k] == 0) s->done = true; /* an empty shape: nothing to move */
  /* Lower levels whose stride is the extent below them are contiguous with it: one piece. */
  size_t merged = 0;
  while (merged < levels && strides[merged] == s->piece) {
    s->piece *= count[merged + 1];
    merged++;
  }
  s->levels = levels - merged;
  s->strides = strides + merged;
  s->counts = count + 1 + merged;
  s->index = s->levels <= sizeof s->inline_index / sizeof s->inline_index[0]
                 ? s->inline_index
                 : gasneti_calloc(s->levels, sizeof(size_t));
  for (size_t k = 0; k < s->levels; k++) s->index[k] = 0;
}

void gasneti_vis_side_end(gasneti_vis_side_t *s) {
  if (s->shape == GASNETI_VIS_STRIDED && s->index != s->inline_index) free(s->index);
  s->index = NULL;
}

uint64_t gasneti_vis_side_bytes(const gasneti_vis_side_t *s) {
  uint64_t total = 0;
  switch (s->shape) {
    case GASNETI_VIS_VECTOR:
      for (size_t i = 0; i < s->count; i++) total += s->vec[i].len;
      return total;
    case GASNETI_VIS_INDEXED:
      return (uint64_t)s->count * s->len;
    default:
      if (s->done) return 0;
      total = s->piece;
      for (size_t k = 0; k < s->levels; k++) total *= s->counts[k];
      return total;
  }
}

bool gasneti_vis_side_next(gasneti_vis_side_t *s, uint8_t **addr, size_t *len) {
  switch (s->shape) {
    case GASNETI_VIS_VECTOR:
      while (s->next < s->count) {
        const gasnet_memvec_t *v = &s->vec[s->next++];
        if (v->len) {
          *addr = v->addr;
          *len = v->len;
          return true;
        }
      }
      return false;
    case GASNETI_VIS_INDEXED:
      if (s->len == 0 || s->next >= s->count) return false;
      *addr = s->list[s->next++];
      *len = s->len;
      return true;
    default:
      if (s->done) return false;
      uint8_t *p = s->base;
      for (size_t k = 0; k < s->levels; k++) p += s->index[k] * s->strides[k];
      *addr = p;
      *len = s->piece;
      /* Advance the odometer; past its last position the walk is done. */
      size_t k = 0;
      while (k < s->levels && ++s->index[k] == s->counts[k]) s->index[k++] = 0;
      if (k == s->levels) s->done = true;
      return true;
  }
}

uint64_t gasneti_vis_pair_start(gasneti_vis_pair_t *p, const char *what) {
  if ((p->dst.shape == GASNETI_VIS_INDEXED && p->dst.count && !p->dst.len) ||
      (p->src.shape == GASNETI_VIS_INDEXED && p->src.count && !p->src.len))
    gasneti_fatalerror("%s: dstlen=%zu, srclen=%zu (each piece length of an indexed transfer "
                       "must be at least 1)", what, p->dst.len, p->src.len);
  uint64_t dbytes = gasneti_vis_side_bytes(&p->dst), sbytes = gasneti_vis_side_bytes(&p->src);
  if (dbytes != sbytes)
    gasneti_fatalerror("%s: the destination describes %" PRIu64 " bytes and the source %" PRIu64
                       " (both sides must describe the same number of bytes)",
                       what, dbytes, sbytes);
  p->dleft = p->sleft = 0;
  return dbytes;
}

bool gasneti_vis_pair_next(gasneti_vis_pair_t *p, uint8_t **dst, uint8_t **src, size_t *len,
                           size_t max) {
  if (p->dleft == 0 && !gasneti_vis_side_next(&p->dst, &p->d, &p->dleft)) return false;
  if (p->sleft == 0 && !gasneti_vis_side_next(&p->src, &p->s, &p->sleft)) return false;
  size_t n = p->dleft < p->sleft ? p->dleft : p->sleft;
  if (n > max) n = max;
  *dst = p->d;
  *src = p->s;
  *len = n;
  p->d += n, p->dleft -= n;
  p->s += n, p->sleft -= n;
  return true;
}

void gasneti_vis_pair_end(gasneti_vis_pair_t *p) {
  gasneti_vis_side_end(&p->dst);
  gasneti_vis_side_end(&p->src);
}
