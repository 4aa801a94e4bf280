/*
** The front end's files (front.c: the job and the connection; front_tty.c:
** the terminal) share this. Not part of the embedding API.
*/
#ifndef MPLUA_FRONT_H
#define MPLUA_FRONT_H

#include <stddef.h>

/* The front end's state (one per process: there is one terminal). */
typedef struct front_state {
  int tty;       /* stdin and stdout are terminals: line editing, progress */
  int sock;      /* rank 0's connection, or -1 */
  int asking;    /* rank 0 waits for the answer to request `seq` */
  long seq;      /* the last request seen */
  int prompted;  /* that request carries a prompt (the REPL), not io.read */
} front_state;

extern front_state fe;

/* front.c: answer rank 0's request (kind 'L', 'E' or 'C', see front_proto.h). */
void front_answer(char kind, const char *p, size_t n);

/* front_tty.c: the terminal (or plain files when fe.tty is 0). */
void tty_start(void);
void tty_end(void);
/* Output for the user (rank 0's stream, the launcher's): above the prompt
** and below nothing, with the progress line kept at the bottom. */
void tty_output(int fd, const char *p, size_t n);
void tty_progress(const char *p, size_t n); /* n == 0: clear it */
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
