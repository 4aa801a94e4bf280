/* SPDX-License-Identifier: MIT */
/*
** The front end's terminal: output above the prompt, the progress line at
** the bottom, readline (in its callback mode, driven by front.c's poll loop)
** for the lines rank 0 asks for (the history is front_history.c's).
**
** The screen is kept in one of three states: plain output; output with the
** progress line drawn below it (the text of an unfinished output line is
** remembered and written again when the progress line goes); or a readline
** prompt below the output. Everything the user sees is written here, so
** nothing is ever glued to the progress line or printed inside the prompt.
**
** While readline reads a line, Ctrl-C is a key, not a signal (the
** terminal's VINTR is off): it comes in order with what was typed before
** it, which the terminal would otherwise flush unread when the front end is
** slow to read it. Keys that came in that mode after the line ended wait in
** t.ahead for the next line; a Ctrl-C among them was pressed while the
** line's command ran, so it interrupts that command as the signal would.
** A dropped line starts no command: the terminal stays in that mode until
** the next prompt (t.held), and what is typed meanwhile, Ctrl-C included,
** waits in t.ahead for it rather than going to a terminal that would echo
** it raw and flush it on Ctrl-C.
**
** When stdin or stdout is not a terminal there is no line editing and no
** progress line: prompts are written as text and lines are read from stdin
** as they come, so `mplua -n 4 < session.lua` reads like a transcript.
*/
#define _GNU_SOURCE /* memrchr, mkostemp */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "front.h"
#include "front_proto.h"
#include "complete_rl.h"

#ifdef MPLUA_READLINE
#include <readline/history.h>
#include <readline/readline.h>
#endif

#define PARTIAL_MAX 4096  /* an unfinished line longer than this is not redrawn */

/* A process global: the terminal is the front end process's. */
static struct {
  char partial[PARTIAL_MAX]; /* the unfinished last line of output */
  size_t plen;
  int pover;                 /* it was longer than PARTIAL_MAX */
  char *progress;            /* the progress line's text, or NULL */
  int editing;               /* readline is reading a line */
  char *prompt;              /* of that line */
  char *in;                  /* plain mode: what stdin gave beyond the lines taken */
  size_t inlen, incap;
  int ineof;
  char *ahead;               /* readline mode: keys read after a line ended */
  size_t alen, acap;
  int ctrl_c;                /* readline read Ctrl-C */
  int held;                  /* readline's terminal mode kept between a dropped line and the next prompt */
} t;

/* A reader gone from our output (`mplua -n 4 job.lua | head -1`) ends the
** job, as SIGPIPE ends `lua` (front.c). */
static void put(int fd, const char *p, size_t n) {
  if (proto_write(fd, p, n) != 0 && errno == EPIPE)
    fe.out_closed = 1;
}

static void puts1(const char *s) { put(STDOUT_FILENO, s, strlen(s)); }

/* Remember the unfinished last line of what went to the terminal. */
static void track(const char *p, size_t n) {
  const char *nl = memrchr(p, '\n', n);
  if (nl != NULL) {
    n -= (size_t)(nl + 1 - p);
    p = nl + 1;
    t.plen = 0;
    t.pover = 0;
  }
  if (t.plen + n > PARTIAL_MAX)
    t.pover = 1;
  else {
    memcpy(t.partial + t.plen, p, n);
    t.plen += n;
  }
}

static void draw_progress(void) {
  puts1("\r\033[K");
  puts1(t.progress);
}

/* Take the progress line off the screen; the unfinished line comes back. */
static void undraw_progress(void) {
  puts1("\r\033[K");
  if (!t.pover)
    put(STDOUT_FILENO, t.partial, t.plen);
}


/*
** {==================================================================
** Output and progress
** ===================================================================
*/

/* The unfinished line fits on one row of the terminal (tabs to 8 columns;
** a multibyte character counts its bytes, too many rather than too few). */
static int partial_fits(void) {
  struct winsize w;
  size_t cols = 0;
  if (t.pover || ioctl(STDOUT_FILENO, TIOCGWINSZ, &w) != 0 || w.ws_col == 0)
    return 0;
  for (size_t i = 0; i < t.plen; i++)
    cols = t.partial[i] == '\t' ? (cols / 8 + 1) * 8 : cols + 1;
  return cols < w.ws_col;
}

