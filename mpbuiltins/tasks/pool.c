/* SPDX-License-Identifier: MIT */
/*
** mp.pool and mp.pmap: dynamic load balancing over a task. Rank 0 sows tasks
** (sow(n) -> task | nil) and hands them in batches to whichever worker is
** free; workers run work(task) and send the results back; rank 0 reaps them
** (reap(n, result)), each exactly once. sow and reap stay on rank 0 (they
** are never shipped: they may hold anything); work ships with the task.
**
** Throughput: a message per task would cost more than an empty task, so each
** worker keeps two batches in flight and its batch size adapts to the
** measured time per task (about BATCH_SEC of work per batch, 1..BATCH_MAX
** tasks): empty tasks travel hundreds per message, long ones one by one so
** the load stays balanced at the end. All traffic is on MPB_CH_POOL through
** the one wait, so a fault anywhere aborts the pool like any task.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tasks/tasks.h"
#include "wire/wire.h"

#include "mp_pmap_lua.h" /* generated from tasks/pmap.lua */

#define BATCH_SEC 1e-3
#define BATCH_MAX 512
#define INFLIGHT 2 /* batches per worker */

static const char LEADER_KEY[] = "mp.pool.leader";

/* ------------------------------------------------------------ items */
/* Tasks and results travel as items of a message (chan/codec.h): each is
** encoded as soon as it exists, apart from the others, so it arrives as if
** sent alone, however they were batched (a table sow returned for several
** tasks is a table of each, and a task sees it as it was when sown). What
** cannot travel is named by its task. */
static void add_item(lua_State *L, mpb_wbuf *b, int bidx, mpb_wire_items *it, int first, int n,
                     lua_Integer task, const char *whose) {
  char err[MPB_ERRLEN];
  if (mpb_encode_item(L, b, bidx, it, first, n, err, sizeof err) == 0) return;
  mpb_state *st = mpb_get(L);
  luaL_error(L, "mp.pool: " MPB_RANKFMT " task %I: what %s returned cannot be sent: %s", st->rank,
             st->size, (LUAI_UACINT)task, whose, err);
}

/* ------------------------------------------------------------- workers */
/* Batches (n1, t1, n2, t2, ...) in, (n1, r1, ..., seconds) out; an empty
** message ends the pool. */
static void worker(lua_State *L, mpb_state *st, int work) {
  for (;;) {
    int base = lua_gettop(L);
    int n = mpb_push_msg(L, st, mpb_user_take(L, st, MPB_CH_POOL, 0, "pool"), "pool");
    if (n == 0) return;
    MPB_TRACE_SPAN(NULL, st, MPB_TR_POOL, 0, -1, (uint32_t)(n / 2), 0);
    mpb_wire_items it;
    mpb_wbuf *b = mpb_encode_items(L, &it, "pool", sizeof(mpb_uhdr));
    int bidx = lua_gettop(L);
    double t0 = mpb_now();
    for (int i = 0; i + 1 < n; i += 2) {
      lua_pushvalue(L, base + i + 1);
      lua_pushvalue(L, work);
      lua_pushvalue(L, base + i + 2);
      lua_call(L, 1, 1);
      add_item(L, b, bidx, &it, bidx + 1, 2, lua_tointeger(L, bidx + 1), "work");
      lua_settop(L, bidx);
    }
    lua_pushnumber(L, mpb_now() - t0);
    add_item(L, b, bidx, &it, bidx + 1, 1, 0, "work");
    mpb_wire_items_close(b, &it);
    lua_settop(L, bidx);
    mpb_user_send(L, st, 0, MPB_CH_POOL, b, 1);
    lua_settop(L, base);
  }
}

/* -------------------------------------------------------------- leader */
typedef struct {
  int sow, reap, work;  /* stack slots */
  int64_t next, done, total;
  int exhausted, progress, shown;
  double t0, last;
} leader;

/* Push the next (n, task) pair and return 1, or return 0: no more. */
static int sow(lua_State *L, leader *p) {
  if (p->exhausted) return 0;
  lua_pushinteger(L, p->next);
  lua_pushvalue(L, p->sow);
  lua_pushinteger(L, p->next);
  lua_call(L, 1, 1);
  if (lua_isnil(L, -1)) {
    lua_pop(L, 2);
    p->exhausted = 1;
    return 0;
  }
  p->next++;
  return 1;
}

