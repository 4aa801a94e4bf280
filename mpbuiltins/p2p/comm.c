/*
** Communicators: mp.world, comm:split(color, key), comm:dup(), comm.rank,
** comm.size, and send/recv as methods (the collectives are added by coll.c,
** isend/irecv by request.c).
**
** Why no MPI communicators: an MPI_Comm_split is a blocking collective that
** an abort could leave half done, and each one spends a context id; after
** thousands of aborts they run out (DESIGN.md 5.4). A communicator here is a
** list of world ranks and an id; every message carries the id in its header
** and travels over st->user like all mp traffic, so the abort drain covers it.
** Ids agree across members without any exchange: they are derived from the
** parent's id, the task number, how many children the parent made in this
** task, and the color. A communicator made in a task dies with it (the
** messages of that task are gone after it); mp.world lives for ever.
*/
#include <stdlib.h>
#include <string.h>

#include "p2p/comm.h"
#include "wire/wire.h"

static const char WORLD_KEY[] = "mp.world";

/* ------------------------------------------------------------ creation */
/* Push a new communicator of n members (ranks filled by the caller). The
** userdata holds the rank tables itself: nothing to free, nothing to leak. */
static mpb_comm *comm_new(lua_State *L, mpb_state *st, int n) {
  size_t sz = sizeof(mpb_comm) + sizeof(int) * ((size_t)n + (size_t)st->size);
  mpb_comm *c = lua_newuserdatauv(L, sz, 0);
  memset(c, 0, sizeof *c);
  c->ranks = (int *)(c + 1);
  c->of_world = c->ranks + n;
  c->size = n;
  c->rank = -1;
  c->child_task = -1;
  for (int w = 0; w < st->size; w++) c->of_world[w] = -1;
  luaL_setmetatable(L, MPB_COMM_MT);
  return c;
}

static void comm_index_ranks(mpb_state *st, mpb_comm *c) {
  for (int i = 0; i < c->size; i++) {
    c->of_world[c->ranks[i]] = i;
    if (c->ranks[i] == st->rank) c->rank = i;
  }
}

