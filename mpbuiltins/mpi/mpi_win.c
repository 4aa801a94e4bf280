/* SPDX-License-Identifier: MIT */
/*
** One-sided communication (README "One-sided"): MPI windows over mp.Array
** memory, with MPI's own RMA underneath.
**
**   win = mpi.Win_create(array [, comm])    win:Put(a, rank, disp)
**   win:Get(rank, disp, count | out)        win:Accumulate(a, rank, disp, op)
**   win:Fence()  win:Lock(rank [, kind])  win:Unlock(rank)  win:Flush(rank)
**   win:Free()
**
** Win_allocate (mpi_winalloc.c), Win_allocate_shared (mpi_winshared.c) and
** Win_create_dynamic (mpi_windyn.c) make theirs with mpb_win_make too.
**
** No call waits for a rank that may not come. Win_create and Free first
** agree through an mplua collective on the window's communicator
** (interruptible, aborted cleanly by a fault; it also exchanges the array
** lengths and checks the dtypes), and only then call MPI's collective
** (MPI_Win_create, MPI_Win_free), which every member now reaches. Every
** access runs in one passive-target epoch, MPI_Win_lock_all(MPI_MODE_NOCHECK),
** opened at creation (it sends and waits for nothing) and closed at Free:
** fences are mplua's (mpi_winfence.c: MPI_Win_flush_all, MPI_Win_sync and an
** mplua barrier, never MPI_Win_fence), and locks are granted by mplua
** (mpi_winlock.c), never waited for in MPI. Under a lock, the operations are
** request-based (MPI_Rput, MPI_Rget, MPI_Raccumulate) and Unlock and Flush
** test them in the one wait (abortable); MPI_Win_flush (and
** MPI_Win_flush_all) then only wait for the remote completion of operations
** whose data has left, which needs the target's MPI progress alone: every
** rank drives it, in its waits, in its count hook while it runs Lua
** (mpb_poll), and in the abort protocol.
**
** Windows belong to their task: its end frees them on every member in
** creation order (an agreement, then MPI_Win_free), and the abort protocol
** frees those left (lock tables cleared first thing, then, when every
** rank has come into the protocol, MPI_Win_unlock_all and MPI_Win_free in
** creation order).
*/
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array/array.h"
#include "chan/class.h"
#include "chan/wake.h"
#include "coll/coll.h"
#include "layout/file_io.h" /* mpb_file_etype: MPI's datatype of a dtype */
#include "mpi/mpi_win.h"
#include "tasks/tasks.h"


typedef mpb_win win;
typedef mpb_wins wins;

static wins *wins_of(mpb_state *st) { return mpb_wins_of(st); }

#define CHECK MPB_WIN_CHECK

/* ------------------------------------------------------------- helpers */

void mpb_win_fail(lua_State *L, mpb_state *st, const char *fname, int rc, const char *what) {
  char s[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(rc, s, &len) != MPI_SUCCESS) snprintf(s, sizeof s, "MPI error %d", rc);
  luaL_error(L, "mp.%s: " MPB_RANKFMT " %s failed: %s", fname, st->rank, st->size, what, s);
}

/* Keep the array at idx alive until the epoch completes it. */
void mpb_win_pend(lua_State *L, win *w, int idx) {
  lua_rawgeti(L, LUA_REGISTRYINDEX, w->ref[2]);
  lua_pushvalue(L, idx);
  lua_rawseti(L, -2, (lua_Integer)lua_rawlen(L, -2) + 1);
  lua_pop(L, 1);
}

void mpb_win_unpend(lua_State *L, win *w) {
  lua_newtable(L);
  lua_rawseti(L, LUA_REGISTRYINDEX, w->ref[2]);
}

MPI_Request *mpb_win_new_req(lua_State *L, mpb_state *st, win *w, int r, const char *fname) {
  if (w->nreq == w->capreq) {
    int cap = w->capreq ? 2 * w->capreq : 8;
    MPI_Request *q = realloc(w->req, sizeof *q * (size_t)cap);
    if (q) w->req = q;
    int *rr = q ? realloc(w->reqrank, sizeof *rr * (size_t)cap) : NULL;
    if (rr) w->reqrank = rr;
    if (!q || !rr) luaL_error(L, "mp.%s: " MPB_RANKFMT " out of memory", fname, st->rank, st->size);
    w->capreq = cap;
  }
  w->reqrank[w->nreq] = r;
  return &w->req[w->nreq++];
}