static void reap(lua_State *L, leader *p, int ki, int ri) {
  if (p->reap) {
    lua_pushvalue(L, p->reap);
    lua_pushvalue(L, ki);
    lua_pushvalue(L, ri);
    lua_call(L, 2, 0);
  }
  p->done++;
}

/* Progress goes to the host, which decides whether and how to show it. */
static void show(lua_State *L, mpb_state *st, leader *p, int final) {
  double t = mpb_now();
  if (!p->progress || !st->host.progress) return;
  if (!final && (t - p->t0 < 1.0 || t - p->last < 0.1)) return;
  if (final && !p->shown) return;
  p->last = t;
  p->shown = 1;
  mpb_progress pr = {"mp.pool", p->done,
                     p->total > 0 ? p->total : (p->exhausted ? p->next - 1 : -1), t - p->t0,
                     final};
  st->host.progress(L, &pr, st->host.ud);
}

/* Up to k tasks to worker w, one message. */
static void send_batch(lua_State *L, mpb_state *st, leader *p, int w, int k, int *inflight) {
  int base = lua_gettop(L), got = 0;
  mpb_wire_items it;
  mpb_wbuf *b = mpb_encode_items(L, &it, "pool", sizeof(mpb_uhdr));
  int bidx = lua_gettop(L);
  while (got < k && sow(L, p)) {
    add_item(L, b, bidx, &it, bidx + 1, 2, lua_tointeger(L, bidx + 1), "sow");
    lua_settop(L, bidx);
    got++;
  }
  if (got > 0) {
    mpb_wire_items_close(b, &it);
    mpb_user_send(L, st, w, MPB_CH_POOL, b, 1);
    inflight[w]++;
  } else {
    mpb_encode_done(st, b);
  }
  lua_settop(L, base);
}

/* Push a copy of the value at vi (task n's), made as a message makes it:
** rank 0's own tasks and results are the same as a worker's. */
static void copy_item(lua_State *L, mpb_state *st, int vi, lua_Integer n, const char *whose) {
  int top = lua_gettop(L);
  mpb_wire_items it;
  mpb_wbuf *b = mpb_encode_items(L, &it, "pool", 0);
  lua_pushvalue(L, vi);
  add_item(L, b, top + 1, &it, top + 2, 1, n, whose);
  mpb_wire_items_close(b, &it);
  lua_settop(L, top + 1);
  mpb_push_encoded(L, st, b, top + 1, "pool");
}