static uint64_t mix64(uint64_t x) { /* splitmix64's finalizer */
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

/* The id of the k-th child made in this task with this color: the same on
** every member since all of them call split/dup in the same order. */
static uint32_t child_id(mpb_state *st, mpb_comm *p, int64_t color) {
  if (p->child_task != st->task) { /* counts restart each task: an abort may
                                      have stopped ranks at different counts */
    p->child_task = st->task;
    p->nchild = 0;
  }
  uint64_t x = mix64(((uint64_t)p->id << 32) | p->nchild++);
  x = mix64(x ^ mix64((uint64_t)st->task));
  x = mix64(x ^ (uint64_t)color);
  uint32_t id = (uint32_t)(x ^ (x >> 32));
  return id ? id : 1;
}

/* ------------------------------------------------------------- checks */
mpb_comm *mpb_comm_check(lua_State *L, mpb_state *st, int idx, const char *fname) {
  mpb_comm *c = luaL_testudata(L, idx, MPB_COMM_MT);
  if (!c)
    luaL_error(L, "bad argument #%d to 'mp.%s' ([rank %d/%d] communicator expected, got %s)",
               idx, fname, st->rank, st->size, luaL_typename(L, idx));
  mpb_check_task(L, st, fname);
  if (c->task >= 0 && c->task != st->task)
    luaL_error(L, "mp.%s: [rank %d/%d] communicator from an earlier task (a communicator "
               "made in a task ends with it)", fname, st->rank, st->size);
  return c;
}

int mpb_comm_checkrank(lua_State *L, mpb_state *st, const mpb_comm *c, int arg,
                       const char *fname) {
  lua_Integer r = luaL_checkinteger(L, arg);
  if (r < 0 || r >= c->size)
    luaL_error(L, "bad argument #%d to 'mp.%s' ([rank %d/%d] rank %I out of range 0..%d)",
               arg - 1, fname, st->rank, st->size, (LUAI_UACINT)r, c->size - 1);
  return (int)r;
}

void mpb_comm_pushworld(lua_State *L) {
  lua_getfield(L, LUA_REGISTRYINDEX, WORLD_KEY);
}

/* ------------------------------------------------------ sending, taking */
void mpb_comm_send(lua_State *L, mpb_state *st, const mpb_comm *c, int r, int chan,
                   uint32_t flags, struct mpb_wbuf *b, int last) {
  mpb_user_send_hdr(L, st, c->ranks[r], chan, b, last, c->id, flags);
}

static void msg_hdr(const mpb_msg *m, mpb_uhdr *h) { memcpy(h, m->buf, sizeof *h); }

uint32_t mpb_msg_flags(const mpb_msg *m) {
  mpb_uhdr h;
  msg_hdr(m, &h);
  return h.flags;
}

/* First message of comm id in q (of the current task), and its predecessor. */
static mpb_msg *scan(mpb_state *st, mpb_queue *q, uint32_t id, mpb_msg **prev) {
  mpb_msg *p = NULL;
  for (mpb_msg *m = q->head; m; p = m, m = m->next) {
    mpb_uhdr h;
    msg_hdr(m, &h);
    if (h.comm == id && h.task == st->task) {
      *prev = p;
      return m;
    }
  }
  return NULL;
}

mpb_msg *mpb_comm_peek(mpb_state *st, const mpb_comm *c, int chan, int src, int take) {
  mpb_queue *bq = NULL;
  mpb_msg *best = NULL, *bprev = NULL;
  int lo = src < 0 ? 0 : src, hi = src < 0 ? c->size - 1 : src;
  for (int r = lo; r <= hi; r++) {
    mpb_queue *q = mpb_inbox(st, chan, c->ranks[r]);
    if (!q->head) continue;
    mpb_msg *prev, *m = scan(st, q, c->id, &prev);
    if (m && (!best || m->seq < best->seq)) best = m, bprev = prev, bq = q;
  }
  if (best && take) {
    if (bprev) bprev->next = best->next;
    else bq->head = best->next;
    if (bq->tail == best) bq->tail = bprev;
    best->next = NULL;
    if (chan == MPB_CH_USER || chan == MPB_CH_CUSER) st->user_taken++;
  }
  return best;
}

typedef struct { const mpb_comm *c; int chan, src; } want;

static int have(mpb_state *st, void *ud) {
  want *w = ud;
  return mpb_comm_peek(st, w->c, w->chan, w->src, 0) != NULL;
}

mpb_msg *mpb_comm_take(lua_State *L, mpb_state *st, const mpb_comm *c, int chan, int src,
                       const char *fname) {
  mpb_msg *m = mpb_comm_peek(st, c, chan, src, 1);
  if (m) return m;
  mpb_poll(st);
  if ((m = mpb_comm_peek(st, c, chan, src, 1))) return m;
  if ((src >= 0 && c->ranks[src] == st->rank) || c->size == 1)
    luaL_error(L, "mp.%s: [rank %d/%d] would wait forever: no message from %s is queued",
               fname, st->rank, st->size, src < 0 ? "any rank" : "itself");
  want w = {c, chan, src};
  mpb_wait(L, st, have, &w, 0);
  return mpb_comm_peek(st, c, chan, src, 1);
}

/* ------------------------------------------------------------ methods */
lua_Integer mpb_comm_dests(lua_State *L, mpb_state *st, const mpb_comm *c, const char *fname) {
  if (!lua_istable(L, 2)) {
    mpb_comm_checkrank(L, st, c, 2, fname);
    return 1;
  }
  lua_Integer nd = luaL_len(L, 2);
  for (lua_Integer i = 1; i <= nd; i++) {
    lua_geti(L, 2, i);
    int ok;
    lua_Integer r = lua_tointegerx(L, -1, &ok);
    if (!ok || r < 0 || r >= c->size)
      luaL_error(L, "bad argument #1 to 'mp.%s' ([rank %d/%d] rank list item %I is not "
                 "a rank in 0..%d)", fname, st->rank, st->size, (LUAI_UACINT)i, c->size - 1);
    lua_pop(L, 1);
  }
  return nd;
}

int mpb_comm_dest(lua_State *L, lua_Integer i) {
  if (!lua_istable(L, 2)) return (int)lua_tointeger(L, 2);
  lua_geti(L, 2, i);
  int r = (int)lua_tointeger(L, -1);
  lua_pop(L, 1);
  return r;
}

/* comm:send(dst | {dst...}, values...): as mp.send, ranks of comm. */
static int c_send(lua_State *L) {
  mpb_state *st = mpb_get(L);
  mpb_comm *c = mpb_comm_check(L, st, 1, "send");
  int n = lua_gettop(L) - 2, chan = mpb_comm_user_chan(c);
  lua_Integer nd = mpb_comm_dests(L, st, c, "send");
  mpb_wbuf *b = mpb_encode_msg(L, 3, n, "send", 2, sizeof(mpb_uhdr));
  for (lua_Integer i = 1; i <= nd; i++) {
    mpb_comm_send(L, st, c, mpb_comm_dest(L, i), chan, 0, b, i == nd);
    st->user_sent++;
  }
  return 0;
}

/* comm:recv([src]): as mp.recv; without src, the sender's comm rank first. */
static int c_recv(lua_State *L) {
  mpb_state *st = mpb_get(L);
  mpb_comm *c = mpb_comm_check(L, st, 1, "recv");
  int src = lua_isnoneornil(L, 2) ? -1 : mpb_comm_checkrank(L, st, c, 2, "recv");
  lua_settop(L, 1);
  mpb_msg *m = mpb_comm_take(L, st, c, mpb_comm_user_chan(c), src, "recv");
  if (src < 0) lua_pushinteger(L, c->of_world[m->src]);
  return mpb_push_msg(L, st, m, "recv") + (src < 0);
}

/* comm:split(color, key): members with the same color (an integer; nil: in
** none, the result is nil) form a new communicator, ordered by key (default:
** the rank here) then rank. Collective over comm. */
static int c_split(lua_State *L) {
  mpb_state *st = mpb_get(L);
  mpb_comm *c = mpb_comm_check(L, st, 1, "split");
  int64_t mine[3] = {0, 0, c->rank};
  if (!lua_isnoneornil(L, 2)) {
    mine[0] = 1;
    mine[1] = luaL_checkinteger(L, 2);
  }
  if (!lua_isnoneornil(L, 3)) mine[2] = luaL_checkinteger(L, 3);
  int64_t *all = lua_newuserdatauv(L, sizeof mine * (size_t)c->size, 0);
  mpb_coll_allgather_raw(L, st, c, mine, sizeof mine, all, "split");
  uint32_t id = child_id(st, c, mine[1]); /* every member counts, colored or not */
  if (!mine[0]) {
    lua_pushnil(L);
    return 1;
  }
  int n = 0;
  for (int r = 0; r < c->size; r++)
    if (all[3 * r] && all[3 * r + 1] == mine[1]) n++;
  mpb_comm *d = comm_new(L, st, n);
  d->id = id;
  d->task = st->task;
  n = 0;
  for (int r = 0; r < c->size; r++) { /* insertion by (key, parent rank) */
    if (!all[3 * r] || all[3 * r + 1] != mine[1]) continue;
    int k = n++;
    while (k > 0) {
      int q = c->of_world[d->ranks[k - 1]];
      if (all[3 * q + 2] <= all[3 * r + 2]) break;
      d->ranks[k] = d->ranks[k - 1];
      k--;
    }
    d->ranks[k] = c->ranks[r];
  }
  comm_index_ranks(st, d);
  return 1;
}

/* comm:dup(): the same members, a separate message space. Every member must
** call it (in the same order as its other splits and dups), but it needs no
** message: the id is derived. */
static int c_dup(lua_State *L) {
  mpb_state *st = mpb_get(L);
  mpb_comm *c = mpb_comm_check(L, st, 1, "dup");
  mpb_comm *d = comm_new(L, st, c->size);
  d->id = child_id(st, c, -1);
  d->task = st->task;
  memcpy(d->ranks, c->ranks, sizeof(int) * (size_t)c->size);
  comm_index_ranks(st, d);
  return 1;
}

/* comm:ranks(): the world ranks of the members, in comm rank order. */
static int c_ranks(lua_State *L) {
  mpb_comm *c = luaL_checkudata(L, 1, MPB_COMM_MT);
  lua_createtable(L, c->size, 0);
  for (int i = 0; i < c->size; i++) {
    lua_pushinteger(L, c->ranks[i]);
    lua_rawseti(L, -2, i + 1);
  }
  return 1;
}

static int c_index(lua_State *L) {
  mpb_comm *c = luaL_checkudata(L, 1, MPB_COMM_MT);
  const char *k = lua_tostring(L, 2);
  if (k && strcmp(k, "rank") == 0) lua_pushinteger(L, c->rank);
  else if (k && strcmp(k, "size") == 0) lua_pushinteger(L, c->size);
  else if (k && strcmp(k, "id") == 0) lua_pushinteger(L, c->id);
  else {
    lua_pushvalue(L, 2);
    lua_rawget(L, lua_upvalueindex(1));
  }
  return 1;
}

static int c_tostring(lua_State *L) {
  mpb_comm *c = luaL_checkudata(L, 1, MPB_COMM_MT);
  lua_pushfstring(L, "mp.Comm %s(rank %d of %d)", c->id ? "" : "world ", c->rank, c->size);
  return 1;
}

static int on_world(lua_State *L) {
  mpb_comm_pushworld(L);
  lua_insert(L, 1);
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
  return lua_gettop(L);
}

void mpb_comm_setboth(lua_State *L, int mpt, const char *name, lua_CFunction f) {
  lua_getfield(L, LUA_REGISTRYINDEX, MPB_COMM_METHODS);
  lua_pushcfunction(L, f);
  lua_setfield(L, -2, name);
  lua_pop(L, 1);
  lua_pushcfunction(L, f);
  lua_pushcclosure(L, on_world, 1);
  lua_setfield(L, mpt, name);
}

void mpb_open_comm(lua_State *L) {
  mpb_state *st = mpb_get(L);
  int mpt = lua_gettop(L);
  static const luaL_Reg methods[] = {{"send", c_send}, {"recv", c_recv}, {"split", c_split},
                                     {"dup", c_dup}, {"ranks", c_ranks}, {NULL, NULL}};
  luaL_newmetatable(L, MPB_COMM_MT);
  lua_newtable(L);
  luaL_setfuncs(L, methods, 0);
  lua_pushvalue(L, -1);
  lua_setfield(L, LUA_REGISTRYINDEX, MPB_COMM_METHODS);
  lua_pushcclosure(L, c_index, 1);
  lua_setfield(L, -2, "__index");
  lua_pushcfunction(L, c_tostring);
  lua_setfield(L, -2, "__tostring");
  lua_pop(L, 1);
  mpb_comm *w = comm_new(L, st, st->size);
  w->id = 0;
  w->task = -1;
  for (int r = 0; r < st->size; r++) w->ranks[r] = r;
  comm_index_ranks(st, w);
  lua_pushvalue(L, -1);
  lua_setfield(L, LUA_REGISTRYINDEX, WORLD_KEY);
  lua_setfield(L, mpt, "world");
  mpb_coll_methods(L, mpt); /* collectives: methods and mp.X */
}
