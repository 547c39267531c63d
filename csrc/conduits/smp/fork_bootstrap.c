/* fork_bootstrap.c: GASNET_PSHM_NODES=N without a launcher: the process forks N ranks and
 * stays behind as their supervisor (exit codes, signals, timeouts, /dev/shm clean-up). */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../../core/gasnet_internal.h"
#include "../../core/knobs.h"
#include "../../core/pshm/pshm.h"

enum { BLOB_MAX = 256 };

typedef struct {
  _Atomic uint32_t arrived, generation;
  uint8_t data[]; /* size * BLOB_MAX */
} fork_shared_t;

static fork_shared_t *shared;
static gasneti_bootstrap_t fork_boot;

static void fork_barrier(void) {
  uint32_t gen = atomic_load(&shared->generation);
  if (atomic_fetch_add(&shared->arrived, 1) == (uint32_t)fork_boot.size - 1) {
    atomic_store(&shared->arrived, 0);
    atomic_store(&shared->generation, gen + 1);
  } else {
    while (atomic_load(&shared->generation) == gen) sched_yield(); /* start-up only */
  }
}

static void fork_exchange(const void *mine, size_t len, void *all) {
  if (len > BLOB_MAX) gasneti_fatalerror("internal: bootstrap exchange of %zu bytes", len);
  memcpy(&shared->data[(size_t)fork_boot.rank * len], mine, len);
  fork_barrier();
  memcpy(all, shared->data, len * (size_t)fork_boot.size);
  fork_barrier();
}

static void fork_broadcast(void *buf, size_t len, int root) {
  if (len > BLOB_MAX * (size_t)fork_boot.size)
    gasneti_fatalerror("internal: bootstrap broadcast of %zu bytes", len);
  if (fork_boot.rank == root) memcpy(shared->data, buf, len);
  fork_barrier();
  if (fork_boot.rank != root) memcpy(buf, shared->data, len);
  fork_barrier();
}

static _Noreturn void fork_abort(int code) { gasneti_exit_now(code); }

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void signal_alive(const pid_t *pids, const bool *alive, int n, int sig) {
  for (int i = 0; i < n; i++)
    if (alive[i]) kill(pids[i], sig);
}

/* The supervisor: the same policy as gasnetrun's. The job's code is the first non-zero rank
 * code (128+signal for a killed rank). After the first rank ends, peers get a grace period to
 * leave on their own, then SIGQUIT, then SIGKILL once GASNET_EXITTIMEOUT has passed. */
static _Noreturn void supervise(pid_t *pids, int n, const sigset_t *watched) {
  bool *alive = gasneti_calloc((size_t)n, sizeof(bool));
  for (int i = 0; i < n; i++) alive[i] = true;
  int remaining = n, job_code = 0;
  double timeout = gasneti_exit_timeout(n), quit_at = -1, kill_at = -1;
  while (remaining > 0) {
    int status;
    pid_t pid;
    while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
      int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      for (int i = 0; i < n; i++)
        if (pids[i] == pid) alive[i] = false;
      remaining--;
      if (code && !job_code) job_code = code;
      if (kill_at < 0) {
        double t = now_s();
        quit_at = t + (WIFSIGNALED(status) ? 0 : gasneti_exit_grace(timeout));
        kill_at = t + timeout;
      }
    }
    if (remaining == 0) break;
    double t = now_s();
    if (quit_at >= 0 && t >= quit_at) {
      signal_alive(pids, alive, n, SIGQUIT);
      quit_at = -1;
    }
    if (kill_at >= 0 && t >= kill_at) signal_alive(pids, alive, n, SIGKILL);
    struct timespec wait = {0, 20 * 1000 * 1000};
    int sig = sigtimedwait(watched, NULL, &wait);
    if (sig > 0 && sig != SIGCHLD) { /* Ctrl-C, SIGTERM...: end every rank */
      signal_alive(pids, alive, n, sig);
      if (!job_code) job_code = 128 + sig;
      if (kill_at < 0) kill_at = now_s() + timeout;
    }
  }
  gasneti_shm_cleanup_job(fork_boot.jobid);
  _exit(job_code);
}

const gasneti_bootstrap_t *gasnetc_bootstrap_fork_open(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  int64_t n = gasneti_knob_int("GASNET_PSHM_NODES");
  if (n <= 1) return NULL;
  size_t bytes = sizeof(fork_shared_t) + BLOB_MAX * (size_t)n;
  shared = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (shared == MAP_FAILED) gasneti_fatalerror("mmap for GASNET_PSHM_NODES bootstrap failed");
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  fork_boot = (gasneti_bootstrap_t){.name = "fork",
                                    .size = (int)n,
                                    .exchange = fork_exchange,
                                    .barrier = fork_barrier,
                                    .broadcast = fork_broadcast,
                                    .abort = fork_abort};
  snprintf(fork_boot.jobid, sizeof fork_boot.jobid, "f%ld-%lx", (long)getpid(), (long)ts.tv_nsec);

  sigset_t watched, old;
  sigemptyset(&watched);
  const int sigs[] = {SIGCHLD, SIGINT, SIGTERM, SIGHUP, SIGQUIT};
  for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) sigaddset(&watched, sigs[i]);
  sigprocmask(SIG_BLOCK, &watched, &old);
  fflush(NULL); /* nothing buffered may be written N+1 times */
  pid_t parent = getpid();
  pid_t *pids = gasneti_calloc((size_t)n, sizeof(pid_t));
  for (int i = 0; i < n; i++) {
    pid_t pid = fork();
    if (pid < 0) {
      for (int j = 0; j < i; j++) kill(pids[j], SIGKILL);
      gasneti_fatalerror("fork of rank %d failed: %s", i, strerror(errno));
    }
    if (pid == 0) {
      sigprocmask(SIG_SETMASK, &old, NULL);
      prctl(PR_SET_PDEATHSIG, SIGTERM); /* the supervisor gone means the job is gone */
      if (getppid() != parent) _exit(1);
      fork_boot.rank = i;
      free(pids);
      return &fork_boot;
    }
    pids[i] = pid;
  }
  supervise(pids, (int)n, &watched);
}
