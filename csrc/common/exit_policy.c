/* exit_policy.c: the rules by which a job ends. A rank that returns 0 has finished and its
 * peers go on; the job ends when all finished, or GASNET_EXITTIMEOUT after the first did (the
 * others are then told to leave: the leave signal a grace period before the timeout, SIGKILL at
 * it). A rank that ends the job (non-zero code, signal, gasnet_exit, fatal error) gives the
 * others a grace period to leave on their own (none after a signal or fatal error), then the
 * leave signal, then
 * SIGKILL at the timeout. The job's code is the first non-zero code of a rank that ended it,
 * 128+signal for a signal; ranks the supervisor itself signalled do not change it, but a job
 * whose stragglers the supervisor had to end is not a success (GASNETI_EXIT_STRAGGLER_CODE,
 * unless a rank set a code). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

#include "knob_api.h"
#include "exit_policy.h"

enum { RUNNING = 0, SAID_DONE = 1, SAID_END = 2, ENDED = 3, SIGNALLED = 0x80 };

int gasneti_exit_policy_init(gasneti_exit_policy_t *p, int nranks, double timeout) {
  *p = (gasneti_exit_policy_t){.nranks = nranks, .timeout = timeout,
                               .grace = gasneti_exit_grace(timeout), .ender = -1,
                               .first_done = -1, .remaining = nranks, .quit_at = -1,
                               .kill_at = -1};
  p->state = calloc((size_t)(nranks > 0 ? nranks : 1), 1);
  return p->state != NULL;
}

void gasneti_exit_policy_fini(gasneti_exit_policy_t *p) {
  free(p->state);
  p->state = NULL;
}

static double earlier(double planned, double t) { return planned < 0 || t < planned ? t : planned; }

static void end_job(gasneti_exit_policy_t *p, int who, int code, double quit_delay, double now) {
  if (code && !p->code) p->code = code;
  if (!p->ending) {
    p->ending = 1;
    p->ender = who;
    p->kill_at = earlier(p->kill_at, now + p->timeout);
  }
  if (!p->quit_sent) p->quit_at = earlier(p->quit_at, now + quit_delay);
}

static int valid(const gasneti_exit_policy_t *p, int rank) {
  return rank >= 0 && rank < p->nranks && (p->state[rank] & ~SIGNALLED) != ENDED;
}

void gasneti_exit_policy_leaving(gasneti_exit_policy_t *p, int rank, int code, int ends_job,
                                 double now) {
  if (!valid(p, rank)) return;
  p->state[rank] = (unsigned char)((p->state[rank] & SIGNALLED) | (ends_job ? SAID_END : SAID_DONE));
  if (ends_job && !(p->state[rank] & SIGNALLED)) end_job(p, rank, code, p->grace, now);
}

void gasneti_exit_policy_abort(gasneti_exit_policy_t *p, int rank, int code, double now) {
  if (!valid(p, rank)) return;
  p->state[rank] = (unsigned char)((p->state[rank] & SIGNALLED) | SAID_END);
  end_job(p, rank, code ? code : 1, 0, now);
}

int gasneti_exit_policy_ended(gasneti_exit_policy_t *p, int rank, int code, int signal,
                              double now) {
  if (!valid(p, rank)) return GASNETI_END_BY_LAUNCHER;
  unsigned char was = p->state[rank];
  p->state[rank] = ENDED;
  p->remaining--;
  if (was & SIGNALLED) return GASNETI_END_BY_LAUNCHER;
  if (signal) {
    end_job(p, rank, 128 + signal, 0, now);
    return GASNETI_END_ENDED_JOB;
  }
  if (code || was == SAID_END) {
    end_job(p, rank, code, p->grace, now);
    return GASNETI_END_ENDED_JOB;
  }
  if (p->first_done < 0) {
    p->first_done = rank;
    p->kill_at = earlier(p->kill_at, now + p->timeout);
    if (!p->quit_sent) p->quit_at = earlier(p->quit_at, now + p->timeout - p->grace);
  }
  return GASNETI_END_FINISHED;
}

void gasneti_exit_policy_fail(gasneti_exit_policy_t *p, int code, double now) {
  end_job(p, -2, code ? code : 1, 0, now);
}

void gasneti_exit_policy_signalled(gasneti_exit_policy_t *p, int signal, double now) {
  if (!p->code) p->code = 128 + signal;
  if (!p->ending) {
    p->ending = 1;
    p->ender = -2;
  }
  p->kill_at = earlier(p->kill_at, now + p->timeout);
  for (int r = 0; r < p->nranks; r++)
    if (p->state[r] != ENDED) p->state[r] |= SIGNALLED; /* the signal is forwarded to them */
}

int gasneti_exit_policy_due(gasneti_exit_policy_t *p, double now) {
  int todo = 0;
  if (p->remaining == 0) return 0;
  if (!p->quit_sent && p->quit_at >= 0 && now >= p->quit_at) {
    p->quit_sent = 1;
    todo |= GASNETI_EXIT_QUIT;
  }
  if (!p->kill_sent && p->kill_at >= 0 && now >= p->kill_at) {
    p->kill_sent = 1;
    todo |= GASNETI_EXIT_KILL;
  }
  if (todo && !p->ending && p->first_done >= 0 && !p->stragglers) {
    todo |= GASNETI_EXIT_STRAGGLERS; /* once: the supervisor names them once */
    p->stragglers = 1;
    if (!p->code) p->code = GASNETI_EXIT_STRAGGLER_CODE;
  }
  if (todo)
    for (int r = 0; r < p->nranks; r++)
      if (p->state[r] != ENDED) p->state[r] |= SIGNALLED;
  return todo;
}

double gasneti_exit_policy_deadline(const gasneti_exit_policy_t *p) {
  if (p->remaining == 0) return -1;
  double t = -1;
  if (!p->quit_sent && p->quit_at >= 0) t = p->quit_at;
  if (!p->kill_sent && p->kill_at >= 0) t = earlier(t, p->kill_at);
  return t;
}

int gasneti_exit_leave_signal(void) { return SIGRTMIN + 4; }

int gasneti_exit_policy_running(const gasneti_exit_policy_t *p, int rank) {
  return rank >= 0 && rank < p->nranks && p->state[rank] != ENDED;
}

char *gasneti_exit_policy_running_list(const gasneti_exit_policy_t *p, char *buf, int len) {
  int used = 0;
  buf[0] = '\0';
  for (int r = 0; r < p->nranks; r++) {
    if (!gasneti_exit_policy_running(p, r)) continue;
    int last = r;
    while (last + 1 < p->nranks && gasneti_exit_policy_running(p, last + 1)) last++;
    int n = last > r ? snprintf(buf + used, (size_t)(len - used), "%s%d-%d", used ? ", " : "", r, last)
                     : snprintf(buf + used, (size_t)(len - used), "%s%d", used ? ", " : "", r);
    if (n < 0 || n >= len - used) break; /* truncated: what fits is still true */
    used += n;
    r = last;
  }
  return buf;
}
