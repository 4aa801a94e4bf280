/* SPDX-License-Identifier: MIT */
/*
** Fences built by mplua (README "One-sided"), never MPI_Win_fence:
**
**   win:Fence([assert])    win:Sync()
**
** Every access to a window runs in one passive-target epoch,
** MPI_Win_lock_all(MPI_MODE_NOCHECK), opened at its creation (mpi_win.c).
** A fence is what MPI-3 defines with the calls of that epoch:
**   1. the requests of this rank's gets (and fetching atomics) tested in
**      the one wait, then MPI_Win_flush_all: its operations since the last
**      fence are complete here and at their targets (the targets are woken
**      first: their progress completes them);
**   2. MPI_Win_sync: this rank's own stores into its window reach its
**      public copy before the others may read it;
**   3. an mplua barrier on the window's communicator (dissemination; in
**      the one wait, so a fault, mp.abort or Ctrl-C ends it);
**   4. MPI_Win_sync: what the others wrote before the barrier is what this
**      rank's loads see.
** Nothing issued after the fence can overtake what came before it: every
** rank's earlier operations completed at their targets (1) before any rank
** left the barrier (3). A rank waiting in a fence waits in mplua's barrier,
** napping when ranks outnumber cores, where MPI_Win_fence spins in MPI.
**
** Asserts (MPI's values): MODE_NOSTORE skips step 2, MODE_NOPRECEDE steps 1
** and 4 (and raises if this rank did issue operations since the last fence),
** MODE_NOPUT at this fence skips step 4 at the next one (no update came),
** MODE_NOSUCCEED ends the fence epoch: operations then need a lock, and a
** Lock may begin. MODE_NOPRECEDE and MODE_NOSUCCEED must be given by every
** member or none (checked with the barrier's messages).
*/
#include <string.h>

#include "chan/msg.h"
#include "coll/coll.h"
#include "mpi/mpi_win.h"

#define CHECK MPB_WIN_CHECK

/* The barrier's message: a fence, and the asserts every member must share. */
#define FENCE_SIG 0x66656e6365000000ull
#define SHARED_BITS (MPI_MODE_NOPRECEDE | MPI_MODE_NOSUCCEED)

int mpb_win_assert(lua_State *L, mpb_state *st, int idx, int allowed, const char *names,
                   const char *fname) {
  if (lua_isnoneornil(L, idx)) return 0;
  int ok;
  lua_Integer a = lua_tointegerx(L, idx, &ok);
  if (!ok)
    luaL_error(L, "bad argument #%d to 'mp.%s' (" MPB_RANKFMT " assert expected (%s, combined "
               "with |), got %s)", idx, fname, st->rank, st->size, names,
               luaL_typename(L, idx));
  if (a & ~(lua_Integer)allowed)
    luaL_error(L, "bad argument #%d to 'mp.%s' (" MPB_RANKFMT " assert %I has bits other than "
               "%s)", idx, fname, st->rank, st->size, (LUAI_UACINT)a, names);
  return (int)a;
}

/* A dissemination barrier of ceil(log2 n) rounds on w's communicator. A
** member whose asserts differ is reported once every round is done, so
** every member leaves the barrier alike. */
static void barrier(lua_State *L, mpb_state *st, mpb_win *w, int shared, const char *fname) {
  mpb_coll x = mpb_coll_on(L, st, w->c, fname, MPB_COLL_WIN);
  uint64_t mine = FENCE_SIG | (uint64_t)shared;
  int n = w->size, me = w->rank, other = -1;
  for (int k = 1; k < n; k <<= 1) {
    int from = (me - k + n) % n;
    mpb_coll_send_raw(L, &x, (me + k) % n, &mine, sizeof mine);
    mpb_msg *m = mpb_coll_take(L, &x, from);
    uint64_t got = 0;
    if (m->len == sizeof(mpb_uhdr) + sizeof got) memcpy(&got, m->buf + sizeof(mpb_uhdr), sizeof got);
    mpb_msg_free(m);
    if ((got & ~(uint64_t)SHARED_BITS) != FENCE_SIG)
      luaL_error(L, "mp.%s: " MPB_RANKFMT " rank %d of the window's communicator makes another "
                 "window call (Win_create or Win_free) where this rank calls Fence", fname,
                 st->rank, st->size, from);
    if (got != mine && other < 0) other = from;
  }
  if (other >= 0)
    luaL_error(L, "mp.%s: " MPB_RANKFMT " rank %d of the window's communicator calls Fence "
               "with other asserts: MODE_NOPRECEDE and MODE_NOSUCCEED must be given by every "
               "member or none", fname, st->rank, st->size, other);
}

/* win:Fence([assert]) */
static int Fence(lua_State *L) {
  MPB_WIN_ENTER("mpi.Win_fence");
  int a = mpb_win_assert(L, st, 2, MPI_MODE_NOSTORE | MPI_MODE_NOPUT | MPI_MODE_NOPRECEDE |
                         MPI_MODE_NOSUCCEED, "MODE_NOSTORE, MODE_NOPUT, MODE_NOPRECEDE, "
                         "MODE_NOSUCCEED", fname);
  for (int r = 0; r < w->size; r++)
    if (w->lock[r])
      luaL_error(L, "mp.%s: " MPB_RANKFMT " this rank holds a lock on rank %d (%s, a "
                 "passive-target epoch): Unlock%s first", fname, st->rank, st->size, r,
                 (w->lock[r] & ~MPB_LOCK_NOCHECK) == MPB_SHARED ? "shared" : "exclusive",
                 w->all ? "_all" : "");
  if ((a & MPI_MODE_NOPRECEDE) && w->nops)
    luaL_error(L, "mp.%s: " MPB_RANKFMT " MODE_NOPRECEDE, but this rank issued %d operation%s "
               "since the last Fence", fname, st->rank, st->size, w->nops,
               w->nops == 1 ? "" : "s");
  if (w->nstarted || w->nexposed)
    luaL_error(L, "mp.%s: " MPB_RANKFMT " this rank is in a%s epoch of Post/Start (an active "
               "target one): %s first", fname, st->rank, st->size,
               w->nstarted ? "n access" : "n exposure", w->nstarted ? "Complete" : "Wait");
  if (w->nops) mpb_win_complete(L, st, w, -1, fname);
  if (!(a & MPI_MODE_NOSTORE)) CHECK(MPI_Win_sync(w->w), "MPI_Win_sync");
  barrier(L, st, w, a & SHARED_BITS, fname);
  if (!(a & MPI_MODE_NOPRECEDE) && !w->noput) CHECK(MPI_Win_sync(w->w), "MPI_Win_sync");
  w->noput = (a & MPI_MODE_NOPUT) != 0;
  w->fenced = !(a & MPI_MODE_NOSUCCEED);
  w->nops = 0;
  mpb_win_unpend(L, w);
  return 0;
}

/* win:Sync(): MPI_Win_sync, the public and private copies of this rank's
** window made one (a memory barrier under MPI's unified model). */
static int Sync(lua_State *L) {
  MPB_WIN_ENTER("mpi.Win_sync");
  if (lua_gettop(L) > 1)
    luaL_error(L, "bad argument #2 to 'mp.%s' (" MPB_RANKFMT " no argument expected, got %s)",
               fname, st->rank, st->size, luaL_typename(L, 2));
  CHECK(MPI_Win_sync(w->w), "MPI_Win_sync");
  return 0;
}

void mpb_winfence_methods(lua_State *L) {
  static const luaL_Reg methods[] = {{"Fence", Fence}, {"Sync", Sync}, {NULL, NULL}};
  luaL_setfuncs(L, methods, 0);
}