/* above: whole lines of other ranks, which go above an unfinished line of
** rank 0's (taken off, then written again) rather than after it. */
static void output(int fd, const char *p, size_t n, int above) {
  if (n == 0)
    return;
  if (!fe.tty) {
    put(fd, p, n);
    return;
  }
#ifdef MPLUA_READLINE
  if (t.editing) { /* readline writes through stdio; we write(2) below it */
    rl_clear_visible_line();
    fflush(rl_outstream);
  }
#endif
  if (t.progress != NULL)
    undraw_progress();
  if (above && !t.editing && t.plen > 0 && p[n - 1] == '\n' && partial_fits()) {
    puts1("\r\033[K");
    put(STDOUT_FILENO, p, n);
    put(STDOUT_FILENO, t.partial, t.plen);
  }
  else {
    put(STDOUT_FILENO, p, n);
    track(p, n);
  }
  if (t.progress != NULL)
    draw_progress();
#ifdef MPLUA_READLINE
  if (t.editing) {
    if (t.plen > 0) { /* the prompt goes on a line of its own */
      puts1("\n");
      t.plen = 0;
    }
    rl_forced_update_display();
  }
#endif
}

void tty_output(int fd, const char *p, size_t n) { output(fd, p, n, 0); }

void tty_lines(int fd, const char *p, size_t n) { output(fd, p, n, 1); }

void tty_progress(const char *p, size_t n) {
  if (!fe.tty)
    return;
  if (n == 0) {
    if (t.progress != NULL)
      undraw_progress();
    free(t.progress);
    t.progress = NULL;
    return;
  }
  free(t.progress);
  t.progress = malloc(n + 1);
  if (t.progress == NULL)
    return;
  memcpy(t.progress, p, n);
  t.progress[n] = '\0';
  draw_progress();
}

/* }================================================================== */


/*
** {==================================================================
** Asking for a line
** ===================================================================
*/

#ifdef MPLUA_READLINE

#define CTRL_C '\003'

/* The terminal as readline sets it, but with Ctrl-C a key (see above). */
static void prep_terminal(int meta) {
  struct termios tio;
  rl_prep_terminal(meta);
  if (tcgetattr(fileno(rl_instream), &tio) == 0) {
    tio.c_cc[VINTR] = _POSIX_VDISABLE;
    tcsetattr(fileno(rl_instream), TCSANOW, &tio);
  }
}

/* The terminal back to normal, unless it is held for the next prompt. */
static void deprep_terminal(void) {
  if (!t.held)
    rl_deprep_terminal();
}

/* Stop holding the terminal: the next prompt has it, or none will come. */
static void release(int deprep) {
  if (!t.held)
    return;
  t.held = 0;
  if (deprep)
    rl_deprep_terminal();
}

static int on_ctrl_c(int count, int key) {
  (void)count, (void)key;
  t.ctrl_c = 1; /* handled once readline has returned (tty_interrupt) */
  return 0;
}

/* readline's keys: what t.ahead holds first. */
static int ahead_getc(FILE *f) {
  if (t.alen > 0) {
    unsigned char c = (unsigned char)t.ahead[0];
    memmove(t.ahead, t.ahead + 1, --t.alen);
    return c;
  }
  return rl_getc(f);
}

/* The line has ended and the terminal is back to cooked: take the keys it
** got before that, still in readline's mode. After a line (`ran`: its
** command may be running), each Ctrl-C among them goes as the signal would
** have (front.c interrupts the command) and drops the keys before it, as
** the terminal's flush would. After a dropped line no command runs: they
** all wait, Ctrl-C too, for the next line. */
static size_t take_ahead(int ran) {
  int n = 0;
  size_t got = 0;
  while (ioctl(STDIN_FILENO, FIONREAD, &n) == 0 && n > 0) {
    ssize_t r;
    if (t.alen + (size_t)n > t.acap) {
      size_t cap = t.alen + (size_t)n + 256;
      char *p = realloc(t.ahead, cap);
      if (p == NULL)
        return got;
      t.ahead = p;
      t.acap = cap;
    }
    r = read(STDIN_FILENO, t.ahead + t.alen, (size_t)n);
    if (r <= 0)
      return got;
    got += (size_t)r;
    t.alen += (size_t)r;
    for (size_t i = t.alen - (size_t)r; ran && i < t.alen; i++) {
      if (t.ahead[i] == CTRL_C) {
        puts1("^C");
        front_ctrl_c();
        memmove(t.ahead, t.ahead + i + 1, t.alen - i - 1);
        t.alen -= i + 1;
        i = (size_t)-1; /* on with what is left */
      }
    }
  }
  return got;
}

