/* SPDX-License-Identifier: MIT */
/*
** What every mpi call shares: its arguments checked (communicator, ranks,
** tags) with errors that name the function, the argument and the rank;
** statuses; the send of one value with its tag.
*/
#include <stdio.h>
#include <string.h>

#include "array/array.h"
#include "mpi/mpi.h"
#include "wire/wire.h"

mpb_comm *mpb_mpi_comm(lua_State *L, mpb_mpi *M, int idx, const char *fname) {
  if (!lua_isnoneornil(L, idx)) return mpb_comm_check(L, M->st, idx, fname);
  mpb_check_task(L, M->st, fname);
  return M->world; /* lives for ever: nothing to anchor */
}

static int rank_arg(lua_State *L, mpb_state *st, const mpb_comm *c, int idx, int any,
                    const char *fname, const char *what) {
  int ok;
  lua_Integer r = lua_tointegerx(L, idx, &ok);
  if (ok && (r == MPB_MPI_PROC_NULL || (any && r == MPB_MPI_ANY_SOURCE))) return (int)r;
  if (ok && r >= 0 && r < c->size) return (int)r;
  if (!ok)
    return luaL_error(L, "bad argument #%d to 'mp.%s' (" MPB_RANKFMT " %s rank expected, got %s)",
                      idx, fname, st->rank, st->size, what, luaL_typename(L, idx));
  return luaL_error(L, "bad argument #%d to 'mp.%s' (" MPB_RANKFMT " %s rank %I out of range "
                    "0..%d%s)", idx, fname, st->rank, st->size, what, (LUAI_UACINT)r, c->size - 1,
                    any ? ", PROC_NULL or ANY_SOURCE" : " or PROC_NULL");
}

int mpb_mpi_dest(lua_State *L, mpb_state *st, const mpb_comm *c, int idx, const char *fname) {
  return rank_arg(L, st, c, idx, 0, fname, "destination");
}

int mpb_mpi_source(lua_State *L, mpb_state *st, const mpb_comm *c, int idx, const char *fname) {
  return rank_arg(L, st, c, idx, 1, fname, "source");
}

int mpb_mpi_tag(lua_State *L, mpb_state *st, int idx, int any, const char *fname) {
  int ok;
  lua_Integer t = lua_tointegerx(L, idx, &ok);
  if (ok && ((t >= 0 && t <= st->tag_ub) || (any && t == MPB_MPI_ANY_TAG))) return (int)t;
  if (!ok)
    return luaL_error(L, "bad argument #%d to 'mp.%s' (" MPB_RANKFMT " tag expected, got %s)",
                      idx, fname, st->rank, st->size, luaL_typename(L, idx));
  return luaL_error(L, "bad argument #%d to 'mp.%s' (" MPB_RANKFMT " tag %I %s: tags are "
                    "0..TAG_UB (%d)%s)", idx, fname, st->rank, st->size, (LUAI_UACINT)t,
                    t < 0 ? "is negative" : "is above TAG_UB", st->tag_ub,
                    any ? " or ANY_TAG" : "");
}

void mpb_mpi_describe(char *buf, size_t n, const char *fname, int src, int tag) {
  char t[24];
  if (tag == MPB_MPI_ANY_TAG) snprintf(t, sizeof t, "ANY_TAG");
  else snprintf(t, sizeof t, "tag %d", tag);
  if (src == MPB_MPI_ANY_SOURCE) snprintf(buf, n, "%s(ANY_SOURCE, %s)", fname, t);
  else snprintf(buf, n, "%s(%s)", fname, t);
}

uint32_t mpb_mpi_trname(mpb_state *st, const char *fname, int src, int tag) {
  if (!st->trace) return 0;
  char buf[64];
  if (tag == MPB_MPI_NOTAG) snprintf(buf, sizeof buf, "%s", fname);
  else mpb_mpi_describe(buf, sizeof buf, fname, src, tag);
  return mpb_trace_string(st->trace, buf, strlen(buf));
}

/* A status is a small userdata ("mp.mpi.Status"), read by field: one
** allocation where a table takes two and three stores, on the path of every
** receive. */
typedef struct {
  lua_Integer source, tag, count;
  int cancelled;
} status_t;

static const char STATUS_MT = 0; /* its address: the metatable's key in the registry */

