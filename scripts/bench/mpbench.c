/* SPDX-License-Identifier: MIT */
/*
** mpbench: an mplua host with a `bench` module of raw-MPI kernels, so that a
** benchmark script runs the raw baseline and the mp version in the same job,
** interleaved. Usage: mpiexec -n N build/mpbench SCRIPT.lua [args]
** The kernels are C functions of a loaded module, so mp.exec ships them by
** name: `mp.exec(bench.pingpong, 1000, 8)` runs raw MPI on every rank.
** Each kernel returns seconds per iteration on rank 0.
*/
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lauxlib.h"
#include "bench_host.h"
#include "mplua.h"

/* One exchange of a round trip between ranks 0 and 1: the rank that sends
** first sends, then receives; the other receives, then sends. */
typedef void (*exchange_fn)(char *buf, int bytes, int peer, int send_first, MPI_Comm c);

/* Blocking: MPI_Send and MPI_Recv. */
static void bexchange(char *buf, int bytes, int peer, int send_first, MPI_Comm c) {
  if (send_first) MPI_Send(buf, bytes, MPI_BYTE, peer, 0, c);
  MPI_Recv(buf, bytes, MPI_BYTE, peer, 0, c, MPI_STATUS_IGNORE);
  if (!send_first) MPI_Send(buf, bytes, MPI_BYTE, peer, 0, c);
}

/* The interruptible scheme, the anchor for a runtime that never blocks
** outside its own wait: MPI_Isend, then poll MPI_Improbe until a match,
** MPI_Mrecv, and poll the send's completion. */
static void iexchange(char *buf, int bytes, int peer, int send_first, MPI_Comm c) {
  MPI_Request req = MPI_REQUEST_NULL;
  if (send_first) MPI_Isend(buf, bytes, MPI_BYTE, peer, 0, c, &req);
  int flag = 0;
  MPI_Message m;
  MPI_Status st;
  while (!flag) MPI_Improbe(peer, 0, c, &flag, &m, &st);
  MPI_Mrecv(buf, bytes, MPI_BYTE, &m, MPI_STATUS_IGNORE);
  if (!send_first) MPI_Isend(buf, bytes, MPI_BYTE, peer, 0, c, &req);
  for (flag = 0; !flag;) MPI_Test(&req, &flag, MPI_STATUS_IGNORE);
}

/* iters round trips of bytes between ranks 0 and 1; seconds per round trip. */
static int round_trips(lua_State *L, exchange_fn exchange) {
  int iters = (int)luaL_checkinteger(L, 1);
  int bytes = (int)luaL_optinteger(L, 2, 8);
  MPI_Comm c = mplua_comm(L);
  int r;
  MPI_Comm_rank(c, &r);
  char *buf = calloc((size_t)bytes + 1, 1);
  MPI_Barrier(c);
  double t = MPI_Wtime();
  for (int i = 0; i < iters && r < 2; i++) exchange(buf, bytes, 1 - r, r == 0, c);
  t = MPI_Wtime() - t;
  free(buf);
  lua_pushnumber(L, t / iters);
  return 1;
}

/* bench.pingpong(iters, bytes) / bench.ipingpong(iters, bytes): blocking /
** interruptible round trips. */
static int pingpong(lua_State *L) { return round_trips(L, bexchange); }
static int ipingpong(lua_State *L) { return round_trips(L, iexchange); }

/* Counting instructions (scripts/bench/p2p_count.sh runs one rank under
** callgrind): bench.collect(on) turns callgrind's collection on or off, and
** does nothing outside it. */
#if defined(__has_include)
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define HAVE_CALLGRIND 1
#endif
#endif
static void collect(int on) {
#ifdef HAVE_CALLGRIND
  static int now = 0;
  if (on != now) CALLGRIND_TOGGLE_COLLECT;
  now = on;
#else
  (void)on;
#endif
}

static int l_collect(lua_State *L) {
  collect(lua_toboolean(L, 1));
  return 0;
}

/* The interruptible scheme's halves: a send polled to completion, and a
** receive polled until its message is here. */
static void isend_done(char *buf, int bytes, int peer, MPI_Comm c) {
  MPI_Request req;
  int flag = 0;
  MPI_Isend(buf, bytes, MPI_BYTE, peer, 0, c, &req);
  while (!flag) MPI_Test(&req, &flag, MPI_STATUS_IGNORE);
}

