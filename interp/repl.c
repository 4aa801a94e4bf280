/* SPDX-License-Identifier: MIT */
/*
** mplua_repl: rank 0's interactive prompt.
**
** Modelled on lua.c's doREPL: a line is first tried as `return <line>` (so
** expressions print their values), then as a statement; a syntax error
** ending in "<eof>" means the chunk is unfinished and a continuation line is
** read. Chunks run through mplua_docall and fail through mplua_report.
**
** Where it differs from lua.c:
** - The prompt runs even when stdin is not a terminal, because under mpiexec
**   rank 0's stdin is always a pipe. The prompts are still written (so a
**   transcript of a piped session reads naturally); nothing else is echoed.
** - Ctrl-C while waiting for input discards the pending input (the whole
**   unfinished chunk) and shows a fresh prompt. Our SIGINT handler is
**   installed only while a line is read: while a line runs, SIGINT belongs
**   to the library, which interrupts the running task.
** - A leading '=' means `return` on the first line, as in Lua 5.3.
** - Under mpiexec, rank 0's stdout and stderr are two pipes that hydra
**   forwards separately, so an error would come out after the next prompt:
**   while the prompt runs, stderr joins stdout's pipe (join_stderr).
** - Under the front end (link.c), the prompt travels with the request for a
**   line instead of being printed, and complete chunks go to its history;
**   the front end draws the terminal (no new lines after Ctrl-C here).
*/
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lua.h"
#include "lauxlib.h"
#include "complete_rl.h"
#include "host.h"
#include "mplua.h"
#include "show.h"

#ifdef MPLUA_READLINE
#include <readline/history.h>
#include <readline/readline.h>
#endif

#define PROMPT1 "> "
#define PROMPT2 ">> "
#define CHUNKNAME "=stdin"
#define EOFMARK "<eof>"
#define MARKLEN (sizeof(EOFMARK) - 1)

/* What reading input gave (Lua statuses are >= 0, so these cannot clash). */
enum { GOT_LINE = 1, GOT_EOF = -1, GOT_INTR = -2 };


/*
** {==================================================================
** SIGINT while waiting for input
** ===================================================================
*/

/*
** The handler only sets flags, but a read(2) that has not started yet when
** Ctrl-C comes would then block until the next line arrives. To close that
** window, the handler also swaps /dev/null onto stdin while a read is
** possible (dup2 is async-signal-safe): a read about to start sees end of
** file at once, one under way fails with EINTR (no SA_RESTART). The real
** stdin is put back as soon as the read returns. So Ctrl-C at the prompt
** always takes effect at once, which also makes it testable through a pipe.
*/
/* Process globals: the SIGINT handler reads and writes them. */
static volatile sig_atomic_t interrupted; /* Ctrl-C since catch_sigint */
static volatile sig_atomic_t reading;     /* a read of stdin may be under way */
static volatile sig_atomic_t detached;    /* the handler swapped stdin out */
static int null_fd = -1;    /* /dev/null, to swap in */
static int stdin_copy = -1; /* the real stdin, to swap back */

static void on_sigint(int sig) {
  int saved_errno = errno; /* the interrupted code may be about to read it */
  (void)sig;
  interrupted = 1;
  if (reading && !detached && null_fd >= 0 && stdin_copy >= 0) {
    dup2(null_fd, STDIN_FILENO);
    detached = 1;
  }
  errno = saved_errno;
}

/* Open the window in which Ctrl-C ends a read of stdin. Returns 0 if Ctrl-C
** has come already (then do not read). */
static int begin_read(void) {
  reading = 1;
  return !interrupted;
}

/* Close it (first, so the handler cannot swap again), then give stdin back
** if the handler took it. Returns whether Ctrl-C has come. */
static int end_read(void) {
  reading = 0;
  if (detached) {
    dup2(stdin_copy, STDIN_FILENO);
    detached = 0;
  }
  return interrupted;
}

/* Install our handler while a line is read; without SA_RESTART. If the
** descriptors cannot be had, Ctrl-C still works, only with the window. */
static void catch_sigint(struct sigaction *old) {
  struct sigaction sa;
  interrupted = reading = detached = 0;
  null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
  stdin_copy = fcntl(STDIN_FILENO, F_DUPFD_CLOEXEC, 0);
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_sigint;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, old);
}

