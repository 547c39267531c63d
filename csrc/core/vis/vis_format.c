/* vis_format.c: VIS operands as text (gasnett_format_* in gasnet_tools.h), for traces and
 * test failures, with the buffer size each needs. Every formatter writes at most its _bufsz. */
#include <stdarg.h>
#include <stdio.h>

#include "gasnet_internal.h"
#include <gasnet_tools.h>

/* Bytes a pointer or size_t takes printed ("0x" and 16 digits, or 20 digits) plus ", ". */
enum { NUM = 22 };

typedef struct {
  char *buf;
  size_t left;
} out_t;

static void put(out_t *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(out_t *o, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(o->buf, o->left, fmt, ap);
  va_end(ap);
  size_t used = n < 0 ? 0 : (size_t)n < o->left ? (size_t)n : o->left - 1;
  o->buf += used;
  o->left -= used;
}

size_t gasnett_format_memveclist_bufsz(size_t count) { return 100 + count * (2 * NUM + 4); }

static gasneti_memveclist_stats_t memvec_stats(size_t count, gasnet_memvec_t const *list) {
  gasneti_memveclist_stats_t s = {0, 0, 0, NULL, NULL};
  int any = 0;
  for (size_t i = 0; i < count; i++) {
    size_t len = list[i].len;
    s.totalsz += len;
    if (!any || len < s.minsz) s.minsz = len;
    if (!any || len > s.maxsz) s.maxsz = len;
    any = 1;
    if (len == 0) continue;
    char *lo = list[i].addr, *hi = lo + len - 1;
    if (!s.minaddr || (void *)lo < s.minaddr) s.minaddr = lo;
    if (!s.maxaddr || (void *)hi > s.maxaddr) s.maxaddr = hi;
  }
  return s;
}

static gasneti_memveclist_stats_t memvec(out_t *o, size_t count, gasnet_memvec_t const *list) {
  gasneti_memveclist_stats_t s = memvec_stats(count, list);
  put(o, "%zu entries, totalsz=%zu, bounds=[%p...%p]\nlist=[", count, (size_t)s.totalsz,
      s.minaddr, s.maxaddr);
  for (size_t i = 0; i < count; i++)
    put(o, "%s{%p,%zu}", i ? ", " : "", list[i].addr, list[i].len);
  put(o, "]");
  return s;
}

gasneti_memveclist_stats_t gasnett_format_memveclist(char *buf, size_t count,
                                                     gasnet_memvec_t const *list) {
  out_t o = {buf, gasnett_format_memveclist_bufsz(count)};
  return memvec(&o, count, list);
}

size_t gasnett_format_putvgetv_bufsz(size_t dstcount, size_t srccount) {
  return 100 + gasnett_format_memveclist_bufsz(dstcount) + gasnett_format_memveclist_bufsz(srccount);
}

size_t gasnett_format_putvgetv(char *buf, gasnet_node_t node, size_t dstcount,
                               gasnet_memvec_t const dstlist[], size_t srccount,
                               gasnet_memvec_t const srclist[]) {
  out_t o = {buf, gasnett_format_putvgetv_bufsz(dstcount, srccount)};
  size_t total = (size_t)memvec_stats(dstcount, dstlist).totalsz;
  put(&o, "(%zu data bytes) node=%d\ndst: ", total, (int)node);
  memvec(&o, dstcount, dstlist);
  put(&o, "\nsrc: ");
  memvec(&o, srccount, srclist);
  return total;
}

size_t gasnett_format_addrlist_bufsz(size_t count) { return 100 + count * NUM; }

static gasneti_addrlist_stats_t addrs(out_t *o, size_t count, void *const *list, size_t len) {
  gasneti_addrlist_stats_t s = {NULL, NULL};
  for (size_t i = 0; i < count && len; i++) {
    char *lo = list[i], *hi = lo + len - 1;
    if (!s.minaddr || (void *)lo < s.minaddr) s.minaddr = lo;
    if (!s.maxaddr || (void *)hi > s.maxaddr) s.maxaddr = hi;
  }
  put(o, "%zu entries, len=%zu, bounds=[%p...%p]\nlist=[", count, len, s.minaddr, s.maxaddr);
  for (size_t i = 0; i < count; i++) put(o, "%s%p", i ? ", " : "", list[i]);
  put(o, "]");
  return s;
}

gasneti_addrlist_stats_t gasnett_format_addrlist(char *buf, size_t count, void *const *list,
                                                 size_t len) {
  out_t o = {buf, gasnett_format_addrlist_bufsz(count)};
  return addrs(&o, count, list, len);
}

size_t gasnett_format_putigeti_bufsz(size_t dstcount, size_t srccount) {
  return 100 + gasnett_format_addrlist_bufsz(dstcount) + gasnett_format_addrlist_bufsz(srccount);
}

size_t gasnett_format_putigeti(char *buf, gasnet_node_t node, size_t dstcount,
                               void *const dstlist[], size_t dstlen, size_t srccount,
                               void *const srclist[], size_t srclen) {
  out_t o = {buf, gasnett_format_putigeti_bufsz(dstcount, srccount)};
  size_t total = dstcount * dstlen;
  put(&o, "(%zu data bytes) node=%d\ndst: ", total, (int)node);
  addrs(&o, dstcount, dstlist, dstlen);
  put(&o, "\nsrc: ");
  addrs(&o, srccount, srclist, srclen);
  return total;
}

size_t gasnett_format_strides_bufsz(size_t count) { return 10 + count * NUM; }

static void strides(out_t *o, size_t count, const size_t *list) {
  put(o, "[");
  for (size_t i = 0; i < count; i++) put(o, "%s%zu", i ? ", " : "", list[i]);
  put(o, "]");
}

void gasnett_format_strides(char *buf, size_t count, const size_t *list) {
  out_t o = {buf, gasnett_format_strides_bufsz(count)};
  strides(&o, count, list);
}

size_t gasnett_format_putsgets_bufsz(size_t stridelevels) {
  return 200 + 3 * gasnett_format_strides_bufsz(stridelevels + 1);
}

size_t gasnett_format_putsgets(char *buf, void *pstats, gasnet_node_t node, void *dstaddr,
                               const size_t dststrides[], void *srcaddr,
                               const size_t srcstrides[], const size_t count[],
                               size_t stridelevels) {
  (void)pstats; /* GASNet's strided statistics: none are kept here */
  out_t o = {buf, gasnett_format_putsgets_bufsz(stridelevels)};
  size_t total = 1;
  for (size_t i = 0; i <= stridelevels; i++) total *= count[i];
  put(&o, "(%zu data bytes) node=%d stridelevels=%zu\ndst=%p dststrides=", total, (int)node,
      stridelevels, dstaddr);
  strides(&o, stridelevels, dststrides);
  put(&o, "\nsrc=%p srcstrides=", srcaddr);
  strides(&o, stridelevels, srcstrides);
  put(&o, "\ncount=");
  strides(&o, stridelevels + 1, count);
  return total;
}
