/* SPDX-License-Identifier: MIT */
/*
** The front end's files (front.c: the job and the connection; front_tty.c:
** the terminal) share this. Not part of the embedding API.
*/
#ifndef MPLUA_FRONT_H
#define MPLUA_FRONT_H

#include <stddef.h>
#include <sys/types.h>

struct pollfd;

/* What the front end shows the job on (the terminal, front_tty.c; or a
** notebook, jupyter_face.c), as xeus puts a kernel over a transport: the
** connection and the job are front.c's, the user's side is the face's. */
typedef struct front_face {
  void (*start)(void);
  void (*end)(void);
  void (*rank0)(const char *p, size_t n);         /* rank 0's own text */
  void (*output)(int fd, const char *p, size_t n); /* the launcher's stdout (1) or stderr (2) */
  void (*progress)(const char *p, size_t n);      /* n == 0: clear it */
  void (*history)(const char *p, size_t n);
  void (*ask)(const char *prompt, size_t n);      /* NULL: a plain read */
  void (*input)(void);       /* stdin is readable while asking (NULL: stdin is not read) */
  void (*interrupt)(void);   /* Ctrl-C while asking */
  void (*winch)(void);
  void (*abandon)(void);     /* rank 0 is gone while asking */
  /* Optional: a marker of a kind front.c does not know; more descriptors
  ** to poll (returns how many it filled, may lower *timeout_ms) and what
  ** came of them. */
  void (*marker)(char kind, const char *p, size_t n);
  int (*pollfds)(struct pollfd *p, int max, int *timeout_ms);
  void (*polled)(const struct pollfd *p, int n);
} front_face;

/* The front end's state: a process global, as the front end is a process of
** its own (one terminal, one job, no Lua state). */
typedef struct front_state {
  int tty;       /* stdin and stdout are terminals: line editing, progress */
  int sock;      /* rank 0's connection, or -1 */
  int asking;    /* rank 0 waits for the answer to request `seq` */
  long seq;      /* the last request seen */
  int prompted;  /* that request carries a prompt (the REPL), not io.read */
  int out_closed; /* writing our stdout or stderr met EPIPE: the job is ended */
  const front_face *face;
} front_state;

extern front_state fe;

/* front_stuck.c: a Ctrl-C while a command runs (`launcher`: the job's, 0
** once it has ended); 1 when it ended the job instead of interrupting it.
** Rank 0 took the interrupts (it asks for a line). The job was ended so. */
int front_stuck_ctrl_c(pid_t launcher);
void front_stuck_taken(void);
int front_stuck_ended(void);

/* front.c: answer rank 0's request (kind 'L', 'E' or 'C', see front_proto.h). */
void front_answer(char kind, const char *p, size_t n);
/* Start the job and show it on `face` until it ends; its exit status. */
int front_run(const front_face *face, int nranks, int argc, char **argv);
/* Ctrl-C that the face read as a key, not as SIGINT: handled as SIGINT is
** (at a prompt it drops the line; while a command runs it interrupts it). */
void front_ctrl_c(void);
/* Send rank 0 a frame outside the request/answer turns ('Q', front_proto.h). */
void front_send(char kind, const char *p, size_t n);
/* While rank 0 waits for a line: ask it a query ('Q') and wait for its 'A'
** marker. Returns the answer (malloc'ed, *n its length) or NULL. */
char *front_query(const char *q, size_t qn, size_t *n);

/* front_tty.c: the terminal face. */
extern const front_face tty_face;

/* The token rank 0 greets with (front_proto.h). */
extern char front_token[];

/* front_door.c: the listening socket (port chosen by the system), or -1. */
int front_listen(int *port);
/* The callers waiting to greet, at most FRONT_CALLERS: add them to the
** poll set; after poll, hear them (and take new ones from the listener).
** Returns 1 when rank 0 is in: it is fe.sock, and the listener and the
** others are closed (*listener is then -1). */
#define FRONT_CALLERS 8
void front_callers_poll(struct pollfd *p, int *np);
int front_callers_answer(struct pollfd *p, int np, int *listener);
void front_listener_close(int *listener);

/* front_tty.c: the terminal (or plain files when fe.tty is 0). */
void tty_start(void);
void tty_end(void);
/* Output for the user (rank 0's stream): above the prompt and below
** nothing, with the progress line kept at the bottom. */
void tty_output(int fd, const char *p, size_t n);
/* The launcher's output (the other ranks'), in whole lines: the same, and
** above an unfinished line of rank 0's rather than glued to it. */
void tty_lines(int fd, const char *p, size_t n);
void tty_progress(const char *p, size_t n); /* n == 0: clear it */
/* The history (front_history.c): loaded at start (terminal, readline only),
** each chunk run added and appended to the file at once, freed at the end. */
void history_start(void);
void history_end(void);
void tty_history(const char *p, size_t n);
/* Rank 0 asks for input: show the prompt (NULL for a plain read) and start
** reading a line; the answer goes out through front_answer. */
void tty_ask(const char *prompt, size_t n);
/* fd 0 is readable while asking. */
void tty_input(void);
/* Ctrl-C while asking: drop the line, answer 'C'. */
void tty_interrupt(void);
void tty_winch(void);
/* Rank 0 is gone while asking: stop reading. */
void tty_abandon(void);

#endif
