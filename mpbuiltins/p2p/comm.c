/* SPDX-License-Identifier: MIT */
/*
** Communicators: mp.world, comm.rank, comm.size, comm.id, comm:ranks(), and
** what the files that work on communicators share: checking one, its ranks
** and destinations, sending to and taking from one.
**
** Why no MPI communicators: an MPI_Comm_split is a blocking collective that
** an abort could leave half done, and each one spends a context id; after
** thousands of aborts they run out (DESIGN.md 5.4). A communicator here is a
** list of ranks and an id; every message carries the id in its header and
** travels over st->user like all mp traffic, so the abort drain covers it.
** A communicator made in a task dies with it (the messages of that task are
** gone after it); mp.world lives for ever.
*/
#include <stdlib.h>
#include <string.h>

#include "p2p/p2p.h"
#include "wire/wire.h"

static const char WORLD_KEY[] = "mp.world";

/* ------------------------------------------------------------ creation */
/* The userdata holds the rank tables itself (2 integers per member, none
** per rank of the job): nothing to free, nothing to leak.
** Its one user value is free for upper layers (layout/: an attached topology). */
mpb_comm *mpb_comm_new(lua_State *L, mpb_state *st, int n, uint32_t id) {
  size_t sz = sizeof(mpb_comm) + sizeof(int) * 2 * (size_t)n;
  mpb_comm *c = lua_newuserdatauv(L, sz, 1);
  memset(c, 0, sizeof *c);
  c->ranks = (int *)(c + 1);
  c->order = c->ranks + n;
  c->size = n;
  c->rank = -1;
  c->id = id;
  c->task = st->task;
  luaL_setmetatable(L, MPB_COMM_MT);
  return c;
}

void mpb_comm_index(mpb_state *st, mpb_comm *c) {
  mpb_ranks_index(c->ranks, c->size, c->order);
  c->rank = mpb_comm_of(c, st->rank);
}

uint32_t mpb_comm_next_id(lua_State *L, mpb_state *st) {
  mpb_p2p *p = mpb_p2p_of(st);
  if (p->comm_ids_task != st->task) { /* ids restart with each task */
    p->comm_ids_task = st->task;
    p->comm_ids = 0;
  }
  if (p->comm_ids == UINT32_MAX)
    luaL_error(L, "mp: " MPB_RANKFMT " too many communicators in one task", st->rank, st->size);
  return p->comm_ids + 1;
}

void mpb_comm_used_id(mpb_state *st, uint32_t id) {
  mpb_p2p *p = mpb_p2p_of(st);
  if (id > p->comm_ids) p->comm_ids = id;
}

/* ------------------------------------------------------------- checks */
/* The longest list of destinations of one send (a list is read into C
** storage first: a length a proxy made up is refused, not allocated). */
#define MPB_DESTS_MAX ((lua_Integer)1 << 24)

/* Checking a userdata against this state's metatable of communicators by
** pointer skips luaL_testudata's registry lookup by name, a good part of
** the cost of a small mp.send. The pointer is the state's own (p2p's slot):
** a process-wide one would outlive the state that made it. */
static mpb_comm *test_comm(lua_State *L, mpb_state *st, int idx) {
  const void *comm_mt = mpb_p2p_of(st)->comm_mt;
  if (lua_getmetatable(L, idx)) {
    const void *mt = lua_topointer(L, -1);
    lua_pop(L, 1);
    if (mt == comm_mt) return lua_touserdata(L, idx);
  }
  return NULL;
}

mpb_comm *mpb_comm_check(lua_State *L, mpb_state *st, int idx, const char *fname) {
  mpb_comm *c = test_comm(L, st, idx);
  if (!c)
    luaL_error(L, "bad argument #%d to 'mp.%s' (" MPB_RANKFMT " communicator expected, got %s)",
               idx, fname, st->rank, st->size, luaL_typename(L, idx));
  mpb_check_task(L, st, fname);
  if (c->task >= 0 && c->task != st->task)
    luaL_error(L, "mp.%s: " MPB_RANKFMT " communicator from an earlier task (a communicator "
               "made in a task ends with it)", fname, st->rank, st->size);
  return c;
}