/* ------------------------------------------------------- the agreement */
typedef struct { int64_t sig, n, off, serial; } vote;

/* Every member's vote on w's comm (an mplua collective: interruptible);
** raises on every member if the signatures differ. */
static void agree(lua_State *L, mpb_state *st, mpb_comm *c, const char *fname, vote mine,
                  vote *all) {
  mpb_coll x = mpb_coll_on(L, st, c, fname, MPB_COLL_WIN);
  mpb_coll_agree(L, &x, &mine, sizeof mine, all);
  static const char *const kinds[] = {"Win_create or Win_allocate", "Win_allocate_shared",
                                      "Win_create_dynamic"};
  for (int r = 0; r < c->size; r++)
    if (all[r].sig >> 8 != mine.sig >> 8)
      luaL_error(L, "mp.%s: " MPB_RANKFMT " rank %d of the communicator makes another kind of "
                 "window (%s), this rank %s", fname, st->rank, st->size, r,
                 kinds[(all[r].sig >> 8) % 3], kinds[(mine.sig >> 8) % 3]);
    else if (all[r].sig != mine.sig)
      luaL_error(L, "mp.%s: " MPB_RANKFMT " rank %d of the communicator calls it with a %s "
                 "array, this rank with %s", fname, st->rank, st->size, r,
                 mpb_dtype_name((int)(all[r].sig & 0xff)), mpb_dtype_name((int)(mine.sig & 0xff)));
}

/* --------------------------------------------------------- completing */
typedef struct { win *w; int r; int rc; double woke; } pending;

void mpb_win_wake(mpb_state *st, win *w, int r) {
  int lo = r >= 0 ? r : 0, hi = r >= 0 ? r : w->size - 1;
  for (int t = lo; t <= hi; t++)
    if (w->c->ranks[t] != st->rank) mpb_wake(st, w->c->ranks[t], 0);
}

/* All request-based operations (to rank r, or all when r < 0) complete?
** If not, the targets are woken now and then: their progress completes
** them, and RMA wakes no one. */
static int reqs_done(mpb_state *st, void *ud) {
  pending *p = ud;
  win *w = p->w;
  for (int i = 0; i < w->nreq; i++) {
    if (p->r >= 0 && w->reqrank[i] != p->r) continue;
    int flag = 0;
    int rc = MPI_Test(&w->req[i], &flag, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS) return p->rc = rc, 1;
    if (!flag) {
      double now = mpb_now();
      if (now - p->woke > 1e-3) p->woke = now, mpb_win_wake(st, w, p->r);
      return 0;
    }
  }
  return 1;
}

static void drop_reqs(win *w, int r) {
  int k = 0;
  for (int i = 0; i < w->nreq; i++)
    if (r >= 0 && w->reqrank[i] != r) w->req[k] = w->req[i], w->reqrank[k++] = w->reqrank[i];
  w->nreq = k;
}

/* Wait in the one wait (abortable) for the operations to r (-1: all): a
** short step, bounded by the targets' progress, so not described to the
** deadlock detector (no message can be in flight for it: the rank counts
** as running). */
void mpb_win_wait_reqs(lua_State *L, mpb_state *st, win *w, int r, const char *fname) {
  pending p = {w, r, MPI_SUCCESS, 0};
  if (!reqs_done(st, &p)) mpb_wait(L, st, reqs_done, &p, MPB_WAIT_HOT | MPB_WAIT_BRIEF);
  if (p.rc != MPI_SUCCESS) mpb_win_fail(L, st, fname, p.rc, "an RMA operation");
  drop_reqs(w, r);
}

void mpb_win_complete(lua_State *L, mpb_state *st, win *w, int r, const char *fname) {
  mpb_win_wait_reqs(L, st, w, r, fname);
  mpb_win_wake(st, w, r);
  if (r >= 0) CHECK(MPI_Win_flush(r, w->w), "MPI_Win_flush");
  else CHECK(MPI_Win_flush_all(w->w), "MPI_Win_flush_all");
}