static void status(lua_State *L, int source, int tag, lua_Integer count, int cancelled) {
  status_t *s = lua_newuserdatauv(L, sizeof *s, 0);
  s->source = source;
  s->tag = tag;
  s->count = count;
  s->cancelled = cancelled;
  lua_rawgetp(L, LUA_REGISTRYINDEX, &STATUS_MT);
  lua_setmetatable(L, -2);
}

/* st.source, st.tag, st.count, st.cancelled (and C's MPI_SOURCE, MPI_TAG) */
static int status_index(lua_State *L) {
  const status_t *s = lua_touserdata(L, 1);
  const char *k = lua_tostring(L, 2);
  if (!k) return 0;
  if (strcmp(k, "source") == 0 || strcmp(k, "MPI_SOURCE") == 0) lua_pushinteger(L, s->source);
  else if (strcmp(k, "tag") == 0 || strcmp(k, "MPI_TAG") == 0) lua_pushinteger(L, s->tag);
  else if (strcmp(k, "count") == 0) lua_pushinteger(L, s->count);
  else if (strcmp(k, "cancelled") == 0) lua_pushboolean(L, s->cancelled);
  else lua_pushnil(L);
  return 1;
}

static int status_tostring(lua_State *L) {
  const status_t *s = lua_touserdata(L, 1);
  lua_pushfstring(L, "mp.mpi.Status (source %I, tag %I, count %I%s)", (LUAI_UACINT)s->source,
                  (LUAI_UACINT)s->tag, (LUAI_UACINT)s->count, s->cancelled ? ", cancelled" : "");
  return 1;
}

void mpb_mpi_status_open(lua_State *L) {
  luaL_newmetatable(L, "mp.mpi.Status");
  lua_pushcfunction(L, status_index);
  lua_setfield(L, -2, "__index");
  lua_pushcfunction(L, status_tostring);
  lua_setfield(L, -2, "__tostring");
  lua_rawsetp(L, LUA_REGISTRYINDEX, &STATUS_MT);
}

void mpb_mpi_push_null(lua_State *L, int cancelled) {
  lua_pushnil(L);
  status(L, cancelled ? MPB_MPI_ANY_SOURCE : MPB_MPI_PROC_NULL, MPB_MPI_ANY_TAG, 0, cancelled);
}

void mpb_mpi_push_count(lua_State *L, lua_Integer count) {
  status(L, MPB_MPI_PROC_NULL, MPB_MPI_ANY_TAG, count, 0);
}

void mpb_mpi_push_status(lua_State *L, const mpb_comm *c, const mpb_msg *m) {
  mpb_uhdr h = mpb_msg_hdr(m);
  status(L, mpb_comm_of(c, m->src), h.aux, h.seq, 0);
}

int mpb_mpi_push(lua_State *L, mpb_state *st, const mpb_comm *c, mpb_msg *m,
                 const char *fname) {
  mpb_uhdr h = mpb_msg_hdr(m);
  int src = mpb_comm_of(c, m->src);
  luaL_checkstack(L, 4, fname);
  int base = lua_gettop(L);
  int n = mpb_push_msg(L, st, m, fname);
  if (n != 1) { /* one value a message */
    lua_settop(L, base);
    lua_pushnil(L);
  }
  status(L, src, h.aux, h.seq, 0);
  return 2;
}

void mpb_mpi_send(lua_State *L, mpb_state *st, const mpb_comm *c, int vidx, int dest, int tag,
                  uint32_t token, uint64_t ids[2], const char *fname) {
  /* the status's count travels in seq: elements of an array, bytes of a
  ** string, else the bytes of the encoded value */
  int t = lua_type(L, vidx);
  const mpb_array *a = t == LUA_TUSERDATA ? mpb_array_test(L, vidx) : NULL;
  size_t count = a ? (size_t)a->n : t == LUA_TSTRING ? lua_rawlen(L, vidx) : 0;
  struct mpb_wbuf *b = mpb_encode_msg(L, vidx, 1, fname, 1, sizeof(mpb_uhdr));
  if (!a && t != LUA_TSTRING) count = b->len + b->extlen - sizeof(mpb_uhdr);
  if (count > UINT32_MAX) count = UINT32_MAX;
  mpb_uhdr h = {0, c->id, token ? MPB_MPI_F_SSEND | token << MPB_MPI_TOKEN_SHIFT : 0,
                (uint32_t)count, tag};
  mpb_send(L, st, c->ranks[dest], MPB_CH_MPI, b, 1, &h, ids);
  lua_pop(L, 1);
}
