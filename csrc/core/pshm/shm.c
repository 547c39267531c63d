/* shm.c: named POSIX shared-memory objects of one job on one host.
 * Names carry the job id and the host, since fake hosts may share /dev/shm, then the object's
 * name tag, which an outsider cannot compute (name_tag.c) and so cannot create first, and end
 * with the pid of the host's agent (GASNETRUN_PID) when one started the rank: if that agent is killed
 * before the ranks unlinked their objects, the next agent on the host sees whose they were and
 * that their owner is gone, and removes them (python/gasnetrun/agent/agent.py). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pshm.h"

void gasneti_shm_name(char *buf, size_t len, char kind, int rank) {
  char tag[17];
  gasneti_name_tag(kind, rank, tag);
  static long owner = -1;
  if (owner < 0) {
    const char *agent = getenv("GASNETRUN_PID"); /* the launcher's private channel */
    owner = agent && *agent ? strtol(agent, NULL, 10) : 0;
    if (owner < 0) owner = 0;
  }
  if (owner)
    snprintf(buf, len, "/gasnet-%s-%s-%c%d-%s.%ld", gasneti_jobid, gasneti_hostname, kind, rank,
             tag, owner);
  else
    snprintf(buf, len, "/gasnet-%s-%s-%c%d-%s", gasneti_jobid, gasneti_hostname, kind, rank, tag);
}

static void *map_fd(int fd, size_t size, const char *name) {
  void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED)
    gasneti_fatalerror("mmap of shared memory %s (%zu bytes) failed: %s", name, size,
                       strerror(errno));
  return p;
}

void *gasneti_shm_create(char kind, int rank, size_t size) {
  char name[256];
  gasneti_shm_name(name, sizeof name, kind, rank);
  int fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
  if (fd < 0) gasneti_fatalerror("shm_open(%s) failed: %s", name, strerror(errno));
  if (ftruncate(fd, (off_t)size) != 0) {
    int err = errno;
    shm_unlink(name);
    gasneti_fatalerror("sizing shared memory %s to %zu bytes failed: %s", name, size,
                       strerror(err));
  }
  void *p = map_fd(fd, size, name);
  close(fd);
  return p;
}

void *gasneti_shm_map(char kind, int rank, size_t size) {
  char name[256];
  gasneti_shm_name(name, sizeof name, kind, rank);
  int fd = shm_open(name, O_RDWR, 0600);
  if (fd < 0) gasneti_fatalerror("shm_open(%s) of a peer failed: %s", name, strerror(errno));
  void *p = map_fd(fd, size, name);
  close(fd);
  return p;
}

void gasneti_shm_unlink(char kind, int rank) {
  char name[256];
  gasneti_shm_name(name, sizeof name, kind, rank);
  if (shm_unlink(name) != 0 && errno != ENOENT)
    gasneti_warning("shm_unlink(%s) failed: %s", name, strerror(errno));
}

void gasneti_shm_cleanup_job(const char *jobid) {
  char prefix[64];
  int plen = snprintf(prefix, sizeof prefix, "gasnet-%s-", jobid);
  DIR *dir = opendir("/dev/shm");
  if (!dir) return;
  struct dirent *e;
  while ((e = readdir(dir)) != NULL) {
    if (strncmp(e->d_name, prefix, (size_t)plen) != 0) continue;
    char name[300];
    snprintf(name, sizeof name, "/%s", e->d_name);
    shm_unlink(name);
  }
  closedir(dir);
}
