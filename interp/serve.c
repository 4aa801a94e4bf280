/* SPDX-License-Identifier: MIT */
/*
** mplua_serve: the prompt as one step of a host's own loop (mplua.h).
**
** Every rank calls it at the same point of each iteration. Rank 0 must not
** start a task that workers would only see after they have gone on into
** the host's next iteration (and its MPI calls with rank 0: a deadlock), so
** the ranks decide together, ahead of time, at *decision steps* that every
** rank knows in advance. At a decision step every rank completes a
** non-blocking broadcast of two words that rank 0 started at the previous
** decision step: what to do now (run a chunk, input ended, nothing) and how
** many steps until the next decision step (the gap). If there is a chunk,
** rank 0 runs it as the prompt would (one command per step) while the
** workers run the tasks it starts, until rank 0 releases them (then all meet
** in a barrier: see leader_step). Then rank 0 reads what is typed (poll on
** stdin, up to `timeout`) and starts the next broadcast: the decision for the
** next decision step, and the gap after it. Between decision steps a call
** costs a counter decrement.
**
** The gap: 1 after a command, while a command is waiting, and while the host
** asks to wait for input (timeout > 0: a paused host); otherwise it doubles
** at each idle decision step, up to about WINDOW seconds of the host's steps
** at the pace rank 0 measures, and GAP_MAX steps at most. A command typed at
** an idle prompt thus starts within about two windows (2 ms), or one or two
** steps for a host whose steps are slower than that; with nothing typed a
** step costs a broadcast per window (an empty loop: one per GAP_MAX calls).
** A window is counted in steps: if the host's steps suddenly slow down, the
** one in flight lasts longer, once.
**
** The broadcast runs on a private duplicate of the runtime's base
** communicator, made at the first step (collective there too).
*/
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lauxlib.h"
#include "embed.h"
#include "tasks/tasks.h"
#include "mplua.h"

#define F_RUN 1
#define F_END 2
#define RELEASE (INT_MIN + 0x5e7) /* the EXIT status that ends a worker's step */
#define WINDOW 1e-3               /* seconds of host steps between idle decisions */
#define GAP_MAX 1024             /* at most steps in a window (see the README's limits) */

typedef struct serve_state {
  MPI_Comm comm;     /* MPI_COMM_NULL: one rank, no broadcast */
  MPI_Request req;
  int word[2];       /* the broadcast: the flags of the next decision step, the gap after it */
  int started;       /* req is in flight */
  int ended;
  long left;         /* steps until the next decision step (0: this one) */
  int gap;           /* steps from the last decision step to the next */
  double t_last;     /* rank 0: when the last decision step was */
  int eof;           /* rank 0: stdin has ended */
  char *buf;         /* rank 0: text read and not yet run */
  size_t len, cap;
  size_t scan;       /* buf[0..scan) holds no complete chunk */
} serve_state;

static const char SERVE_KEY = 0; /* its address keys the state in the registry */

static int serve_gc(lua_State *L) {
  serve_state *ss = lua_touserdata(L, 1);
  int fin = 0;
  if (ss->comm != MPI_COMM_NULL && MPI_Finalized(&fin) == MPI_SUCCESS && !fin) {
    /* at the end: a failure is said, and nothing else depends on these */
    int rc = ss->started ? MPI_Wait(&ss->req, MPI_STATUS_IGNORE) : MPI_SUCCESS; /* every rank has one */
    if (rc == MPI_SUCCESS) rc = MPI_Comm_free(&ss->comm);
    if (rc != MPI_SUCCESS) {
      char s[MPI_MAX_ERROR_STRING];
      int n = 0;
      if (MPI_Error_string(rc, s, &n) != MPI_SUCCESS) n = 0;
      fprintf(stderr, "mplua_serve: cannot close its communicator: %.*s\n", n, s);
    }
  }
  free(ss->buf);
  ss->buf = NULL;
  return 0;
}

static serve_state *find_serve(lua_State *L) {
  lua_rawgetp(L, LUA_REGISTRYINDEX, &SERVE_KEY);
  serve_state *ss = lua_touserdata(L, -1);
  lua_pop(L, 1);
  return ss;
}

