/* signals.c: GASNet-1's signal rules. SIGQUIT is the client's "the job is ending" notice: a
 * client may install its own SIGQUIT handler after gasnet_init, and GASNet runs it before a
 * rank leaves because of an interrupt (SIGINT, SIGTERM, SIGHUP) or because another rank ended
 * the job (told by the exit word while it polls, or by the supervisor's leave signal while it
 * computes); whatever code the handler passes to gasnet_exit is the rank's code, and a
 * handler that returns lets the runtime finish the exit. Fatal signals are caught only when the user
 * asked for a backtrace or a freeze; GASNET_NO_CATCH_SIGNAL leaves any of these alone. */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "gasnet_internal.h"
#include "knobs.h"
#include "diagnose.h"
#include "exit_internal.h"
#include "exit_policy.h"

/* What the client's SIGQUIT handler has had: nothing yet, running, or its turn. */
enum { QUIT_NOT_OFFERED, QUIT_RUNNING, QUIT_DONE };
static atomic_int quit_offered;
static GASNETI_TLS int this_thread_in_offer;

static void on_quit(int sig);

static bool client_handles_quit(void) {
  struct sigaction cur;
  if (sigaction(SIGQUIT, NULL, &cur) != 0) return false;
  if (cur.sa_flags & SA_SIGINFO) return cur.sa_sigaction != NULL; /* ours never uses siginfo */
  return cur.sa_handler != SIG_DFL && cur.sa_handler != SIG_IGN && cur.sa_handler != on_quit;
}

void gasneti_offer_client_quit(void) {
  /* Re-entered by this thread (the handler polled, or a signal arrived meanwhile): the
   * runtime takes over. Set before anything else so that no window is left. */
  if (this_thread_in_offer) return;
  this_thread_in_offer = 1;
  int expected = QUIT_NOT_OFFERED;
  if (!atomic_compare_exchange_strong(&quit_offered, &expected, QUIT_RUNNING)) {
    /* Another thread runs the handler: its choice of code must win, so wait for it. */
    while (atomic_load(&quit_offered) == QUIT_RUNNING) usleep(1000);
    this_thread_in_offer = 0;
    return;
  }
  if (client_handles_quit()) {
    sigset_t quit, old;
    sigemptyset(&quit);
    sigaddset(&quit, SIGQUIT);
    pthread_sigmask(SIG_UNBLOCK, &quit, &old); /* a thread that blocks it still runs it */
    raise(SIGQUIT); /* runs the handler in this thread before raise returns */
    pthread_sigmask(SIG_SETMASK, &old, NULL);
  }
  atomic_store(&quit_offered, QUIT_DONE);
  this_thread_in_offer = 0;
}

/* SIGINT, SIGTERM, SIGHUP from outside (or forwarded by the launcher, whose own code then
 * stands): GASNet's exit path, with the client's SIGQUIT handler first. */
volatile sig_atomic_t gasneti_exit_in_signal;

static void on_interrupt(int sig) {
  if (gasneti_exit_started()) return;
  gasneti_exit_in_signal = 1;
  gasneti_offer_client_quit();
  gasneti_exit_job(gasneti_exit_posted_or(128 + sig), false);
}

/* Our SIGQUIT handler runs only when the client has none (someone sent SIGQUIT itself): the
 * rank leaves, with the job's code when one was posted. */
static void on_quit(int sig) {
  if (gasneti_exit_started()) return;
  gasneti_exit_in_signal = 1;
  atomic_store(&quit_offered, QUIT_DONE);
  gasneti_exit_job(gasneti_exit_posted_or(128 + sig), false);
}

/* The supervisor's leave signal (another rank ended the job, or a finished rank's peers ran
 * past GASNET_EXITTIMEOUT's grace): GASNet-1 delivers SIGQUIT to the client here, and the
 * rank leaves whatever its handler does, unless the handler chose a code with gasnet_exit. */
static void on_leave(int sig) {
  (void)sig;
  if (gasneti_exit_started()) return;
  gasneti_exit_in_signal = 1;
  gasneti_offer_client_quit();
  gasneti_exit_job(gasneti_exit_posted_or(128 + SIGQUIT), false);
}

