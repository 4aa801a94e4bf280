/* SPDX-License-Identifier: MIT */
/*
** Point-to-point messages: comm:send, comm:recv (mp.send and mp.recv are
** the same on mp.world) and mp.probe.
**
** A send hands an encoded copy to MPI and returns: the sender may change
** its tables at once. Typed arrays of MPB_WIRE_EXTMIN bytes or more and long
** strings go in place (no copy) and the send waits until MPI is done with
** them, since the caller may write the array afterwards (chan/send.c).
*/
#include <stdlib.h>

#include "p2p/p2p.h"
#include "wire/wire.h"

void mpb_check_task(lua_State *L, mpb_state *st, const char *fname) {
  if (st->in_task && !st->aborting && !mpb_sigint && !st->mpi_err[0]) return; /* the usual */
  mpb_check_abort(L, st);
  if (!st->in_task)
    luaL_error(L, "mp.%s: " MPB_RANKFMT " not inside a parallel task (start one with mp.exec)",
               fname, st->rank, st->size);
}

void mpb_check_nargs(lua_State *L, mpb_state *st, int a, int max, const char *fname,
                     const char *what) {
  int n = lua_gettop(L) - a + 1;
  if (n > max)
    luaL_error(L, "bad argument #%d to 'mp.%s' (" MPB_RANKFMT " mp.%s takes %s, got %d "
               "argument%s)", max + 1, fname, st->rank, st->size, fname, what, n,
               n == 1 ? "" : "s");
}

/* comm:send(dst | {dst...}, values...): the arguments from slot a on. */
static int send_on(lua_State *L, mpb_state *st, mpb_comm *c, int a) {
  int n = lua_gettop(L) - a, chan = mpb_comm_user_chan(c);
  int buf[MPB_DESTS_BUF];
  const int *to;
  lua_Integer nd = mpb_comm_dests(L, st, c, a, 1, "send", buf, MPB_DESTS_BUF, &to);
  MPB_TRACE_SPAN(L, st, MPB_TR_SEND, 0, -1, 0, 0);
  struct mpb_wbuf *b = mpb_encode_small(L, st, a + 1, n, "send", sizeof(mpb_uhdr));
  if (!b) b = mpb_encode_msg(L, a + 1, n, "send", 2, sizeof(mpb_uhdr));
  for (lua_Integer i = 0; i < nd; i++) {
    mpb_comm_send(L, st, c, to[i], chan, b, i == nd - 1, NULL);
    st->user_sent++;
  }
  return 0;
}

/* comm:recv([src]): the values of the oldest message from src; without src,
** the oldest from anyone, its sender's comm rank first. a: the slot of src. */
static int recv_on(lua_State *L, mpb_state *st, mpb_comm *c, int a) {
  if (lua_gettop(L) > a) mpb_check_nargs(L, st, a, 1, "recv", "at most a source rank");
  int ok;
  lua_Integer r = lua_tointegerx(L, a, &ok);
  int src = ok && r >= 0 && r < c->size ? (int)r
            : lua_isnoneornil(L, a)     ? -1
                                        : mpb_comm_badrank(L, st, c, a, 1, "recv");
  MPB_TRACE_SPAN(L, st, MPB_TR_RECV, 0, -1, 0, 0);
  /* the values are pushed above the arguments (a comm:recv keeps its
  ** communicator alive there): the caller takes the top ones */
  mpb_msg *m = mpb_comm_take(L, st, c, mpb_comm_user_chan(c), src, "recv");
  if (src < 0) lua_pushinteger(L, mpb_comm_of(c, m->src));
  return mpb_push_msg(L, st, m, "recv") + (src < 0);
}

/* comm:x(...), a method (c_x), and mp.x(...) on mp.world (w_x): x_on's
** work on the arguments from slot 2 or 1. */
#define METHOD_AND_WORLD(x)                                   \
  static int c_##x(lua_State *L) {                            \
    mpb_state *st = mpb_get(L);                               \
    return x##_on(L, st, mpb_comm_check(L, st, 1, #x), 2);    \
  }                                                           \
  static int w_##x(lua_State *L) {                            \
    mpb_state *st = mpb_get(L);                               \
    return x##_on(L, st, mpb_comm_world(L, st, #x), 1);       \
  }
