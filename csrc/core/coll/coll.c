/* coll.c: the GASNet-1 collectives' engine. Every collective is an operation advanced by
 * progress(): in stages (the IN barrier if ALLSYNC, the data movement, the OUT barrier if
 * ALLSYNC), each of which returns when it would have to wait. Data travels in Medium AMs to
 * the receiver's inbox for that operation's sequence number (created by whichever comes
 * first, the message or the operation, so a fast rank may run ahead); a rank reads its
 * source and writes its destination only while it is in the operation, which gives MYSYNC
 * semantics for every flag (NOSYNC asks for less).
 *
 * Algorithms: binomial trees relative to the root for broadcast, scatter and gather (a rank's
 * subtree is a contiguous range of relative ranks, so scatter and gather move one contiguous
 * piece per edge); gather_all is a gather to rank 0 then a broadcast; exchange is direct (every
 * pair exchanges one block: a tree would only add copies); reduce is a binomial tree rooted at
 * rank 0 over absolute ranks, so a non-commutative function sees lower ranks on the left.
 *
 * Teams: every rank number above is a rank of the operation's team (GASNET_TEAM_ALL, or one
 * gasnet_coll_team_split made: coll_team.c); messages go to the member's job rank and carry
 * the team's id, which keys the inboxes with the sequence number. */
#include "coll.h"

#include <pthread.h>

static uint32_t one_op_counter;
static struct gasneti_coll_team team_all = {.id = 0, .myrank = -1, .next_op = &one_op_counter};
/* Several images per rank (gasnet_coll_init's images): each thread's image, node-major. */
static int images_total; /* 0: one image per rank */
static GASNETI_TLS int my_image = -1;
static int first_image_of_mine; /* this rank's first image */
gasnet_team_handle_t gasneti_coll_team_all = &team_all;

/* Sequence numbers: each operation owns SUBS of them, one per message stream. */
enum { SUBS = 8, SUB_DATA = 0, SUB_DATA2 = 1, SUB_IN_UP = 2, SUB_IN_DOWN = 3, SUB_OUT_UP = 4,
       SUB_OUT_DOWN = 5 };

/* ---- inboxes ------------------------------------------------------------------------------ */
typedef struct inbox {
  uint64_t team; /* the id of the team whose operation it serves */
  int member;    /* the member (image) of this rank it is for */
  uint32_t seq;
  uint8_t *buf;
  size_t size, bytes, msgs;
  struct inbox *next;
} inbox_t;
enum { BUCKETS = 256 };
static inbox_t *buckets[BUCKETS];
static pthread_mutex_t inbox_lock = PTHREAD_MUTEX_INITIALIZER;

static inbox_t **bucket(uint64_t team, int member, uint32_t seq) {
  return &buckets[(seq ^ (uint32_t)member * 131u ^ (uint32_t)team ^ (uint32_t)(team >> 32)) %
                  BUCKETS];
}

/* The inbox of (team, member, seq) (created with size bytes if absent). Caller holds
 * inbox_lock. */
static inbox_t *inbox_at(uint64_t team, int member, uint32_t seq, size_t size) {
  inbox_t **head = bucket(team, member, seq);
  for (inbox_t *ib = *head; ib; ib = ib->next)
    if (ib->seq == seq && ib->team == team && ib->member == member) {
      if (ib->size != size)
        gasneti_fatalerror("collective %u: ranks disagree on its size (%zu and %zu bytes): every "
                           "rank must call the same collectives in the same order with the same "
                           "sizes", seq / SUBS, ib->size, size);
      return ib;
    }
  inbox_t *ib = gasneti_calloc(1, sizeof *ib);
  ib->team = team, ib->member = member, ib->seq = seq, ib->size = size;
  ib->buf = size ? gasneti_malloc(size) : NULL;
  ib->next = *head;
  *head = ib;
  return ib;
}

/* What has arrived for the operation's seq so far. */
static void inbox_counts(const gasneti_coll_op_t *op, uint32_t seq, size_t size, size_t *bytes,
                         size_t *msgs, uint8_t **buf) {
  pthread_mutex_lock(&inbox_lock);
  inbox_t *ib = inbox_at(op->team->id, op->me, seq, size);
  *bytes = ib->bytes, *msgs = ib->msgs;
  if (buf) *buf = ib->buf;
  pthread_mutex_unlock(&inbox_lock);
}

