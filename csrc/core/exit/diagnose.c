/* diagnose.c: backtraces and freezes for debugging a failing rank. Runs inside signal
 * handlers of a process that may be broken, so it writes with plain write(2), uses no heap
 * after init, and asks binutils' addr2line (in a child process) for functions and lines: the
 * same information gdb would print, without needing gdb on every host. */
#include <dlfcn.h>
#include <errno.h>
#include <execinfo.h>
#include <fcntl.h>
#include <link.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <ucontext.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gasnet_internal.h"
#include "knobs.h"
#include "diagnose.h"

extern volatile int gasnet_frozen; /* tools_errors.c (GASNet-1's name): a debugger clears it */

static bool backtrace_on_error, freeze_on_error;
static char addr2line[256]; /* found in PATH at init; empty: frames are named by dladdr */

/* Text built up and written at once, so that a backtrace reaches the launcher in one piece
 * and stays together next to other ranks' output. */
typedef struct {
  char text[8192];
  size_t used;
} report_t;

static void add(report_t *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add(report_t *r, const char *fmt, ...) {
  if (r->used + 1 >= sizeof r->text) return;
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(r->text + r->used, sizeof r->text - r->used, fmt, ap);
  va_end(ap);
  if (n > 0) r->used += (size_t)n < sizeof r->text - r->used ? (size_t)n : sizeof r->text - r->used - 1;
}

static void send_report(int fd, const report_t *r) {
  for (size_t done = 0; done < r->used;) {
    ssize_t w = write(fd, r->text + done, r->used - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return;
    done += (size_t)w;
  }
}

static void freeze(const char *why) {
  gasnet_frozen = 1;
  static report_t r; /* static: a signal handler's stack is small */
  r.used = 0;
  add(&r,
      "GASNet rank %d (pid %d, host %s) is frozen (%s): attach a debugger (gdb -p %d), then "
      "'set var gasnet_frozen = 0' and 'continue'; or interrupt the job\n",
      (int)gasneti_mynode, (int)getpid(), gasneti_hostname, why, (int)getpid());
  send_report(STDERR_FILENO, &r);
  while (gasnet_frozen) usleep(10000);
}

/* "function at file:line" for addr in obj, from addr2line; false when it knows nothing.
 * _Fork, not fork: a crash inside malloc holds its locks, which fork would wait for. */
static bool symbolize(const char *obj, uintptr_t addr, char *out, size_t outlen) {
  if (!addr2line[0]) return false;
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return false;
  char hex[32];
  snprintf(hex, sizeof hex, "%#lx", (unsigned long)addr);
  pid_t pid = _Fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return false;
  }
  if (pid == 0) {
    dup2(fds[1], STDOUT_FILENO);
    int null = open("/dev/null", O_WRONLY);
    if (null >= 0) dup2(null, STDERR_FILENO);
    /* -i: a function inlined into its caller (gasnet.h's AM calls, in an optimized client)
     * comes with the chain of callers it was inlined into, as GDB shows them. */
    char *argv[] = {addr2line, "-f", "-C", "-i", "-p", "-e", (char *)obj, hex, NULL};
    execve(addr2line, argv, environ);
    _exit(127);
  }
  close(fds[1]);
  size_t used = 0;
  ssize_t r;
  while (used + 1 < outlen && (r = read(fds[0], out + used, outlen - 1 - used)) > 0) used += (size_t)r;
  close(fds[0]);
  int status;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  out[used] = '\0';
  return used > 0 && strncmp(out, "??", 2) != 0;
}

/* The interrupted instruction of a signal handler's context, or 0 where we cannot tell. */
static uintptr_t interrupted_pc(void *context) {
  if (!context) return 0;
  const ucontext_t *uc = context;
#if defined(__x86_64__)
  return (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
#elif defined(__aarch64__)
  return (uintptr_t)uc->uc_mcontext.pc;
#else
  (void)uc;
  return 0;
#endif
}

/* addr2line's "f at file:line (discriminator 2)" without what says nothing. */
static void tidy(char *sym) {
  char *d = strstr(sym, " (discriminator");
  if (d) *d = '\0';
  size_t n = strlen(sym);
  const char *unknown[] = {" at ??:?", " at :?", " at ??:0"};
  for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++) {
    size_t u = strlen(unknown[i]);
    if (n >= u && strcmp(sym + n - u, unknown[i]) == 0) sym[n - u] = '\0';
  }
}

/* Prints the frame at pc as frame index, and the callers it was inlined into after it;
 * returns how many frames it printed. */
static int print_frame(report_t *r, int index, uintptr_t pc) {
  Dl_info info;
  if (!dladdr((void *)pc, &info) || !info.dli_fname) {
    add(r, "  #%-2d %#lx\n", index, (unsigned long)pc);
    return 1;
  }
  /* The main program may be known by a bare argv[0]; its /proc link names it for the child
   * (whose own /proc/self is addr2line). */
  char self[64];
  snprintf(self, sizeof self, "/proc/%d/exe", (int)getpid());
  const char *obj = strchr(info.dli_fname, '/') ? info.dli_fname : self;
  const ElfW(Ehdr) *ehdr = info.dli_fbase;
  /* Position-independent objects are looked up by offset, fixed executables by address. */
  uintptr_t where = ehdr && ehdr->e_type == ET_DYN ? pc - (uintptr_t)info.dli_fbase : pc;
  const char *slash = strrchr(info.dli_fname, '/');
  const char *base = slash ? slash + 1 : info.dli_fname;
  char sym[2048];
  if (symbolize(obj, where, sym, sizeof sym)) {
    /* addr2line -i -p: "f at file:line", then " (inlined by) caller at file:line" lines. */
    int printed = 0;
    for (char *line = sym; *line; printed++) {
      char *end = line + strcspn(line, "\n");
      bool last = *end == '\0';
      *end = '\0';
      const char *tag = " (inlined by) ";
      if (!strncmp(line, tag, strlen(tag))) line += strlen(tag);
      tidy(line);
      if (printed == 0) add(r, "  #%-2d %s (%s+%#lx)\n", index, line, base, (unsigned long)where);
      else add(r, "  #%-2d %s (inlined)\n", index + printed, line);
      if (last) {
        printed++;
        break;
      }
      line = end + 1;
    }
    return printed ? printed : 1;
  }
  if (info.dli_sname) {
    add(r, "  #%-2d %s+%#lx (%s)\n", index, info.dli_sname,
        (unsigned long)(pc - (uintptr_t)info.dli_saddr), base);
  } else {
    add(r, "  #%-2d %s+%#lx\n", index, base, (unsigned long)where);
  }
  return 1;
}

__attribute__((noinline)) void gasneti_backtrace_print(int fd, void *context) {
  void *frames[64];
  int n = backtrace(frames, 64);
  uintptr_t fault = interrupted_pc(context);
  int first = 3; /* this function, gasneti_diagnose_fatal, and the error reporter */
  if (context) {
    first = n; /* from the interrupted frame, which the unwinder reports after the handler's */
    for (int i = 0; i < n && first == n; i++)
      if ((uintptr_t)frames[i] == fault) first = i;
    if (first == n) first = 1;
  }
  if (first > n) first = n;
  static report_t report; /* (one backtrace at a time: a second one while printing is lost) */
  report_t *r = &report;
  r->used = 0;
  add(r, "GASNet backtrace of rank %d (pid %d, host %s):\n", (int)gasneti_mynode, (int)getpid(),
      gasneti_hostname);
  for (int i = first, index = 0; i < n; i++) {
    /* A return address points after the call: look up the call itself. The interrupted
     * instruction is exact. */
    uintptr_t pc = (uintptr_t)frames[i];
    index += print_frame(r, index, pc == fault ? pc : pc - 1);
  }
  send_report(fd, r);
}

void gasneti_diagnose_fatal(void *context) {
  if (backtrace_on_error) gasneti_backtrace_print(STDERR_FILENO, context);
  if (freeze_on_error) freeze("GASNET_FREEZE_ON_ERROR");
}

static void on_freeze_request(int sig) {
  (void)sig;
  freeze("GASNET_FREEZE_SIGNAL");
}

static void find_addr2line(void) {
  const char *path = getenv("PATH");
  for (const char *p = path ? path : "/usr/bin:/bin"; *p;) {
    size_t len = strcspn(p, ":");
    snprintf(addr2line, sizeof addr2line, "%.*s/addr2line", (int)len, p);
    if (len && access(addr2line, X_OK) == 0) return;
    p += len + (p[len] == ':');
  }
  addr2line[0] = '\0';
}

/* Stack overflows fault on the stack itself: fatal handlers run on their own stack. */
static char alt_stack[64 * 1024];

bool gasneti_diagnose_init(void) {
  backtrace_on_error = gasneti_knob_bool("GASNET_BACKTRACE");
  freeze_on_error = gasneti_knob_bool("GASNET_FREEZE_ON_ERROR");
  if (backtrace_on_error || gasneti_knob_is_set("GASNET_BACKTRACE_SIGNAL")) {
    find_addr2line();
    void *warm[2];
    backtrace(warm, 2); /* loads the unwinder now: a broken heap later must not matter */
  }
  if (backtrace_on_error || freeze_on_error) {
    stack_t ss = {.ss_sp = alt_stack, .ss_size = sizeof alt_stack};
    sigaltstack(&ss, NULL);
  }
  if (gasneti_knob_is_set("GASNET_FREEZE_SIGNAL")) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_freeze_request;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaction(gasneti_knob_enum_is("GASNET_FREEZE_SIGNAL", "SIGUSR2") ? SIGUSR2 : SIGUSR1, &sa, NULL);
  }
  if (gasneti_knob_bool("GASNET_FREEZE")) freeze("GASNET_FREEZE");
  return backtrace_on_error || freeze_on_error;
}
