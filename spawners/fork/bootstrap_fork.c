/* bootstrap_fork.c: GASNET_PSHM_NODES=N without a launcher: the process forks N ranks on this
 * host and stays behind as their supervisor (exit codes, signals, timeouts, /dev/shm clean-up),
 * applying the same exit policy as gasnetrun (csrc/core/exit/exit_policy.c). */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "exit_policy.h"
#include "gasnet_internal.h"
#include "knobs.h"
#include "pshm/pshm.h"

#define NOT_LEAVING INT32_MIN
enum { SAID_ENDS_JOB = 0x100, SAID_ABORT = 0x200 };

typedef struct {
  _Atomic uint32_t arrived, generation;
  _Atomic int32_t *leaving; /* per rank: NOT_LEAVING, or code | SAID_* bits */
  uint8_t data[];           /* size * GASNETI_BOOTSTRAP_BLOB_MAX */
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
  memcpy(&shared->data[(size_t)fork_boot.rank * len], mine, len);
  fork_barrier();
  memcpy(all, shared->data, len * (size_t)fork_boot.size);
  fork_barrier();
}

static void say_leaving(int32_t word) { atomic_store(&shared->leaving[fork_boot.rank], word); }
static void fork_leaving(int code, int ends_job) {
  say_leaving((code & 0xff) | (ends_job ? SAID_ENDS_JOB : 0));
}
static void fork_abort(int code) { say_leaving((code & 0xff) | SAID_ABORT); }

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void signal_running(const gasneti_exit_policy_t *p, const pid_t *pids, int sig) {
  for (int i = 0; i < p->nranks; i++)
    if (gasneti_exit_policy_running(p, i)) kill(pids[i], sig);
}

static void read_announcements(gasneti_exit_policy_t *p, bool *heard, double now) {
  for (int i = 0; i < p->nranks; i++) {
    int32_t w = atomic_load(&shared->leaving[i]);
    if (heard[i] || w == NOT_LEAVING) continue;
    heard[i] = true;
    if (w & SAID_ABORT) gasneti_exit_policy_abort(p, i, w & 0xff, now);
    else gasneti_exit_policy_leaving(p, i, w & 0xff, (w & SAID_ENDS_JOB) != 0, now);
  }
}

static void reap(gasneti_exit_policy_t *p, const pid_t *pids, double now) {
  int status;
  pid_t pid;
  while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
    for (int i = 0; i < p->nranks; i++) {
      if (pids[i] != pid) continue;
      int sig = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
      int how = gasneti_exit_policy_ended(p, i, WIFEXITED(status) ? WEXITSTATUS(status) : 0,
                                          sig, now);
      if (how == GASNETI_END_BY_LAUNCHER && p->stragglers)
        fprintf(stderr, "GASNet: rank %d (pid %d) ended by the supervisor after "
                "GASNET_EXITTIMEOUT (%s %d): the job's code is %d\n", i, (int)pid,
                sig ? "signal" : "code", sig ? sig : WEXITSTATUS(status), p->code);
    }
  }
}

static _Noreturn void supervise(pid_t *pids, int n, const sigset_t *watched) {
  gasneti_exit_policy_t policy;
  if (!gasneti_exit_policy_init(&policy, n, gasneti_exit_timeout(n)))
    gasneti_fatalerror("out of memory for the GASNET_PSHM_NODES supervisor");
  bool *heard = gasneti_calloc((size_t)n, sizeof(bool));
  while (policy.remaining > 0) {
    double t = now_s();
    read_announcements(&policy, heard, t);
    reap(&policy, pids, t);
    int todo = gasneti_exit_policy_due(&policy, t);
    if (todo & GASNETI_EXIT_STRAGGLERS) {
      char list[256];
      fprintf(stderr, "GASNet: still running %g s after rank %d finished (GASNET_EXITTIMEOUT): "
              "ranks %s; ending them\n", policy.timeout, policy.first_done,
              gasneti_exit_policy_running_list(&policy, list, sizeof list));
    }
    if (todo & GASNETI_EXIT_QUIT) signal_running(&policy, pids, gasneti_exit_leave_signal());
    if (todo & GASNETI_EXIT_KILL) signal_running(&policy, pids, SIGKILL);
    if (policy.remaining == 0) break;
    struct timespec wait = {0, 20 * 1000 * 1000};
    int sig = sigtimedwait(watched, NULL, &wait);
    if (sig == SIGUSR1 || sig == SIGUSR2) { /* the application's own: passed on */
      signal_running(&policy, pids, sig);
    } else if (sig > 0 && sig != SIGCHLD) { /* Ctrl-C, SIGTERM...: end every rank */
      gasneti_exit_policy_signalled(&policy, sig, now_s());
      signal_running(&policy, pids, sig);
    }
  }
  gasneti_shm_cleanup_job(fork_boot.jobid);
  _exit(policy.code);
}

const gasneti_bootstrap_t *gasneti_bootstrap_fork_open(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  int64_t n = gasneti_knob_int("GASNET_PSHM_NODES");
  if (n <= 1) return NULL;
  size_t bytes = sizeof(fork_shared_t) + GASNETI_BOOTSTRAP_BLOB_MAX * (size_t)n +
                 sizeof(int32_t) * (size_t)n;
  shared = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (shared == MAP_FAILED) gasneti_fatalerror("mmap for GASNET_PSHM_NODES bootstrap failed");
  shared->leaving = (_Atomic int32_t *)&shared->data[GASNETI_BOOTSTRAP_BLOB_MAX * (size_t)n];
  for (int i = 0; i < n; i++) atomic_store(&shared->leaving[i], NOT_LEAVING);
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  fork_boot = (gasneti_bootstrap_t){.name = "fork",
                                    .size = (int)n,
                                    .exchange = fork_exchange,
                                    .barrier = fork_barrier,
                                    .leaving = fork_leaving,
                                    .abort = fork_abort};
  snprintf(fork_boot.jobid, sizeof fork_boot.jobid, "f%ld-%lx", (long)getpid(), (long)ts.tv_nsec);

  sigset_t watched, old;
  sigemptyset(&watched);
  const int sigs[] = {SIGCHLD, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};
  for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) sigaddset(&watched, sigs[i]);
  sigprocmask(SIG_BLOCK, &watched, &old);
  fflush(NULL); /* nothing buffered may be written N+1 times */
  pid_t parent = getpid();
  pid_t *pids = gasneti_calloc((size_t)n, sizeof(pid_t));
  for (int i = 0; i < n; i++) {
    pid_t pid = fork();
    if (pid < 0) {
      int err = errno;
      for (int j = 0; j < i; j++) kill(pids[j], SIGKILL);
      gasneti_fatalerror("fork of rank %d of %d failed: %s (GASNET_PSHM_NODES=%d)", i, (int)n,
                         strerror(err), (int)n);
    }
    if (pid == 0) {
      sigprocmask(SIG_SETMASK, &old, NULL);
      prctl(PR_SET_PDEATHSIG, SIGKILL); /* the supervisor gone means the job is gone */
      if (getppid() != parent) _exit(1);
      fork_boot.rank = i;
      free(pids);
      return &fork_boot;
    }
    pids[i] = pid;
  }
  supervise(pids, (int)n, &watched);
}