/* Removes the inbox of the operation's seq (everything for it has arrived) and returns its
 * buffer. */
static uint8_t *inbox_take(const gasneti_coll_op_t *op, uint32_t seq) {
  uint64_t team = op->team->id;
  pthread_mutex_lock(&inbox_lock);
  inbox_t **p = bucket(team, op->me, seq);
  while (*p && ((*p)->seq != seq || (*p)->team != team || (*p)->member != op->me))
    p = &(*p)->next;
  inbox_t *ib = *p;
  uint8_t *buf = NULL;
  if (ib) {
    *p = ib->next;
    buf = ib->buf;
    free(ib);
  }
  pthread_mutex_unlock(&inbox_lock);
  return buf;
}

#define LO(x) (gasnet_handlerarg_t)(uint32_t)(uint64_t)(x)
#define HI(x) (gasnet_handlerarg_t)(uint32_t)((uint64_t)(x) >> 32)
#define U64(lo, hi) (((uint64_t)(uint32_t)(hi) << 32) | (uint32_t)(lo))

static void coll_handler(gasnet_token_t t, void *buf, size_t n, gasnet_handlerarg_t seq,
                         gasnet_handlerarg_t offlo, gasnet_handlerarg_t offhi,
                         gasnet_handlerarg_t totlo, gasnet_handlerarg_t tothi,
                         gasnet_handlerarg_t teamlo, gasnet_handlerarg_t teamhi,
                         gasnet_handlerarg_t member) {
  (void)t;
  size_t off = U64(offlo, offhi), total = U64(totlo, tothi);
  pthread_mutex_lock(&inbox_lock);
  inbox_t *ib = inbox_at(U64(teamlo, teamhi), (int)member, (uint32_t)seq, total);
  pthread_mutex_unlock(&inbox_lock);
  if (off > total || n > total - off)
    gasneti_fatalerror("collective %u: %zu bytes at %zu overrun its %zu-byte inbox",
                       (uint32_t)seq / SUBS, n, off, total);
  /* The buffer stays put until every byte has arrived, and pieces never overlap: copy unlocked. */
  if (n) memcpy(ib->buf + off, buf, n);
  pthread_mutex_lock(&inbox_lock);
  ib->bytes += n, ib->msgs++;
  pthread_mutex_unlock(&inbox_lock);
}

void gasneti_coll_am_init(void) {
  gasneti_register_internal_handler(GASNETI_HANDLER_COLL, (gasneti_handler_fn)coll_handler);
}

/* len bytes at offset off of team member dest's inbox seq (of total bytes), in Medium-sized
 * pieces; a zero-length send is one message (barrier tokens count messages). */
static void coll_send(const gasneti_coll_op_t *op, int dest, uint32_t seq, const uint8_t *data,
                      size_t off, size_t len, size_t total) {
  const size_t max = gasnet_AMMaxMedium();
  const gasneti_coll_team_t *team = op->team;
  gasnet_node_t node = gasneti_coll_team_node(team, dest);
  size_t done = 0;
  do {
    size_t c = len - done < max ? len - done : max;
    gasneti_am_request_internal(node, GASNETI_HANDLER_COLL, GASNETI_AM_MEDIUM, data + done, c,
                                NULL, 8,
                                (gasnet_handlerarg_t[]){(gasnet_handlerarg_t)seq, LO(off + done),
                                                        HI(off + done), LO(total), HI(total),
                                                        LO(team->id), HI(team->id),
                                                        (gasnet_handlerarg_t)dest});
    done += c;
  } while (done < len);
}

/* ---- binomial trees over relative ranks 0..n-1 ------------------------------------------- */
static int span(int rel, int n) { /* the power of two that bounds rel's subtree */
  if (rel) return rel & -rel;
  int p = 1;
  while (p < n) p <<= 1;
  return p;
}
static int subtree(int rel, int n) { return span(rel, n) < n - rel ? span(rel, n) : n - rel; }
static int parent(int rel) { return rel & (rel - 1); }
/* Children in increasing order: rel + 1, rel + 2, rel + 4, ... below rel's span and n. */
#define FOR_CHILDREN(child, rel, n) \
  for (int k_ = 1, child; k_ < span(rel, n) && (child = (rel) + k_) < (n); k_ <<= 1)
