/* SPDX-License-Identifier: MIT */
/*
** mp.connect(rank) / mp.disconnect(): run chunks on one worker, for example to
** look at a faulted rank's globals. A connected chunk runs as an ordinary task
** (so errors, Ctrl-C and aborts behave as everywhere), in which only the
** target does work: it runs the chunk with `print` captured, catches its
** errors (inspecting must not abort anything), and replies with the output
** and the results as strings. The host decides when to route chunks there
** (mplua_target/mplua_remote); this file knows nothing of prompts.
*/
#include <string.h>

#include "tasks/tasks.h"
#include "wire/wire.h"

static int mp_connect(lua_State *L) {
  mpb_state *st = mpb_get(L);
  lua_Integer r = luaL_checkinteger(L, 1);
  if (st->rank != 0 || st->in_task)
    return luaL_error(L, "mp.connect: [rank %d/%d] only rank 0, outside a task, connects",
                      st->rank, st->size);
  if (r < 1 || r >= st->size)
    return luaL_error(L, "bad argument #1 to 'mp.connect' ([rank 0/%d] rank %I out of range 1..%d)",
                      st->size, (LUAI_UACINT)r, st->size - 1);
  mpb_tasks_of(st)->connect = (int)r;
  return 0;
}

/* On rank 0 it ends the connection; run on the connected rank (the usual
** case: typed at its prompt) it asks rank 0 to end it, through the reply. */
static int mp_disconnect(lua_State *L) {
  mpb_state *st = mpb_get(L);
  mpb_tasks_of(st)->connect = st->rank == 0 ? 0 : -1;
  return 0;
}

/* print replacement: appends its line to the table in upvalue 1 */
static int capture_print(lua_State *L) {
  int n = lua_gettop(L);
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  for (int i = 1; i <= n; i++) {
    if (i > 1) luaL_addchar(&b, '\t');
    luaL_tolstring(L, i, NULL);
    luaL_addvalue(&b);
  }
  luaL_addchar(&b, '\n');
  luaL_pushresult(&b);
  lua_rawseti(L, lua_upvalueindex(1), (lua_Integer)lua_rawlen(L, lua_upvalueindex(1)) + 1);
  return 0;
}

/* Task body for MPB_TASK_LINE: target, function. */
static int remote_body(lua_State *L) {
  mpb_state *st = mpb_get(L);
  int target = (int)luaL_checkinteger(L, 1);
  if (st->rank == 0 && target != 0) {
    lua_settop(L, 0);
    mpb_msg *m = mpb_user_take(L, st, MPB_CH_REPLY, target, "connect");
    return mpb_push_msg(L, st, m, "connect");
  }
  if (st->rank != target) return 0;
  luaL_checktype(L, 2, LUA_TFUNCTION);
  lua_settop(L, 2);
  lua_newtable(L); /* 3: captured lines */
  lua_getglobal(L, "print"); /* 4: the real print */
  lua_pushvalue(L, 3);
  lua_pushcclosure(L, capture_print, 1);
  lua_setglobal(L, "print");
  lua_pushcfunction(L, mpb_msgh);
  lua_pushvalue(L, 2);
  int status = lua_pcall(L, 0, LUA_MULTRET, 5);
  lua_pushvalue(L, 4);
  lua_setglobal(L, "print");
  if (status != LUA_OK && mpb_is_abort(L, -1)) return lua_error(L);
  int nres = lua_gettop(L) - 5;
  /* reply: ok, output, disconnect?, results as strings */
  lua_pushboolean(L, status == LUA_OK);
  lua_getglobal(L, "table");
  lua_getfield(L, -1, "concat");
  lua_remove(L, -2);
  lua_pushvalue(L, 3);
  lua_call(L, 1, 1);
  lua_pushboolean(L, mpb_tasks_of(st)->connect == -1);
  mpb_tasks_of(st)->connect = 0;
  for (int i = 0; i < nres; i++) luaL_tolstring(L, 6 + i, NULL);
  int first = 6 + nres;
  mpb_wbuf *b = mpb_encode_msg(L, first, 3 + nres, "connect", 0, sizeof(mpb_uhdr));
  mpb_user_send(L, st, 0, MPB_CH_REPLY, b, 1);
  return 0;
}

void mpb_open_connect(lua_State *L) {
  mpb_task_register(mpb_get(L), MPB_TASK_LINE, remote_body);
  static const luaL_Reg funcs[] = {{"connect", mp_connect}, {"disconnect", mp_disconnect}, {NULL, NULL}};
  luaL_setfuncs(L, funcs, 0);
}
