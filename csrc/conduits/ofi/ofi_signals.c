/* ofi_signals.c: signal handlers that libfabric's dependencies install behind the client's
 * back. Debian's libfabric links the PSM library (libinfinipath), whose load-time constructor
 * takes SIGINT, SIGTERM and SIGSEGV and ends the process with code 1: a rank interrupted with
 * GASNET_NO_CATCH_SIGNAL=SIGINT then exits 1 instead of dying of the signal, and a crash is not
 * reported as one. Unless the job runs on the psm provider itself (whose clean-up they are),
 * those handlers give way to the default action; the runtime's signal rules then apply as on
 * every other conduit. Handlers of the client or of other libraries are left alone. */
#include <dlfcn.h>
#include <signal.h>
#include <string.h>

#include "ofi_internal.h"

static bool installed_by_psm(const struct sigaction *sa) {
  void *fn = (sa->sa_flags & SA_SIGINFO) ? (void *)sa->sa_sigaction : (void *)sa->sa_handler;
  if (sa->sa_handler == SIG_DFL || sa->sa_handler == SIG_IGN) return false;
  Dl_info where;
  return dladdr(fn, &where) && where.dli_fname && strstr(where.dli_fname, "libinfinipath");
}

void ofi_drop_foreign_handlers(void) {
  if (!strncmp(ofi.provider, "psm", 3)) return;
  static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGSEGV, SIGBUS,
                             SIGILL, SIGFPE,  SIGABRT};
  for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
    struct sigaction now;
    if (sigaction(sigs[i], NULL, &now) == 0 && installed_by_psm(&now)) {
      struct sigaction dfl;
      memset(&dfl, 0, sizeof dfl);
      dfl.sa_handler = SIG_DFL;
      sigemptyset(&dfl.sa_mask);
      sigaction(sigs[i], &dfl, NULL);
    }
  }
}