static int child_count(int rel, int n) {
  int c = 0;
  FOR_CHILDREN(child, rel, n) c += child >= 0;
  return c;
}

/* ---- operations ------------------------------------------------------------------------ */
static gasnet_coll_fn_entry_t *fn_table;
static size_t fn_count;
static bool initialized;
static gasneti_coll_op_t *ops;    /* started and not yet synchronized, oldest first */
static pthread_mutex_t ops_lock = PTHREAD_MUTEX_INITIALIZER;

static uint32_t seq_of(const gasneti_coll_op_t *op, int sub) { return op->index * SUBS + (uint32_t)sub; }
#define me() (op->me)
#define nranks() (op->team->size)
#define absolute(rel, root) (((rel) + (root)) % nranks())

/* A barrier over the tree rooted at 0: tokens up, then a release down. */
static bool barrier_step(gasneti_coll_op_t *op, int up, int down) {
  int n = nranks(), rel = me();
  size_t bytes, msgs;
  if (op->bstate == 0) {
    inbox_counts(op, seq_of(op, up), 0, &bytes, &msgs, NULL);
    if (msgs < (size_t)child_count(rel, n)) return false;
    free(inbox_take(op, seq_of(op, up)));
    if (rel != 0) {
      coll_send(op, parent(rel), seq_of(op, up), NULL, 0, 0, 0);
      op->bstate = 1;
    } else {
      op->bstate = 2;
    }
  }
  if (op->bstate == 1) {
    inbox_counts(op, seq_of(op, down), 0, &bytes, &msgs, NULL);
    if (msgs < 1) return false;
    free(inbox_take(op, seq_of(op, down)));
    op->bstate = 2;
  }
  FOR_CHILDREN(child, rel, n) coll_send(op, child, seq_of(op, down), NULL, 0, 0, 0);
  op->bstate = 0;
  return true;
}

/* Broadcast of nb bytes from root's src to every dst over stream sub. */
static bool bcast_step(gasneti_coll_op_t *op, int sub, int root, uint8_t *dst, const uint8_t *src,
                       size_t nb) {
  int n = nranks(), rel = (me() - root + n) % n;
  uint32_t seq = seq_of(op, sub);
  if (rel == 0) {
    if (dst != src) memmove(dst, src, nb);
    FOR_CHILDREN(child, rel, n) coll_send(op, absolute(child, root), seq, src, 0, nb, nb);
    return true;
  }
  size_t bytes, msgs;
  uint8_t *buf;
  inbox_counts(op, seq, nb, &bytes, &msgs, &buf);
  if (bytes < nb) return false;
  memcpy(dst, buf, nb);
  FOR_CHILDREN(child, rel, n) coll_send(op, absolute(child, root), seq, buf, 0, nb, nb);
  free(inbox_take(op, seq));
  return true;
}

/* Scatter: a rank's inbox holds the blocks of its subtree in relative order. */
static void scatter_down(gasneti_coll_op_t *op, int root, const uint8_t *blocks) {
  int n = nranks(), rel = (me() - root + n) % n;
  size_t nb = op->nbytes;
  memcpy(op->dst, blocks, nb);
  FOR_CHILDREN(child, rel, n) {
    size_t len = (size_t)subtree(child, n) * nb;
    coll_send(op, absolute(child, root), seq_of(op, SUB_DATA), blocks + (size_t)(child - rel) * nb, 0,
              len, len);
  }
}

static bool scatter_step(gasneti_coll_op_t *op) {
  int n = nranks(), root = op->root, rel = (me() - root + n) % n;
  size_t nb = op->nbytes, mine = (size_t)subtree(rel, n) * nb;
  if (rel == 0) {
    if (root == 0) {
      scatter_down(op, root, op->src);
    } else { /* relative order starts at the root's block: rotate once */
      uint8_t *rotated = gasneti_malloc((size_t)n * nb);
      for (int j = 0; j < n; j++)
        memcpy(rotated + (size_t)j * nb, op->src + (size_t)((root + j) % n) * nb, nb);
      scatter_down(op, root, rotated);
      free(rotated);
    }
    return true;
  }
  size_t bytes, msgs;
  uint8_t *buf;
  inbox_counts(op, seq_of(op, SUB_DATA), mine, &bytes, &msgs, &buf);
  if (bytes < mine) return false;
  scatter_down(op, root, buf);
  free(inbox_take(op, seq_of(op, SUB_DATA)));
  return true;
}

