/*
** The fan-out builtins: mp.exec, mp.include, mp.require, mp.cd, mp.nfan
** (start tasks, rank 0 only) and mp.handout / mp.handin (inside a task: rank
** 0's values down the tree, everyone's sum up the tree).
*/
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "array/array.h"
#include "chan/chan.h"
#include "wire/wire.h"

/* ------------------------------------------------------- task starters */
static int exec(lua_State *L) {
  mpb_state *st = mpb_get(L);
  int n = lua_gettop(L);
  if (lua_type(L, 1) == LUA_TSTRING) {
    lua_pushliteral(L, "=mp.exec");
    lua_insert(L, 2);
    return mpb_task_run(L, st, MPB_TASK_CHUNK, n + 1, "exec");
  }
  luaL_argexpected(L, lua_isfunction(L, 1), 1, "function or chunk");
  return mpb_task_run(L, st, MPB_TASK_CALL, n, "exec");
}

/* Read a whole file as a chunk text; compile it here first so that a syntax
** error is reported once, before any rank starts. Pushes text. */
static void read_chunk(lua_State *L, const char *path, const char *fname) {
  FILE *f = fopen(path, "rb");
  if (!f) luaL_error(L, "mp.%s: cannot open '%s'", fname, path);
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  char buf[4096];
  size_t k;
  while ((k = fread(buf, 1, sizeof buf, f)) > 0) luaL_addlstring(&b, buf, k);
  int bad = ferror(f);
  fclose(f);
  if (bad) luaL_error(L, "mp.%s: cannot read '%s'", fname, path);
  luaL_pushresult(&b);
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
    lua_Integer f = luaL_checkinteger(L, 1);
    luaL_argcheck(L, f >= 1, 1, "fan-out must be at least 1");
    if (st->rank != 0 || st->in_task)
      return luaL_error(L, "mp.nfan: [rank %d/%d] only rank 0, outside a task, sets the fan-out",
                        st->rank, st->size);
    st->nfan = f > st->size ? (st->size > 1 ? st->size : 1) : (int)f;
  }
  lua_pushinteger(L, old);
  return 1;
}

/* ------------------------------------------------------ handout/handin */
static int handout(lua_State *L) {
  mpb_state *st = mpb_get(L);
  mpb_check_task(L, st, "handout");
  int f, l;
  mpb_staff(st, st->rank, &f, &l);
  if (st->rank == 0) {
    int n = lua_gettop(L);
    mpb_wbuf *b = mpb_encode_msg(L, 1, n, "handout", 1, sizeof(mpb_uhdr));
    for (int r = f; r <= l; r++) mpb_user_send(L, st, r, MPB_CH_HANDOUT, b, r == l);
    lua_pop(L, 1);
    return n;
  }
  lua_settop(L, 0);
  mpb_msg *m = mpb_user_take(L, st, MPB_CH_HANDOUT, (st->rank - 1) / st->nfan, "handout");
  for (int r = f; r <= l; r++) mpb_user_send_bytes(L, st, r, MPB_CH_HANDOUT, m->buf, m->len, 0);
  return mpb_push_msg(L, st, m, "handout");
}

/* acc (at -2) + v (at -1) -> acc at -2; v popped. Numbers, nil, typed arrays
** and flat tables of numbers (element-wise) add. */
static void add_into(lua_State *L, mpb_state *st, int from) {
  if (lua_isnil(L, -1)) {
    lua_pop(L, 1);
    return;
  }
  if (lua_isnil(L, -2)) {
    lua_replace(L, -2);
    return;
  }
  if (lua_type(L, -1) == LUA_TNUMBER && lua_type(L, -2) == LUA_TNUMBER) {
    lua_arith(L, LUA_OPADD);
    return;
  }
  mpb_array *a = mpb_array_test(L, -2), *b = mpb_array_test(L, -1);
  if (a && b) {
    if (a->n != b->n)
      luaL_error(L, "mp.handin: [rank %d/%d] array of %I elements from rank %d, %I here",
                 st->rank, st->size, (LUAI_UACINT)b->n, from, (LUAI_UACINT)a->n);
    for (int64_t i = 0; i < a->n; i++) mpb_array_setd(a, i, mpb_array_getd(a, i) + mpb_array_getd(b, i));
    lua_pop(L, 1);
    return;
  }
  if (lua_istable(L, -1) && lua_istable(L, -2)) {
    lua_Integer n = luaL_len(L, -2);
    if (luaL_len(L, -1) != n)
      luaL_error(L, "mp.handin: [rank %d/%d] table of length %I from rank %d, %I here", st->rank,
                 st->size, (LUAI_UACINT)luaL_len(L, -1), from, (LUAI_UACINT)n);
    for (lua_Integer i = 1; i <= n; i++) {
      lua_geti(L, -2, i);
      lua_geti(L, -2, i);
      if (lua_type(L, -1) != LUA_TNUMBER || lua_type(L, -2) != LUA_TNUMBER)
        luaL_error(L, "mp.handin: [rank %d/%d] item %I is not a number", st->rank, st->size,
                   (LUAI_UACINT)i);
      lua_arith(L, LUA_OPADD);
      lua_seti(L, -3, i);
    }
    lua_pop(L, 1);
    return;
  }
  luaL_error(L, "mp.handin: [rank %d/%d] cannot add a %s from rank %d to a %s", st->rank,
             st->size, luaL_typename(L, -1), from, luaL_typename(L, -2));
}

static int handin(lua_State *L) {
  mpb_state *st = mpb_get(L);
  mpb_check_task(L, st, "handin");
  lua_settop(L, 1);
  if (lua_istable(L, 1)) { /* sum into a copy: the caller's table stays as it was */
    lua_Integer n = luaL_len(L, 1);
    lua_createtable(L, (int)n, 0);
    for (lua_Integer i = 1; i <= n; i++) {
      lua_geti(L, 1, i);
      lua_seti(L, -2, i);
    }
    lua_replace(L, 1);
  } else if (mpb_array_test(L, 1)) {
    lua_getfield(L, 1, "copy");
    lua_pushvalue(L, 1);
    lua_call(L, 1, 1);
    lua_replace(L, 1);
  }
  int f, l;
  mpb_staff(st, st->rank, &f, &l);
  for (int r = f; r <= l; r++) {
    mpb_msg *m = mpb_user_take(L, st, MPB_CH_HANDIN, r, "handin");
    int n = mpb_push_msg(L, st, m, "handin");
    if (n == 0) lua_pushnil(L);
    lua_settop(L, 2);
    add_into(L, st, r);
  }
  if (st->rank == 0) return 1;
  mpb_wbuf *b = mpb_encode_msg(L, 1, 1, "handin", 1, sizeof(mpb_uhdr));
  mpb_user_send(L, st, (st->rank - 1) / st->nfan, MPB_CH_HANDIN, b, 1);
  return 0;
}

void mpb_open_task(lua_State *L) {
  static const luaL_Reg funcs[] = {
      {"exec", exec}, {"include", include}, {"require", require_all}, {"cd", cd},
      {"nfan", nfan}, {"handout", handout}, {"handin", handin}, {NULL, NULL}};
  luaL_setfuncs(L, funcs, 0);
}