/* After readline took keys: Ctrl-C drops the line. */
static void after_keys(void) {
  if (t.ctrl_c) {
    t.ctrl_c = 0;
    if (t.editing)
      tty_interrupt();
  }
}

#endif

/* Plain mode: answer from stdin's next line once it is there. */
static void plain_answer(void) {
  char *nl = t.inlen ? memchr(t.in, '\n', t.inlen) : NULL;
  size_t k = nl ? (size_t)(nl - t.in) + 1 : (t.ineof ? t.inlen : 0);
  if (k > 0) {
    if (fe.tty)
      track("\n", 1); /* the terminal echoed the line */
    front_answer('L', t.in, k);
    memmove(t.in, t.in + k, t.inlen - k);
    t.inlen -= k;
  }
  else if (t.ineof) {
    if (fe.prompted)
      puts1("\n"); /* the session ends: the shell's prompt on a new line */
    front_answer('E', NULL, 0);
  }
}

#ifdef MPLUA_READLINE

static void on_line(char *line) {
  rl_callback_handler_remove();
  t.editing = 0;
  t.plen = 0;
  t.pover = 0;
  if (line == NULL) { /* Ctrl-D */
    const char *bp = rl_variable_value("enable-bracketed-paste");
    if (bp == NULL || strcmp(bp, "on") != 0) /* leaving bracketed paste ends the line */
      puts1("\n");
    front_answer('E', NULL, 0);
    return;
  }
  size_t n = strlen(line);
  line[n] = '\n'; /* (readline's buffer has room: it was NUL-terminated) */
  front_answer('L', line, n + 1);
  free(line);
  (void)take_ahead(1);
}

#endif

void tty_ask(const char *prompt, size_t n) {
  free(t.prompt);
  t.prompt = NULL;
  if (fe.tty && t.progress != NULL) /* the command is over: so is its progress */
    tty_progress(NULL, 0);
  if (prompt != NULL && (t.prompt = malloc(t.plen + n + 1)) != NULL) {
    memcpy(t.prompt, t.partial, t.plen); /* after an unfinished line, as lua */
    memcpy(t.prompt + t.plen, prompt, n);
    t.prompt[t.plen + n] = '\0';
  }
#ifdef MPLUA_READLINE
  if (fe.tty) {
    if (t.prompt == NULL && (t.prompt = malloc(t.plen + 1)) != NULL) {
      memcpy(t.prompt, t.partial, t.plen); /* io.read after io.write("? ") */
      t.prompt[t.plen] = '\0';
    }
    puts1("\r\033[K"); /* readline draws the whole line, prompt included */
    release(0);         /* the terminal is still in readline's mode */
    t.editing = 1;
    rl_callback_handler_install(t.prompt ? t.prompt : "", on_line);
    while (t.editing && t.alen > 0) { /* what was typed ahead, in order */
      rl_callback_read_char();
      after_keys();
    }
    return;
  }
#endif
  if (prompt != NULL) {
    put(STDOUT_FILENO, prompt, n);
    if (fe.tty)
      track(prompt, n);
  }
  plain_answer();
}

void tty_input(void) {
#ifdef MPLUA_READLINE
  if (t.editing) {
    rl_callback_read_char();
    after_keys();
    return;
  }
#endif
  if (t.inlen == t.incap) {
    size_t cap = t.incap ? 2 * t.incap : 4096;
    char *p = realloc(t.in, cap);
    if (p == NULL)
      return;
    t.in = p;
    t.incap = cap;
  }
  ssize_t r = read(STDIN_FILENO, t.in + t.inlen, t.incap - t.inlen);
  if (r > 0)
    t.inlen += (size_t)r;
  else if (r == 0 || (errno != EINTR && errno != EAGAIN))
    t.ineof = 1;
  plain_answer();
}

