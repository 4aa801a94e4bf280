/* SPDX-License-Identifier: MIT */
/*
** The per-state runtime: finding it, the clock, and how failures become
** errors (its life cycle is start.c's).
**
** The state lives in the registry (its __gc finalizes MPI); a pointer to it
** sits in the lua_State's extra space, copied into every coroutine, so the
** hot path finds it without a lookup.
*/
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>

#include "chan/state.h"

void mpb_get_failed(lua_State *L) {
  luaL_error(L, "mp: the runtime is not started (mplua_open)");
}

mpb_state *mpb_find(lua_State *L) {
  lua_getfield(L, LUA_REGISTRYINDEX, MPB_STATE_KEY);
  mpb_state *st = lua_touserdata(L, -1);
  lua_pop(L, 1);
  return st && st->L ? st : NULL;
}

double mpb_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* The runtime's own Lua (chunks named "=mp....": mp.mpi's collectives and
** topologies over mp's, mp.pmap's glue) is skipped: a wait inside it is
** placed at the user's line that called it (or at its own line when no
** user's line is on the stack). */
void mpb_lua_line(lua_State *L, char *buf, size_t n) {
  lua_Debug ar;
  buf[0] = '\0';
  for (int level = 0; L && lua_getstack(L, level, &ar); level++)
    if (lua_getinfo(L, "Sl", &ar) && ar.currentline > 0) {
      int own = strncmp(ar.source, "=mp.", 4) == 0;
      if (own && buf[0]) continue;
      snprintf(buf, n, "%s:%d", ar.short_src, ar.currentline);
      if (!own) return;
    }
}

/* ------------------------------------------------------------ failures */
void mpb_mpi_string(int rc, char *out, size_t n) {
  char s[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(rc, s, &len) != MPI_SUCCESS || len <= 0) {
    snprintf(out, n, "MPI error %d", rc);
    return;
  }
  snprintf(out, n, "%.*s", len, s);
}

int mpb_mpi_raise(lua_State *L, mpb_state *st, int rc, const char *fname, const char *what) {
  char s[MPB_ERRLEN];
  mpb_mpi_string(rc, s, sizeof s);
  return luaL_error(L, "mp.%s: " MPB_RANKFMT " %s: %s", fname, st->rank, st->size, what, s);
}

int mpb_mpi_note(mpb_state *st, int rc, const char *what) {
  if (rc != MPI_SUCCESS) {
    char s[MPB_ERRLEN / 2];
    mpb_mpi_string(rc, s, sizeof s);
    mpb_note(st, "%.100s: %s", what, s);
  }
  return rc;
}

void mpb_note(mpb_state *st, const char *fmt, ...) {
  if (st->mpi_err[0] != '\0') return; /* the first one is raised */
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(st->mpi_err, sizeof st->mpi_err, fmt, ap);
  va_end(ap);
}

/* The registry keeps the last error of each kind raised. */
static const char *const kind_keys[] = {NULL, "mp.error.own", "mp.error.echo"};

int mpb_raise_as(lua_State *L, int kind, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  lua_pushvfstring(L, fmt, ap);
  va_end(ap);
  lua_pushvalue(L, -1);
  lua_setfield(L, LUA_REGISTRYINDEX, kind_keys[kind]);
  return lua_error(L);
}

int mpb_error_kind(lua_State *L, int idx) {
  idx = lua_absindex(L, idx);
  if (lua_type(L, idx) != LUA_TSTRING) return 0;
  for (int kind = MPB_ERR_OWN; kind <= MPB_ERR_ECHO; kind++) {
    lua_getfield(L, LUA_REGISTRYINDEX, kind_keys[kind]);
    int same = lua_rawequal(L, idx, -1);
    lua_pop(L, 1);
    if (same) return kind;
  }
  return 0;
}

/* MPICH's launcher can end the job on MPI_Abort before its proxy has read
** what this rank wrote to its stdout and stderr pipes just before, and the
** report of why the job ends is then lost (on a loaded host). So wait until the pipes are empty (bounded: a reader that is gone
** never empties them). */
void mpb_abort_job(MPI_Comm comm, int status) {
  fflush(stdout);
  fflush(stderr);
  for (int fd = 1; fd <= 2; fd++) {
    struct stat sb;
    if (fstat(fd, &sb) != 0 || !S_ISFIFO(sb.st_mode)) continue;
    for (int i = 0; i < 2000; i++) { /* 2 s at most */
      int unread = 0;
      if (ioctl(fd, FIONREAD, &unread) != 0 || unread <= 0) break;
      nanosleep(&(struct timespec){0, 1000000L}, NULL);
    }
  }
  MPI_Abort(comm, status);
  abort(); /* MPI_Abort does not return; if it did, nothing sane remains */
}

int mpb_mpi_warn(mpb_state *st, int rc, const char *what) {
  if (rc != MPI_SUCCESS) {
    char s[MPB_ERRLEN / 2];
    mpb_mpi_string(rc, s, sizeof s);
    fflush(stdout);
    fprintf(stderr, "mplua: " MPB_RANKFMT " %s: %s\n", st->rank, st->size, what, s);
    fflush(stderr);
  }
  return rc;
}

void mpb_fatal_mpi(mpb_state *st, int rc, const char *what) {
  char s[MPB_ERRLEN / 2];
  mpb_mpi_string(rc, s, sizeof s);
  mpb_fatal(st, "%.100s: %s", what, s);
}

void mpb_fatal(mpb_state *st, const char *fmt, ...) {
  char msg[MPB_ERRLEN];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  fflush(stdout);
  fprintf(stderr, "mplua: " MPB_RANKFMT " %s: ending the job\n", st->rank, st->size, msg);
  /* Most often a rank has died (MPI fails towards it): the process manager
  ** is then ending the job itself, and its report names the rank that died
  ** and its signal, where ours names the peer we failed to reach (perhaps
  ** one it already killed). It gets a second to come first. */
  struct timespec left = {1, 0};
  while (nanosleep(&left, &left) != 0 && errno == EINTR) {}
  mpb_abort_job(st->base, 1);
}

void mpb_warn(lua_State *L, const char *fmt, ...) {
  mpb_state *st = mpb_get(L);
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (st->host.warn) st->host.warn(L, msg, st->host.ud);
  else lua_warning(L, msg, 0);
}

