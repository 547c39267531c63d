/* placement.c: where this rank runs (sysfs and its CPU affinity). */
#include <ctype.h>
#include <dirent.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "placement.h"

static int domain_of_cpu(int cpu, bool numa) {
  char path[128];
  if (!numa) {
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/topology/physical_package_id", cpu);
    FILE *f = fopen(path, "r");
    int id = -1;
    if (f) {
      if (fscanf(f, "%d", &id) != 1) id = -1;
      fclose(f);
    }
    return id;
  }
  snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d", cpu);
  DIR *d = opendir(path);
  int id = -1;
  if (d) {
    struct dirent *e;
    while ((e = readdir(d)))
      if (!strncmp(e->d_name, "node", 4) && isdigit((unsigned char)e->d_name[4])) {
        id = atoi(e->d_name + 4);
        break;
      }
    closedir(d);
  }
  return id;
}

int gasneti_cpu_domain(bool numa) {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) != 0) return -1;
  int found = -1;
  for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
    if (!CPU_ISSET(cpu, &set)) continue;
    int id = domain_of_cpu(cpu, numa);
    if (id < 0 || (found >= 0 && id != found)) return -1;
    found = id;
  }
  return found;
}
