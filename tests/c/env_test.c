/* env_test.c: each rank prints its host name and the value of every variable named on its
 * command line (or <unset>), so tests can see what the launcher propagated where. */
#include <string.h>
#include <unistd.h>

#include "test_util.h"

int main(int argc, char **argv) {
  GASNET_SAFE(gasnet_init(&argc, &argv));
  GASNET_SAFE(gasnet_attach(NULL, 0, GASNET_PAGESIZE, 0));
  char host[256] = "?";
  gethostname(host, sizeof host - 1);
  char cwd[1024] = "?";
  if (!getcwd(cwd, sizeof cwd)) strcpy(cwd, "?");
  for (int i = 1; i < argc; i++) {
    const char *value = getenv(argv[i]);
    printf("env_test: rank %d host %s cwd %s %s=%s\n", (int)gasnet_mynode(), host, cwd, argv[i],
           value ? value : "<unset>");
  }
  fflush(stdout);
  test_barrier();
  gasnet_exit(0);
  return 0;
}