int mpb_comm_badrank(lua_State *L, mpb_state *st, const mpb_comm *c, int idx, int arg,
                     const char *fname) {
  int ok;
  lua_Integer r = lua_tointegerx(L, idx, &ok);
  if (!ok)
    luaL_error(L, "bad argument #%d to 'mp.%s' (" MPB_RANKFMT " rank expected, got %s)", arg,
               fname, st->rank, st->size,
               lua_type(L, idx) == LUA_TNUMBER ? "a float" : luaL_typename(L, idx));
  return luaL_error(L, "bad argument #%d to 'mp.%s' (" MPB_RANKFMT " rank %I out of range 0..%d)",
                    arg, fname, st->rank, st->size, (LUAI_UACINT)r, c->size - 1);
}

lua_Integer mpb_comm_destlist(lua_State *L, mpb_state *st, const mpb_comm *c, int idx, int arg,
                              const char *fname, int *buf, int nbuf, const int **ranks) {
  idx = lua_absindex(L, idx);
  lua_Integer nd = luaL_len(L, idx);
  if (nd < 1)
    luaL_error(L, "bad argument #%d to 'mp.%s' (" MPB_RANKFMT " empty list of destinations: "
               "a rank or a list of ranks expected)", arg, fname, st->rank, st->size);
  if (nd > MPB_DESTS_MAX)
    luaL_error(L, "bad argument #%d to 'mp.%s' (" MPB_RANKFMT " a list of %I destinations is "
               "too long (at most %I))", arg, fname, st->rank, st->size, (LUAI_UACINT)nd,
               (LUAI_UACINT)MPB_DESTS_MAX);
  int *v = buf;
  if (nd > nbuf) v = lua_newuserdatauv(L, sizeof(int) * (size_t)nd, 0);
  for (lua_Integer i = 1; i <= nd; i++) {
    lua_geti(L, idx, i);
    int ok;
    lua_Integer r = lua_tointegerx(L, -1, &ok);
    if (!ok)
      luaL_error(L, "bad argument #%d to 'mp.%s' (" MPB_RANKFMT " rank list item %I is not an "
                 "integer (a %s))", arg, fname, st->rank, st->size, (LUAI_UACINT)i,
                 luaL_typename(L, -1));
    if (r < 0 || r >= c->size)
      luaL_error(L, "bad argument #%d to 'mp.%s' (" MPB_RANKFMT " rank list item %I: rank %I "
                 "out of range 0..%d)", arg, fname, st->rank, st->size, (LUAI_UACINT)i,
                 (LUAI_UACINT)r, c->size - 1);
    lua_pop(L, 1);
    v[i - 1] = (int)r;
  }
  *ranks = v;
  return nd;
}

void mpb_comm_pushworld(lua_State *L) {
  lua_getfield(L, LUA_REGISTRYINDEX, WORLD_KEY);
}

/* -------------------------------------------------------------- taking */
/* First message of comm id in q (of the current task). */
static mpb_msg *scan(mpb_state *st, mpb_queue *q, uint32_t id) {
  for (mpb_msg *m = q->head; m; m = m->next) {
    mpb_uhdr h = mpb_msg_hdr(m);
    if (h.comm == id && h.task == st->task) return m;
  }
  return NULL;
}

/* c's oldest message on chan among the first of each member's queue. */
static mpb_msg *by_member(mpb_state *st, const mpb_comm *c, int chan) {
  mpb_msg *best = NULL;
  for (int r = 0; r < c->size; r++) {
    mpb_msg *m = scan(st, mpb_inbox(st, chan, c->ranks[r]), c->id);
    st->any_looks++;
    if (m && (!best || m->seq < best->seq)) best = m;
  }
  return best;
}