static void lead(lua_State *L, mpb_state *st, int work, int wlist, int self) {
  lua_getfield(L, LUA_REGISTRYINDEX, LEADER_KEY);
  int opts = lua_gettop(L);
  leader p;
  memset(&p, 0, sizeof p);
  p.work = work;
  lua_getfield(L, opts, "sow");
  p.sow = lua_gettop(L);
  p.reap = lua_getfield(L, opts, "reap") == LUA_TNIL ? 0 : lua_gettop(L);
  lua_getfield(L, opts, "total");
  p.total = lua_isinteger(L, -1) ? lua_tointeger(L, -1) : -1;
  lua_getfield(L, opts, "progress");
  p.progress = lua_toboolean(L, -1);
  lua_getfield(L, opts, "_batch");
  int fixed = (int)lua_tointeger(L, -1); /* the test knob: every batch this size (0: adapt) */
  p.next = 1;
  p.t0 = p.last = mpb_now();
  int nw = (int)luaL_len(L, wlist);
  int *inflight = lua_newuserdatauv(L, sizeof(int) * (size_t)st->size * 2, 0);
  int *batch = inflight + st->size;
  for (int r = 0; r < st->size; r++) inflight[r] = 0, batch[r] = fixed ? fixed : 1;
  int outstanding = 0;
  for (int i = 1; i <= nw; i++) {
    lua_geti(L, wlist, i);
    int w = (int)lua_tointeger(L, -1);
    lua_pop(L, 1);
    for (int k = 0; k < INFLIGHT; k++) send_batch(L, st, &p, w, batch[w], inflight);
    outstanding += inflight[w];
  }
  while (outstanding > 0 || (self && !p.exhausted)) {
    if (self && !p.exhausted) { /* rank 0 works while nothing is waiting */
      mpb_poll(st);
      const mpb_msg *q = mpb_inbox_oldest(st, MPB_CH_POOL); /* a worker's results */
      while (q && q->src == 0) q = q->anext;
      if (!q) {
        int base = lua_gettop(L);
        if (sow(L, &p)) { /* task and result copied as a worker's are */
          MPB_TRACE_SPAN(NULL, st, MPB_TR_POOL, 1, -1, 1, 0);
          lua_Integer n = lua_tointeger(L, base + 1);
          lua_pushvalue(L, work);
          copy_item(L, st, base + 2, n, "sow");
          lua_call(L, 1, 1);
          copy_item(L, st, base + 3, n, "work");
          reap(L, &p, base + 1, base + 4);
        }
        lua_settop(L, base);
        show(L, st, &p, 0);
        mpb_check_abort(L, st);
        continue;
      }
    }
    int base = lua_gettop(L);
    mpb_msg *m = mpb_user_take(L, st, MPB_CH_POOL, -1, "pool");
    int w = m->src;
    int n = mpb_push_msg(L, st, m, "pool");
    int cnt = (n - 1) / 2;
    for (int i = 0; i < cnt; i++) reap(L, &p, base + 2 * i + 1, base + 2 * i + 2);
    double sec = lua_tonumber(L, base + n), per = cnt > 0 ? sec / cnt : 0;
    int b = per > 0 ? (int)(BATCH_SEC / per) : BATCH_MAX;
    batch[w] = fixed ? fixed : b < 1 ? 1 : b > BATCH_MAX ? BATCH_MAX : b;
    lua_settop(L, base);
    inflight[w]--;
    outstanding--;
    int before = inflight[w];
    send_batch(L, st, &p, w, batch[w], inflight);
    outstanding += inflight[w] - before;
    show(L, st, &p, 0);
  }
  show(L, st, &p, 1);
  for (int i = 1; i <= nw; i++) { /* the end: an empty message */
    lua_geti(L, wlist, i);
    int w = (int)lua_tointeger(L, -1);
    lua_pop(L, 1);
    mpb_user_send(L, st, w, MPB_CH_POOL, mpb_encode_msg(L, 1, 0, "pool", 0, sizeof(mpb_uhdr)), 1);
    lua_pop(L, 1);
  }
}

/* ------------------------------------------------------------ the task */
/* mp._pool_main(work, workers, self): the task every rank runs. */
static int pool_main(lua_State *L) {
  mpb_state *st = mpb_get(L);
  luaL_checktype(L, 1, LUA_TFUNCTION);
  luaL_checktype(L, 2, LUA_TTABLE);
  if (st->rank == 0) {
    lead(L, st, 1, 2, lua_toboolean(L, 3));
    return 0;
  }
  lua_Integer nw = luaL_len(L, 2);
  for (lua_Integer i = 1; i <= nw; i++) {
    lua_geti(L, 2, i);
    if (lua_tointeger(L, -1) == st->rank) {
      lua_pop(L, 1);
      worker(L, st, 1);
      return 0;
    }
    lua_pop(L, 1);
  }
  return 0;
}

static int bad_field(lua_State *L, const char *what) {
  mpb_state *st = mpb_get(L);
  return luaL_error(L, "bad argument #1 to 'mp.pool' (" MPB_RANKFMT " field %s)", st->rank, st->size,
                    what);
}