/* ------------------------------------------------------------ freeing */
/* Close the access the locks use (MPI_Win_lock_all): what is still in
** flight completes first (bounded: the targets' progress). */
static int close_epoch(win *w) {
  int rc = mpb_winreq_close(w);
  for (int i = 0; i < w->nreq; i++)
    if (w->req[i] != MPI_REQUEST_NULL) {
      int rc2 = MPI_Wait(&w->req[i], MPI_STATUS_IGNORE);
      if (rc == MPI_SUCCESS) rc = rc2;
    }
  w->nreq = 0;
  if (w->epoch) {
    int rc2 = MPI_Win_unlock_all(w->w);
    if (rc == MPI_SUCCESS) rc = rc2;
    w->epoch = 0;
  }
  return rc;
}

/* The collective part, every member here: the epoch closed, MPI_Win_free. */
static int destroy(lua_State *L, win *w) {
  int rc = close_epoch(w), rc2;
  if ((rc2 = MPI_Win_free(&w->w)) != MPI_SUCCESS && rc == MPI_SUCCESS) rc = rc2;
  if (w->own_comm && (rc2 = MPI_Comm_free(&w->comm)) != MPI_SUCCESS && rc == MPI_SUCCESS) rc = rc2;
  if (L && (w->allocated || w->kind == MPB_WIN_SHARED)) mpb_winalloc_release(L, w);
  if (L) {
    for (int i = 0; i < 3; i++) luaL_unref(L, LUA_REGISTRYINDEX, w->ref[i]);
    luaL_unref(L, LUA_REGISTRYINDEX, w->xref);
  }
  mpb_windyn_free(w);
  free(w->segat);
  free(w->len);
  free(w->off);
  free(w->serial);
  mpb_winlock_free(w);
  mpb_winpscw_free(w);
  free(w->req);
  free(w->reqrank);
  return rc;
}

/* Take w off the task's list. */
static void unlink_win(wins *ws, win *w) {
  win **p = &ws->head, *prev = NULL;
  while (*p && *p != w) prev = *p, p = &(*p)->next;
  if (*p) *p = w->next;
  if (ws->tail == w) ws->tail = prev;
}

#define HANDLES "mp.mpi.Win.handles" /* registry: light w -> its userdata (weak values) */

/* Clear w's handle, if it still lives: it then says the window is freed. */
static void detach(lua_State *L, win *w) {
  lua_getfield(L, LUA_REGISTRYINDEX, HANDLES);
  lua_rawgetp(L, -1, w);
  win **h = lua_touserdata(L, -1);
  if (h) *h = NULL;
  lua_pop(L, 1);
  lua_pushnil(L);
  lua_rawsetp(L, -2, w);
  lua_pop(L, 1);
}

/* Free w on this rank: its locks released, an agreement of the members,
** the collective part. */
static void free_win(lua_State *L, mpb_state *st, win *w, const char *fname) {
  for (int r = 0; r < w->size && w->nlocks; r++)
    if (w->lock[r]) mpb_win_unlock_one(L, st, w, r, fname);
  vote mine = {w->kind << 8 | w->dtype, 0, 0, 0},
       *all = lua_newuserdatauv(L, sizeof *all * (size_t)w->size, 0);
  agree(L, st, w->c, fname, mine, all);
  lua_pop(L, 1);
  unlink_win(wins_of(st), w);
  detach(L, w);
  int rc = destroy(L, w);
  free(w);
  if (rc != MPI_SUCCESS) mpb_win_fail(L, st, fname, rc, "MPI_Win_free");
}

static void aborted(lua_State *L, mpb_state *st);

/* The task's end: its windows, in creation order (in the abort protocol:
** aborted below). */
static void task_end(lua_State *L, mpb_state *st, int in_abort) {
  if (in_abort) {
    aborted(L, st);
    return;
  }
  wins *ws = wins_of(st);
  while (ws->head) free_win(L, st, ws->head, "mpi.Win_free");
}

/* The abort protocol, first thing: every lock table cleared (no rank waits
** for a lock in MPI: the others' tables are cleared by their own protocol). */
static void on_abort(mpb_state *st) { mpb_winlock_clear_all(st); }

/* The abort protocol, every rank in it: the windows left, in creation order. */
static void aborted(lua_State *L, mpb_state *st) {
  wins *ws = wins_of(st);
  while (ws->head) {
    win *w = ws->head;
    ws->head = w->next;
    detach(L, w);
    int rc = destroy(L, w);
    free(w);
    if (rc != MPI_SUCCESS) mpb_fatal_mpi(st, rc, "cannot free a window in the abort protocol");
  }
  ws->tail = NULL;
}