static int of_comm(const mpb_state *st, const mpb_msg *m, const void *ud) {
  const mpb_comm *c = ud;
  mpb_uhdr h = mpb_msg_hdr(m);
  return h.comm == c->id && h.task == st->task && mpb_comm_of(c, m->src) >= 0;
}

/* The same, found in the channel's arrival order: a receive looks at the
** messages that came before its own, whatever the number of ranks (past
** c->size of other communicators', at each member's queue instead). */
static mpb_msg *find_any(mpb_state *st, const mpb_comm *c, int chan) {
  int gave_up;
  mpb_msg *m = mpb_inbox_first(st, chan, c->size, of_comm, c, &gave_up);
  return gave_up ? by_member(st, c, chan) : m;
}

/* m, out of the mailbox, is taken by a receive on chan. */
static mpb_msg *taken(mpb_state *st, mpb_msg *m, int chan) {
  mpb_trace_taken(st, m);
  if (chan == MPB_CH_USER || chan == MPB_CH_CUSER || chan == MPB_CH_COLL) st->user_taken++;
  return m;
}

mpb_msg *mpb_comm_find(mpb_state *st, const mpb_comm *c, int chan, int src, int take) {
  mpb_msg *m = src < 0 ? find_any(st, c, chan)
                      : scan(st, mpb_inbox(st, chan, c->ranks[src]), c->id);
  if (m && take) {
    mpb_inbox_take(st, m);
    taken(st, m, chan);
  }
  return m;
}

typedef struct { const mpb_comm *c; int chan, src; const mpb_want *got; } want;

static int have(mpb_state *st, void *ud) {
  want *w = ud;
  return (w->got && w->got->got) || mpb_comm_peek(st, w->c, w->chan, w->src, 0) != NULL;
}

mpb_msg *mpb_comm_take(lua_State *L, mpb_state *st, const mpb_comm *c, int chan, int src,
                       const char *fname) {
  mpb_msg *m = mpb_comm_peek(st, c, chan, src, 1);
  if (m) return m;
  /* From one sender, none queued: the message is handed over as it arrives
  ** (chan/mailbox.h). User messages only: the wait looks at the control
  ** channel. */
  mpb_want got = {chan, src >= 0 ? c->ranks[src] : -1, c->id, NULL};
  if (src >= 0) {
    mpb_poll_for(st, 0, &got);
    if (got.got) return taken(st, got.got, chan);
  } else {
    mpb_poll_ctl(st, 0);
    if ((m = mpb_comm_peek(st, c, chan, src, 1))) return m;
  }
  if ((src >= 0 && c->ranks[src] == st->rank) || c->size == 1)
    luaL_error(L, "mp.%s: " MPB_RANKFMT " would wait forever: no message from %s is queued",
               fname, st->rank, st->size, src < 0 ? "any rank" : "itself");
  want w = {c, chan, src, src >= 0 ? &got : NULL};
  mpb_waitdesc d = {fname, got.src, c->id, 0, w.got ? &got : NULL};
  mpb_wait_described(L, st, have, &w, &d);
  if (got.got) return taken(st, got.got, chan);
  return mpb_comm_peek(st, c, chan, src, 1);
}

/* ------------------------------------------------------------ methods */
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

/* Methods first: comm:send(...) and comm:recv(...) look their method up on
** every call, and a check of the userdata by name before it cost as much
** as the rest of a send to itself. The fields follow. */
static int c_index(lua_State *L) {
  lua_pushvalue(L, 2);
  if (lua_rawget(L, lua_upvalueindex(1)) != LUA_TNIL) return 1;
  mpb_comm *c = luaL_checkudata(L, 1, MPB_COMM_MT);
  const char *k = lua_type(L, 2) == LUA_TSTRING ? lua_tostring(L, 2) : NULL;
  if (k && strcmp(k, "rank") == 0) lua_pushinteger(L, c->rank);
  else if (k && strcmp(k, "size") == 0) lua_pushinteger(L, c->size);
  else if (k && strcmp(k, "id") == 0) lua_pushinteger(L, c->id);
  else lua_pushnil(L);
  return 1;
}

