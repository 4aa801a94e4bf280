/* SPDX-License-Identifier: MIT */
/*
** Ctrl-C that rank 0 does not take. Each press while a command runs is one
** interrupt of it (front.c); rank 0 takes one by asking for a line again
** (the prompt after "interrupted!", or io.read). A loop the interrupt
** cannot reach (a coroutine spinning in pure Lua never meets the poll hook)
** would leave the session stuck and silent, where lua ends on the second
** press. So a press while an interrupt sent STUCK_MS ago is still not taken
** says so, once, and the next one ends the job: the launcher gets SIGTERM
** (as when the front end gets it) and the front end's status is 128 +
** SIGINT, as a shell sees of lua ended by Ctrl-C. STUCK_MS is a person's
** "it does not react": an interrupt is taken in milliseconds.
*/
#include <signal.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "front.h"

#define STUCK_MS 2000

/* The front end is a process of its own with one job: a process global. */
static struct {
  long since; /* ms (monotonic) of the first interrupt not taken, or 0: none */
  int warned; /* the user was told the next press ends the job */
  int ended;  /* ... and it did */
} untaken;

static long now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000 + 1; /* never 0 */
}

int front_stuck_ctrl_c(pid_t launcher) {
  long now = now_ms();
  if (fe.face != &tty_face) /* a notebook has its way out: restarting the kernel */
    return 0;
  if (untaken.since == 0) {
    untaken.since = now;
    return 0;
  }
  if (untaken.warned && launcher > 0) {
    untaken.ended = 1;
    kill(launcher, SIGTERM);
    return 1;
  }
  if (!untaken.warned && now - untaken.since >= STUCK_MS) {
    char msg[256];
    int n = snprintf(msg, sizeof msg,
                     "mplua: rank 0 has not taken the interrupt for %ld s (a loop the "
                     "interrupt cannot reach, such as a coroutine spinning in pure Lua); "
                     "press Ctrl-C again to end the job\n",
                     (now - untaken.since) / 1000);
    untaken.warned = 1;
    fe.face->output(fe.tty ? STDOUT_FILENO : STDERR_FILENO, msg, (size_t)n);
  }
  return 0;
}

void front_stuck_taken(void) {
  untaken.since = 0;
  untaken.warned = 0;
}

int front_stuck_ended(void) { return untaken.ended; }
