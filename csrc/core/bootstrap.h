/* bootstrap.h: the collective operations a rank needs before the network is up.
 * Every spawner implements this interface; the conduit never knows which one started it. */
#ifndef GASNETI_BOOTSTRAP_H
#define GASNETI_BOOTSTRAP_H

#include <stddef.h>

typedef struct gasneti_bootstrap {
  const char *name;
  int rank, size;
  char jobid[32]; /* unique per job; names shared-memory objects together with the host */
  /* All-gather: every rank contributes len bytes; all[] receives size*len bytes in rank order. */
  void (*exchange)(const void *mine, size_t len, void *all);
  void (*barrier)(void);
  /* Root's len bytes are copied into buf on every rank. */
  void (*broadcast)(void *buf, size_t len, int root);
  /* Ends the whole job with this exit code, as fast as possible. */
  void (*abort)(int code) __attribute__((noreturn));
  /* Releases the channel; called once on the way out. */
  void (*fini)(void);
} gasneti_bootstrap_t;

/* Each returns NULL when its spawner did not start this process. */
const gasneti_bootstrap_t *gasneti_bootstrap_local_open(void); /* started by gasnetrun */
const gasneti_bootstrap_t *gasnetc_bootstrap_fork_open(int *argc, char ***argv); /* PSHM_NODES */
const gasneti_bootstrap_t *gasneti_bootstrap_single_open(void); /* a 1-rank job */

#endif