static int c_tostring(lua_State *L) {
  mpb_comm *c = luaL_checkudata(L, 1, MPB_COMM_MT);
  lua_pushfstring(L, "mp.Comm %s(rank %d of %d)", c->id ? "" : "world ", c->rank, c->size);
  return 1;
}

/* mp.X(...) is comm:X(...) on mp.world: the same C function, registered as
** a closure over mp.world for mp.X and as a plain function (no upvalue) for
** the method. Telling them apart costs one lua_touserdata; shifting the
** arguments to put mp.world first cost a sixth of a small round trip. */
void mpb_comm_setboth(lua_State *L, int mpt, const char *name, lua_CFunction f) {
  lua_getfield(L, LUA_REGISTRYINDEX, MPB_COMM_METHODS);
  lua_pushcfunction(L, f);
  lua_setfield(L, -2, name);
  lua_pop(L, 1);
  mpb_comm_pushworld(L);
  lua_pushcclosure(L, f, 1);
  lua_setfield(L, mpt, name);
}

void mpb_comm_setpair(lua_State *L, int mpt, const char *name, lua_CFunction f,
                      lua_CFunction fw) {
  lua_getfield(L, LUA_REGISTRYINDEX, MPB_COMM_METHODS);
  lua_pushcfunction(L, f);
  lua_setfield(L, -2, name);
  lua_pop(L, 1);
  lua_pushcfunction(L, fw);
  lua_setfield(L, mpt, name);
}

#define P2P_KEY "mp.p2p"

void mpb_open_comm(lua_State *L) {
  mpb_state *st = mpb_get(L);
  int mpt = lua_gettop(L);
  static const luaL_Reg methods[] = {{"ranks", c_ranks}, {NULL, NULL}};
  mpb_p2p *p = lua_newuserdatauv(L, sizeof *p, 0);
  memset(p, 0, sizeof *p);
  p->probe_task = -1;
  lua_setfield(L, LUA_REGISTRYINDEX, P2P_KEY);
  st->slot[MPB_SLOT_P2P] = p;
  static const luaL_Reg meta[] = {{"__tostring", c_tostring}, {NULL, NULL}};
  mpb_class_begin(L, MPB_COMM_MT, methods);
  p->comm_mt = lua_topointer(L, -2);
  lua_pushvalue(L, -1);
  lua_setfield(L, LUA_REGISTRYINDEX, MPB_COMM_METHODS);
  mpb_class_end(L, c_index, meta);
  mpb_comm *w = mpb_comm_new(L, st, st->size, 0);
  w->task = -1;
  for (int r = 0; r < st->size; r++) w->ranks[r] = r;
  mpb_comm_index(st, w);
  p->world = w;
  lua_pushvalue(L, -1);
  lua_setfield(L, LUA_REGISTRYINDEX, WORLD_KEY);
  lua_setfield(L, mpt, "world");
}

/* ------------------------------------------------------------ MPI's */
int mpb_comm_mpi(mpb_state *st, const mpb_comm *c, MPI_Comm *out, int *own) {
  *out = mpb_ccomm(st);
  *own = 0;
  if (c->id == 0) return MPI_SUCCESS;
  MPI_Group all, sub;
  int rc = MPI_Comm_group(*out, &all);
  if (rc != MPI_SUCCESS) return rc;
  rc = MPI_Group_incl(all, c->size, c->ranks, &sub);
  if (rc == MPI_SUCCESS) {
    rc = MPI_Comm_create_group(mpb_ccomm(st), sub, 0x6d70 /* "mp" */, out);
    *own = rc == MPI_SUCCESS;
    int rc2 = MPI_Group_free(&sub);
    if (rc == MPI_SUCCESS) rc = rc2;
  }
  int rc3 = MPI_Group_free(&all);
  return rc == MPI_SUCCESS ? rc3 : rc;
}