/* SIGSEGV and friends, when GASNET_BACKTRACE or GASNET_FREEZE_ON_ERROR asked for them: say
 * what happened, show where, optionally freeze, then die of the same signal so that the
 * launcher reports it as it would without us. */
static const char *signal_name(int sig);

static void on_fatal(int sig, siginfo_t *info, void *context) {
  (void)info;
  signal(sig, SIG_DFL);
  fprintf(stderr, "GASNet rank %d (pid %d, host %s) caught a fatal signal: %s (%d)\n",
          (int)gasneti_mynode, (int)getpid(), gasneti_hostname, signal_name(sig), sig);
  fflush(stderr);
  gasneti_diagnose_fatal(context);
  raise(sig); /* unblocked once this handler returns: the process ends by the signal */
}

/* GASNET_BACKTRACE_SIGNAL: a backtrace on demand (e.g. of a job that hangs), then go on. */
static void on_backtrace_request(int sig, siginfo_t *info, void *context) {
  (void)sig;
  (void)info;
  gasneti_backtrace_print(STDERR_FILENO, context);
}

static const struct {
  int sig;
  const char *name;
  bool fatal;
} catchable[] = {
    {SIGINT, "SIGINT", false},   {SIGTERM, "SIGTERM", false}, {SIGHUP, "SIGHUP", false},
    {SIGQUIT, "SIGQUIT", false}, {SIGSEGV, "SIGSEGV", true},  {SIGBUS, "SIGBUS", true},
    {SIGILL, "SIGILL", true},    {SIGFPE, "SIGFPE", true},    {SIGABRT, "SIGABRT", true},
};

static const char *signal_name(int sig) {
  for (size_t i = 0; i < sizeof catchable / sizeof catchable[0]; i++)
    if (catchable[i].sig == sig) return catchable[i].name;
  return "?";
}

/* GASNET_NO_CATCH_SIGNAL: "*" or names (the knob table checked them; SIG prefix optional). */
static bool left_alone(const char *list, const char *name) {
  if (!list) return false;
  const char *p = list;
  while (*p) {
    while (*p == ',' || *p == ' ') p++;
    size_t len = strcspn(p, ", ");
    if (len == 1 && *p == '*') return true;
    const char *bare = name + 3; /* without "SIG" */
    if ((len == strlen(name) && strncasecmp(p, name, len) == 0) ||
        (len == strlen(bare) && strncasecmp(p, bare, len) == 0))
      return true;
    p += len;
  }
  return false;
}

static void install(int sig, void (*fn)(int)) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = fn;
  sigemptyset(&sa.sa_mask);
  sigaction(sig, &sa, NULL);
}

static void install_with_context(int sig, void (*fn)(int, siginfo_t *, void *), int flags) {
  /* (SA_RESTART: a backtrace on demand must not fail the client's system calls with EINTR) */
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = fn;
  sa.sa_flags = SA_SIGINFO | flags;
  sigemptyset(&sa.sa_mask);
  sigaction(sig, &sa, NULL);
}

void gasneti_signals_init(void) {
  const char *nocatch = gasneti_knob_text("GASNET_NO_CATCH_SIGNAL");
  bool catch_fatal = gasneti_diagnose_init();
  for (size_t i = 0; i < sizeof catchable / sizeof catchable[0]; i++) {
    if (left_alone(nocatch, catchable[i].name)) continue;
    if (catchable[i].fatal) {
      if (catch_fatal) install_with_context(catchable[i].sig, on_fatal, SA_ONSTACK);
    } else {
      install(catchable[i].sig, catchable[i].sig == SIGQUIT ? on_quit : on_interrupt);
    }
  }
  install(gasneti_exit_leave_signal(), on_leave); /* the supervisor's: always ours */
  if (gasneti_knob_is_set("GASNET_BACKTRACE_SIGNAL"))
    install_with_context(
        gasneti_knob_enum_is("GASNET_BACKTRACE_SIGNAL", "SIGUSR2") ? SIGUSR2 : SIGUSR1,
        on_backtrace_request, SA_RESTART);
}
