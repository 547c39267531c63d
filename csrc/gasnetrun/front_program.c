/* front_program.c: finding programs (the job's, the launcher) the way the Python gasnetrun
 * does (shutil.which, os.path.abspath), and reading what a GASNet program can run from the
 * $GASNetIdent: ... $ string its library embeds. */
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "front.h"

static int runnable(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && access(path, X_OK) == 0 && !S_ISDIR(st.st_mode);
}

/* shutil.which: names with a slash are taken as they are; others are looked for in each PATH
 * directory in order (an empty one is the current directory). */
char *gasneti_front_which(const char *name) {
  if (strchr(name, '/')) return runnable(name) ? gasneti_front_strdup(name) : NULL;
  const char *path = gasneti_front_env("PATH");
  if (!path || !*path) return NULL; /* Python then uses its own default: its turn */
  for (const char *dir = path;;) {
    const char *end = strchr(dir, ':');
    size_t len = end ? (size_t)(end - dir) : strlen(dir);
    char *candidate = len == 0 ? gasneti_front_strdup(name)
                      : dir[len - 1] == '/'
                          ? gasneti_front_printf("%.*s%s", (int)len, dir, name)
                          : gasneti_front_printf("%.*s/%s", (int)len, dir, name);
    if (runnable(candidate)) return candidate;
    free(candidate);
    if (!end) return NULL;
    dir = end + 1;
  }
}

/* os.path.abspath: joined to the working directory and normalised ('.', '..', '//' gone). */
char *gasneti_front_abspath(const char *path) {
  char cwd[PATH_MAX];
  if (path[0] != '/' && !getcwd(cwd, sizeof cwd)) return NULL;
  if (strncmp(path, "//", 2) == 0 && path[2] != '/') return NULL; /* POSIX's implementation-
                                                                      defined '//': Python's */
  char *joined = path[0] == '/' ? gasneti_front_strdup(path)
                                : gasneti_front_printf("%s/%s", cwd, path);
  char *out = malloc(strlen(joined) + 2);
  if (!out) {
    free(joined);
    return NULL;
  }
  size_t n = 0;
  for (char *save = NULL, *part = strtok_r(joined, "/", &save); part;
       part = strtok_r(NULL, "/", &save)) {
    if (strcmp(part, ".") == 0) continue;
    if (strcmp(part, "..") == 0) {
      while (n > 0 && out[n - 1] != '/') n--;
      if (n > 0) n--; /* the slash before the component; at the root '..' stays there */
      continue;
    }
    out[n++] = '/';
    size_t len = strlen(part);
    memcpy(out + n, part, len);
    n += len;
  }
  if (n == 0) out[n++] = '/';
  out[n] = '\0';
  free(joined);
  return out;
}

/* "$GASNetIdent: " then 1..400 characters of printable ASCII other than '$', then " $": the
 * first place in the file where all of it is found (ident.py's pattern). */
static int find_ident(const char *data, size_t size, const char **text, size_t *len) {
  static const char head[] = "$GASNetIdent: ";
  const size_t hl = sizeof head - 1;
  for (const char *p = data; (p = memmem(p, size - (size_t)(p - data), head, hl)) != NULL; p++) {
    const char *start = p + hl, *end = data + size, *q = start;
    while (q < end && (size_t)(q - start) <= 401 && *q >= ' ' && *q <= '~' && *q != '$') q++;
    size_t run = (size_t)(q - start);
    if (q < end && *q == '$' && run >= 2 && run <= 401 && q[-1] == ' ') {
      *text = start;
      *len = run - 1;
      return 1;
    }
  }
  return 0;
}

/* key=value words; a later word wins, as in ident.py's dict. 0 when a value does not fit. */
static int field(const char *text, size_t len, const char *key, char *out, size_t outlen) {
  size_t kl = strlen(key);
  for (size_t i = 0; i < len;) {
    while (i < len && text[i] == ' ') i++;
    size_t start = i;
    while (i < len && text[i] != ' ') i++;
    if (i - start > kl && strncmp(text + start, key, kl) == 0 && text[start + kl] == '=') {
      size_t vl = i - start - kl - 1;
      if (vl >= outlen) return 0;
      memcpy(out, text + start + kl + 1, vl);
      out[vl] = '\0';
    }
  }
  return 1;
}

int gasneti_front_read_ident(const char *path, gasneti_front_ident_t *out) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  struct stat st;
  int found = 0;
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
    void *data = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    const char *text;
    size_t len;
    if (data != MAP_FAILED) {
      if (find_ident(data, (size_t)st.st_size, &text, &len)) {
        strcpy(out->conduit, "?");
        out->spawners[0] = '\0';
        found = field(text, len, "conduit", out->conduit, sizeof out->conduit) &&
                field(text, len, "spawners", out->spawners, sizeof out->spawners);
      }
      munmap(data, (size_t)st.st_size);
    }
  }
  close(fd);
  return found;
}