/* Gather to root over stream sub: a rank's inbox collects its subtree's blocks (its own
 * first); the root lays them out by rank in dst. */
static bool gather_step(gasneti_coll_op_t *op, int sub, int root, uint8_t *dst, const uint8_t *src,
                        size_t nb) {
  int n = nranks(), rel = (me() - root + n) % n;
  uint32_t seq = seq_of(op, sub);
  size_t size = (size_t)subtree(rel, n) * nb, bytes, msgs;
  uint8_t *buf;
  inbox_counts(op, seq, size, &bytes, &msgs, &buf);
  if (op->dstate == 0) {
    memcpy(buf, src, nb); /* block 0 is ours; children write only the others */
    op->dstate = 1;
  }
  if (bytes < size - nb) return false;
  if (rel != 0) {
    int up = parent(rel);
    coll_send(op, absolute(up, root), seq, buf, (size_t)(rel - up) * nb, size,
              (size_t)subtree(up, n) * nb);
  } else {
    for (int j = 0; j < n; j++) memcpy(dst + (size_t)((root + j) % n) * nb, buf + (size_t)j * nb, nb);
  }
  free(inbox_take(op, seq));
  op->dstate = 0;
  return true;
}

static bool exchange_step(gasneti_coll_op_t *op) {
  int n = nranks(), self = me();
  size_t nb = op->nbytes, size = (size_t)n * nb, bytes, msgs;
  uint32_t seq = seq_of(op, SUB_DATA);
  if (op->dstate == 0) {
    memmove(op->dst + (size_t)self * nb, op->src + (size_t)self * nb, nb);
    for (int k = 1; k < n; k++) { /* staggered, so that not every rank sends to rank 0 first */
      int j = (self + k) % n;
      coll_send(op, j, seq, op->src + (size_t)j * nb, (size_t)self * nb, nb, size);
    }
    op->dstate = 1;
  }
  uint8_t *buf;
  inbox_counts(op, seq, size, &bytes, &msgs, &buf);
  if (bytes < size - nb) return false;
  for (int j = 0; j < n; j++)
    if (j != self) memcpy(op->dst + (size_t)j * nb, buf + (size_t)j * nb, nb);
  free(inbox_take(op, seq));
  op->dstate = 0;
  return true;
}

static bool reduce_step(gasneti_coll_op_t *op) {
  int n = nranks(), rel = me(), kids = child_count(rel, n);
  size_t b = op->elem_size * op->elem_count, size = (size_t)kids * b, bytes, msgs;
  uint32_t seq = seq_of(op, SUB_DATA);
  uint8_t *buf;
  if (op->dstate == 0) {
    op->acc = gasneti_malloc(b);
    memcpy(op->acc, op->src, b);
    op->dstate = 1;
  }
  if (op->dstate == 1) {
    inbox_counts(op, seq, size, &bytes, &msgs, &buf);
    if (bytes < size) return false;
    gasnet_coll_fn_entry_t *fn = &fn_table[op->fn];
    uint8_t *result = gasneti_malloc(b);
    for (int i = 0; i < kids; i++) { /* children's subtrees in increasing rank order */
      /* GASNet's arguments: element-wise over elem_count elements on both sides (left_count
       * is the element count), the function's table flags, the call's func_arg. */
      fn->fnptr(result, op->elem_count, op->acc, op->elem_count, buf + (size_t)i * b,
                op->elem_size, (int)fn->flags, op->fn_arg);
      uint8_t *t = op->acc;
      op->acc = result, result = t;
    }
    free(result);
    free(inbox_take(op, seq));
    if (rel != 0) {
      int up = parent(rel), index = __builtin_ctz((unsigned)(rel - up));
      coll_send(op, up, seq, op->acc, (size_t)index * b, b,
                (size_t)child_count(up, n) * b);
    } else if (op->root == 0) {
      memcpy(op->dst, op->acc, b);
    } else {
      coll_send(op, op->root, seq_of(op, SUB_DATA2), op->acc, 0, b, b);
    }
    free(op->acc);
    op->acc = NULL;
    op->dstate = 2;
  }
  if (rel == op->root && rel != 0) { /* the result comes from rank 0 */
    inbox_counts(op, seq_of(op, SUB_DATA2), b, &bytes, &msgs, &buf);
    if (bytes < b) return false;
    memcpy(op->dst, buf, b);
    free(inbox_take(op, seq_of(op, SUB_DATA2)));
  }
  op->dstate = 0;
  return true;
}