/* --------------------------------------------------------------- calls */
/* mpi.Win_create(array [, comm]) */
static int Win_create(lua_State *L) {
  mpb_mpi *M = mpb_mpi_get(L);
  const char *fname = "mpi.Win_create";
  mpb_array *a = mpb_win_array(L, M->st, 1, fname);
  lua_settop(L, 2);
  mpb_winspec s = {MPB_WIN_PLAIN, a->dtype, a->n, a->data, 1, NULL};
  return mpb_win_make(L, M, fname, 2, &s);
}

int mpb_win_make(lua_State *L, mpb_mpi *M, const char *fname, int cidx, const mpb_winspec *s) {
  mpb_state *st = M->st;
  MPB_MPI_REGION(L, st, fname);
  mpb_comm *c = mpb_mpi_comm(L, M, cidx, fname);
  if (lua_isnil(L, cidx)) mpb_comm_pushworld(L), lua_replace(L, cidx);
  /* MPICH 4.0 (ch4:ucx) shifts accesses to a base that is not 16-byte
  ** aligned by 8 bytes: the window starts at the aligned address below the
  ** data (displacement unit 1), and every access adds its target's offset */
  uintptr_t base = (uintptr_t)s->data & ~(uintptr_t)15;
  wins *ws = wins_of(st);
  vote mine = {s->kind << 8 | s->dtype, s->n, (int64_t)((uintptr_t)s->data - base),
               ws->serials + 1},
       *all = lua_newuserdatauv(L, sizeof *all * (size_t)c->size, 0);
  agree(L, st, c, fname, mine, all);
  /* everyone is here: MPI's collectives cannot wait for a rank that does not come */
  win *w = calloc(1, sizeof *w);
  if (!w) mpb_fatal(st, "out of memory creating a window"); /* the others are in MPI */
  w->len = malloc(sizeof *w->len * (size_t)c->size);
  w->off = malloc(sizeof *w->off * (size_t)c->size);
  w->serial = malloc(sizeof *w->serial * (size_t)c->size);
  w->c = c, w->dtype = s->dtype, w->size = c->size, w->rank = c->rank, w->kind = s->kind;
  if (!w->len || !w->off || !w->serial || !mpb_winlock_alloc(w) || !mpb_winpscw_alloc(w))
    mpb_fatal(st, "out of memory creating a window");
  for (int r = 0; r < c->size; r++)
    w->len[r] = all[r].n, w->off[r] = all[r].off, w->serial[r] = (int32_t)all[r].serial;
  ws->serials++;
  int rc = mpb_comm_mpi(st, c, &w->comm, &w->own_comm);
  w->esize = (int)mpb_dtype_size(s->dtype);
  MPI_Aint bytes = (MPI_Aint)(s->n * w->esize);
  if (rc == MPI_SUCCESS && s->kind == MPB_WIN_PLAIN)
    rc = MPI_Win_create((void *)base, bytes + (MPI_Aint)mine.off, 1, MPI_INFO_NULL, w->comm,
                        &w->w);
  else if (rc == MPI_SUCCESS && s->kind == MPB_WIN_SHARED)
    rc = MPI_Win_allocate_shared(bytes, 1, MPI_INFO_NULL, w->comm, s->shared, &w->w);
  else if (rc == MPI_SUCCESS)
    rc = MPI_Win_create_dynamic(MPI_INFO_NULL, w->comm, &w->w);
  if (rc == MPI_SUCCESS) rc = MPI_Win_set_errhandler(w->w, MPI_ERRORS_RETURN);
  if (rc == MPI_SUCCESS) rc = MPI_Win_lock_all(MPI_MODE_NOCHECK, w->w);
  if (rc != MPI_SUCCESS) mpb_fatal_mpi(st, rc, "MPI_Win_create failed"); /* collective: no way back */
  w->epoch = 1;
  lua_pushvalue(L, cidx);
  w->ref[0] = luaL_ref(L, LUA_REGISTRYINDEX);
  if (s->aidx) lua_pushvalue(L, s->aidx);
  else lua_pushnil(L);
  w->ref[1] = luaL_ref(L, LUA_REGISTRYINDEX);
  lua_newtable(L);
  w->ref[2] = luaL_ref(L, LUA_REGISTRYINDEX);
  lua_newtable(L);
  w->xref = luaL_ref(L, LUA_REGISTRYINDEX);
  if (ws->tail) ws->tail->next = w;
  else ws->head = w;
  ws->tail = w;
  win **h = lua_newuserdatauv(L, sizeof *h, 0);
  *h = w;
  luaL_setmetatable(L, MPB_WIN_MT);
  lua_getfield(L, LUA_REGISTRYINDEX, HANDLES);
  lua_pushvalue(L, -2);
  lua_rawsetp(L, -2, w);
  lua_pop(L, 1);
  return 1;
}


