/* env_test.c: each rank prints its host name and the value of every variable named on its
 * command line (or <unset>), so tests can see what the launcher propagated where. Arguments
 * --setenv=NAME=VALUE are set by the program itself before gasnet_init, as clients do. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test_util.h"

static const char SETENV[] = "--setenv=";

int main(int argc, char **argv) {
  for (int i = 1; i < argc; i++)
    if (strncmp(argv[i], SETENV, strlen(SETENV)) == 0) {
      char *name = argv[i] + strlen(SETENV), *eq = strchr(name, '=');
      if (eq) *eq = '\0', setenv(name, eq + 1, 1), *eq = '=';
    }
  GASNET_SAFE(gasnet_init(&argc, &argv));
  GASNET_SAFE(gasnet_attach(NULL, 0, GASNET_PAGESIZE, 0));
  char host[256] = "?";
  gethostname(host, sizeof host - 1);
  char cwd[1024] = "?";
  if (!getcwd(cwd, sizeof cwd)) strcpy(cwd, "?");
  for (int i = 1; i < argc; i++) {
    if (strncmp(argv[i], SETENV, strlen(SETENV)) == 0) continue;
    const char *value = getenv(argv[i]);
    printf("env_test: rank %d host %s cwd %s %s=%s\n", (int)gasnet_mynode(), host, cwd, argv[i],
           value ? value : "<unset>");
  }
  fflush(stdout);
  test_barrier();
  gasnet_exit(0);
  return 0;
}