static bool data_step(gasneti_coll_op_t *op) {
  if (op->nbytes == 0) return true; /* nothing moves; the barriers still happen */
  int n = nranks();
  switch (op->kind) {
    case GASNETI_COLL_BROADCAST:
      return bcast_step(op, SUB_DATA, op->root, op->dst, op->src, op->nbytes);
    case GASNETI_COLL_SCATTER:
      return scatter_step(op);
    case GASNETI_COLL_GATHER:
      return gather_step(op, SUB_DATA, op->root, op->dst, op->src, op->nbytes);
    case GASNETI_COLL_GATHER_ALL:
      if (op->phase == 0) {
        if (!gather_step(op, SUB_DATA, 0, op->dst, op->src, op->nbytes)) return false;
        op->phase = 1;
      }
      return bcast_step(op, SUB_DATA2, 0, op->dst, op->dst, (size_t)n * op->nbytes);
    case GASNETI_COLL_EXCHANGE:
      return exchange_step(op);
    default:
      return reduce_step(op);
  }
}

enum { STAGE_IN, STAGE_DATA, STAGE_OUT, STAGE_DONE };

static bool advance(gasneti_coll_op_t *op) {
  for (;;) {
    switch (op->stage) {
      case STAGE_IN:
        if ((op->flags & GASNET_COLL_IN_ALLSYNC) && !barrier_step(op, SUB_IN_UP, SUB_IN_DOWN))
          return false;
        op->stage = STAGE_DATA;
        break;
      case STAGE_DATA:
        if (!data_step(op)) return false;
        op->stage = STAGE_OUT;
        break;
      case STAGE_OUT:
        if ((op->flags & GASNET_COLL_OUT_ALLSYNC) && !barrier_step(op, SUB_OUT_UP, SUB_OUT_DOWN))
          return false;
        op->stage = STAGE_DONE;
        break;
      default:
        return true;
    }
  }
}

/* Advances every started operation, oldest first (a rank waiting for one must still forward
 * the data of the others to its children). Caller holds ops_lock. */
static void progress_all(void) {
  for (gasneti_coll_op_t *op = ops; op; op = op->next) (void)advance(op);
}

static void release(gasneti_coll_op_t *op) {
  gasneti_coll_op_t **p = &ops;
  while (*p != op) p = &(*p)->next;
  *p = op->next;
  free(op);
}

/* ---- the public entry points' shared part ----------------------------------------------- */
void gasneti_coll_check(const char *what, gasnet_team_handle_t team, int flags, int root) {
  if (!initialized) gasneti_fatalerror("%s before gasnet_coll_init", what);
  if (gasneti_am_context != GASNETI_CTX_CLIENT)
    gasneti_fatalerror("%s called from an AM handler (collectives may not be)", what);
  gasneti_coll_team_check(what, team);
  int in = __builtin_popcount((unsigned)flags & (GASNET_COLL_IN_NOSYNC | GASNET_COLL_IN_MYSYNC |
                                                 GASNET_COLL_IN_ALLSYNC));
  int out = __builtin_popcount((unsigned)flags & (GASNET_COLL_OUT_NOSYNC | GASNET_COLL_OUT_MYSYNC |
                                                  GASNET_COLL_OUT_ALLSYNC));
  if (in != 1 || out != 1)
    gasneti_fatalerror("%s: flags 0x%x: give exactly one of GASNET_COLL_IN_NOSYNC, _IN_MYSYNC, "
                       "_IN_ALLSYNC and exactly one of GASNET_COLL_OUT_NOSYNC, _OUT_MYSYNC, "
                       "_OUT_ALLSYNC", what, (unsigned)flags);
  if (!(flags & GASNET_COLL_SINGLE) == !(flags & GASNET_COLL_LOCAL))
    gasneti_fatalerror("%s: flags 0x%x: give exactly one of GASNET_COLL_SINGLE and "
                       "GASNET_COLL_LOCAL", what, (unsigned)flags);
  if (root < 0 || root >= team->size)
    gasneti_fatalerror("%s: image %d does not exist (images 0..%d of the team)", what, root,
                       team->size - 1);
}

