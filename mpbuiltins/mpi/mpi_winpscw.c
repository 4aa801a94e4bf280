/* SPDX-License-Identifier: MIT */
/*
** Generalized active target synchronization, built by mplua (README
** "One-sided"), never MPI_Win_post/start/complete/wait:
**
**   win:Post(group [, assert])   win:Start(group [, assert])
**   win:Complete()               win:Wait()      win:Test()
**
** MPICH waits in MPI_Win_start (or in the first operation) until the
** targets have posted, and in MPI_Win_wait until the origins have
** completed: a rank blocked there sees no abort and honours no Ctrl-C. As
** with locks (mpi_winlock.c), every window runs in one passive-target epoch
** underneath, MPI_Win_lock_all(MPI_MODE_NOCHECK), and the synchronization is
** mplua's, by messages on MPB_CH_RMA handled in the arrival hook:
**   - Post: MPI_Win_sync (this rank's stores are in its public copy), then
**     a POST message to each origin of the group; it waits for nothing;
**   - Start: waits in the one wait until a POST from each target of the
**     group has come (described to the deadlock detector as
**     mpi.Win_start(rank r), r the first one missing), and takes them;
**   - Complete: this rank's operations to each target complete here and
**     there (their requests in the one wait, MPI_Win_flush), then a
**     COMPLETE message to each target;
**   - Wait: waits in the one wait until a COMPLETE from each origin of the
**     post's group has come (mpi.Win_wait(rank r)), takes them, then
**     MPI_Win_sync (this rank's loads see what the origins wrote); Test does
**     the same without waiting.
** The messages are counted per member, so a Post may come before its Start
** is called (as MPI allows) and epochs follow one another in order. An
** origin's operations complete at the target (MPI_Win_flush) before its
** COMPLETE leaves, so the target sees them when its Wait returns.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chan/arrive.h"
#include "chan/wait.h"
#include "mpi/mpi_win.h"

#define CHECK MPB_WIN_CHECK

int mpb_winpscw_alloc(mpb_win *w) {
  size_t n = (size_t)w->size;
  w->started = calloc(n, sizeof *w->started);
  w->exposed = calloc(n, sizeof *w->exposed);
  w->posts = calloc(n, sizeof *w->posts);
  w->completes = calloc(n, sizeof *w->completes);
  return w->started && w->exposed && w->posts && w->completes;
}

void mpb_winpscw_free(mpb_win *w) {
  free(w->started);
  free(w->exposed);
  free(w->posts);
  free(w->completes);
}

/* The group at 2 as flags per member of w's communicator (into in[]);
** returns how many. */
static int group_arg(lua_State *L, mpb_state *st, mpb_win *w, int *in, const char *fname) {
  if (luaL_getmetafield(L, 2, "__name") == LUA_TNIL || strcmp(lua_tostring(L, -1),
                                                              "mp.mpi.Group") != 0)
    luaL_error(L, "bad argument #2 to 'mp.%s' (" MPB_RANKFMT " group expected (mpi.Comm_group, "
               "mpi.Group_incl, ...), got %s)", fname, st->rank, st->size, luaL_typename(L, 2));
  lua_pop(L, 1);
  lua_getfield(L, 2, "n");
  lua_Integer n = lua_tointeger(L, -1);
  lua_pop(L, 1);
  memset(in, 0, sizeof *in * (size_t)w->size);
  for (lua_Integer i = 1; i <= n; i++) {
    lua_rawgeti(L, 2, i);
    lua_Integer wr = lua_tointeger(L, -1);
    lua_pop(L, 1);
    int r = wr >= 0 && wr < st->size ? mpb_comm_of(w->c, (int)wr) : -1;
    if (r < 0)
      luaL_error(L, "bad argument #2 to 'mp.%s' (" MPB_RANKFMT " rank %I of the group is not a "
                 "member of the window's communicator)", fname, st->rank, st->size,
                 (LUAI_UACINT)wr);
    in[r] = 1;
  }
  return (int)n;
}

/* The group at 2 of Post or Start, as flags per member (pushed; *n: how
** many). They may begin when no fence epoch is open (as Lock). */
static int *epoch_group(lua_State *L, mpb_state *st, mpb_win *w, int *n, const char *fname) {
  int *in = lua_newuserdatauv(L, sizeof *in * (size_t)w->size, 0);
  *n = group_arg(L, st, w, in, fname);
  if (w->fenced && w->nops)
    luaL_error(L, "mp.%s: " MPB_RANKFMT " the window is in a fence epoch (%d operation%s "
               "since the last Fence): end it with Fence(mpi.MODE_NOSUCCEED) first", fname,
               st->rank, st->size, w->nops, w->nops == 1 ? "" : "s");
  w->fenced = 0, w->nops = 0;
  return in;
}

/* A wait for one message (POST or COMPLETE) from each member flagged in
** in[], counted in got[]; its words name the first one missing. */
typedef struct {
  mpb_win *w;
  const int *in, *got;
  const char *fname;
  char desc[64];
  mpb_waitdesc d;
} arrivals;

static int all_came(mpb_state *st, void *ud) {
  (void)st;
  arrivals *x = ud;
  for (int r = 0; r < x->w->size; r++)
    if (x->in[r] && x->got[r] == 0) {
      snprintf(x->desc, sizeof x->desc, "%s(rank %d)", x->fname, r);
      return 0;
    }
  return 1;
}