static void release_sigint(const struct sigaction *old) {
  sigaction(SIGINT, old, NULL);
  if (null_fd >= 0)
    close(null_fd);
  if (stdin_copy >= 0)
    close(stdin_copy);
  null_fd = stdin_copy = -1;
}

/* }================================================================== */


/*
** {==================================================================
** Reading one line. The readers work in plain C (no Lua call can raise
** while our SIGINT handler is installed); the caller pushes the line once
** the library's handler is back.
** ===================================================================
*/

/* After Ctrl-C, the fresh prompt goes on a fresh line (the front end, when
** there is one, draws its terminal itself). */
static void new_line(void) {
  if (link_on())
    return;
  fputc('\n', stdout);
  fflush(stdout);
}

/* The plain reader's buffer, reused across lines; freed when the prompt
** ends (and reachable meanwhile, so never leaked by an error). One per
** process, as stdin is. */
static char *plain_buf;
static size_t plain_cap;

/* stdio (not read(2)) so that io.read() at the prompt shares the buffer.
** Ctrl-C wins over a line that completes at the same moment. */
static int plain_getline(const char *prompt, char **line) {
  if (link_on()) {
    link_prompt(prompt); /* goes with the request for more input */
    clearerr(stdin);     /* an end of input typed to io.read() ended only that */
  }
  else {
    fputs(prompt, stdout);
    fflush(stdout);
  }
  for (;;) {
    ssize_t n = begin_read() ? getline(&plain_buf, &plain_cap, stdin) : -1;
    int eintr = n < 0 && ferror(stdin) && errno == EINTR;
    if (end_read()) { /* what was read of the line is dropped */
      clearerr(stdin); /* the EOF of /dev/null, or EINTR */
      new_line();
      return GOT_INTR;
    }
    if (n >= 0) {
      if (n > 0 && plain_buf[n - 1] == '\n')
        plain_buf[n - 1] = '\0';
      *line = plain_buf;
      return GOT_LINE;
    }
    if (!eintr)
      return GOT_EOF;
    clearerr(stdin); /* another signal interrupted the read: wait on */
  }
}

static int plain_read(const char *prompt, char **line) {
  int got = plain_getline(prompt, line);
  link_prompt(NULL); /* io.read() in a command asks with no prompt */
  return got;
}

#ifdef MPLUA_READLINE

/* readline's own rl_getc restarts a read interrupted by a signal it does not
** handle itself, so Ctrl-C would go unnoticed until the next key. This one
** gives up instead: it shows "^C" and, with the line emptied, returns EOF,
** which makes readline return NULL at once; the flag tells that apart from
** a real end of input. */
static int getc_interruptible(FILE *f) {
  for (;;) {
    unsigned char c;
    ssize_t n;
    int err;
#if RL_READLINE_VERSION >= 0x0801
    rl_check_signals(); /* e.g. a pending window resize */
#endif
    n = begin_read() ? read(fileno(f), &c, 1) : -1;
    err = errno;
    if (end_read()) { /* stdin is back before readline resets the terminal */
      rl_echo_signal_char(SIGINT);
      rl_replace_line("", 0);
      return EOF;
    }
    if (n == 1)
      return c;
    if (n == 0 || err != EINTR)
      return EOF;
  }
}

/* Whether readline has ended the line itself on returning at EOF: from 8.1
** on, leaving bracketed-paste mode does. */
static int readline_ended_line(void) {
#if RL_READLINE_VERSION >= 0x0801
  const char *bp = rl_variable_value("enable-bracketed-paste");
  return bp != NULL && strcmp(bp, "on") == 0;
#else
  return 0;
#endif
}

static int edit_read(const char *prompt, char **line) {
  rl_getc_func_t *old_getc = rl_getc_function;
  int old_catch = rl_catch_signals;
  rl_getc_function = getc_interruptible;
  rl_catch_signals = 0; /* SIGINT is ours while reading, not readline's */
  *line = readline(prompt);
  rl_getc_function = old_getc;
  rl_catch_signals = old_catch;
  if (interrupted) {
    free(*line);
    *line = NULL;
    if (!readline_ended_line())
      new_line();
    return GOT_INTR;
  }
  return *line != NULL ? GOT_LINE : GOT_EOF;
}

#endif

#ifdef MPLUA_READLINE
/* Whether lines come from readline (stdin is a terminal): readline's state
** is the process's. */
static int editing;
#endif

