/* tools_system.c: what the machine is (CPUs, memory, host name), CPU binding, rlimits, and a
 * checksum. */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "tools_internal.h"

int gasnett_cpu_count(void) {
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? (int)n : 0;
}

uint64_t gasnett_getPhysMemSz(int failureIsFatal) {
  long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
  if (pages > 0 && size > 0) return (uint64_t)pages * (uint64_t)size;
  if (failureIsFatal) gasnett_fatalerror("gasnett_getPhysMemSz: the physical memory size is unknown");
  return 0;
}

const char *gasnett_gethostname(void) {
  static char name[256];
  if (!name[0] && gethostname(name, sizeof name - 1) != 0) snprintf(name, sizeof name, "unknown");
  return name;
}

int gasnett_set_affinity(int rank) {
  cpu_set_t allowed, one;
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) return errno;
  if (CPU_COUNT(&allowed) == 0) return EINVAL;
  int pick = (rank < 0 ? -rank : rank) % CPU_COUNT(&allowed);
  for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
    if (!CPU_ISSET(cpu, &allowed)) continue;
    if (pick-- == 0) {
      CPU_ZERO(&one);
      CPU_SET(cpu, &one);
      return sched_setaffinity(0, sizeof one, &one) == 0 ? 0 : errno;
    }
  }
  return EINVAL;
}

int gasnett_maximize_rlimit(int res, const char *lim_desc) {
  struct rlimit r;
  if (getrlimit(res, &r) != 0) return 0;
  if (r.rlim_cur == r.rlim_max) return 1;
  r.rlim_cur = r.rlim_max;
  if (setrlimit(res, &r) != 0) {
    fprintf(stderr, "gasnett_maximize_rlimit: could not raise %s to its hard limit\n",
            lim_desc ? lim_desc : "a limit");
    return 0;
  }
  return 1;
}

int gasnett_maximize_rlimits(void) {
  int ok = gasnett_maximize_rlimit(RLIMIT_DATA, "RLIMIT_DATA");
  ok &= gasnett_maximize_rlimit(RLIMIT_STACK, "RLIMIT_STACK");
  ok &= gasnett_maximize_rlimit(RLIMIT_NOFILE, "RLIMIT_NOFILE");
  return ok;
}

uint64_t gasnett_checksum(const void *p, int numbytes) {
  /* FNV-1a: cheap, and any changed byte changes the result. */
  const unsigned char *b = p;
  uint64_t h = 14695981039346656037ull;
  for (int i = 0; i < numbytes; i++) h = (h ^ b[i]) * 1099511628211ull;
  return h;
}

void *gasnett_mmap(uintptr_t size) {
  void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED)
    gasnett_fatalerror("gasnett_mmap(%lu bytes): %s", (unsigned long)size, strerror(errno));
  return p;
}
