/* SPDX-License-Identifier: MIT */
/*
** The fan-out builtins: mp.exec, mp.include, mp.require, mp.cd, mp.nfan
** (start tasks, rank 0 only) and mp.handout / mp.handin (inside a task: rank
** 0's values down the tree, everyone's sum up the tree).
*/
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "array/array.h"
#include "array/array_ops.h"
#include "coll/coll.h"
#include "tasks/tasks.h"
#include "wire/wire.h"

/* ------------------------------------------------------- task starters */
static int mp_exec(lua_State *L) {
  mpb_state *st = mpb_get(L);
  if (lua_type(L, 1) == LUA_TTABLE) { /* mp.exec{f, args..., option = v} */
    lua_settop(L, 1);
    if (lua_getfield(L, LUA_REGISTRYINDEX, MPB_EXEC_OPTIONS) != LUA_TFUNCTION)
      luaL_argexpected(L, 0, 1, "function or chunk");
    lua_insert(L, 1);
    lua_call(L, 1, LUA_MULTRET); /* f, args... */
  }
  int n = lua_gettop(L);
  if (lua_type(L, 1) == LUA_TSTRING) {
    lua_pushliteral(L, "=mp.exec");
    lua_insert(L, 2);
    return mpb_task_run(L, st, MPB_TASK_CHUNK, n + 1, "exec");
  }
  luaL_argexpected(L, lua_isfunction(L, 1), 1, "function or chunk");
  return mpb_task_run(L, st, MPB_TASK_CALL, n, "exec");
}

/* A FILE* owned by a userdata, so an error raised while reading (memory)
** closes it (liolib's rule). */
static int file_gc(lua_State *L) {
  FILE **f = lua_touserdata(L, 1);
  if (*f) fclose(*f);
  *f = NULL;
  return 0;
}

/* Read a whole file as a chunk text; compile it here first so that a syntax
** error is reported once, before any rank starts. Pushes text. */
static void read_chunk(lua_State *L, const char *path, const char *fname) {
  FILE **fp = lua_newuserdatauv(L, sizeof *fp, 0);
  *fp = NULL;
  lua_newtable(L);
  lua_pushcfunction(L, file_gc);
  lua_setfield(L, -2, "__gc");
  lua_setmetatable(L, -2);
  int fidx = lua_gettop(L);
  *fp = fopen(path, "rb");
  if (!*fp) {
    mpb_state *st = mpb_get(L);
    luaL_error(L, "mp.%s: " MPB_RANKFMT " cannot open '%s': %s", fname, st->rank, st->size,
               path, strerror(errno));
  }
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  char buf[4096];
  size_t k;
  while ((k = fread(buf, 1, sizeof buf, *fp)) > 0) luaL_addlstring(&b, buf, k);
  int bad = ferror(*fp);
  luaL_pushresult(&b);
  fclose(*fp);
  *fp = NULL;
  lua_remove(L, fidx);
  if (bad) luaL_error(L, "mp.%s: cannot read '%s'", fname, path);
  size_t len;
  char *text = (char *)lua_tolstring(L, -1, &len);
  if (len > 0 && text[0] == '#') { /* skip a '#!' line, keeping line numbers */
    size_t i = 0;
    while (i < len && text[i] != '\n') i++;
    lua_pushlstring(L, text + i, len - i);
    lua_replace(L, -2);
  }
  lua_pushfstring(L, "@%s", path);
  text = (char *)lua_tolstring(L, -2, &len);
  if (luaL_loadbufferx(L, text, len, lua_tostring(L, -1), "t") != LUA_OK) lua_error(L);
  lua_pop(L, 2);
}

static int include(lua_State *L) {
  mpb_state *st = mpb_get(L);
  const char *path = luaL_checkstring(L, 1);
  int nargs = lua_gettop(L) - 1;
  read_chunk(L, path, "include");
  lua_pushfstring(L, "@%s", path);
  lua_rotate(L, 2, 2); /* path, text, @path, args... */
  return mpb_task_run(L, st, MPB_TASK_CHUNK, nargs + 2, "include");
}

static int require_all(lua_State *L) {
  mpb_state *st = mpb_get(L);
  luaL_checkstring(L, 1);
  lua_settop(L, 1);
  lua_getglobal(L, "package");
  lua_getfield(L, -1, "searchpath");
  lua_pushvalue(L, 1);
  lua_getfield(L, -3, "path");
  lua_call(L, 2, 1);
  lua_remove(L, 2);
  if (lua_isnil(L, 2)) { /* not a Lua file on rank 0's path: each rank requires it */
    lua_pushnil(L);
    return mpb_task_run(L, st, MPB_TASK_REQUIRE, 3, "require");
  }
  const char *path = lua_tostring(L, 2);
  read_chunk(L, path, "require");
  lua_insert(L, 2); /* mod, text, path */
  return mpb_task_run(L, st, MPB_TASK_REQUIRE, 3, "require");
}

static int cd(lua_State *L) {
  mpb_state *st = mpb_get(L);
  if (lua_isnoneornil(L, 1)) {
    char buf[4096];
    if (!getcwd(buf, sizeof buf)) return luaL_error(L, "mp.cd: cannot get the current directory");
    lua_settop(L, 0);
    lua_pushstring(L, buf);
  }
  luaL_checkstring(L, 1);
  lua_settop(L, 1);
  return mpb_task_run(L, st, MPB_TASK_CD, 1, "cd");
}