static void save_line(const char *line) {
  if (line[0] == '\0')
    return;
  link_history(line);
#ifdef MPLUA_READLINE
  if (editing)
    add_history(line);
#endif
}

/* The prompt: the global _PROMPT/_PROMPT2 if set, as in lua; pushed. */
static const char *push_prompt(lua_State *L, int firstline) {
  if (lua_getglobal(L, firstline ? "_PROMPT" : "_PROMPT2") == LUA_TNIL) {
    lua_pop(L, 1);
    if (mplua_target(L)) /* connected: say where chunks go */
      lua_pushfstring(L, "[%d]%s", mplua_target(L), firstline ? PROMPT1 : PROMPT2);
    else
      lua_pushstring(L, firstline ? PROMPT1 : PROMPT2);
  }
  else {
    luaL_tolstring(L, -1, NULL);
    lua_remove(L, -2);
  }
  return lua_tostring(L, -1);
}

/* Read a line and push it (without its newline). Returns GOT_LINE, GOT_EOF
** or GOT_INTR (nothing pushed for the last two). */
static int pushline(lua_State *L, int firstline) {
  const char *prompt = push_prompt(L, firstline);
  struct sigaction old;
  char *line = NULL;
  int got;
  catch_sigint(&old);
#ifdef MPLUA_READLINE
  if (editing)
    got = edit_read(prompt, &line);
  else
#endif
    got = plain_read(prompt, &line);
  release_sigint(&old);
  lua_pop(L, 1); /* the prompt */
  if (got != GOT_LINE)
    return got;
  if (firstline && line[0] == '=') /* "=expr" means "return expr" (5.3) */
    lua_pushfstring(L, "return %s", line + 1);
  else
    lua_pushstring(L, line);
#ifdef MPLUA_READLINE
  if (editing)
    free(line);
#endif
  return GOT_LINE;
}

/* }================================================================== */


/*
** {==================================================================
** Loading a chunk from one or more lines
** ===================================================================
*/

/* Text only: a typed line starting with ESC (an arrow key without readline)
** must not be taken for a binary chunk. */
static int loadtext(lua_State *L, const char *s, size_t len) {
  return luaL_loadbufferx(L, s, len, CHUNKNAME, "t");
}

/* A syntax error at "<eof>" means the chunk is unfinished; pop it then. */
static int incomplete(lua_State *L, int status) {
  if (status == LUA_ERRSYNTAX) {
    size_t lmsg;
    const char *msg = lua_tolstring(L, -1, &lmsg);
    if (msg != NULL && lmsg >= MARKLEN &&
        strcmp(msg + lmsg - MARKLEN, EOFMARK) == 0) {
      lua_pop(L, 1);
      return 1;
    }
  }
  return 0;
}

/* Try the line on top as `return <line>;`. On success the compiled chunk
** replaces the line's copy (the line stays below it). */
static int addreturn(lua_State *L) {
  const char *line = lua_tostring(L, -1);
  const char *retline = lua_pushfstring(L, "return %s;", line);
  int status = loadtext(L, retline, strlen(retline));
  if (status == LUA_OK) {
    lua_remove(L, -2); /* the modified line */
    save_line(line);
  }
  else
    lua_pop(L, 2); /* the error and the modified line */
  return status;
}

/* Compile the line at index 1 as a statement, reading continuation lines
** while it is unfinished. Pushes the chunk or the error; returns the status,
** or GOT_INTR (nothing pushed) when Ctrl-C abandons it. */
static int multiline(lua_State *L) {
  for (;;) {
    size_t len;
    const char *chunk = lua_tolstring(L, 1, &len);
    int status = loadtext(L, chunk, len);
    int got;
    if (!incomplete(L, status)) {
      save_line(chunk);
      return status;
    }
    got = pushline(L, 0);
    if (got == GOT_INTR)
      return GOT_INTR;
    if (got == GOT_EOF) { /* report the unfinished chunk, as lua does */
      save_line(chunk);
      return loadtext(L, chunk, len);
    }
    lua_pushliteral(L, "\n"); /* join: chunk .. "\n" .. line */
    lua_insert(L, -2);
    lua_concat(L, 3);
  }
}

/* Leave exactly one value on an empty stack: the compiled chunk or an error
** message. Returns its status, GOT_EOF or GOT_INTR (empty stack then). */
static int loadline(lua_State *L) {
  int status;
  lua_settop(L, 0);
  status = pushline(L, 1);
  if (status != GOT_LINE)
    return status;
  if ((status = addreturn(L)) != LUA_OK)
    status = multiline(L);
  if (status == GOT_INTR)
    lua_settop(L, 0);
  else
    lua_remove(L, 1); /* the source line */
  return status;
}