void tty_interrupt(void) {
#ifdef MPLUA_READLINE
  if (t.editing) {
    rl_point = rl_end; /* "^C" after the whole line, as a shell shows it */
    rl_redisplay();
    puts1("^C\n");
    rl_replace_line("", 0);
    t.held = fe.prompted; /* the REPL asks again at once; io.read's command goes on */
    rl_callback_handler_remove();
    t.editing = 0;
    t.plen = 0;
    t.pover = 0;
    front_answer('C', NULL, 0);
    (void)take_ahead(0);
    return;
  }
#endif
  if (fe.tty)
    track("\n", 1); /* the terminal showed ^C; the line is left */
  t.inlen = 0; /* what was typed ahead goes, as the terminal's own buffer does */
  front_answer('C', NULL, 0);
}

void tty_abandon(void) {
#ifdef MPLUA_READLINE
  release(1);
  if (t.editing) {
    rl_callback_handler_remove();
    t.editing = 0;
    puts1("\n");
  }
#endif
}

void tty_winch(void) {
#ifdef MPLUA_READLINE
  if (t.editing)
    rl_resize_terminal();
#endif
}

/* }================================================================== */


#ifdef MPLUA_READLINE
/* While the terminal is held, its keys are read as they come (front.c polls
** stdin only while rank 0 asks). */
static int tty_pollfds(struct pollfd *p, int max, int *timeout_ms) {
  (void)timeout_ms;
  if (!t.held || max < 1)
    return 0;
  p[0].fd = STDIN_FILENO;
  p[0].events = POLLIN;
  return 1;
}

static void tty_polled(const struct pollfd *p, int n) {
  if (n > 0 && t.held && p[0].revents && take_ahead(0) == 0)
    release(1); /* readable yet empty: the terminal is gone */
}

/* Tab's completions come from rank 0, asked while it waits for the line. */
static char *tty_ask_rank0(const char *q, size_t n, size_t *alen) {
  return fe.prompted ? front_query(q, n, alen) : NULL;
}
#endif

void tty_start(void) {
#ifdef MPLUA_READLINE
  if (!fe.tty)
    return;
  rl_readline_name = "mplua"; /* for $if mplua in ~/.inputrc */
  rl_catch_signals = 0;       /* the loop has them */
  rl_catch_sigwinch = 0;
  rl_prep_term_function = prep_terminal;
  rl_deprep_term_function = deprep_terminal;
  rl_getc_function = ahead_getc;
  rl_initialize(); /* ~/.inputrc first: Ctrl-C is bound here, whatever it says */
  rl_bind_key_in_map(CTRL_C, on_ctrl_c, emacs_standard_keymap);
  rl_bind_key_in_map(CTRL_C, on_ctrl_c, vi_insertion_keymap);
  rl_bind_key_in_map(CTRL_C, on_ctrl_c, vi_movement_keymap);
  complete_rl_init(tty_ask_rank0); /* Tab: rank 0 has the globals */
  history_start();
#endif
}

void tty_end(void) {
  tty_abandon();
  if (t.progress != NULL)
    tty_progress(NULL, 0);
  else if (fe.tty && t.plen > 0)
    puts1("\n"); /* the shell's prompt on a line of its own */
  free(t.prompt);
  free(t.in);
  free(t.ahead);
  history_end();
}

static void tty_rank0(const char *p, size_t n) { tty_output(STDOUT_FILENO, p, n); }

#ifdef MPLUA_READLINE
const front_face tty_face = {tty_start, tty_end, tty_rank0, tty_lines, tty_progress,
                             tty_history, tty_ask, tty_input, tty_interrupt, tty_winch,
                             tty_abandon, NULL, tty_pollfds, tty_polled};
#else
const front_face tty_face = {tty_start, tty_end, tty_rank0, tty_lines, tty_progress,
                             tty_history, tty_ask, tty_input, tty_interrupt, tty_winch,
                             tty_abandon, NULL, NULL, NULL};
#endif
