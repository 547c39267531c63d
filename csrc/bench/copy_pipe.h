/* copy_pipe.h: the floor of any transfer that copies twice through a bounded buffer (what
 * the AM path does between ranks that share no mapping of each other's segment): rank 0
 * copies the source into a ring of chunks in memory shared with rank 1, which copies them
 * out into its segment, both cores working at once. No runtime code runs in the loop, so
 * the AM path's bandwidth reads as a fraction of this in the same run. The ring is a memfd
 * of rank 0 that rank 1 maps through /proc/<pid>/fd (ranks 0 and 1 on one host): nothing is
 * left behind however the job ends. */
#ifndef COPY_PIPE_H
#define COPY_PIPE_H

#include <fcntl.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <unistd.h>

#include "bench_util.h"

enum { PIPE_SLOTS = 4, PIPE_CHUNK = 64 * 1024 }; /* the smp outbox's shape: 4 x 64 KiB */

typedef struct {
  _Alignas(64) _Atomic long produced;
  _Alignas(64) _Atomic long consumed;
  _Alignas(64) _Atomic int quit;
  size_t dst_off[PIPE_SLOTS], len[PIPE_SLOTS];
  _Alignas(64) unsigned char ring[PIPE_SLOTS][PIPE_CHUNK];
} copy_pipe_t;

static copy_pipe_t *copy_pipe;
static volatile int copy_pipe_pid, copy_pipe_fd; /* set in rank 1 by the AM that offers it */

/* Rank 0: creates the ring; returns the memfd to offer rank 1, or -1. */
static int copy_pipe_create(void) {
  int fd = memfd_create("rma_bench_pipe", MFD_CLOEXEC);
  if (fd < 0 || ftruncate(fd, sizeof(copy_pipe_t)) != 0) return -1;
  void *p = mmap(NULL, sizeof(copy_pipe_t), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) return -1;
  copy_pipe = p;
  return fd;
}

/* Rank 1, outside handlers: maps rank 0's ring and copies chunks out into dst until told to
 * quit; polls GASNet while the ring is empty, since rank 0's other benchmarks need it. */
static void copy_pipe_serve(unsigned char *dst) {
  char name[64];
  snprintf(name, sizeof name, "/proc/%d/fd/%d", copy_pipe_pid, copy_pipe_fd);
  int fd = open(name, O_RDWR);
  copy_pipe_t *p = fd < 0 ? MAP_FAILED
                          : mmap(NULL, sizeof(copy_pipe_t), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (fd >= 0) close(fd);
  if (p == MAP_FAILED) {
    fprintf(stderr, "rma_bench: cannot map rank 0's copy ring (%s)\n", name);
    gasnet_exit(1);
  }
  long c = 0;
  while (!atomic_load_explicit(&p->quit, memory_order_acquire)) {
    if (atomic_load_explicit(&p->produced, memory_order_acquire) == c) {
      gasnet_AMPoll();
      continue;
    }
    int slot = (int)(c % PIPE_SLOTS);
    memcpy(dst + p->dst_off[slot], p->ring[slot], p->len[slot]);
    atomic_store_explicit(&p->consumed, ++c, memory_order_release);
  }
  munmap(p, sizeof(copy_pipe_t));
}

/* Rank 0: one transfer of n bytes through the ring; returns once rank 1 has copied it out. */
static void copy_pipe_transfer(void *remote, void *local, size_t n) {
  (void)remote;
  copy_pipe_t *p = copy_pipe;
  long c = atomic_load_explicit(&p->produced, memory_order_relaxed);
  for (size_t off = 0; off < n; off += PIPE_CHUNK) {
    while (c - atomic_load_explicit(&p->consumed, memory_order_acquire) >= PIPE_SLOTS) {}
    int slot = (int)(c % PIPE_SLOTS);
    size_t len = n - off < PIPE_CHUNK ? n - off : PIPE_CHUNK;
    memcpy(p->ring[slot], (unsigned char *)local + off, len);
    p->dst_off[slot] = off, p->len[slot] = len;
    atomic_store_explicit(&p->produced, ++c, memory_order_release);
  }
  while (atomic_load_explicit(&p->consumed, memory_order_acquire) != c) {}
}

#endif
