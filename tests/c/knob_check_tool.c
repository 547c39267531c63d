/* knob_check_tool.c: reads "NAME<TAB>VALUE" lines and prints how the C knob parser sees each:
 * "ok CANONICAL" or "error MESSAGE". Tests compare this with gasnetrun's CFFI binding. */
#include <stdio.h>
#include <string.h>

#include "knob_api.h"

int main(void) {
  char line[4096];
  while (fgets(line, sizeof line, stdin)) {
    line[strcspn(line, "\n")] = '\0';
    char *tab = strchr(line, '\t');
    if (!tab) {
      printf("error malformed input line\n");
      continue;
    }
    *tab = '\0';
    const gasneti_knob_t *knob = gasneti_knob_find(line);
    if (!knob) {
      printf("unknown %s\n", line);
      continue;
    }
    char canon[1024], err[1024];
    if (gasneti_knob_check(knob, line, tab + 1, canon, sizeof canon, err, sizeof err))
      printf("ok %s\n", canon);
    else
      printf("error %s\n", err);
  }
  return 0;
}
