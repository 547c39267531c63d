/* trace_output.c: the trace and statistics files: opening them, noticing when a write fails
 * (a full or failing file system, /dev/full), and closing them with an END line. A file whose
 * write failed is cut back to its last whole line, marked TRUNCATED when the marker fits, and
 * no longer written; the rank says once which file and why, and gasnet-trace warns of a file
 * without its END line. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "trace.h"
#include "trace_internal.h"
#include "trace_syntax.h"

/* At most two files: the trace and the statistics (one entry when they share a file). */
typedef struct {
  FILE *f;
  const char *knob, *what;
  char path[4096];
  bool failed, reported;
  int err;
  long long cut_at; /* -1: not a regular file (nothing was cut) */
  bool marked;
} output_t;
static output_t outputs[2];

static output_t *output_of(FILE *f) {
  for (int i = 0; i < 2; i++)
    if (outputs[i].f == f && f) return &outputs[i];
  return NULL;
}

/* The file opened for writing from its start, holding an exclusive lock on it for the rank's
 * life (a lock, not the name, says whether another running job writes it: a rerun of a job
 * that ended reuses its files as before). -2: another process holds the lock; -1: errno. The
 * file is emptied only once the lock is ours, so a file another job writes is never cut. */
static int open_locked(const char *path) {
  int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0666);
  if (fd < 0) return -1;
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    int err = errno;
    if (err == EWOULDBLOCK) {
      close(fd);
      return -2;
    }
    /* A file system without locks (or a device such as /dev/full): written unlocked. */
  }
  struct stat st;
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && ftruncate(fd, 0) != 0) {
    int err = errno;
    close(fd);
    errno = err;
    return -1;
  }
  return fd;
}

FILE *gasneti_trace_open(const char *knob, const char *pattern, const char *what) {
  output_t *o = !outputs[0].f ? &outputs[0] : &outputs[1];
  o->knob = knob;
  o->what = what;
  if (strcmp(pattern, "stdout") == 0 || strcmp(pattern, "-") == 0) {
    snprintf(o->path, sizeof o->path, "stdout");
    return o->f = stdout;
  }
  if (strcmp(pattern, "stderr") == 0) {
    snprintf(o->path, sizeof o->path, "stderr");
    return o->f = stderr;
  }
  if (!gasneti_expand_filename(pattern, gasneti_mynode, o->path, sizeof o->path))
    gasneti_fatalerror("%s='%s': the file name is too long", knob, pattern);
  int fd = open_locked(o->path);
  if (fd == -2) {
    /* Another running process writes this file: a second job given the same pattern. It keeps
     * its file; this rank writes beside it, under a name with this job's id, and says so. */
    char taken[sizeof o->path];
    snprintf(taken, sizeof taken, "%s", o->path);
    if (snprintf(o->path, sizeof o->path, "%s.%s", taken, gasneti_jobid) >= (int)sizeof o->path)
      gasneti_fatalerror("%s='%s': the file name is too long", knob, pattern);
    fd = open_locked(o->path);
    if (fd == -2)
      gasneti_fatalerror("%s='%s': %s and %s are both being written by other ranks: give each "
                         "rank its own file ('%%' stands for the rank)", knob, pattern, taken,
                         o->path);
    if (fd >= 0)
      gasneti_warning("%s='%s': %s is being written by another running job, which keeps it: "
                      "this rank writes its %s to %s instead", knob, pattern, taken, what,
                      o->path);
  }
  o->f = fd >= 0 ? fdopen(fd, "w") : NULL;
  if (!o->f)
    gasneti_fatalerror("%s='%s': cannot write the %s file %s: %s (accepted: a writable path, "
                       "'%%' standing for the rank, or stdout, stderr, -)", knob, pattern, what,
                       o->path, strerror(errno));
  return o->f;
}

void gasneti_trace_output_shared(FILE *f) {
  output_t *o = output_of(f);
  if (o) o->what = "trace and statistics";
}

bool gasneti_trace_output_dead(FILE *f) {
  output_t *o = output_of(f);
  return o && o->failed;
}

/* The offset just after the file's last newline (0: none), looking back from size. */
static off_t last_line_end(int fd, off_t size) {
  char buf[4096];
  while (size > 0) {
    off_t from = size > (off_t)sizeof buf ? size - (off_t)sizeof buf : 0;
    ssize_t n = pread(fd, buf, (size_t)(size - from), from);
    if (n <= 0) return 0;
    for (ssize_t i = n - 1; i >= 0; i--)
      if (buf[i] == '\n') return from + i + 1;
    size = from;
  }
  return 0;
}

/* Under the caller's output lock, after a write or flush of f set its error: keep what was
 * written up to the last whole line, say where it ends, and write nothing more to it. Returns
 * true the first time (the caller then reports, outside its lock). */
bool gasneti_trace_output_check(FILE *f, int err) {
  output_t *o = output_of(f);
  if (!o || o->failed || !ferror(f)) return false;
  o->failed = true;
  o->err = err ? err : EIO;
  o->cut_at = -1;
  __fpurge(f); /* what stdio still holds would land after the cut on a later flush */
  int fd = fileno(f);
  struct stat st;
  if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
    char line[256];
    int n = snprintf(line, sizeof line, "%d %.6fs> (I) TRUNCATED: %s\n", (int)gasneti_mynode,
                     gasneti_trace_now(), strerror(o->err));
    if (n < 0 || n >= (int)sizeof line) n = 0;
    /* Cut at least the mark's length back: on a full file system, the mark then takes the
     * room of the lines it replaces. */
    off_t end = last_line_end(fd, st.st_size > n ? st.st_size - n : 0);
    if (ftruncate(fd, end) == 0) {
      o->cut_at = (long long)end;
      o->marked = n > 0 && pwrite(fd, line, (size_t)n, end) == n;
      if (!o->marked && ftruncate(fd, end) != 0) o->cut_at = -1;
    }
  }
  return true;
}

void gasneti_trace_output_report(FILE *f) {
  output_t *o = output_of(f);
  if (!o || !o->failed || o->reported) return;
  o->reported = true;
  if (o->cut_at >= 0)
    gasneti_warning("%s: writing the %s file %s failed: %s; it ends at byte %lld, its last "
                    "whole line%s, and nothing more is written to it", o->knob, o->what,
                    o->path, strerror(o->err), o->cut_at,
                    o->marked ? ", marked TRUNCATED" : " (no room for a TRUNCATED mark)");
  else
    gasneti_warning("%s: writing the %s to %s failed: %s; what follows is lost", o->knob,
                    o->what, o->path, strerror(o->err));
}

void gasneti_trace_output_close(FILE *f) {
  output_t *o = output_of(f);
  if (!o) return;
  if (!o->failed && fflush(f) != 0 && gasneti_trace_output_check(f, errno))
    gasneti_trace_output_report(f);
  if (f == stdout || f == stderr) {
    o->f = NULL;
    return;
  }
  if (o->failed) __fpurge(f);
  o->f = NULL;
  int err = fclose(f) != 0 ? errno : 0;
  /* A failing close (a network file system reports late) loses what it did not write. */
  if (err && !o->failed) {
    o->failed = true;
    o->err = err;
    o->cut_at = -1;
    o->reported = true;
    gasneti_warning("%s: closing the %s file %s failed: %s; its end may be lost", o->knob,
                    o->what, o->path, strerror(err));
  }
}