/* win:Put(a, rank, disp), win:Get(rank, disp, count | out),
** win:Accumulate(a, rank, disp, op); with ureq, their request-based forms
** (Rput, Rget, Raccumulate: a lock on the target needed, the request the
** caller's). Under a lock, the window's own requests are MPI_Rput and
** MPI_Raccumulate, completed by Flush and Unlock; gets are request-based
** in a fence epoch too: MPICH 4.0 (ch4:ucx) may return from
** MPI_Win_flush_all before a large get's data has come, the request's
** completion says it has. Get pushes its array. */
int mpb_win_rma(lua_State *L, int op, const char *fname, MPI_Request *ureq) {
  mpb_state *st = mpb_get(L);
  MPB_MPI_REGION(L, st, fname);
  win *w = mpb_win_check(L, st, fname);
  mpb_array *a;
  int r, vidx = 2;
  if (op == MPB_RMA_GET) {
    r = mpb_win_target(L, st, w, 2, fname);
    if (lua_isinteger(L, 4)) {
      lua_Integer n = lua_tointeger(L, 4);
      if (n < 0 || n > INT32_MAX)
        luaL_error(L, "bad argument #3 to 'mp.%s' (" MPB_RANKFMT " count %I out of range)",
                   fname, st->rank, st->size, (LUAI_UACINT)n);
      int dt = mpb_win_dtype(L, st, w, 3, r, fname);
      lua_settop(L, 4);
      int64_t dims[1] = {n};
      a = mpb_array_new(L, dt, 1, dims);
    } else {
      if (!mpb_array_test(L, 4))
        luaL_error(L, "bad argument #3 to 'mp.%s' (" MPB_RANKFMT " count or contiguous mp.Array "
                   "expected, got %s)", fname, st->rank, st->size, luaL_typename(L, 4));
      lua_settop(L, 4);
      a = mpb_win_data(L, st, w, 4, fname);
      lua_pushvalue(L, 4);
    }
    vidx = 5;
  } else {
    a = mpb_win_data(L, st, w, 2, fname);
    r = mpb_win_target(L, st, w, 3, fname);
  }
  MPI_Aint d = mpb_win_disp(L, st, w, op == MPB_RMA_GET ? 3 : 4, r, a->dtype, a->n, fname);
  MPI_Op mop = op == MPB_RMA_ACC ? mpb_win_op(L, st, a->dtype, 5, fname, 0) : MPI_REPLACE;
  if (ureq) mpb_win_locked(L, st, w, r, fname);
  mpb_win_epoch(L, st, w, r, fname);
  int n = (int)a->n;
  MPI_Datatype t = mpb_file_etype(a->dtype);
  /* every operation has a request the epoch's end waits for before its flush: MPICH's
  ** MPI_Win_flush_all has returned before a large Put or Get had landed */
  MPI_Request *q = ureq ? ureq : mpb_win_new_req(L, st, w, r, fname);
  if (op == MPB_RMA_GET)
    CHECK(MPI_Rget(a->data, n, t, r, d, n, t, w->w, q), "MPI_Rget");
  else if (op == MPB_RMA_PUT)
    CHECK(MPI_Rput(a->data, n, t, r, d, n, t, w->w, q), "MPI_Rput");
  else
    CHECK(MPI_Raccumulate(a->data, n, t, r, d, n, t, mop, w->w, q), "MPI_Raccumulate");
  mpb_win_pend(L, w, vidx);
  return op == MPB_RMA_GET;
}

static int Put(lua_State *L) { return mpb_win_rma(L, MPB_RMA_PUT, "mpi.Put", NULL); }
static int Get(lua_State *L) { return mpb_win_rma(L, MPB_RMA_GET, "mpi.Get", NULL); }
static int Accumulate(lua_State *L) { return mpb_win_rma(L, MPB_RMA_ACC, "mpi.Accumulate", NULL); }

