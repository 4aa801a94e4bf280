/* SPDX-License-Identifier: MIT */
/*
** MPI-IO's nonblocking calls as user requests (mp.mpi.File's methods):
**
**   req = f:Iwrite_at(offset, a)      req = f:Iread_at(offset, count | a [, dtype])
**   req = f:Iwrite(a)                 req = f:Iread(...)
**   req = f:Iwrite_shared(a)          req = f:Iread_shared(...)
**   req = f:Iwrite_at_all(offset, a)  req = f:Iread_at_all(...)
**   req = f:Iwrite_all(a)             req = f:Iread_all(...)
**
** MPI_File_iwrite_at, ... (their large-count forms). The request is an
** mp.mpi.Request and mixes with the others in every Wait/Test call
** (mpi_req.c asks mpb_mpi_fio_done); a read's Wait gives the array and a
** status whose count is the elements read, as Recv's; a write's gives
** nothing, as Isend's.
**
** The collective ones agree first (every member makes the same call), start
** MPI's, then agree again: every member has started it before any returns,
** so a fault before the Wait finds every member's part started, and the
** abort protocol's MPI_Wait completes it on every member (ROMIO's requests
** can be neither cancelled nor abandoned). They complete by MPI's progress
** alone (every rank drives it in its waits), so a wait for them is not
** described to the deadlock detector: the rank counts as running, as for
** one-sided requests; testing one wakes the other members now and then.
**
** The file keeps its requests until they are waited (f->ireqs), each
** anchored in the registry while it is there (so neither it nor its array is
** collected while MPI uses the array): the task's end completes them before
** closing (in the one wait; after an abort with MPI_Wait) and lets them go;
** Close and Set_view with one that MPI has not completed are errors, as MPI
** says. The count of a read (and its conversion from external32) is made
** when MPI completes it, without Lua, so a read complete but not yet waited
** survives its file's Close.
*/
#include <string.h>

#include "chan/wake.h"
#include "mpi/mpi_file.h"

typedef mpb_mfile mfile;

typedef struct mpb_fileireq {
  mpb_mpireq base;      /* kind MPB_RQ_FILE; user value 1: the communicator */
  MPI_Request req;      /* MPI_REQUEST_NULL once MPI completed it */
  MPI_Status status;
  mfile *f;             /* the file, while it keeps the request (NULL: let go) */
  struct mpb_fileireq *next;
  const mpb_array *a;
  MPI_Offset start;     /* a read: the etype it starts at */
  MPI_Count got;        /* a read: the elements read */
  const char *what;     /* the words of its error */
  const char *call;     /* "mpi.File.Iwrite_at", ... (static) */
  int write, coll, rc;
  int self;             /* registry: the request, while its file keeps it */
  int aref;             /* registry: what MPI reads or fills (LUA_NOREF: none) */
  double woke;
} fireq;

/* The file lets q go (q stays usable: its array is in aref). */
static void unlink_req(lua_State *L, fireq *q) {
  if (!q->f) return;
  for (fireq **p = &q->f->ireqs; *p; p = &(*p)->next)
    if (*p == q) {
      *p = q->next;
      break;
    }
  q->next = NULL;
  q->f = NULL;
  luaL_unref(L, LUA_REGISTRYINDEX, q->self);
  q->self = LUA_NOREF;
}

/* MPI completed q (rc its code): a read's count. No Lua. */
static void settle(fireq *q, int rc) {
  q->req = MPI_REQUEST_NULL;
  q->what = q->write ? "cannot write" : "cannot read";
  if (!q->write && rc == MPI_SUCCESS)
    rc = mpb_mfile_rcount(q->f, rc, q->a, &q->status, q->coll, q->start, &q->got, &q->what);
  q->rc = rc;
}

static int test_one(fireq *q) {
  if (q->req == MPI_REQUEST_NULL) return 1;
  int flag = 0, rc = MPI_Test(&q->req, &flag, &q->status);
  if (rc != MPI_SUCCESS) flag = 1;
  if (flag) settle(q, rc);
  return flag;
}

int mpb_mpi_fio_done(mpb_mpi *M, mpb_mpireq *r) {
  fireq *q = (fireq *)r;
  if (test_one(q)) return 1;
  double now = mpb_now();
  if (q->coll && now - q->woke > 1e-3) { /* their progress completes it, and I/O wakes no one */
    q->woke = now;
    for (int k = 0; k < q->f->c->size; k++)
      if (q->f->c->ranks[k] != M->st->rank) mpb_wake(M->st, q->f->c->ranks[k], 0);
  }
  return 0;
}

int mpb_mpi_fio_push(lua_State *L, mpb_mpi *M, mpb_mpireq *r, const char *fname) {
  fireq *q = (fireq *)r;
  mpb_state *st = M->st;
  const char *path = q->f ? q->f->path : "the file";
  if (q->rc != MPI_SUCCESS) {
    const char *msg = mpb_file_message(L, q->rc, q->what, path);
    unlink_req(L, q);
    luaL_error(L, "mp.%s: " MPB_RANKFMT " %s (%s)", fname, st->rank, st->size, msg, q->call);
  }
  unlink_req(L, q);
  int aref = q->aref;
  q->aref = LUA_NOREF;
  if (q->write) {
    luaL_unref(L, LUA_REGISTRYINDEX, aref);
    return 0;
  }
  lua_rawgeti(L, LUA_REGISTRYINDEX, aref);
  luaL_unref(L, LUA_REGISTRYINDEX, aref);
  mpb_mpi_push_count(L, (lua_Integer)q->got);
  return 2;
}

