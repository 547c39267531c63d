/* fakeverbs_sm.c: the fake fabric's "subnet manager". `fakeverbs-sm up FILE` creates the
 * fabric file that FAKEVERBS_FABRIC names (ports become ACTIVE and get LIDs when a process
 * opens its device), `down FILE` removes it, `show FILE` lists LIDs and live objects. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fv_internal.h"

static int usage(void) {
  fprintf(stderr, "usage: fakeverbs-sm up|down|show FILE\n");
  return 2;
}

static int up(const char *path) {
  char tmp[4096];
  snprintf(tmp, sizeof tmp, "%s.%d.tmp", path, (int)getpid());
  int fd = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0 || ftruncate(fd, (off_t)sizeof(fv_fabric_t)) != 0) {
    fprintf(stderr, "fakeverbs-sm: cannot create %s: %s\n", tmp, strerror(errno));
    return 1;
  }
  fv_fabric_t *f = mmap(NULL, sizeof *f, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (f == MAP_FAILED) {
    fprintf(stderr, "fakeverbs-sm: cannot map %s: %s\n", tmp, strerror(errno));
    unlink(tmp);
    return 1;
  }
  fv_shared_mutex_init(&f->lock);
  f->next_lid = 2; /* LID 1 is the subnet manager's own */
  f->next_pd = 1;
  f->version = FV_FABRIC_VERSION;
  f->magic = FV_FABRIC_MAGIC; /* last: a half-made fabric is never taken for one */
  munmap(f, sizeof *f);
  if (rename(tmp, path) != 0) {
    fprintf(stderr, "fakeverbs-sm: cannot create %s: %s\n", path, strerror(errno));
    unlink(tmp);
    return 1;
  }
  return 0;
}

static int show(const char *path) {
  setenv("FAKEVERBS_FABRIC", path, 1);
  fv_fabric_attach();
  if (!fv_fabric) {
    fprintf(stderr, "fakeverbs-sm: %s is not a fabric\n", path);
    return 1;
  }
  for (int i = 0; i < FV_FABRIC_PORTS; i++) {
    fv_port_ent_t *e = &fv_fabric->ports[i];
    if (e->lid) printf("lid %u: host %s %s port %u\n", e->lid, e->host, e->dev, e->port);
  }
  int qps = 0, mrs = 0;
  for (int i = 0; i < FV_FABRIC_QPS; i++)
    if (atomic_load(&fv_fabric->qps[i].qpn) && fv_alive(fv_fabric->qps[i].pid, fv_fabric->qps[i].start))
      qps++;
  for (int i = 0; i < FV_FABRIC_MRS; i++)
    if (atomic_load(&fv_fabric->mrs[i].key) && fv_alive(fv_fabric->mrs[i].pid, fv_fabric->mrs[i].start))
      mrs++;
  printf("live queue pairs: %d, memory regions: %d\n", qps, mrs);
  return 0;
}

int main(int argc, char **argv) {
  if (argc != 3) return usage();
  if (!strcmp(argv[1], "up")) return up(argv[2]);
  if (!strcmp(argv[1], "show")) return show(argv[2]);
  if (!strcmp(argv[1], "down")) {
    if (unlink(argv[2]) != 0 && errno != ENOENT) {
      fprintf(stderr, "fakeverbs-sm: cannot remove %s: %s\n", argv[2], strerror(errno));
      return 1;
    }
    return 0;
  }
  return usage();
}