gasnet_coll_handle_t gasneti_coll_start(const gasneti_coll_op_t *args) {
  gasneti_coll_op_t *op = gasneti_malloc(sizeof *op);
  *op = *args;
  op->stage = STAGE_IN, op->dstate = op->bstate = op->phase = 0;
  op->acc = NULL, op->next = NULL;
  op->me = gasneti_coll_team_me(op->team);
  pthread_mutex_lock(&ops_lock);
  op->index = op->team->next_op[op->team == &team_all ? op->me - first_image_of_mine : 0]++;
  gasneti_coll_op_t **tail = &ops;
  while (*tail) tail = &(*tail)->next;
  *tail = op;
  progress_all();
  if (op->stage == STAGE_DONE) {
    release(op);
    op = GASNET_COLL_INVALID_HANDLE;
  }
  pthread_mutex_unlock(&ops_lock);
  return op;
}

void gasneti_coll_reduce_check(const char *what, size_t blksz, size_t offset,
                               gasnet_coll_fn_handle_t func) {
  if (blksz != 0 || offset != 0)
    gasneti_fatalerror("%s: src_blksz=%zu, src_offset=%zu: only 0 and 0 are supported (every "
                       "rank contributes elem_count elements)", what, blksz, offset);
  if (func < 0 || (size_t)func >= fn_count || !fn_table[func].fnptr)
    gasneti_fatalerror("%s: function %d is not in the table given to gasnet_coll_init (%zu "
                       "entries)", what, (int)func, fn_count);
}

int gasneti_coll_team_me(const gasneti_coll_team_t *team) {
  if (team != &team_all || !images_total) return team->myrank;
  if (my_image < 0)
    gasneti_fatalerror("a collective from a thread that did not call gasnet_coll_init: with "
                       "several images per rank, every image's thread calls it once");
  return my_image;
}

bool gasneti_coll_images(void) { return images_total != 0; }

/* GASNET_TEAM_ALL of images: image -> rank, each rank's first image, a counter per image. */
static void set_images(const gasnet_image_t images[]) {
  int n = (int)gasneti_nodes, total = 0;
  for (int r = 0; r < n; r++) {
    if (images[r] < 1)
      gasneti_fatalerror("gasnet_coll_init: images[%d] = %u: every rank has at least one image",
                         r, (unsigned)images[r]);
    if (r == (int)gasneti_mynode) first_image_of_mine = total;
    total += (int)images[r];
  }
  if (total == n) return; /* one image per rank: nothing changes */
  team_all.size = total;
  team_all.rank2node = gasneti_malloc((size_t)total * sizeof *team_all.rank2node);
  team_all.node2rank = gasneti_malloc((size_t)n * sizeof *team_all.node2rank);
  for (int r = 0, img = 0; r < n; r++) {
    team_all.node2rank[r] = img;
    for (unsigned k = 0; k < images[r]; k++) team_all.rank2node[img++] = (gasnet_node_t)r;
  }
  team_all.next_op = gasneti_calloc(images[gasneti_mynode], sizeof *team_all.next_op);
  images_total = total;
}

/* With several images per rank every image's thread calls it: the first does the work (the
 * others wait on the lock meanwhile), each records its image. */