void mpb_mpi_fio_forget(lua_State *L, mpb_mpireq *r) {
  fireq *q = (fireq *)r; /* collected: its file let it go */
  luaL_unref(L, LUA_REGISTRYINDEX, q->aref);
  q->aref = LUA_NOREF;
}

int mpb_mfile_ireq_pending(mfile *f) {
  int n = 0;
  for (fireq *q = f->ireqs; q; q = q->next) n += !test_one(q);
  return n;
}

int mpb_mfile_ireq_finish(lua_State *L, mfile *f, int aborted) {
  int rc = MPI_SUCCESS;
  while (f->ireqs) {
    fireq *q = f->ireqs;
    if (q->req != MPI_REQUEST_NULL) {
      int rc2 = aborted ? MPI_Wait(&q->req, &q->status) : mpb_file_wait(L, &q->req, 1, &q->status);
      settle(q, rc2);
      if (rc == MPI_SUCCESS) rc = rc2;
    }
    unlink_req(L, q);
  }
  return rc;
}

/* f:Iwrite_at(offset, a), ...: check, start (a collective call between two
** agreements), push the request. */
static int istart(lua_State *L, int how, int write, const char *fn) {
  mpb_state *st = mpb_get(L);
  MPB_MPI_REGION(L, st, fn);
  mfile *f = mpb_mfile_check(L, fn);
  mpb_mfile_io io;
  mpb_mfile_args(L, f, how, write, fn, &io);
  int coll = how == MPB_IO_AT_ALL || how == MPB_IO_ALL;
  lua_getfield(L, LUA_REGISTRYINDEX, "mp.mpi.state");
  mpb_mpi *M = lua_touserdata(L, -1);
  lua_getiuservalue(L, 1, 1); /* the file's communicator */
  fireq *q = (fireq *)mpb_mpi_req_new(L, M, f->c, lua_gettop(L), MPB_RQ_FILE, sizeof *q, 1);
  q->req = MPI_REQUEST_NULL;
  q->self = q->aref = LUA_NOREF;
  q->a = io.a;
  q->call = fn;
  q->write = write;
  q->coll = coll;
  q->base.peer = -1;
  q->base.tag = -1;
  int ridx = lua_gettop(L);
  int rc = mpb_mfile_io_start(L, f, how, write, fn, &io, &q->req);
  if (rc != MPI_SUCCESS && !coll) mpb_mfile_raise(L, f, fn, rc, write ? "cannot write" : "cannot read");
  q->start = io.start;
  lua_pushvalue(L, io.out);
  q->aref = luaL_ref(L, LUA_REGISTRYINDEX);
  lua_pushvalue(L, ridx);
  q->self = luaL_ref(L, LUA_REGISTRYINDEX);
  q->f = f;
  fireq **p = &f->ireqs; /* in starting order: the task's end completes the oldest first */
  while (*p) p = &(*p)->next;
  *p = q;
  if (coll) mpb_mfile_agree(L, f, fn, strrchr(fn, '.') + 1, 1);
  /* a collective call that failed here kept its stand-in, which the abort
  ** that this error brings completes on every member with the others' parts */
  if (rc != MPI_SUCCESS) mpb_mfile_raise(L, f, fn, rc, write ? "cannot write" : "cannot read");
  lua_settop(L, ridx);
  return 1;
}

#define IO(name, how, write) \
  static int name(lua_State *L) { return istart(L, how, write, "mpi.File." #name); }
IO(Iwrite_at, MPB_IO_AT, 1)
IO(Iread_at, MPB_IO_AT, 0)
IO(Iwrite, MPB_IO_IND, 1)
IO(Iread, MPB_IO_IND, 0)
IO(Iwrite_shared, MPB_IO_SHARED, 1)
IO(Iread_shared, MPB_IO_SHARED, 0)
IO(Iwrite_at_all, MPB_IO_AT_ALL, 1)
IO(Iread_at_all, MPB_IO_AT_ALL, 0)
IO(Iwrite_all, MPB_IO_ALL, 1)
IO(Iread_all, MPB_IO_ALL, 0)

void mpb_mpi_fileireq_methods(lua_State *L) {
  static const luaL_Reg m[] = {
      {"Iwrite_at", Iwrite_at}, {"Iread_at", Iread_at}, {"Iwrite", Iwrite}, {"Iread", Iread},
      {"Iwrite_shared", Iwrite_shared}, {"Iread_shared", Iread_shared},
      {"Iwrite_at_all", Iwrite_at_all}, {"Iread_at_all", Iread_at_all},
      {"Iwrite_all", Iwrite_all}, {"Iread_all", Iread_all}, {NULL, NULL}};
  luaL_setfuncs(L, m, 0);
}
