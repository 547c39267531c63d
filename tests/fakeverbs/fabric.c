/* fabric.c: the fabric file (LIDs, the directories of QPs and MRs), process liveness, and
 * the per-process memfd regions that hold completion and receive queues. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <signal.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "fv_internal.h"

fv_fabric_t *fv_fabric;
static pthread_once_t attach_once = PTHREAD_ONCE_INIT;

double fv_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void fv_shared_mutex_init(pthread_mutex_t *m) {
  pthread_mutexattr_t a;
  pthread_mutexattr_init(&a);
  pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
  pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
  pthread_mutex_init(m, &a);
  pthread_mutexattr_destroy(&a);
}

/* A process that died holding a lock leaves the data as it was between two complete updates
 * (every update publishes with its last store), so the lock is simply made usable again. */
void fv_lock(pthread_mutex_t *m) {
  if (pthread_mutex_lock(m) == EOWNERDEAD) pthread_mutex_consistent(m);
}

void fv_unlock(pthread_mutex_t *m) { pthread_mutex_unlock(m); }

/* ---- processes ------------------------------------------------------------------------------ */
static uint64_t start_time_of(int32_t pid) {
  char path[64], buf[1024];
  snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return 0;
  buf[n] = 0;
  const char *p = strrchr(buf, ')'); /* the command name may hold spaces */
  if (!p) return 0;
  int field = 2;
  for (; *p && field < 22; p++)
    if (*p == ' ') field++;
  return strtoull(p, NULL, 10);
}

uint64_t fv_self_start(void) {
  static uint64_t mine;
  static pid_t for_pid;
  if (for_pid != getpid()) { /* also right after a fork */
    mine = start_time_of(getpid());
    for_pid = getpid();
  }
  return mine;
}

bool fv_alive(int32_t pid, uint64_t start) {
  if (pid <= 0) return false;
  if (kill(pid, 0) != 0 && errno == ESRCH) return false;
  return start_time_of(pid) == start;
}