/* }================================================================== */


/* Print every value on the stack with the global `print`, as lua does. */
static void print_results(lua_State *L) {
  int n = lua_gettop(L);
  if (n == 0)
    return;
  luaL_checkstack(L, LUA_MINSTACK, "too many results to print");
  show_pretty_values(L, n); /* tables as their contents */
  lua_getglobal(L, "print");
  lua_insert(L, 1);
  if (lua_pcall(L, n, 0, 0) != LUA_OK) {
    lua_pushfstring(L, "error calling 'print' (%s)", mplua_errmsg(L, -1));
    mplua_report(L, LUA_ERRRUN);
  }
}

#ifdef MPLUA_READLINE
/* Tab's completions, from this state (readline's completion hook takes no
** context: one prompt per process). */
static lua_State *repl_state;
static char *complete_here(const char *q, size_t n, size_t *alen) {
  return show_answer(repl_state, q, n, alen);
}
#endif

/* The loop, run as a protected C function: returns the exit status. */
static int repl_main(lua_State *L) {
  int status;
  show_open(L, NULL);
  link_on_query(show_serve_query, L); /* the front end's Tab */
#ifdef MPLUA_READLINE
  editing = isatty(STDIN_FILENO);
  if (editing) {
    rl_readline_name = "mplua"; /* for $if mplua in ~/.inputrc */
    repl_state = L;
    complete_rl_init(complete_here);
    using_history();
  }
#endif
  while ((status = loadline(L)) != GOT_EOF) {
    if (status == GOT_INTR) /* the reader has moved to a new line */
      continue;
    if (status == LUA_OK) { /* mp.connect routes chunks to another rank */
      mplua_interrupt_clear(); /* pressed between commands: for none */
      if (link_interrupted()) /* pressed right after this command's line */
        mplua_interrupt();
      status = mplua_target(L) ? mplua_remote(L) : mplua_docall(L, 0, LUA_MULTRET);
    }
    if (status == LUA_OK)
      print_results(L);
    else
      mplua_report(L, status);
    lua_settop(L, 0);
  }
  lua_settop(L, 0);
#ifdef MPLUA_READLINE
  if (!editing || !readline_ended_line())
#endif
    new_line(); /* leave the shell's prompt on a line of its own */
  lua_pushinteger(L, 0);
  return 1;
}

/* Under mpiexec, stdout and stderr are two pipes that hydra reads apart:
** send stderr to stdout's pipe while the prompt runs. Returns a copy of the
** real stderr to put back, or -1 when they already share a file (a
** terminal, the front end's socket) or either is a file of the user's. */
static int join_stderr(void) {
  struct stat o, e;
  int saved;
  if (fstat(STDOUT_FILENO, &o) != 0 || fstat(STDERR_FILENO, &e) != 0)
    return -1;
  if (!(S_ISFIFO(o.st_mode) || S_ISSOCK(o.st_mode)) ||
      !(S_ISFIFO(e.st_mode) || S_ISSOCK(e.st_mode)) ||
      (o.st_dev == e.st_dev && o.st_ino == e.st_ino))
    return -1;
  fflush(stderr);
  saved = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
  if (saved >= 0 && dup2(STDOUT_FILENO, STDERR_FILENO) < 0) {
    close(saved);
    return -1;
  }
  return saved;
}

static void part_stderr(int saved) {
  if (saved < 0)
    return;
  fflush(stderr);
  dup2(saved, STDERR_FILENO);
  close(saved);
}

int mplua_repl(lua_State *L) {
  int status;
  int saved_stderr = join_stderr();
  mplua_set_interactive(L, 1);
  lua_pushcfunction(L, repl_main);
  status = lua_pcall(L, 0, 1, 0);
  mplua_set_interactive(L, 0);
  part_stderr(saved_stderr);
  free(plain_buf);
  plain_buf = NULL;
  plain_cap = 0;
  if (status != LUA_OK) { /* an error outside any chunk, e.g. in _PROMPT */
    mplua_report(L, status);
    return 1;
  }
  status = (int)lua_tointeger(L, -1);
  lua_pop(L, 1);
  return status;
}
