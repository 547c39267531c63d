/* tools_errors.c: fatal errors, process exit, stream flushing, signal handlers, backtraces and
 * debugger freezes. Inside a conduit library the fatal error and the backtrace are the
 * runtime's own (a fatal error ends the whole job; frames are symbolized with addr2line). */
#include <execinfo.h>
#include <stdarg.h>
#include <unistd.h>

#include "tools_internal.h"

#if defined(GASNET_SEQ) || defined(GASNET_PAR)
#define IN_CONDUIT_LIBRARY 1
_Noreturn void gasneti_fatalerror(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void gasneti_backtrace_print(int fd, void *context);
#endif

volatile int gasnet_frozen;

void gasnett_flush_streams(void) {
  fflush(NULL);
  fsync(STDOUT_FILENO);
  fsync(STDERR_FILENO);
}

void gasnett_close_streams(void) {
  gasnett_flush_streams();
  fclose(stdout);
  fclose(stderr);
}

void gasnett_killmyprocess(int exitcode) {
  /* Every thread of the process ends now: no atexit handlers, no destructors. */
  gasnett_flush_streams();
  _exit(exitcode);
}

void gasnett_fatalerror(const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
#ifdef IN_CONDUIT_LIBRARY
  gasneti_fatalerror("%s", msg);
#else
  fprintf(stderr, "*** FATAL ERROR: %s\n", msg);
  fflush(stderr);
  (void)gasnett_print_backtrace_ifenabled(STDERR_FILENO);
  gasnett_freezeForDebuggerErr();
  abort();
#endif
}

void gasnett_pthread_failed_(const char *what, int rc) {
  gasnett_fatalerror("%s failed: %s", what, strerror(rc));
}

gasnett_sighandlerfn_t gasnett_reghandler(int sig, gasnett_sighandlerfn_t fp) {
  struct sigaction act, old;
  memset(&act, 0, sizeof act);
  act.sa_handler = fp;
  act.sa_flags = SA_RESTART;
  sigemptyset(&act.sa_mask);
  if (sigaction(sig, &act, &old) != 0)
    gasnett_fatalerror("gasnett_reghandler: cannot install a handler for signal %d: %s", sig,
                       strerror(errno));
  /* A previous SA_SIGINFO handler cannot be returned as a plain one: report it as it is. */
  if (old.sa_flags & SA_SIGINFO) {
    gasnett_sighandlerfn_t as_plain;
    memcpy(&as_plain, &old.sa_sigaction, sizeof as_plain);
    return as_plain;
  }
  return old.sa_handler;
}

/* ---- backtraces ------------------------------------------------------------------------- */
static char exe_name[512];

void gasnett_backtrace_init(const char *exename) {
  if (exename) snprintf(exe_name, sizeof exe_name, "%s", exename);
  void *warm[1];
  (void)backtrace(warm, 1); /* loads libgcc now, not in a signal handler later */
}

int gasnett_print_backtrace(int fd) {
  if (&gasnett_backtrace_user && gasnett_backtrace_user.fnp) return gasnett_backtrace_user.fnp(fd);
#ifdef IN_CONDUIT_LIBRARY
  gasneti_backtrace_print(fd, NULL);
#else
  void *frames[64];
  int n = backtrace(frames, 64);
  dprintf(fd, "backtrace of pid %d%s%s:\n", (int)getpid(), exe_name[0] ? " " : "", exe_name);
  backtrace_symbols_fd(frames, n, fd);
#endif
  return 0;
}

static int backtrace_if_enabled(int fd) {
  const char *v = getenv("GASNET_BACKTRACE");
  if (!v || !*v || *v == '0' || *v == 'n' || *v == 'N') return 1;
  return gasnett_print_backtrace(fd);
}
int (*gasnett_print_backtrace_ifenabled)(int fd) = backtrace_if_enabled;

/* ---- freezing for a debugger -------------------------------------------------------------- */
void gasnett_freezeForDebuggerNow(volatile int *flag, const char *flagsymname) {
  *flag = 1;
  char host[256] = "?";
  gethostname(host, sizeof host - 1);
  fprintf(stderr,
          "process %d on %s is frozen: attach a debugger (gdb -p %d), then 'set var %s = 0' "
          "and 'continue'\n",
          (int)getpid(), host, (int)getpid(), flagsymname ? flagsymname : "the flag");
  fflush(stderr);
  while (*flag) usleep(10000);
}

void gasnett_freezeForDebuggerErr(void) {
  const char *v = getenv("GASNET_FREEZE_ON_ERROR");
  if (v && *v && *v != '0' && *v != 'n' && *v != 'N')
    gasnett_freezeForDebuggerNow(&gasnet_frozen, "gasnet_frozen");
}
