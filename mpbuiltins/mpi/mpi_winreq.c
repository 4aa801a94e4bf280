/* SPDX-License-Identifier: MIT */
/*
** Windows' request-based operations as user requests (README "One-sided"):
**
**   req = win:Rput(a, rank, disp)        req = win:Rget(rank, disp, count | out)
**   req = win:Raccumulate(a, rank, disp, op)
**   req = win:Rget_accumulate(a, rank, disp, op [, out])
**
** MPI_Rput, MPI_Rget, MPI_Raccumulate, MPI_Rget_accumulate under a lock on the target (MPI
** allows them in passive-target epochs only). The request is an
** mp.mpi.Request and mixes with the others in every Wait/Test call
** (mpi_req.c asks mpb_mpi_rma_done); it completes when MPI's does: locally
** (a's elements may change again; Rget's and Rget_accumulate's array holds
** the data, and its Wait gives it); Flush or Unlock complete the operation at the target. Testing
** it wakes the target now and then, since its progress completes the
** operation and RMA wakes no one; a wait for it is not described to the
** deadlock detector (nothing but progress is missing: the rank counts as
** running), as the window's own requests.
**
** The window keeps its users' pending requests: freeing it (Free, the
** task's end, the abort protocol) completes them first, so MPI never holds a
** request of a freed window; a request dropped while pending is handed to
** MPI (MPI_Request_free: Flush, Unlock or Free completes its operation), and
** its array stays pending on the window until the epoch ends.
*/
#include <stdlib.h>

#include "chan/wake.h"
#include "mpi/mpi_win.h"

typedef struct mpb_winreq {
  mpb_mpireq base;              /* kind MPB_RQ_RMA; user value 2: the array */
  MPI_Request req;              /* MPI_REQUEST_NULL once complete */
  mpb_win *w;                   /* NULL once complete or handed over */
  struct mpb_winreq *prev, *next; /* w's pending requests */
  int target, get, rc;
  int aref;                     /* registry: Rget's array (LUA_NOREF: none) */
  double woke;
} winreq;

static void unlink_req(winreq *q) {
  if (q->prev) q->prev->next = q->next;
  else if (q->w) q->w->ureqs = q->next;
  if (q->next) q->next->prev = q->prev;
  q->prev = q->next = NULL;
  q->w = NULL;
}

int mpb_mpi_rma_done(mpb_mpi *M, mpb_mpireq *r) {
  winreq *q = (winreq *)r;
  if (q->req == MPI_REQUEST_NULL) return 1;
  int flag = 0;
  q->rc = MPI_Test(&q->req, &flag, MPI_STATUS_IGNORE);
  if (q->rc != MPI_SUCCESS) flag = 1;
  if (flag) {
    unlink_req(q);
    return 1;
  }
  double now = mpb_now();
  if (q->w && now - q->woke > 1e-3) q->woke = now, mpb_win_wake(M->st, q->w, q->target);
  return 0;
}

int mpb_mpi_rma_push(lua_State *L, mpb_mpi *M, mpb_mpireq *r, const char *fname) {
  winreq *q = (winreq *)r;
  int rc = q->rc;
  q->rc = MPI_SUCCESS;
  int aref = q->aref;
  q->aref = LUA_NOREF;
  if (aref != LUA_NOREF) lua_rawgeti(L, LUA_REGISTRYINDEX, aref);
  luaL_unref(L, LUA_REGISTRYINDEX, aref);
  if (rc != MPI_SUCCESS) mpb_win_fail(L, M->st, fname, rc, "the one-sided operation");
  return aref != LUA_NOREF;
}

void mpb_mpi_rma_forget(lua_State *L, mpb_mpireq *r) {
  winreq *q = (winreq *)r;
  if (q->req != MPI_REQUEST_NULL) MPI_Request_free(&q->req);
  unlink_req(q);
  luaL_unref(L, LUA_REGISTRYINDEX, q->aref);
  q->aref = LUA_NOREF;
}

int mpb_winreq_close(mpb_win *w) {
  int rc = MPI_SUCCESS;
  while (w->ureqs) {
    winreq *q = w->ureqs;
    int rc2 = MPI_Wait(&q->req, MPI_STATUS_IGNORE);
    if (rc == MPI_SUCCESS) rc = rc2;
    unlink_req(q);
  }
  return rc;
}

/* Rput, Rget, Raccumulate: the operation (checked and issued by mpi_win.c),
** then its request (pushed). */
static int issue(lua_State *L, int op, const char *fname) {
  MPI_Request mreq = MPI_REQUEST_NULL;
  int got = op == MPB_RMA_GACC ? mpb_win_getacc(L, fname, &mreq)
                               : mpb_win_rma(L, op, fname, &mreq);
  int aidx = got ? lua_gettop(L) : 0;
  mpb_win *w = *(mpb_win **)lua_touserdata(L, 1);
  lua_getfield(L, LUA_REGISTRYINDEX, "mp.mpi.state");
  mpb_mpi *M = lua_touserdata(L, -1);
  lua_rawgeti(L, LUA_REGISTRYINDEX, w->ref[0]); /* the window's communicator */
  winreq *q = (winreq *)mpb_mpi_req_new(L, M, w->c, lua_gettop(L), MPB_RQ_RMA, sizeof *q, 1);
  q->req = mreq;
  q->target = (int)lua_tointeger(L, op == MPB_RMA_GET ? 2 : 3);
  q->base.peer = q->target;
  q->base.tag = -1;
  q->get = op == MPB_RMA_GET || op == MPB_RMA_GACC;
  q->aref = LUA_NOREF;
  q->w = w;
  q->next = w->ureqs;
  if (w->ureqs) w->ureqs->prev = q;
  w->ureqs = q;
  if (aidx) {
    lua_pushvalue(L, aidx);
    q->aref = luaL_ref(L, LUA_REGISTRYINDEX);
  }
  return 1;
}

/* win:Rput(a, rank, disp) -> request */
static int Rput(lua_State *L) { return issue(L, MPB_RMA_PUT, "mpi.Rput"); }
/* win:Rget(rank, disp, count | out) -> request (its Wait gives the array) */
static int Rget(lua_State *L) { return issue(L, MPB_RMA_GET, "mpi.Rget"); }
/* win:Raccumulate(a, rank, disp, op) -> request */
static int Raccumulate(lua_State *L) { return issue(L, MPB_RMA_ACC, "mpi.Raccumulate"); }
/* win:Rget_accumulate(a, rank, disp, op [, out]) -> request (its Wait gives the old values) */
static int Rget_accumulate(lua_State *L) {
  return issue(L, MPB_RMA_GACC, "mpi.Rget_accumulate");
}

void mpb_winreq_methods(lua_State *L) {
  static const luaL_Reg methods[] = {
      {"Rput", Rput}, {"Rget", Rget}, {"Raccumulate", Raccumulate},
      {"Rget_accumulate", Rget_accumulate}, {NULL, NULL}};
  luaL_setfuncs(L, methods, 0);
}