/* The state of the steps, made at the first (pushes nothing); NULL when MPI
** fails (message on stderr). */
static serve_state *get_serve(lua_State *L, mpb_state *st) {
  serve_state *ss = find_serve(L);
  if (ss) return ss;
  ss = lua_newuserdatauv(L, sizeof *ss, 0);
  memset(ss, 0, sizeof *ss);
  ss->comm = MPI_COMM_NULL;
  ss->req = MPI_REQUEST_NULL;
  lua_newtable(L);
  lua_pushcfunction(L, serve_gc);
  lua_setfield(L, -2, "__gc");
  lua_setmetatable(L, -2);
  lua_rawsetp(L, LUA_REGISTRYINDEX, &SERVE_KEY);
  host_note_served(L);
  ss->gap = 1; /* the first call is a decision step (nothing to do), the next one too */
  ss->t_last = mpb_now();
  if (st->use_mpi && st->size > 1 && MPI_Comm_dup(st->base, &ss->comm) != MPI_SUCCESS) {
    fprintf(stderr, "mplua_serve: [rank %d] cannot duplicate the communicator\n", st->rank);
    ss->ended = 1;
    return NULL;
  }
  return ss;
}

/* ------------------------------------------------------------ rank 0 */
/* Read what stdin has ready, waiting up to timeout seconds for something. */
static void read_input(serve_state *ss, double timeout) {
  if (ss->eof) return;
  struct pollfd p = {STDIN_FILENO, POLLIN, 0};
  int ms = timeout <= 0 ? 0 : timeout > 3600 ? 3600000 : (int)(timeout * 1000);
  int r = poll(&p, 1, ms);
  if (r <= 0) return; /* nothing (or EINTR: look again next step) */
  if (ss->cap - ss->len < 4096) {
    size_t cap = ss->cap ? 2 * ss->cap : 8192;
    char *b = realloc(ss->buf, cap);
    if (!b) return;
    ss->buf = b, ss->cap = cap;
  }
  ssize_t n = read(STDIN_FILENO, ss->buf + ss->len, ss->cap - ss->len);
  if (n > 0) ss->len += (size_t)n;
  else if (n == 0 || (errno != EINTR && errno != EAGAIN)) ss->eof = 1;
}

/* A chunk is incomplete when it fails to compile at its end (lua.c). */
static int incomplete(lua_State *L, int status) {
  if (status != LUA_ERRSYNTAX) return 0;
  size_t lmsg;
  const char *msg = lua_tolstring(L, -1, &lmsg);
  return lmsg >= 5 && strcmp(msg + lmsg - 5, "<eof>") == 0;
}

/* Compile text as `return text` (an expression's value is printed), else as
** it is. Leaves the function or the error message. */
static int load_chunk(lua_State *L, const char *text, size_t len) {
  lua_pushliteral(L, "return ");
  lua_pushlstring(L, text, len);
  lua_concat(L, 2);
  int status = luaL_loadbuffer(L, lua_tostring(L, -1), lua_rawlen(L, -1), "=stdin");
  lua_remove(L, -2);
  if (status == LUA_OK) return status;
  lua_pop(L, 1);
  return luaL_loadbuffer(L, text, len, "=stdin");
}

/* Run a compiled chunk as the prompt does: print its results, report its
** error (a fault in a task, or an interrupt, ends the command only). */
static void run_chunk(lua_State *L) {
  int base = lua_gettop(L);
  mplua_interrupt_clear(); /* one pressed between commands belonged to none */
  int status = mplua_docall(L, 0, LUA_MULTRET);
  if (status != LUA_OK) {
    mplua_report(L, status);
    return;
  }
  int n = lua_gettop(L) - base + 1;
  if (n > 0) {
    lua_getglobal(L, "print");
    lua_insert(L, base);
    mplua_report(L, mplua_docall(L, n, 0));
  }
  fflush(stdout);
}

/* Run the first complete chunk of buf (a line, or the lines that complete
** it, as the prompt reads them; at the end of input, what remains): one
** command per step, so the host's loop goes on between typed commands. */
static void run_chunks(lua_State *L, serve_state *ss) {
  size_t pos = 0;
  for (;;) {
    char *nl = memchr(ss->buf + pos, '\n', ss->len - pos);
    size_t end = nl ? (size_t)(nl - ss->buf) + 1 : ss->len;
    if (!nl && !(ss->eof && end > 0)) break;
    int status = load_chunk(L, ss->buf, end);
    pos = end;
    if (status == LUA_OK || !incomplete(L, status) || !nl) {
      if (status == LUA_OK) run_chunk(L);
      else mplua_report(L, status);
      memmove(ss->buf, ss->buf + end, ss->len - end);
      ss->len -= end;
      ss->scan = 0;
      return;
    }
    lua_pop(L, 1); /* incomplete: take the next line too */
  }
  ss->scan = pos;
}