METHOD_AND_WORLD(send)
METHOD_AND_WORLD(recv)

/* ------------------------------------------------------------- probe */
static int any_queued(mpb_state *st, void *ud) {
  (void)ud;
  return mpb_inbox_oldest(st, MPB_CH_USER) != NULL;
}

static int new_arrival(mpb_state *st, void *ud) {
  return st->user_arrivals > *(uint64_t *)ud;
}

static int by_rank(const void *a, const void *b) {
  int x = *(const int *)a, y = *(const int *)b;
  return (x > y) - (x < y);
}

/* Push the list of the ranks with queued messages, ascending: read from the
** queued messages when there are fewer of them than ranks, else from each
** rank's queue, so it looks at min(messages, ranks). */
static void push_senders(lua_State *L, mpb_state *st) {
  size_t n = mpb_inbox_count(st, MPB_CH_USER);
  int k = 0;
  if (n >= (size_t)st->size) {
    lua_newtable(L);
    for (int r = 0; r < st->size; r++, st->any_looks++)
      if (mpb_inbox(st, MPB_CH_USER, r)->head) {
        lua_pushinteger(L, r);
        lua_rawseti(L, -2, ++k);
      }
    return;
  }
  int buf[64], *v = n <= 64 ? buf : lua_newuserdatauv(L, sizeof *v * n, 0);
  for (mpb_msg *m = mpb_inbox_oldest(st, MPB_CH_USER); m; m = m->anext, st->any_looks++)
    v[k++] = m->src;
  qsort(v, (size_t)k, sizeof *v, by_rank);
  lua_newtable(L);
  for (int i = 0, j = 0; i < k; i++)
    if (i == 0 || v[i] != v[i - 1]) {
      lua_pushinteger(L, v[i]);
      lua_rawseti(L, -2, ++j);
    }
  if (v != buf) lua_remove(L, -2);
}

/* mp.probe([mode]): the ranks with queued messages; mode 1 waits for one,
** mode 2 for a new arrival: one after the list the previous probe of the
** task returned (the first probe of a task: any message queued). A message
** that arrives between two probes (any poll delivers, the poll hook too,
** while Lua runs) is new to the second, so a loop of probes never waits for
** a message that is already there. */
static int probe(lua_State *L) {
  mpb_state *st = mpb_get(L);
  lua_Integer mode = luaL_optinteger(L, 1, 0);
  luaL_argcheck(L, mode >= 0 && mode <= 2, 1, "mode must be 0, 1 or 2");
  mpb_check_task(L, st, "probe");
  mpb_p2p *p = mpb_p2p_of(st);
  if (p->probe_task != st->task) {
    p->probe_task = st->task;
    p->probe_seen = st->user_arrivals - (any_queued(st, NULL) ? 1 : 0);
  }
  uint64_t since = p->probe_seen;
  mpb_poll(st);
  if ((mode == 1 && !any_queued(st, NULL)) || (mode == 2 && !new_arrival(st, &since))) {
    if (st->size == 1)
      luaL_error(L, "mp.probe: " MPB_RANKFMT " would wait forever: nothing can arrive", st->rank,
                 st->size);
    mpb_waitdesc d = {"probe", -1, 0, 0, NULL};
    if (mode == 1) mpb_wait_described(L, st, any_queued, NULL, &d);
    else mpb_wait_described(L, st, new_arrival, &since, &d);
  }
  p->probe_seen = st->user_arrivals;
  push_senders(L, st);
  return 1;
}

void mpb_open_p2p(lua_State *L) {
  int mpt = lua_gettop(L);
  mpb_comm_setpair(L, mpt, "send", c_send, w_send);
  mpb_comm_setpair(L, mpt, "recv", c_recv, w_recv);
  lua_pushcfunction(L, probe);
  lua_setfield(L, mpt, "probe");
}