static void take(mpb_win *w, const int *in, int *got) {
  for (int r = 0; r < w->size; r++)
    if (in[r]) got[r]--;
}

static void wait_all(lua_State *L, mpb_state *st, mpb_win *w, const int *in, const int *got,
                     const char *fname) {
  arrivals x = {w, in, got, fname, "", {NULL, -1, 0, 0, NULL}};
  x.d.op = x.desc;
  if (!all_came(st, &x)) mpb_wait_described(L, st, all_came, &x, &x.d);
}

/* win:Post(group [, assert]): the exposure epoch to the group's origins */
static int Post(lua_State *L) {
  MPB_WIN_ENTER("mpi.Win_post");
  int a = mpb_win_assert(L, st, 3, MPI_MODE_NOSTORE | MPI_MODE_NOPUT,
                         "MODE_NOSTORE, MODE_NOPUT", fname);
  if (w->nexposed)
    luaL_error(L, "mp.%s: " MPB_RANKFMT " an exposure epoch is open (Post): Wait or Test "
               "first", fname, st->rank, st->size);
  int n, *in = epoch_group(L, st, w, &n, fname);
  if (!(a & MPI_MODE_NOSTORE)) CHECK(MPI_Win_sync(w->w), "MPI_Win_sync");
  memcpy(w->exposed, in, sizeof *in * (size_t)w->size);
  w->nexposed = n > 0 ? n : -1; /* an empty group's epoch is open too */
  w->postassert = a;
  for (int r = 0; r < w->size; r++)
    if (in[r]) mpb_win_post(st, w, r, MPB_WOP_POST, NULL, 0);
  return 0;
}

/* win:Start(group [, assert]): the access epoch to the group's targets */
static int Start(lua_State *L) {
  MPB_WIN_ENTER("mpi.Win_start");
  mpb_win_assert(L, st, 3, 0, "none (MODE_NOCHECK is not supported)", fname);
  if (w->nstarted)
    luaL_error(L, "mp.%s: " MPB_RANKFMT " an access epoch is open (Start): Complete first",
               fname, st->rank, st->size);
  if (w->nlocks)
    luaL_error(L, "mp.%s: " MPB_RANKFMT " this rank holds a lock on the window (a "
               "passive-target epoch): Unlock first", fname, st->rank, st->size);
  int n, *in = epoch_group(L, st, w, &n, fname);
  wait_all(L, st, w, in, w->posts, fname);
  take(w, in, w->posts);
  memcpy(w->started, in, sizeof *in * (size_t)w->size);
  w->nstarted = n > 0 ? n : -1;
  return 0;
}

/* win:Complete(): the access epoch's operations complete, the targets told */
static int Complete(lua_State *L) {
  MPB_WIN_ENTER("mpi.Win_complete");
  if (!w->nstarted)
    luaL_error(L, "mp.%s: " MPB_RANKFMT " no access epoch is open: Start first", fname,
               st->rank, st->size);
  for (int r = 0; r < w->size; r++)
    if (w->started[r]) mpb_win_complete(L, st, w, r, fname);
  for (int r = 0; r < w->size; r++)
    if (w->started[r]) mpb_win_post(st, w, r, MPB_WOP_COMPLETE, NULL, 0), w->started[r] = 0;
  w->nstarted = 0;
  if (!w->nlocks) mpb_win_unpend(L, w);
  return 0;
}

/* The exposure epoch ends: the origins' data is what this rank's loads see. */
static void expose_end(lua_State *L, mpb_state *st, mpb_win *w, const char *fname) {
  take(w, w->exposed, w->completes);
  memset(w->exposed, 0, sizeof *w->exposed * (size_t)w->size);
  w->nexposed = 0;
  if (!(w->postassert & MPI_MODE_NOPUT)) CHECK(MPI_Win_sync(w->w), "MPI_Win_sync");
}

static void exposed(lua_State *L, mpb_state *st, mpb_win *w, const char *fname) {
  if (!w->nexposed)
    luaL_error(L, "mp.%s: " MPB_RANKFMT " no exposure epoch is open: Post first", fname,
               st->rank, st->size);
}

/* win:Wait(): every origin of the Post's group has completed */
static int Wait(lua_State *L) {
  MPB_WIN_ENTER("mpi.Win_wait");
  exposed(L, st, w, fname);
  wait_all(L, st, w, w->exposed, w->completes, fname);
  expose_end(L, st, w, fname);
  return 0;
}

/* win:Test() -> whether every origin has completed (then as Wait) */
static int Test(lua_State *L) {
  MPB_WIN_ENTER("mpi.Win_test");
  exposed(L, st, w, fname);
  arrivals x = {w, w->exposed, w->completes, fname, "", {NULL, -1, 0, 0, NULL}};
  int done = all_came(st, &x) || (mpb_poll(st), all_came(st, &x));
  if (!done) mpb_check_abort(L, st);
  else expose_end(L, st, w, fname);
  lua_pushboolean(L, done);
  return 1;
}

void mpb_winpscw_methods(lua_State *L) {
  static const luaL_Reg methods[] = {{"Post", Post}, {"Start", Start}, {"Complete", Complete},
                                     {"Wait", Wait}, {"Test", Test}, {NULL, NULL}};
  luaL_setfuncs(L, methods, 0);
}