static void irecv_polled(char *buf, int bytes, int peer, MPI_Comm c) {
  int flag = 0;
  MPI_Message m;
  MPI_Status st;
  while (!flag) MPI_Improbe(peer, 0, c, &flag, &m, &st);
  MPI_Mrecv(buf, bytes, MPI_BYTE, &m, MPI_STATUS_IGNORE);
}

/* bench.iahead(iters, bytes, lead, pause): iters exchanges (a send, then a
** receive) of the interruptible scheme on the rank other than `lead`, which
** sends it all its messages while it sleeps `pause` seconds without
** touching MPI: its receives find their message there (in UCX's queue, not
** yet received), so what it does is its work per exchange without waits,
** counted there (collect). p2p_count.sh gives UCX a queue longer than
** iters, so the sends do not wait for room either. */
static int iahead(lua_State *L) {
  int iters = (int)luaL_checkinteger(L, 1), bytes = (int)luaL_checkinteger(L, 2);
  int lead = (int)luaL_checkinteger(L, 3), pause = (int)luaL_checkinteger(L, 4);
  MPI_Comm c = mplua_comm(L);
  int r;
  MPI_Comm_rank(c, &r);
  char *buf = calloc((size_t)bytes + 1, 1);
  MPI_Barrier(c);
  if (r == lead) {
    for (int i = 0; i < iters; i++) isend_done(buf, bytes, 1 - r, c);
    for (int i = 0; i < iters; i++) irecv_polled(buf, bytes, 1 - r, c);
  } else if (r == 1 - lead) {
    sleep((unsigned)pause);
    collect(1);
    for (int i = 0; i < iters; i++) {
      isend_done(buf, bytes, 1 - r, c);
      irecv_polled(buf, bytes, 1 - r, c);
    }
    collect(0);
  }
  free(buf);
  return 0;
}