/* win:Free() (collective) */
static int Free(lua_State *L) {
  MPB_WIN_ENTER("mpi.Win_free");
  if (w->nlocks || w->nstarted || w->nexposed)
    luaL_error(L, "mp.%s: " MPB_RANKFMT " %s", fname, st->rank, st->size, w->nlocks
               ? "this rank holds a lock on the window: Unlock first" : w->nstarted
               ? "an access epoch is open (Start): Complete first"
               : "an exposure epoch is open (Post): Wait first");
  free_win(L, st, w, fname);
  return 0;
}

static int win_tostring(lua_State *L) {
  win **h = lua_touserdata(L, 1);
  if (*h && (*h)->kind == MPB_WIN_DYNAMIC)
    lua_pushfstring(L, "mp.mpi.Win(dynamic, %d ranks)", (*h)->size);
  else if (*h) lua_pushfstring(L, "mp.mpi.Win(%s, %I elements here, %d ranks)",
                               mpb_dtype_name((*h)->dtype), (LUAI_UACINT)(*h)->len[(*h)->rank],
                               (*h)->size);
  else lua_pushliteral(L, "mp.mpi.Win(freed)");
  return 1;
}

void mpb_mpi_win_funcs(lua_State *L) {
  mpb_state *st = mpb_get(L);
  wins *ws = lua_newuserdatauv(L, sizeof *ws, 0);
  memset(ws, 0, sizeof *ws);
  lua_setfield(L, LUA_REGISTRYINDEX, "mp.mpi.Win.state");
  st->slot[MPB_SLOT_WIN] = ws;
  mpb_tasks *tk = mpb_tasks_of(st);
  mpb_task_on_end(L, st, task_end);
  tk->on_abort = on_abort;
  ws->halted = -1;
  mpb_winlock_open(st, ws);
  lua_newtable(L);
  lua_newtable(L);
  lua_pushliteral(L, "v");
  lua_setfield(L, -2, "__mode");
  lua_setmetatable(L, -2);
  lua_setfield(L, LUA_REGISTRYINDEX, HANDLES);
  static const luaL_Reg methods[] = {
      {"Put", Put}, {"Get", Get}, {"Accumulate", Accumulate}, {"Free", Free},
      {NULL, NULL}};
  static const luaL_Reg meta[] = {{"__tostring", win_tostring}, {NULL, NULL}};
  mpb_class_begin(L, MPB_WIN_MT, methods);
  mpb_winlock_methods(L);
  mpb_winfence_methods(L);
  mpb_winreq_methods(L);
  mpb_winatomic_methods(L);
  mpb_winpscw_methods(L);
  mpb_winshared_methods(L);
  mpb_windyn_methods(L);
  mpb_class_end(L, NULL, meta);
  lua_getfield(L, LUA_REGISTRYINDEX, "mp.mpi.state"); /* Win_create's upvalue (mpb_mpi_get) */
  lua_pushcclosure(L, Win_create, 1);
  lua_setfield(L, -2, "Win_create");
  mpb_winalloc_funcs(L);
  mpb_winshared_funcs(L);
  mpb_windyn_funcs(L);
  lua_pushliteral(L, "replace");
  lua_setfield(L, -2, "REPLACE");
  lua_pushliteral(L, "no_op");
  lua_setfield(L, -2, "NO_OP");
  static const struct { const char *name; int v; } consts[] = {
      {"MODE_NOCHECK", MPI_MODE_NOCHECK}, {"MODE_NOSTORE", MPI_MODE_NOSTORE},
      {"MODE_NOPUT", MPI_MODE_NOPUT}, {"MODE_NOPRECEDE", MPI_MODE_NOPRECEDE},
      {"MODE_NOSUCCEED", MPI_MODE_NOSUCCEED}, {"LOCK_EXCLUSIVE", MPI_LOCK_EXCLUSIVE},
      {"LOCK_SHARED", MPI_LOCK_SHARED}};
  for (size_t i = 0; i < sizeof consts / sizeof *consts; i++) {
    lua_pushinteger(L, consts[i].v);
    lua_setfield(L, -2, consts[i].name);
  }
}
