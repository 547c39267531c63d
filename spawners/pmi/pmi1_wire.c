/* pmi1_wire.c: the PMI-1 wire protocol, spoken directly over the socket a process manager
 * passes in PMI_FD (MPICH's Hydra): one line per command, "cmd=NAME key=value ...\n", one
 * line per reply. No client library is needed. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pmi_kvs.h"

#include "gasnet_internal.h"

#define LINE_MAX_ 4096

static gasneti_pmi_kvs_t wire;
static int fd = -1;
static char reply[LINE_MAX_];
static size_t buffered; /* bytes of the next reply already read */

static void send_line(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void send_line(const char *fmt, ...) {
  char line[LINE_MAX_];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  if (n < 0 || (size_t)n >= sizeof line)
    gasneti_fatalerror("pmi spawner (PMI-1): a command of %d bytes exceeds the line limit", n);
  for (int done = 0; done < n;) {
    ssize_t w = write(fd, line + done, (size_t)(n - done));
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0)
      gasneti_fatalerror("pmi spawner (PMI-1): cannot write to the process manager (PMI_FD=%d):"
                         " %s", fd, w < 0 ? strerror(errno) : "closed");
    done += (int)w;
  }
}

/* Reads one reply line (without its newline) into reply[]. */
static void read_line(void) {
  for (;;) {
    char *nl = memchr(reply, '\n', buffered);
    if (nl) {
      *nl = 0;
      return;
    }
    if (buffered >= sizeof reply - 1)
      gasneti_fatalerror("pmi spawner (PMI-1): a reply longer than %d bytes", LINE_MAX_);
    ssize_t r = read(fd, reply + buffered, sizeof reply - 1 - buffered);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0)
      gasneti_fatalerror("pmi spawner (PMI-1): the process manager closed PMI_FD=%d (%s)", fd,
                         r < 0 ? strerror(errno) : "end of file");
    buffered += (size_t)r;
  }
}

/* Drops the reply just handled, keeping whatever followed it. */
static void consume(void) {
  size_t used = strlen(reply) + 1;
  memmove(reply, reply + used, buffered - used);
  buffered -= used;
}

/* The value of key in the current reply ("" when absent), copied into out[max]. */
static const char *field(const char *key, char *out, size_t max) {
  size_t klen = strlen(key);
  out[0] = 0;
  for (const char *p = reply; *p;) {
    while (*p == ' ') p++;
    const char *end = strchr(p, ' ');
    if (!end) end = p + strlen(p);
    if ((size_t)(end - p) > klen && !strncmp(p, key, klen) && p[klen] == '=') {
      size_t n = (size_t)(end - p) - klen - 1;
      if (n >= max) n = max - 1;
      memcpy(out, p + klen + 1, n);
      out[n] = 0;
      return out;
    }
    p = end;
  }
  return out;
}

/* Sends a command and reads its reply, which must be cmd=expect with rc=0 when it has an rc. */
static void transact(const char *expect, const char *what) {
  read_line();
  char cmd[64], rc[16], msg[256];
  field("cmd", cmd, sizeof cmd);
  field("rc", rc, sizeof rc);
  if (strcmp(cmd, expect) || (rc[0] && strcmp(rc, "0")))
    gasneti_fatalerror("pmi spawner (PMI-1): %s failed: the process manager replied '%.200s'%s%s",
                       what, reply, field("msg", msg, sizeof msg)[0] ? ": " : "", msg);
}

static void wire_put(const char *key, const char *value) {
  send_line("cmd=put kvsname=%s key=%s value=%s\n", wire.job, key, value);
  transact("put_result", "put");
  consume();
}

static void wire_fence(void) {
  send_line("cmd=barrier_in\n");
  transact("barrier_out", "barrier");
  consume();
}

static void wire_get(int rank, const char *key, char *value, size_t max) {
  (void)rank;
  send_line("cmd=get kvsname=%s key=%s\n", wire.job, key);
  transact("get_result", "get");
  field("value", value, max);
  consume();
}

static void wire_finalize(void) {
  send_line("cmd=finalize\n");
  transact("finalize_ack", "finalize");
  consume();
}

static void wire_abort(int code) { send_line("cmd=abort exitcode=%d\n", code); }

static int env_int(const char *name, const char *s, int min) {
  char *end;
  long v = s ? strtol(s, &end, 10) : -1;
  if (!s || !*s || *end || v < min || v > 1 << 24)
    gasneti_fatalerror("pmi spawner (PMI-1): %s='%s' is not a valid number (>= %d)", name,
                       s ? s : "", min);
  return (int)v;
}

const gasneti_pmi_kvs_t *gasneti_pmi1_wire_open(void) {
  if (!getenv("PMI_FD") || !getenv("PMI_RANK") || !getenv("PMI_SIZE")) return NULL;
  fd = env_int("PMI_FD", getenv("PMI_FD"), 0);
  wire = (gasneti_pmi_kvs_t){.protocol = "PMI-1",
                             .rank = env_int("PMI_RANK", getenv("PMI_RANK"), 0),
                             .size = env_int("PMI_SIZE", getenv("PMI_SIZE"), 1),
                             .abort_on_error_exit = 1,
                             .put = wire_put,
                             .fence = wire_fence,
                             .get = wire_get,
                             .finalize = wire_finalize,
                             .abort = wire_abort};
  if (wire.rank >= wire.size)
    gasneti_fatalerror("pmi spawner (PMI-1): PMI_RANK=%d is not below PMI_SIZE=%d", wire.rank,
                       wire.size);
  send_line("cmd=init pmi_version=1 pmi_subversion=1\n");
  transact("response_to_init", "init");
  consume();
  send_line("cmd=get_maxes\n");
  transact("maxes", "get_maxes");
  char v[32];
  wire.value_max = (size_t)strtoul(field("vallen_max", v, sizeof v), NULL, 10);
  consume();
  send_line("cmd=get_my_kvsname\n");
  transact("my_kvsname", "get_my_kvsname");
  field("kvsname", wire.job, sizeof wire.job);
  consume();
  if (!wire.job[0]) gasneti_fatalerror("pmi spawner (PMI-1): the process manager sent no kvsname");
  return &wire;
}