/* mp.pool{sow=, work=, reap=, self=, ranks=, progress=, total=, _batch=} (rank 0,
** outside a task). Each field is read once, checked, into a table of the
** runtime's (the leader's options): a proxy or a finalizer that changes the
** user's table during the pool changes nothing. */
static int pool(lua_State *L) {
  mpb_state *st = mpb_get(L);
  luaL_checktype(L, 1, LUA_TTABLE);
  lua_settop(L, 1);
  lua_createtable(L, 0, 4); /* 2: the leader's options */
  if (lua_getfield(L, 1, "sow") != LUA_TFUNCTION) bad_field(L, "'sow' must be a function");
  lua_setfield(L, 2, "sow");
  if (lua_getfield(L, 1, "work") != LUA_TFUNCTION) bad_field(L, "'work' must be a function");
  int work = lua_gettop(L); /* 3 */
  int t = lua_getfield(L, 1, "reap");
  if (t != LUA_TNIL && t != LUA_TFUNCTION) bad_field(L, "'reap' must be a function");
  lua_setfield(L, 2, "reap");
  if (lua_getfield(L, 1, "total") != LUA_TNIL && !(lua_isinteger(L, -1) && lua_tointeger(L, -1) >= 0))
    luaL_error(L, "bad argument #1 to 'mp.pool' (" MPB_RANKFMT " field 'total' must be a "
               "non-negative integer, got %s)", st->rank, st->size, luaL_typename(L, -1));
  lua_setfield(L, 2, "total");
  lua_getfield(L, 1, "progress");
  lua_pushboolean(L, lua_isnil(L, -1) || lua_toboolean(L, -1));
  lua_setfield(L, 2, "progress");
  lua_pop(L, 1);
  if (lua_getfield(L, 1, "_batch") != LUA_TNIL &&
      !(lua_isinteger(L, -1) && lua_tointeger(L, -1) >= 1 && lua_tointeger(L, -1) <= BATCH_MAX))
    bad_field(L, "'_batch' (a test knob) must be an integer in 1..512");
  lua_setfield(L, 2, "_batch");
  /* rank 0 works too unless told not to, or given the workers: at 2 ranks
  ** a pool of one worker would be no faster than a loop */
  int self_given = lua_getfield(L, 1, "self") != LUA_TNIL, self = lua_toboolean(L, -1);
  lua_pop(L, 1);
  lua_pushcfunction(L, pool_main); /* 4: shipped by name (mp._pool_main) */
  lua_pushvalue(L, work);          /* 5 */
  lua_newtable(L);                 /* 6: the workers (world ranks, not 0) */
  int nw = 0;
  if (lua_getfield(L, 1, "ranks") == LUA_TTABLE) {
    if (!self_given) self = 0;
    lua_Integer n = luaL_len(L, -1);
    for (lua_Integer i = 1; i <= n; i++) {
      lua_geti(L, -1, i);
      int ok;
      lua_Integer r = lua_tointegerx(L, -1, &ok);
      if (!ok || r < 0 || r >= st->size)
        luaL_error(L, "bad argument #1 to 'mp.pool' ([rank 0/%d] ranks[%I] is not a rank in 0..%d)",
                   st->size, (LUAI_UACINT)i, st->size - 1);
      lua_pop(L, 1);
      if (r == 0) {
        self = 1;
      } else {
        lua_pushinteger(L, r);
        lua_rawseti(L, 6, ++nw);
      }
    }
  } else if (!lua_isnil(L, -1)) {
    bad_field(L, "'ranks' must be a table");
  } else {
    if (!self_given) self = 1;
    for (int r = 1; r < st->size; r++) {
      lua_pushinteger(L, r);
      lua_rawseti(L, 6, ++nw);
    }
  }
  lua_pop(L, 1);
  if (nw == 0) self = 1; /* nobody else: rank 0 does it all */
  lua_pushboolean(L, self); /* 7 */
  lua_pushvalue(L, 2);
  lua_setfield(L, LUA_REGISTRYINDEX, LEADER_KEY);
  int n = mpb_task_run(L, st, MPB_TASK_CALL, 4, "pool");
  lua_pushnil(L);
  lua_setfield(L, LUA_REGISTRYINDEX, LEADER_KEY);
  return n;
}

/* mp.pmap(f, list, opts): mp.pool over list, results in input order. */
void mpb_open_pool(lua_State *L) {
  lua_pushcfunction(L, pool_main);
  lua_setfield(L, -2, "_pool_main");
  lua_pushcfunction(L, pool);
  lua_setfield(L, -2, "pool");
  if (luaL_loadbufferx(L, mp_pmap_lua, mp_pmap_lua_len, "=mp.pmap", "t") != LUA_OK) lua_error(L);
  lua_pushcfunction(L, pool);
  mpb_state *st = mpb_get(L);
  lua_pushfstring(L, MPB_RANKFMT, st->rank, st->size);
  lua_call(L, 2, 1);
  lua_setfield(L, -2, "pmap");
}
