/* bootstrap_local.c: the rank's half of the agent protocol (spawners/local/protocol.md):
 * collectives over a Unix socket to its host's agent (gasnetrun itself, or an agent gasnetrun
 * started on that host), which answers once every rank of the job asked. */
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "gasnet_internal.h"
#include "siphash.h"

enum { OP_HELLO = 1, OP_EXCHANGE = 2, OP_ABORT = 4, OP_LEAVING = 5, OP_PUT = 6, OP_GET = 7 };

static int sock = -1;
static gasneti_bootstrap_t local_boot;

/* The agent gone means the job is gone: nothing to report to. */
/* Set when the rank told its agent it is leaving: the process is on its way out. */
static atomic_int left;

/* The agent gone means the job is gone: nothing to report to. But once the rank is leaving, a
 * lookup another thread (the receive thread) still waits on belongs to a process that ends
 * anyway, with its own code: that thread waits for the end instead of replacing the code. */
static _Noreturn void agent_lost(void) {
  if (atomic_load(&left))
    for (;;) pause();
  _exit(1);
}

static void write_all(const void *buf, size_t len) {
  const char *p = buf;
  while (len) {
    ssize_t n = write(sock, p, len);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) agent_lost();
    p += n;
    len -= (size_t)n;
  }
}

static void read_all(void *buf, size_t len) {
  char *p = buf;
  while (len) {
    ssize_t n = read(sock, p, len);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) agent_lost();
    p += n;
    len -= (size_t)n;
  }
}

static void send_frame(uint32_t op, const void *payload, uint32_t len) {
  uint32_t hdr[2] = {op, len};
  write_all(hdr, sizeof hdr);
  if (len) write_all(payload, len);
}

static void local_exchange(const void *mine, size_t len, void *all) {
  send_frame(OP_EXCHANGE, mine, (uint32_t)len);
  uint32_t hdr[2];
  size_t want = len * (size_t)local_boot.size;
  read_all(hdr, sizeof hdr);
  if (hdr[0] != OP_EXCHANGE || hdr[1] != want)
    gasneti_fatalerror("the agent answered op %u with %u bytes to an exchange of %zu", hdr[0],
                       hdr[1], want);
  if (want) read_all(all, want);
}

static void local_barrier(void) { local_exchange(NULL, 0, NULL); }

/* The card stays with this host's agent, which answers every rank's lookups of it. */
static void local_publish(const void *card, size_t len) { send_frame(OP_PUT, card, (uint32_t)len); }

/* The agent answers from its own ranks' cards, its cache, or by asking along its tree. One
 * write: a leaving notice another thread sends meanwhile cannot split the question. */
static int local_lookup(int rank, void *card, size_t len, int *ended) {
  uint32_t question[3] = {OP_GET, 4, (uint32_t)rank};
  write_all(question, sizeof question);
  uint32_t hdr[2], head[2];
  read_all(hdr, sizeof hdr);
  if (hdr[0] != OP_GET || hdr[1] < sizeof head || hdr[1] > sizeof head + GASNETI_BOOTSTRAP_BLOB_MAX)
    gasneti_fatalerror("the agent answered a lookup with op %u of %u bytes", hdr[0], hdr[1]);
  read_all(head, sizeof head);
  size_t have = hdr[1] - sizeof head;
  if (head[0] != (uint32_t)rank || (have && have != len))
    gasneti_fatalerror("the agent answered a lookup of rank %d with rank %u's %zu-byte card "
                       "(expected %zu bytes)", rank, head[0], have, len);
  if (!have) return 0;
  read_all(card, len);
  *ended = (int)(head[1] & 1);
  return 1;
}

/* Best effort, never blocking: the agent may already be gone. */
static void notify(uint32_t op, int code, int ends_job) {
  if (sock < 0) return;
  uint32_t frame[4] = {op, 8, (uint32_t)code, (uint32_t)ends_job};
  (void)!write(sock, frame, sizeof frame);
}

/* The socket stays open (the process ends soon and closes it): another thread may still be
 * waiting on it for the answer to a lookup. */
static void local_leaving(int code, int ends_job) {
  atomic_store(&left, 1);
  notify(OP_LEAVING, code, ends_job);
}

static void local_abort(int code) { notify(OP_ABORT, code, 1); }

/* value is the variable's text, read by the caller with a literal name (a test scans for it). */
static long env_long(const char *name, const char *v) {
  char *end;
  long x = v ? strtol(v, &end, 10) : -1;
  if (!v || *end || x < 0) gasneti_fatalerror("gasnetrun variable %s='%s' is not valid", name, v ? v : "");
  return x;
}

const gasneti_bootstrap_t *gasneti_bootstrap_local_open(int *argc, char ***argv) {
  (void)argc, (void)argv;
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
                                     .leaving = local_leaving,
                                     .abort = local_abort,
                                     .publish = local_publish,
                                     .lookup = local_lookup};
  snprintf(local_boot.jobid, sizeof local_boot.jobid, "%s", jobid);
  /* The cookie's halves: a key and a message, whatever characters it holds. */
  gasneti_derive_key((const uint8_t *)cookie, cookie + 16, local_boot.secret);
  local_boot.has_secret = 1;

  /* If the agent dies, so does the job. A rank under a wrapper (valgrind, a shell) has another
   * parent; then only a vanished agent counts. */
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  pid_t agent = (pid_t)env_long("GASNETRUN_PID", getenv("GASNETRUN_PID"));
  if (getppid() != agent && kill(agent, 0) != 0 && errno == ESRCH) _exit(1);

  /* The socket lives in the abstract namespace ('@' + name): nothing on disk to leave behind. */
  struct sockaddr_un addr = {.sun_family = AF_UNIX};
  size_t plen = strlen(path);
  if (plen < 2 || path[0] != '@' || plen > sizeof addr.sun_path)
    gasneti_fatalerror("GASNETRUN_SOCKET='%s' is not an abstract socket name ('@' + up to %zu "
                       "characters)", path, sizeof addr.sun_path - 1);
  memcpy(addr.sun_path + 1, path + 1, plen - 1);
  socklen_t alen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + plen);
  sock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (sock < 0 || connect(sock, (struct sockaddr *)&addr, alen) != 0)
    gasneti_fatalerror("cannot reach the job's agent at %s: %s", path, strerror(errno));
  struct {
    char cookie[32];
    uint32_t rank, pid;
  } hello;
  memcpy(hello.cookie, cookie, 32);
  hello.rank = (uint32_t)local_boot.rank;
  hello.pid = (uint32_t)getpid();
  send_frame(OP_HELLO, &hello, sizeof hello);
  /* The job's channel is this process's alone: a program it starts (system(), a shell) must
   * not find it and announce itself as this rank, nor see the cookie. Nothing reads them
   * after the hello (the job id was copied). */
  unsetenv("GASNETRUN_SOCKET");
  unsetenv("GASNETRUN_COOKIE");
  unsetenv("GASNETRUN_RANK");
  unsetenv("GASNETRUN_SIZE");
  unsetenv("GASNETRUN_JOBID");
  return &local_boot;
}