/* ---- the fabric file -------------------------------------------------------------------------- */
static void attach(void) {
  /* Peers read and write this process's memory with process_vm_*: where Yama restricts that
   * to descendants, allow any process of this user (it fails harmlessly elsewhere). */
  prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
  const char *path = getenv("FAKEVERBS_FABRIC");
  if (!path || !*path) return;
  int fd = open(path, O_RDWR | O_CLOEXEC);
  if (fd < 0) return;
  void *p = mmap(NULL, sizeof(fv_fabric_t), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (p == MAP_FAILED) return;
  fv_fabric_t *f = p;
  if (f->magic != FV_FABRIC_MAGIC || f->version != FV_FABRIC_VERSION) {
    fprintf(stderr, "fakeverbs: %s is not a fabric of this version (run fakeverbs-sm up)\n",
            path);
    munmap(p, sizeof(fv_fabric_t));
    return;
  }
  fv_fabric = f;
}

void fv_fabric_attach(void) { pthread_once(&attach_once, attach); }

uint32_t fv_port_lid(const char *dev, int port) {
  if (!fv_fabric) return 0;
  char host[64] = {0};
  gethostname(host, sizeof host - 1);
  fv_fabric_t *f = fv_fabric;
  uint32_t lid = 0;
  fv_lock(&f->lock);
  int free_slot = -1;
  for (int i = 0; i < FV_FABRIC_PORTS; i++) {
    fv_port_ent_t *e = &f->ports[i];
    if (!e->lid) {
      if (free_slot < 0) free_slot = i;
      continue;
    }
    if (e->port == (uint32_t)port && !strcmp(e->dev, dev) && !strcmp(e->host, host)) {
      lid = e->lid;
      break;
    }
  }
  if (!lid && free_slot >= 0) {
    fv_port_ent_t *e = &f->ports[free_slot];
    snprintf(e->host, sizeof e->host, "%s", host);
    snprintf(e->dev, sizeof e->dev, "%s", dev);
    e->port = (uint32_t)port;
    e->lid = lid = f->next_lid++;
  }
  fv_unlock(&f->lock);
  return lid;
}

uint32_t fv_pd_new(void) {
  static _Atomic uint32_t local = 1;
  if (!fv_fabric) return atomic_fetch_add(&local, 1);
  fv_lock(&fv_fabric->lock);
  uint32_t id = fv_fabric->next_pd++;
  fv_unlock(&fv_fabric->lock);
  return id;
}

/* ---- directories: slots whose owner died are taken back when space runs out ------------------ */
int fv_qp_slot_alloc(void) {
  fv_fabric_t *f = fv_fabric;
  if (!f) return -1;
  int found = -1;
  fv_lock(&f->lock);
  for (int pass = 0; pass < 2 && found < 0; pass++) {
    for (int i = 0; i < FV_FABRIC_QPS; i++) {
      int slot = (int)((f->qp_hint + (uint32_t)i) % FV_FABRIC_QPS);
      if (slot == 0) continue; /* QP numbers 0 and 1 are special in IB */
      fv_qp_ent_t *e = &f->qps[slot];
      uint32_t qpn = atomic_load(&e->qpn);
      if (qpn && (pass == 0 || fv_alive(e->pid, e->start))) continue;
      memset((char *)e + sizeof e->qpn, 0, sizeof *e - sizeof e->qpn);
      uint32_t gen = (uint32_t)(++f->qp_gen[slot] & 0x3ff);
      if (!gen) gen = f->qp_gen[slot] = 1;
      atomic_store(&e->qpn, (uint32_t)slot | gen << FV_QP_SLOT_BITS);
      f->qp_hint = (uint32_t)slot + 1;
      found = slot;
      break;
    }
  }
  fv_unlock(&f->lock);
  return found;
}

fv_qp_ent_t *fv_qp_lookup(uint32_t qpn) {
  if (!fv_fabric) return NULL;
  uint32_t slot = qpn & ((1u << FV_QP_SLOT_BITS) - 1);
  fv_qp_ent_t *e = &fv_fabric->qps[slot];
  return atomic_load(&e->qpn) == qpn && qpn ? e : NULL;
}

void fv_qp_slot_free(int slot) {
  if (fv_fabric && slot > 0) atomic_store(&fv_fabric->qps[slot].qpn, 0);
}

uint32_t fv_mr_new(uint32_t pd, uint32_t access, uint64_t addr, uint64_t length) {
  fv_fabric_t *f = fv_fabric;
  if (!f) return 0;
  uint32_t key = 0;
  fv_lock(&f->lock);
  for (int pass = 0; pass < 2 && !key; pass++) {
    for (int i = 0; i < FV_FABRIC_MRS; i++) {
      int slot = (int)((f->mr_hint + (uint32_t)i) % FV_FABRIC_MRS);
      if (slot == 0) continue;
      fv_mr_ent_t *e = &f->mrs[slot];
      if (atomic_load(&e->key) && (pass == 0 || fv_alive(e->pid, e->start))) continue;
      e->pid = getpid();
      e->start = fv_self_start();
      e->pd = pd;
      e->access = access;
      e->addr = addr;
      e->length = length;
      uint32_t gen = (uint32_t)(++f->mr_gen[slot]);
      if (!gen) gen = f->mr_gen[slot] = 1;
      key = (uint32_t)slot | gen << FV_MR_SLOT_BITS;
      atomic_store(&e->key, key);
      f->mr_hint = (uint32_t)slot + 1;
      break;
    }
  }
  fv_unlock(&f->lock);
  return key;
}

fv_mr_ent_t *fv_mr_lookup(uint32_t key) {
  if (!fv_fabric || !key) return NULL;
  fv_mr_ent_t *e = &fv_fabric->mrs[key & ((1u << FV_MR_SLOT_BITS) - 1)];
  return atomic_load(&e->key) == key ? e : NULL;
}

void fv_mr_free(uint32_t key) {
  fv_mr_ent_t *e = fv_mr_lookup(key);
  if (e) atomic_store(&e->key, 0);
}

bool fv_mr_check(uint32_t key, int32_t pid, uint64_t start, uint32_t pd, uint32_t need,
                 uint64_t addr, uint64_t len) {
  fv_mr_ent_t *e = fv_mr_lookup(key);
  if (!e || e->pid != pid || e->start != start || e->pd != pd) return false;
  if ((e->access & need) != need) return false;
  if (len == 0) return true;
  return addr >= e->addr && addr - e->addr <= e->length && len <= e->length - (addr - e->addr);
}

/* ---- regions ----------------------------------------------------------------------------------- */
typedef struct free_block {
  uint64_t off, size;
  struct free_block *next;
} free_block_t;

static struct {
  pthread_mutex_t lock;
  pid_t pid;
  int fd;
  uint8_t *base;
  uint64_t bump;
  free_block_t *free;
  struct sized {
    uint64_t off, size;
  } *live;
  int nlive, caplive;
} me = {.lock = PTHREAD_MUTEX_INITIALIZER, .fd = -1};

static bool region_open(void) {
  if (me.base && me.pid == getpid()) return true;
  /* A child of a fork gets its own region: the parent's queues are not its own. */
  int fd = memfd_create("fakeverbs", MFD_CLOEXEC);
  if (fd < 0) return false;
  if (ftruncate(fd, (off_t)FV_REGION_SIZE) != 0) {
    close(fd);
    return false;
  }
  void *p = mmap(NULL, FV_REGION_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) {
    close(fd);
    return false;
  }
  me.fd = fd;
  me.base = p;
  me.bump = 4096;
  me.free = NULL;
  me.nlive = 0;
  me.pid = getpid();
  return true;
}

void *fv_region_alloc(size_t bytes, uint64_t *off) {
  pthread_mutex_lock(&me.lock);
  void *out = NULL;
  uint64_t size = (bytes + 4095) & ~4095ull;
  if (!region_open()) goto done;
  for (free_block_t **pp = &me.free; *pp; pp = &(*pp)->next) {
    if ((*pp)->size == size) {
      free_block_t *b = *pp;
      *pp = b->next;
      *off = b->off;
      free(b);
      out = me.base + *off;
      memset(out, 0, size);
      break;
    }
  }
  if (!out) {
    if (me.bump + size > FV_REGION_SIZE) goto done;
    *off = me.bump;
    me.bump += size;
    out = me.base + *off;
  }
  if (me.nlive == me.caplive) {
    int cap = me.caplive ? 2 * me.caplive : 64;
    struct sized *l = realloc(me.live, sizeof *l * (size_t)cap);
    if (!l) {
      out = NULL;
      goto done;
    }
    me.live = l;
    me.caplive = cap;
  }
  me.live[me.nlive++] = (struct sized){*off, size};
done:
  pthread_mutex_unlock(&me.lock);
  return out;
}

void fv_region_free(uint64_t off) {
  pthread_mutex_lock(&me.lock);
  for (int i = 0; i < me.nlive; i++) {
    if (me.live[i].off != off) continue;
    free_block_t *b = malloc(sizeof *b);
    if (b) {
      *b = (free_block_t){off, me.live[i].size, me.free};
      me.free = b;
    }
    me.live[i] = me.live[--me.nlive];
    break;
  }
  pthread_mutex_unlock(&me.lock);
}

int fv_region_fd(void) {
  pthread_mutex_lock(&me.lock);
  int fd = region_open() ? me.fd : -1;
  pthread_mutex_unlock(&me.lock);
  return fd;
}

/* Other processes' regions, mapped once each (they live as long as some mapping does). */
static struct remote {
  int32_t pid;
  uint64_t start;
  void *base;
} remotes[1024];
static int nremotes;
static pthread_mutex_t remotes_lock = PTHREAD_MUTEX_INITIALIZER;

void *fv_region_of(int32_t pid, uint64_t start, int32_t fd) {
  if (pid == getpid() && start == fv_self_start()) return me.base;
  pthread_mutex_lock(&remotes_lock);
  void *base = NULL;
  for (int i = 0; i < nremotes; i++)
    if (remotes[i].pid == pid && remotes[i].start == start) {
      base = remotes[i].base;
      break;
    }
  if (!base) {
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/fd/%d", (int)pid, (int)fd);
    int f = open(path, O_RDWR | O_CLOEXEC);
    if (f >= 0) {
      void *p = mmap(NULL, FV_REGION_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, f, 0);
      close(f);
      if (p != MAP_FAILED) {
        base = p;
        if (nremotes == (int)(sizeof remotes / sizeof remotes[0])) { /* forget the oldest */
          munmap(remotes[0].base, FV_REGION_SIZE);
          memmove(remotes, remotes + 1, sizeof remotes[0] * (size_t)(nremotes - 1));
          nremotes--;
        }
        remotes[nremotes++] = (struct remote){pid, start, base};
      }
    }
  }
  pthread_mutex_unlock(&remotes_lock);
  return base;
}
