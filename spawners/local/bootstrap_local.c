/* bootstrap_local.c: the rank's half of the local spawner: collectives over a Unix socket to
 * gasnetrun, which answers once every rank asked. Protocol in spawners/local/protocol.md. */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "../../csrc/core/gasnet_internal.h"

enum { OP_HELLO = 1, OP_EXCHANGE = 2, OP_BCAST = 3, OP_ABORT = 4, OP_FINI = 5 };

static int sock = -1;
static gasneti_bootstrap_t local_boot;

static void write_all(const void *buf, size_t len) {
  const char *p = buf;
  while (len) {
    ssize_t n = write(sock, p, len);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) gasneti_exit_now(1); /* gasnetrun is gone: nothing to report to */
    p += n;
    len -= (size_t)n;
  }
}

static void read_all(void *buf, size_t len) {
  char *p = buf;
  while (len) {
    ssize_t n = read(sock, p, len);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) gasneti_exit_now(1);
    p += n;
    len -= (size_t)n;
  }
}

static void send_frame(uint32_t op, const void *payload, uint32_t len) {
  uint32_t hdr[2] = {op, len};
  write_all(hdr, sizeof hdr);
  if (len) write_all(payload, len);
}

/* Reads the answer to op; its length must be what the caller expects. */
static void recv_frame(uint32_t op, void *payload, size_t len) {
  uint32_t hdr[2];
  read_all(hdr, sizeof hdr);
  if (hdr[0] != op || hdr[1] != len)
    gasneti_fatalerror("gasnetrun answered op %u/%u bytes, expected op %u/%zu", hdr[0], hdr[1], op,
                       len);
  if (len) read_all(payload, len);
}

static void local_exchange(const void *mine, size_t len, void *all) {
  send_frame(OP_EXCHANGE, mine, (uint32_t)len);
  recv_frame(OP_EXCHANGE, all, len * (size_t)local_boot.size);
}

static void local_barrier(void) { local_exchange(NULL, 0, NULL); }

static void local_broadcast(void *buf, size_t len, int root) {
  bool is_root = local_boot.rank == root;
  size_t plen = sizeof(uint32_t) + (is_root ? len : 0);
  uint8_t *msg = gasneti_malloc(plen);
  uint32_t r = (uint32_t)root;
  memcpy(msg, &r, sizeof r);
  if (is_root) memcpy(msg + sizeof r, buf, len);
  send_frame(OP_BCAST, msg, (uint32_t)plen);
  free(msg);
  recv_frame(OP_BCAST, buf, len);
}

static _Noreturn void local_abort(int code) {
  if (sock >= 0) {
    uint32_t c = (uint32_t)code;
    uint32_t hdr[2] = {OP_ABORT, sizeof c};
    /* Best effort: the launcher ends every rank at once instead of waiting for a grace period. */
    if (write(sock, hdr, sizeof hdr) == sizeof hdr) (void)!write(sock, &c, sizeof c);
  }
  gasneti_exit_now(code);
}

static void local_fini(void) {
  if (sock < 0) return;
  uint32_t hdr[2] = {OP_FINI, 0};
  (void)!write(sock, hdr, sizeof hdr);
  close(sock);
  sock = -1;
}

/* value is the variable's text, read by the caller with a literal name (a test scans for it). */
static long env_long(const char *name, const char *v) {
  char *end;
  long x = v ? strtol(v, &end, 10) : -1;
  if (!v || *end || x < 0) gasneti_fatalerror("gasnetrun variable %s='%s' is not valid", name, v ? v : "");
  return x;
}

const gasneti_bootstrap_t *gasneti_bootstrap_local_open(void) {
  const char *path = getenv("GASNETRUN_SOCKET");
  if (!path) return NULL;
  const char *cookie = getenv("GASNETRUN_COOKIE");
  const char *jobid = getenv("GASNETRUN_JOBID");
  if (!cookie || strlen(cookie) != 32 || !jobid)
    gasneti_fatalerror("GASNETRUN_SOCKET is set but GASNETRUN_COOKIE/GASNETRUN_JOBID are not: "
                       "start this program with gasnetrun");
  local_boot = (gasneti_bootstrap_t){.name = "local",
                                     .rank = (int)env_long("GASNETRUN_RANK", getenv("GASNETRUN_RANK")),
                                     .size = (int)env_long("GASNETRUN_SIZE", getenv("GASNETRUN_SIZE")),
                                     .exchange = local_exchange,
                                     .barrier = local_barrier,
                                     .broadcast = local_broadcast,
                                     .abort = local_abort,
                                     .fini = local_fini};
  snprintf(local_boot.jobid, sizeof local_boot.jobid, "%s", jobid);

  /* If gasnetrun dies, so does the job. A rank under a wrapper (valgrind, a shell) has another
   * parent; then only a vanished launcher counts. */
  prctl(PR_SET_PDEATHSIG, SIGTERM);
  pid_t launcher = (pid_t)env_long("GASNETRUN_PID", getenv("GASNETRUN_PID"));
  if (getppid() != launcher && kill(launcher, 0) != 0 && errno == ESRCH) _exit(1);

  struct sockaddr_un addr = {.sun_family = AF_UNIX};
  if (strlen(path) >= sizeof addr.sun_path)
    gasneti_fatalerror("GASNETRUN_SOCKET path is too long: %s", path);
  strcpy(addr.sun_path, path);
  sock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (sock < 0 || connect(sock, (struct sockaddr *)&addr, sizeof addr) != 0)
    gasneti_fatalerror("cannot reach gasnetrun at %s: %s", path, strerror(errno));
  struct {
    char cookie[32];
    uint32_t rank, pid;
  } hello;
  memcpy(hello.cookie, cookie, 32);
  hello.rank = (uint32_t)local_boot.rank;
  hello.pid = (uint32_t)getpid();
  send_frame(OP_HELLO, &hello, sizeof hello);
  return &local_boot;
}
