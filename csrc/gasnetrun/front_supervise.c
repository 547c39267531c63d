/* front_supervise.c: the site launcher as gasnetrun's job, as the Python gasnetrun runs it
 * (launchers.LauncherRun, job.Job): in its own session, ended with gasnetrun (parent-death
 * signal, so a kill -9 of gasnetrun leaves nothing), signals forwarded under the exit policy
 * of csrc/core/exit, and the job's code from the launcher's, or 128+signal when interrupted. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "exit_policy.h"
#include "front.h"

typedef struct {
  pid_t pid;
  int interrupted; /* the first SIGINT/SIGTERM/SIGHUP forwarded */
  int terminated;  /* the launcher was asked to end (SIGTERM); a second request kills it */
  gasneti_exit_policy_t policy;
} launcher_t;

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void send(launcher_t *l, int signum) {
  if ((signum == SIGINT || signum == SIGTERM || signum == SIGHUP) && !l->interrupted)
    l->interrupted = signum;
  if (signum == SIGKILL && !l->terminated) { /* the launcher ends its ranks when terminated */
    l->terminated = 1;
    signum = SIGTERM;
  }
  kill(l->pid, signum);
}

static void act(launcher_t *l) {
  int todo = gasneti_exit_policy_due(&l->policy, now());
  if (todo & GASNETI_EXIT_QUIT) send(l, gasneti_exit_leave_signal());
  if (todo & GASNETI_EXIT_KILL) send(l, SIGKILL);
}

static void on_signal(launcher_t *l, int signum) {
  if (signum == SIGUSR1 || signum == SIGUSR2) { /* the application's own */
    send(l, signum);
    return;
  }
  if (l->policy.ending && (signum == SIGINT || signum == SIGTERM)) {
    send(l, SIGKILL); /* asked twice: stop waiting */
    return;
  }
  fprintf(stderr, "gasnetrun: received SIG%s: ending the job\n", sigabbrev_np(signum));
  gasneti_exit_policy_signalled(&l->policy, signum, now());
  send(l, signum);
  act(l);
}

/* Taken by sigtimedwait; a handler (not SIG_IGN, which a caller such as nohup may have left)
 * so that every one of them is seen, as the Python gasnetrun's handlers see them. */
static void taken(int signum) { (void)signum; }

/* The child keeps only 0, 1 and 2 (and the pipe that reports a failed exec), as Python's
 * Popen does. */
static void close_other_descriptors(int keep) {
  if (close_range(3, (unsigned)keep - 1, 0) == 0 && close_range((unsigned)keep + 1, ~0U, 0) == 0)
    return;
  DIR *dir = opendir("/proc/self/fd"); /* close_range is missing (kernels before 5.9) */
  if (!dir) return;
  int own = dirfd(dir);
  for (struct dirent *e; (e = readdir(dir)) != NULL;) {
    int fd = atoi(e->d_name);
    if (fd > 2 && fd != keep && fd != own) close(fd);
  }
  closedir(dir);
}

/* A pipe end numbered 3 or more: with 0, 1 or 2 closed by the caller, pipe2 would hand those
 * out, and the child would then close what should be its stderr. */
static int above_stdio(int fd) {
  if (fd > 2) return fd;
  int moved = fcntl(fd, F_DUPFD_CLOEXEC, 3);
  close(fd);
  return moved;
}

/* Starts the launcher; -1 with the message printed when it cannot run. */
static pid_t start(gasneti_front_job_t *job, const sigset_t *unblocked) {
  int report[2];
  if (pipe2(report, O_CLOEXEC) != 0) return -1;
  report[0] = above_stdio(report[0]);
  report[1] = above_stdio(report[1]);
  if (report[0] < 0 || report[1] < 0) return -1;
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid == 0) {
    setsid(); /* a terminal's Ctrl-C reaches it once, through gasnetrun */
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent) _exit(128 + SIGTERM); /* gasnetrun is already gone */
    close_other_descriptors(report[1]);
    /* What Python's Popen gives a child: its handled signals and SIGPIPE/SIGXFSZ at their
     * defaults, whatever the caller ignored; SIGCHLD too, since the launcher waits for its
     * own children. */
    static const int reset[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2,
                                SIGPIPE, SIGXFSZ, SIGCHLD};
    for (size_t i = 0; i < sizeof reset / sizeof reset[0]; i++) signal(reset[i], SIG_DFL);
    sigprocmask(SIG_SETMASK, unblocked, NULL);
    execve(job->launcher_path, job->argv.v, job->envp.v);
    int err = errno;
    ssize_t w = write(report[1], &err, sizeof err);
    (void)w;
    _exit(127);
  }
  close(report[1]);
  int err = pid < 0 ? errno : 0;
  if (pid > 0) {
    ssize_t n;
    do n = read(report[0], &err, sizeof err);
    while (n < 0 && errno == EINTR);
    if (n != (ssize_t)sizeof err) err = 0;
    if (err) waitpid(pid, NULL, 0);
  }
  close(report[0]);
  if (!err) return pid;
  fprintf(stderr, "gasnetrun: error: cannot run %s: %s\n", job->argv.v[0], strerror(err));
  return -1;
}

int gasneti_front_supervise(gasneti_front_job_t *job) {
  static const int forwarded[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGCHLD};
  sigset_t set, old;
  sigemptyset(&set);
  for (size_t i = 0; i < sizeof forwarded / sizeof forwarded[0]; i++) {
    sigaddset(&set, forwarded[i]);
    signal(forwarded[i], taken);
  }
  sigprocmask(SIG_BLOCK, &set, &old);
  launcher_t l = {0};
  if (!gasneti_exit_policy_init(&l.policy, job->nranks, job->exit_timeout)) return 1;
  l.pid = start(job, &old);
  if (l.pid < 0) {
    gasneti_exit_policy_fini(&l.policy);
    return 1;
  }
  signal(SIGPIPE, SIG_IGN); /* a closed stderr must not take the launcher's supervisor along */
  int status = 0;
  for (;;) {
    pid_t r = waitpid(l.pid, &status, WNOHANG);
    if (r == l.pid || (r < 0 && errno == ECHILD)) break;
    double deadline = gasneti_exit_policy_deadline(&l.policy);
    struct timespec wait, *timeout = NULL;
    if (deadline >= 0) {
      double left = deadline - now();
      if (left < 0) left = 0;
      wait.tv_sec = (time_t)left;
      wait.tv_nsec = (long)((left - (double)wait.tv_sec) * 1e9);
      timeout = &wait;
    }
    int signum = sigtimedwait(&set, NULL, timeout);
    if (signum < 0) {
      if (errno == EAGAIN) act(&l);
      continue;
    }
    if (signum != SIGCHLD) on_signal(&l, signum);
  }
  gasneti_exit_policy_fini(&l.policy);
  int code = WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
  /* Interrupted: the job's code says by what, whatever code the launcher chose. */
  if (l.interrupted && code) return 128 + l.interrupted;
  /* A launcher that fails on its own (a wrong partition, a module not loaded; often silently)
   * is otherwise indistinguishable from a rank's exit code: name it, as the Python side does. */
  if (code)
    fprintf(stderr, "gasnetrun: %s (from %s) ended the job with exit code %d\n", job->argv.v[0],
            strcmp(job->spawner, "pmi") == 0 ? "PMIRUN_CMD" : "MPIRUN_CMD", code);
  return code;
}