static int nfan(lua_State *L) {
  mpb_state *st = mpb_get(L);
  int old = st->nfan;
  if (!lua_isnoneornil(L, 1)) {
    int ok;
    lua_Integer f = lua_tointegerx(L, 1, &ok);
    if (!ok || f < 1 || f > INT32_MAX)
      return luaL_error(L, "bad argument #1 to 'mp.nfan' (" MPB_RANKFMT " fan-out must be an "
                        "integer in 1..%d, got %s)", st->rank, st->size, INT32_MAX,
                        luaL_tolstring(L, 1, NULL));
    if (st->rank != 0 || st->in_task)
      return luaL_error(L, "mp.nfan: [rank %d/%d] only rank 0, outside a task, sets the fan-out",
                        st->rank, st->size);
    st->nfan = (int)f; /* past size - 1, as flat as size - 1 */
  }
  lua_pushinteger(L, old);
  return 1;
}

/* ------------------------------------------------------ handout/handin */
/* mp.handout(...): rank 0's values on every rank, down the fan-out tree;
** inner ranks forward the message they got as it is (parts in place). The
** other ranks pass nothing (or nils): a value there would be ignored. */
static int handout(lua_State *L) {
  mpb_state *st = mpb_get(L);
  mpb_check_task(L, st, "handout");
  int f, l;
  mpb_children(st, st->rank, &f, &l);
  if (st->rank == 0) {
    int n = lua_gettop(L);
    struct mpb_wbuf *b = mpb_encode_msg(L, 1, n, "handout", 1, sizeof(mpb_uhdr));
    for (int r = f; r <= l; r++) mpb_user_send(L, st, r, MPB_CH_HANDOUT, b, r == l);
    lua_pop(L, 1);
    return n;
  }
  for (int i = 1; i <= lua_gettop(L); i++) /* nil: the rank-0-or-nil idiom */
    if (!lua_isnil(L, i))
      luaL_error(L, "bad argument #%d to 'mp.handout' (" MPB_RANKFMT " only rank 0 hands "
                 "values out (the others get rank 0's): call mp.handout() here, got %s)", i,
                 st->rank, st->size, luaL_typename(L, i));
  lua_settop(L, 0);
  mpb_msg *got = mpb_user_take(L, st, MPB_CH_HANDOUT, mpb_parent(st, st->rank), "handout");
  if (f <= l && !(got = mpb_msg_inline_strs(got))) /* it goes on as it is */
    luaL_error(L, "mp.handout: " MPB_RANKFMT " out of memory", st->rank, st->size);
  mpb_msg **h = mpb_msg_hold(L, got);
  mpb_msg_check_lost(L, st, *h, "handout"); /* before it goes on */
  uint64_t ids[2], span[2] = {st->send_ids + 1, st->send_ids};
  for (int r = f; r <= l; r++) {
    mpb_msg_forward(L, st, *h, r, MPB_CH_HANDOUT, ids);
    span[1] = ids[1];
  }
  if (span[0] <= span[1]) mpb_wait(L, st, mpb_sends_gone, span, 0);
  mpb_msg *m = *h;
  *h = NULL;
  lua_settop(L, 0);
  return mpb_push_msg(L, st, m, "handout");
}

/* mp.handin(v): the sum of every rank's v at rank 0, up the fan-out tree,
** with allreduce's "sum" (numbers, typed arrays and tables field by field,
** keyed fields included); nil adds nothing. */
static int handin(lua_State *L) {
  mpb_state *st = mpb_get(L);
  mpb_check_task(L, st, "handin");
  if (lua_gettop(L) > 1) mpb_check_nargs(L, st, 1, 1, "handin", "one value");
  lua_settop(L, 1);
  mpb_coll x;
  memset(&x, 0, sizeof x);
  x.st = st;
  x.fname = "handin";
  x.op = MPB_RED_SUM;
  int f, l, own = 0;
  if (st->rank == 0 && !lua_isnil(L, 1)) { /* never sent: what could not travel fails here too */
    mpb_encode_done(st, mpb_encode_msg(L, 1, 1, "handin", 1, 0));
    lua_pop(L, 1);
  }
  mpb_children(st, st->rank, &f, &l);
  for (int r = f; r <= l; r++) {
    mpb_msg *m = mpb_user_take(L, st, MPB_CH_HANDIN, r, "handin");
    int n = mpb_push_msg(L, st, m, "handin");
    if (n == 0) lua_pushnil(L);
    lua_settop(L, 2);
    if (lua_isnil(L, 2)) {
      lua_pop(L, 1);
    } else if (lua_isnil(L, 1)) {
      lua_replace(L, 1);
      own = 1;
    } else {
      mpb_coll_combine(L, &x, r, own);
      own = 1;
    }
  }
  if (st->rank == 0) {
    if (!own && mpb_array_test(L, 1)) { /* never hand back the caller's own array */
      lua_getfield(L, 1, "copy");
      lua_insert(L, 1);
      lua_call(L, 1, 1);
    }
    return 1;
  }
  struct mpb_wbuf *b = mpb_encode_msg(L, 1, 1, "handin", 1, sizeof(mpb_uhdr));
  mpb_user_send(L, st, mpb_parent(st, st->rank), MPB_CH_HANDIN, b, 1);
  return 0;
}

void mpb_open_task(lua_State *L) {
  mpb_tasks_open(L, mpb_get(L));
  mpb_task_handlers(mpb_get(L));
  static const luaL_Reg funcs[] = {
      {"exec", mp_exec}, {"include", include}, {"require", require_all}, {"cd", cd},
      {"nfan", nfan}, {"handout", handout}, {"handin", handin}, {NULL, NULL}};
  luaL_setfuncs(L, funcs, 0);
}
