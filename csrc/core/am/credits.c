/* credits.c: setting up the AM credit counters (the rules are in credits.h). */
#include "credits.h"

#include <stdlib.h>

bool gasneti_credits_init(gasneti_credits_t *c, int nranks, int pp, int total, int slack) {
  *c = (gasneti_credits_t){.nranks = nranks, .pp = pp, .slack = slack};
  if (total < 0) total = nranks * pp < 256 ? nranks * pp : 256;
  c->total_limit = total;
  if (c->slack > pp - 1) c->slack = pp - 1;
  if (total && nranks > 1 && (int64_t)total <= (int64_t)(nranks - 1) * c->slack)
    c->slack = (total - 1) / (nranks - 1);
  c->used = calloc((size_t)nranks, sizeof *c->used);
  c->owed = calloc((size_t)nranks, sizeof *c->owed);
  return c->used && c->owed;
}

void gasneti_credits_fini(gasneti_credits_t *c) {
  free(c->used);
  free(c->owed);
  c->used = c->owed = NULL;
}
