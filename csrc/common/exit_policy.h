/* exit_policy.h: when a job ends and with which code, as one state machine used by every
 * supervisor: gasnetrun's agents (through the CFFI binding) and the fork supervisor. Free of
 * runtime state; the caller supplies the clock and acts on what it returns. */
#ifndef GASNETI_EXIT_POLICY_H
#define GASNETI_EXIT_POLICY_H

/* CFFI-BEGIN */
enum {
  GASNETI_EXIT_QUIT = 1, /* send the leave signal to every rank still running */
  GASNETI_EXIT_KILL = 2, /* send SIGKILL to every rank still running */
  GASNETI_EXIT_STRAGGLERS = 4 /* with QUIT/KILL: ranks still running after others finished */
};
/* The job's code when the supervisor had to end ranks that were still running
 * GASNET_EXITTIMEOUT after another finished, and no rank set a code of its own: a job whose
 * ranks did not all finish did not succeed. */
enum { GASNETI_EXIT_STRAGGLER_CODE = 1 };
/* How a rank's end counts (gasneti_exit_policy_ended). */
enum {
  GASNETI_END_FINISHED = 0, /* returned 0: done, its peers go on */
  GASNETI_END_ENDED_JOB = 1, /* its exit ended the job (code, signal, gasnet_exit) */
  GASNETI_END_BY_LAUNCHER = 2 /* it left because the supervisor signalled it */
};

typedef struct {
  int nranks;
  double timeout, grace;
  int code;       /* the job's exit code so far: the first non-zero code of a rank that ended it */
  int ending;     /* the job is ending (a rank or the launcher ended it) */
  int ender;      /* who ended it: a rank, -2 for the launcher, -1 nobody */
  int first_done; /* the first rank that finished normally, or -1 */
  int remaining;  /* ranks whose process has not ended */
  double quit_at, kill_at; /* when to signal the rest (monotonic seconds; < 0: not planned) */
  int quit_sent, kill_sent;
  int stragglers;          /* ranks were ended for outliving a finished rank (STRAGGLERS) */
  unsigned char *state;    /* per rank, private */
} gasneti_exit_policy_t;

int gasneti_exit_policy_init(gasneti_exit_policy_t *p, int nranks, double timeout);
void gasneti_exit_policy_fini(gasneti_exit_policy_t *p);
/* The rank said it is about to leave with code; ends_job as in bootstrap.h's leaving(). */
void gasneti_exit_policy_leaving(gasneti_exit_policy_t *p, int rank, int code, int ends_job,
                                 double now);
/* The rank hit a fatal error: everyone is signalled at once. */
void gasneti_exit_policy_abort(gasneti_exit_policy_t *p, int rank, int code, double now);
/* The rank's process ended with an exit code (signal 0) or by a signal; returns GASNETI_END_*. */
int gasneti_exit_policy_ended(gasneti_exit_policy_t *p, int rank, int code, int signal,
                              double now);
/* The supervisor found the job broken (a rank broke the protocol, a host vanished): everyone
 * is signalled at once and the job's code is this one unless a rank already set one. */
void gasneti_exit_policy_fail(gasneti_exit_policy_t *p, int code, double now);
/* The supervisor itself got a signal it forwards to the ranks (Ctrl-C, SIGTERM, SIGHUP). */
void gasneti_exit_policy_signalled(gasneti_exit_policy_t *p, int signal, double now);
/* What to do now (GASNETI_EXIT_* bits); each action is returned once. */
int gasneti_exit_policy_due(gasneti_exit_policy_t *p, double now);
/* The next time due() has something to do, or -1. */
double gasneti_exit_policy_deadline(const gasneti_exit_policy_t *p);
/* Whether the rank's process is still running. */
int gasneti_exit_policy_running(const gasneti_exit_policy_t *p, int rank);
/* The signal a supervisor sends a rank it asks to leave (GASNETI_EXIT_QUIT): a real-time
 * signal the runtime keeps for itself, whose handler runs the client's SIGQUIT handler
 * (GASNet-1's notice) and then leaves, even when that handler returns. */
int gasneti_exit_leave_signal(void);
/* The ranks still running as ranges ("0, 2-7"); returns buf. */
char *gasneti_exit_policy_running_list(const gasneti_exit_policy_t *p, char *buf, int len);
/* CFFI-END */

#endif