void gasnet_coll_init(const gasnet_image_t images[], gasnet_image_t my_image_arg,
                      gasnet_coll_fn_entry_t fn_tbl[], size_t count, int init_flags) {
  static pthread_mutex_t init_lock = PTHREAD_MUTEX_INITIALIZER;
  static unsigned arrived;
  if (!gasneti_attach_done) gasneti_fatalerror("gasnet_coll_init before gasnet_attach");
  if (init_flags != 0) gasneti_fatalerror("gasnet_coll_init: init_flags %d must be 0", init_flags);
  pthread_mutex_lock(&init_lock);
  unsigned mine = images ? images[gasneti_mynode] : 1;
  if (arrived >= mine)
    gasneti_fatalerror("gasnet_coll_init called %u times on rank %d, which has %u image%s (each "
                       "image calls it once)", arrived + 1, (int)gasneti_mynode, mine,
                       mine == 1 ? "" : "s");
#if !GASNETI_THREADS
  if (mine > 1)
    gasneti_fatalerror("gasnet_coll_init: images[%d] = %u: several images per rank need threads "
                       "(the PAR or PARSYNC build)", (int)gasneti_mynode, mine);
#endif
  if (arrived++ == 0) {
    if (count && !fn_tbl) gasneti_fatalerror("gasnet_coll_init: fn_count %zu with no table", count);
    fn_table = count ? gasneti_malloc(count * sizeof *fn_table) : NULL;
    if (count) memcpy(fn_table, fn_tbl, count * sizeof *fn_table);
    fn_count = count;
    gasneti_coll_team_all_init(&team_all);
    first_image_of_mine = (int)gasneti_mynode;
    if (images) set_images(images);
    initialized = true;
    /* Collective, with a barrier inside, as GASNet 1.x's: a client sets up what its handlers
     * need before gasnet_coll_init and starts sending after it (Realm's start-up), so no rank
     * leaves it before every rank is in it. */
    gasneti_barrier_at(NULL, 0, GASNET_BARRIERFLAG_ANONYMOUS);
  }
  if (images_total) {
    int first = first_image_of_mine, last = first + (int)mine - 1;
    if ((int)my_image_arg < first || (int)my_image_arg > last)
      gasneti_fatalerror("gasnet_coll_init: my_image %u is not one of rank %d's images (%d..%d)",
                         (unsigned)my_image_arg, (int)gasneti_mynode, first, last);
    my_image = (int)my_image_arg;
  }
  pthread_mutex_unlock(&init_lock);
}

bool gasneti_coll_initialized(void) { return initialized; }

/* ---- synchronization ----------------------------------------------------------------------- */
int gasnet_coll_try_sync(gasnet_coll_handle_t h) {
  if (h == GASNET_COLL_INVALID_HANDLE) return GASNET_OK;
  pthread_mutex_lock(&ops_lock);
  progress_all();
  bool done = h->stage == STAGE_DONE;
  if (done) release(h);
  pthread_mutex_unlock(&ops_lock);
  return done ? GASNET_OK : GASNET_ERR_NOT_READY;
}

void gasnet_coll_wait_sync(gasnet_coll_handle_t h) {
  while (gasnet_coll_try_sync(h) != GASNET_OK) gasneti_wait_step();
}

int gasnet_coll_try_sync_all(gasnet_coll_handle_t *handles, size_t count) {
  int all = GASNET_OK;
  for (size_t i = 0; i < count; i++) {
    if (gasnet_coll_try_sync(handles[i]) == GASNET_OK) handles[i] = GASNET_COLL_INVALID_HANDLE;
    else all = GASNET_ERR_NOT_READY;
  }
  return all;
}

int gasnet_coll_try_sync_some(gasnet_coll_handle_t *handles, size_t count) {
  bool any = false, live = false;
  for (size_t i = 0; i < count; i++) {
    if (handles[i] == GASNET_COLL_INVALID_HANDLE) continue;
    live = true;
    if (gasnet_coll_try_sync(handles[i]) == GASNET_OK) {
      handles[i] = GASNET_COLL_INVALID_HANDLE;
      any = true;
    }
  }
  return any || !live ? GASNET_OK : GASNET_ERR_NOT_READY;
}

void gasnet_coll_wait_sync_all(gasnet_coll_handle_t *handles, size_t count) {
  while (gasnet_coll_try_sync_all(handles, count) != GASNET_OK) gasneti_wait_step();
}

void gasnet_coll_wait_sync_some(gasnet_coll_handle_t *handles, size_t count) {
  while (gasnet_coll_try_sync_some(handles, count) != GASNET_OK) gasneti_wait_step();
}