/* The gap after the next decision step (next_flag is its decision; ran: a
** command ran at this one): 1 while commands come, else doubling up to
** about WINDOW seconds of steps at the pace measured since the last one. */
static int next_gap(serve_state *ss, int ran, int next_flag, double timeout) {
  double now = mpb_now(), per = (now - ss->t_last) / ss->gap;
  int old = ss->word[1] > 0 ? ss->word[1] : 1; /* the gap announced last time */
  ss->t_last = now;
  if (ran || next_flag || timeout > 0) return 1;
  double fit = per > 0 ? WINDOW / per : GAP_MAX;
  int g = old < GAP_MAX / 2 ? 2 * old : GAP_MAX;
  if (fit < g) g = fit < 1 ? 1 : (int)fit;
  return g;
}

/* 1: the session has ended, 0: go on, -1: MPI failed. Sets the next word. */
static int leader_step(lua_State *L, mpb_state *st, serve_state *ss, int f, double timeout) {
  if (f & F_RUN) {
    run_chunks(L, ss);
    mpb_task_release(st, RELEASE);
    /* every worker has left its loop before a next task can start: an abort
    ** must never find one still in this step's loop, its release queued
    ** behind the abort, while another has gone back to the host's code */
    if (ss->comm != MPI_COMM_NULL && MPI_Barrier(ss->comm) != MPI_SUCCESS) return -1;
  }
  if (f & F_END) return 1;
  read_input(ss, timeout);
  int more = ss->len > ss->scan && memchr(ss->buf + ss->scan, '\n', ss->len - ss->scan);
  int flag = more || (ss->eof && ss->len > 0) ? F_RUN : ss->eof ? F_END : 0;
  ss->word[1] = next_gap(ss, f & F_RUN, flag, timeout);
  ss->word[0] = flag;
  return 0;
}

/* ----------------------------------------------------------- the step */
int mplua_serve(lua_State *L, double timeout) {
  serve_state *ss = find_serve(L);
  if (ss && ss->left > 0 && !ss->ended) { /* between decision steps */
    ss->left--;
    return 0;
  }
  mpb_state *st = mpb_get(L);
  if (!ss && !(ss = get_serve(L, st))) return -1;
  if (ss->ended) return 1;
  int f = 0, first = !ss->started && ss->word[1] == 0;
  if (ss->comm != MPI_COMM_NULL && ss->started) {
    ss->started = 0;
    if (MPI_Wait(&ss->req, MPI_STATUS_IGNORE) != MPI_SUCCESS) {
      ss->ended = 1;
      return -1;
    }
  }
  if (!first) { /* the word rank 0 set at the last decision step */
    f = ss->word[0];
    ss->gap = ss->word[1];
    ss->left = ss->gap - 1;
  }
  if (st->rank == 0) {
    int r = leader_step(L, st, ss, f, timeout);
    if (r) {
      ss->ended = 1;
      return r;
    }
  } else {
    if (f & F_RUN) {
      int status = mplua_worker(L);
      /* os.exit in a command ended rank 0's process: this one ends with it,
      ** as every rank does in the mplua program (the host's code after the
      ** step would wait for a rank that has gone) */
      if (status != RELEASE) mpb_end_process(L, status, 0);
      st->exit_seen = 0; /* a release, not the job's end */
      if (MPI_Barrier(ss->comm) != MPI_SUCCESS) return -1;
    }
    if (f & F_END) {
      ss->ended = 1;
      return 1;
    }
  }
  if (ss->comm != MPI_COMM_NULL) {
    if (MPI_Ibcast(ss->word, 2, MPI_INT, 0, ss->comm, &ss->req) != MPI_SUCCESS) {
      ss->ended = 1;
      return -1;
    }
    ss->started = 1;
  }
  return 0;
}