/* bench.anysrc(iters, interruptible): a server loop. Every rank but 0 sends
** rank 0 iters messages of 8 bytes (tag 0), then one of tag 1; rank 0
** receives the tag 1 ones first (so that every message has reached MPI's
** queue: a sender's messages do not overtake each other), then, timed, the
** others from MPI_ANY_SOURCE, blocking (MPI_Recv) or by the interruptible
** scheme (poll MPI_Improbe, MPI_Mrecv). Seconds per message, on rank 0: the
** median over chunks of ANYSRC_CHUNK messages (a loop of a millisecond or
** two on an oversubscribed machine loses its core now and then). */
#define ANYSRC_CHUNK 500
static int by_value(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static int anysrc(lua_State *L) {
  int iters = (int)luaL_checkinteger(L, 1), inter = lua_toboolean(L, 2);
  MPI_Comm c = mplua_comm(L);
  int r, n;
  MPI_Comm_rank(c, &r);
  MPI_Comm_size(c, &n);
  char buf[8] = {0};
  long total = (long)iters * (n - 1);
  luaL_argcheck(L, total >= ANYSRC_CHUNK, 1, "too few messages");
  for (int i = 0; r > 0 && i <= iters; i++) MPI_Send(buf, sizeof buf, MPI_BYTE, 0, i == iters, c);
  for (int i = 1; r == 0 && i < n; i++)
    MPI_Recv(buf, sizeof buf, MPI_BYTE, MPI_ANY_SOURCE, 1, c, MPI_STATUS_IGNORE);
  long nchunks = r == 0 ? total / ANYSRC_CHUNK : 0;
  double *chunk = calloc((size_t)nchunks + 1, sizeof *chunk);
  for (long k = 0; k < nchunks; k++) {
    long len = k + 1 < nchunks ? ANYSRC_CHUNK : total - k * ANYSRC_CHUNK;
    double t = MPI_Wtime();
    for (long i = 0; i < len; i++) {
      if (inter) irecv_polled(buf, sizeof buf, MPI_ANY_SOURCE, c);
      else MPI_Recv(buf, sizeof buf, MPI_BYTE, MPI_ANY_SOURCE, 0, c, MPI_STATUS_IGNORE);
    }
    chunk[k] = (MPI_Wtime() - t) / (double)len;
  }
  qsort(chunk, (size_t)nchunks, sizeof *chunk, by_value);
  double t = nchunks > 0 ? chunk[nchunks / 2] : 0;
  free(chunk);
  MPI_Barrier(c);
  lua_pushnumber(L, t);
  return 1;
}

/* bench.stream(iters, bytes): rank 0 sends `bytes` to rank 1, which answers
** with one byte (so the time covers delivery). Large counts (MPI 4's _c
** calls); the buffer is touched and one round runs before the clock starts. */
static int stream(lua_State *L) {
  int iters = (int)luaL_checkinteger(L, 1);
  MPI_Count bytes = (MPI_Count)luaL_checkinteger(L, 2);
  MPI_Comm c = mplua_comm(L);
  int r;
  MPI_Comm_rank(c, &r);
  char *buf = malloc((size_t)bytes + 1);
  if (!buf) return luaL_error(L, "bench.stream: out of memory");
  memset(buf, 1, (size_t)bytes + 1);
  double t = 0;
  for (int i = -1; i < iters && r < 2; i++) {
    if (i == 0) {
      MPI_Barrier(c);
      t = MPI_Wtime();
    }
    if (r == 0) {
      MPI_Send_c(buf, bytes, MPI_BYTE, 1, 0, c);
      MPI_Recv(buf, 1, MPI_BYTE, 1, 0, c, MPI_STATUS_IGNORE);
    } else {
      MPI_Recv_c(buf, bytes, MPI_BYTE, 0, 0, c, MPI_STATUS_IGNORE);
      MPI_Send(buf, 1, MPI_BYTE, 0, 0, c);
    }
  }
  t = MPI_Wtime() - t;
  free(buf);
  lua_pushnumber(L, t / iters);
  return 1;
}

/* iters of MPI_Allreduce of n doubles (sum); nonblocking: MPI_Iallreduce
** then MPI_Wait, and MPI_Ibarrier for n == 0. */
static int allreduce_loop(lua_State *L, int nonblocking) {
  int iters = (int)luaL_checkinteger(L, 1);
  int n = (int)luaL_checkinteger(L, 2);
  MPI_Comm c = mplua_comm(L);
  double *a = calloc((size_t)n + 1, sizeof *a), *b = calloc((size_t)n + 1, sizeof *b);
  for (int i = 0; i < n; i++) a[i] = i;
  MPI_Barrier(c);
  double t = MPI_Wtime();
  for (int i = 0; i < iters; i++) {
    MPI_Request req;
    if (!nonblocking) {
      MPI_Allreduce(a, b, n, MPI_DOUBLE, MPI_SUM, c);
      continue;
    }
    if (n > 0) MPI_Iallreduce(a, b, n, MPI_DOUBLE, MPI_SUM, c, &req);
    else MPI_Ibarrier(c, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
  }
  t = MPI_Wtime() - t;
  free(a);
  free(b);
  lua_pushnumber(L, t / iters);
  return 1;
}

/* bench.allreduce(iters, n): MPI_Allreduce of n doubles (sum). */
static int allreduce(lua_State *L) { return allreduce_loop(L, 0); }
/* bench.iallreduce(iters, n): MPI_Iallreduce + MPI_Wait (n == 0: MPI_Ibarrier),
** the baseline of mp.mpi's nonblocking collectives. */
static int iallreduce(lua_State *L) { return allreduce_loop(L, 1); }

/* bench.putfence(iters, bytes): every rank MPI_Puts bytes into its right
** neighbour's window, then MPI_Win_fence (the raw floor of win:Put + Fence). */
static int putfence(lua_State *L) {
  int iters = (int)luaL_checkinteger(L, 1);
  int n = (int)luaL_checkinteger(L, 2) / 8;
  MPI_Comm c = mplua_comm(L);
  int me, size;
  MPI_Comm_rank(c, &me);
  MPI_Comm_size(c, &size);
  double *a = calloc((size_t)n + 1, sizeof *a), *src = calloc((size_t)n + 1, sizeof *src);
  MPI_Win w;
  MPI_Win_create(a, (MPI_Aint)n * 8, 8, MPI_INFO_NULL, c, &w);
  MPI_Win_fence(0, w);
  MPI_Barrier(c);
  double t = MPI_Wtime();
  for (int i = 0; i < iters; i++) {
    MPI_Put(src, n, MPI_DOUBLE, (me + 1) % size, 0, n, MPI_DOUBLE, w);
    MPI_Win_fence(0, w);
  }
  t = MPI_Wtime() - t;
  MPI_Win_free(&w);
  free(a);
  free(src);
  lua_pushnumber(L, t / iters);
  return 1;
}

/* bench.lockput(iters, bytes): every rank locks its right neighbour's window
** exclusively, MPI_Puts bytes, unlocks (the raw floor of win:Lock + Put +
** Unlock, whose locks mplua grants). */
static int lockput(lua_State *L) {
  int iters = (int)luaL_checkinteger(L, 1);
  int n = (int)luaL_checkinteger(L, 2) / 8;
  MPI_Comm c = mplua_comm(L);
  int me, size;
  MPI_Comm_rank(c, &me);
  MPI_Comm_size(c, &size);
  double *a = calloc((size_t)n + 1, sizeof *a), *src = calloc((size_t)n + 1, sizeof *src);
  MPI_Win w;
  MPI_Win_create(a, (MPI_Aint)n * 8, 8, MPI_INFO_NULL, c, &w);
  MPI_Barrier(c);
  double t = MPI_Wtime();
  int right = (me + 1) % size;
  for (int i = 0; i < iters; i++) {
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, w);
    MPI_Put(src, n, MPI_DOUBLE, right, 0, n, MPI_DOUBLE, w);
    MPI_Win_unlock(right, w);
  }
  t = MPI_Wtime() - t;
  MPI_Barrier(c);
  MPI_Win_free(&w);
  free(a);
  free(src);
  lua_pushnumber(L, t / iters);
  return 1;
}

/* bench.barrier(iters): MPI_Barrier, the raw floor for a task round trip. */
static int barrier(lua_State *L) {
  int iters = (int)luaL_checkinteger(L, 1);
  MPI_Comm c = mplua_comm(L);
  MPI_Barrier(c);
  double t = MPI_Wtime();
  for (int i = 0; i < iters; i++) MPI_Barrier(c);
  lua_pushnumber(L, (MPI_Wtime() - t) / iters);
  return 1;
}

/* bench.bcast(iters, bytes): MPI_Bcast of bytes from rank 0 (the raw floor
** of mp.bcast and of a fan-out). */
static int bcast(lua_State *L) {
  int iters = (int)luaL_checkinteger(L, 1);
  int bytes = (int)luaL_checkinteger(L, 2);
  MPI_Comm c = mplua_comm(L);
  char *a = malloc((size_t)bytes + 1);
  if (!a) return luaL_error(L, "bench.bcast: out of memory");
  memset(a, 1, (size_t)bytes + 1);
  MPI_Bcast(a, bytes, MPI_BYTE, 0, c); /* the pages are in, the clock starts after */
  MPI_Barrier(c);
  double t = MPI_Wtime();
  for (int i = 0; i < iters; i++) MPI_Bcast(a, bytes, MPI_BYTE, 0, c);
  t = MPI_Wtime() - t;
  free(a);
  lua_pushnumber(L, t / iters);
  return 1;
}

/* bench.gather(iters, bytes): MPI_Gather of bytes from every rank to rank 0
** (the raw floor for shipping trace rings to rank 0). */
static int gather(lua_State *L) {
  int iters = (int)luaL_checkinteger(L, 1);
  int bytes = (int)luaL_checkinteger(L, 2);
  MPI_Comm c = mplua_comm(L);
  int n, r;
  MPI_Comm_size(c, &n);
  MPI_Comm_rank(c, &r);
  char *a = calloc((size_t)bytes + 1, 1), *b = r == 0 ? calloc((size_t)bytes * n + 1, 1) : NULL;
  MPI_Barrier(c);
  double t = MPI_Wtime();
  for (int i = 0; i < iters; i++) MPI_Gather(a, bytes, MPI_BYTE, b, bytes, MPI_BYTE, 0, c);
  t = MPI_Wtime() - t;
  free(a);
  free(b);
  lua_pushnumber(L, t / iters);
  return 1;
}

static int open_bench(lua_State *L) {
  static const luaL_Reg funcs[] = {{"pingpong", pingpong}, {"ipingpong", ipingpong},
                                   {"stream", stream}, {"anysrc", anysrc},
                                   {"iahead", iahead}, {"collect", l_collect},
                                   {"allreduce", allreduce}, {"iallreduce", iallreduce},
                                   {"barrier", barrier},
                                   {"gather", gather}, {"bcast", bcast},
                                   {"putfence", putfence}, {"lockput", lockput},
                                   {NULL, NULL}};
  luaL_newlib(L, funcs);
  return 1;
}

int main(int argc, char **argv) { return bench_host_main(argc, argv, 1, open_bench); }
