/* ibv_ports.c: GASNET_IBV_PORTS specs, "HCA[:port[,port...]][+HCA...]": which HCAs and
 * ports a rank may use. Errors quote the substring that does not parse. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ibv_plan.h"

static int bad(char *err, size_t errlen, const char *what, const char *start, size_t len) {
  snprintf(err, errlen, "%s '%.*s'", what, (int)len, start);
  return -1;
}

int gasneti_parse_ports(const char *spec, gasneti_port_entry_t *out, int max, char *err,
                        size_t errlen) {
  int n = 0;
  const char *p = spec;
  while (isspace((unsigned char)*p)) p++;
  if (!*p) return 0; /* no filter */
  for (;;) {
    size_t len = strcspn(p, "+");
    size_t hca_len = strcspn(p, ":+");
    if (hca_len == 0) return bad(err, errlen, "empty HCA name in", p, len ? len : 1);
    for (size_t i = 0; i < hca_len; i++)
      if (!isalnum((unsigned char)p[i]) && p[i] != '_' && p[i] != '-' && p[i] != '.')
        return bad(err, errlen, "HCA name has a bad character in", p, hca_len);
    if (hca_len >= sizeof out->hca) return bad(err, errlen, "HCA name too long:", p, hca_len);
    if (n == max) return bad(err, errlen, "too many HCAs at", p, len);
    gasneti_port_entry_t *e = &out[n++];
    memcpy(e->hca, p, hca_len);
    e->hca[hca_len] = '\0';
    e->nports = 0;
    if (hca_len < len) { /* ":1,2" */
      const char *q = p + hca_len + 1, *end = p + len;
      if (q == end) return bad(err, errlen, "no port numbers after ':' in", p, len);
      while (q < end) {
        size_t plen = strcspn(q, ",+");
        if (q + plen > end) plen = (size_t)(end - q);
        char *stop;
        long port = strtol(q, &stop, 10);
        if (plen == 0 || stop != q + plen || port < 1 || port > 255)
          return bad(err, errlen, "port must be a number 1..255, not", q, plen ? plen : 1);
        if (e->nports == (int)(sizeof e->ports / sizeof e->ports[0]))
          return bad(err, errlen, "too many ports in", p, len);
        e->ports[e->nports++] = (int)port;
        q += plen;
        if (q < end) {
          q++; /* ',' */
          if (q == end) return bad(err, errlen, "trailing ',' in", p, len);
        }
      }
    }
    if (!p[len]) break;
    p += len + 1;
    if (!*p) return bad(err, errlen, "trailing '+' after", spec, strlen(spec));
  }
  return n;
}

/* The knob table's check of a GASNET_IBV_PORTS value: its canonical form lists every HCA with
 * its ports, so that equal specs compare equal however they were spaced. */
static int check_ports(const char *text, char *canon, size_t canonlen, char *why,
                       size_t whylen) {
  gasneti_port_entry_t e[32];
  int n = gasneti_parse_ports(text, e, 32, why, whylen);
  if (n < 0) return 0;
  size_t used = (size_t)snprintf(canon, canonlen, "ports:");
  for (int i = 0; i < n && used < canonlen; i++) {
    used += (size_t)snprintf(canon + used, canonlen - used, "%s%s", i ? "+" : "", e[i].hca);
    for (int j = 0; j < e[i].nports && used < canonlen; j++)
      used += (size_t)snprintf(canon + used, canonlen - used, "%c%d", j ? ',' : ':', e[i].ports[j]);
  }
  return 1;
}

const gasneti_knob_syntax_t gasnetc_ibv_ports_syntax = {
    "ports", "HCA[:port[,port...]][+HCA...] (e.g. mlx5_0+mlx5_1:1,2)", check_ports};
