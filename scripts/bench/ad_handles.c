/* SPDX-License-Identifier: MIT */
/*
** Why scalar vars are light userdata: the same recording (the ad core) behind
** two handle kinds, timed on `s = s + x * y` in a Lua loop, interleaved.
**   light: lua_pushlightuserdata(index)  (no allocation, no GC)
**   full:  lua_newuserdatauv + setmetatable (allocation + collection)
*/
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "lauxlib.h"
#include "lualib.h"
#include "ad_scalar.h"

static ad_tape T;

static ad_idx get(lua_State *L, int i, int light) {
  if (light) return (ad_idx)(uintptr_t)lua_touserdata(L, i);
  return *(ad_idx *)lua_touserdata(L, i);
}
static void push(lua_State *L, ad_idx v, int light) {
  if (light) { lua_pushlightuserdata(L, (void *)(uintptr_t)v); return; }
  ad_idx *p = lua_newuserdatauv(L, sizeof *p, 0);
  *p = v;
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_setmetatable(L, -2);
}
static int binop(lua_State *L, int op, int light) {
  ad_idx y;
  ad_binary(&T, op, get(L, 1, light), get(L, 2, light), &y);
  push(L, y, light);
  return 1;
}
static int l_add(lua_State *L) { return binop(L, AD_OP_ADD, 1); }
static int l_mul(lua_State *L) { return binop(L, AD_OP_MUL, 1); }
static int f_add(lua_State *L) { return binop(L, AD_OP_ADD, 0); }
static int f_mul(lua_State *L) { return binop(L, AD_OP_MUL, 0); }
static int mk(lua_State *L) {
  int light = lua_toboolean(L, 1);
  ad_idx v;
  ad_var_new(&T, lua_tonumber(L, 2), &v);
  push(L, v, light);
  return 1;
}

static const char *prog =
  "local mk, light, n = ...\n"
  "local x, y, s = mk(light, 1.5), mk(light, 0.5), mk(light, 0)\n"
  "for i = 1, n do s = s + x * y end\n";

int main(void) {
  ad_tape_init(&T);
  lua_State *L = luaL_newstate();
  luaL_openlibs(L);
  lua_newtable(L); /* full userdata metatable */
  int fmt = lua_gettop(L);
  lua_pushvalue(L, fmt); lua_pushcclosure(L, f_add, 1); lua_setfield(L, fmt, "__add");
  lua_pushvalue(L, fmt); lua_pushcclosure(L, f_mul, 1); lua_setfield(L, fmt, "__mul");
  lua_pushlightuserdata(L, NULL);
  lua_newtable(L);
  lua_pushcfunction(L, l_add); lua_setfield(L, -2, "__add");
  lua_pushcfunction(L, l_mul); lua_setfield(L, -2, "__mul");
  lua_setmetatable(L, -2);
  lua_pop(L, 1);
  const int n = 500000, reps = 9;
  double tl[9], tf[9];
  for (int r = 0; r < reps; r++) {
    for (int light = 1; light >= 0; light--) {
      ad_tape_reset(&T);
      luaL_loadstring(L, prog);
      lua_pushvalue(L, fmt);
      lua_pushcclosure(L, mk, 1);
      lua_pushboolean(L, light);
      lua_pushinteger(L, n);
      struct timespec a, b;
      clock_gettime(CLOCK_MONOTONIC, &a);
      if (lua_pcall(L, 3, 0, 0)) { fprintf(stderr, "%s\n", lua_tostring(L, -1)); return 1; }
      lua_gc(L, LUA_GCCOLLECT);
      clock_gettime(CLOCK_MONOTONIC, &b);
      double dt = (double)(b.tv_sec - a.tv_sec) + 1e-9 * (double)(b.tv_nsec - a.tv_nsec);
      (light ? tl : tf)[r] = dt / (2.0 * n) * 1e9;
    }
  }
  for (int i = 0; i < reps; i++) /* insertion sort for medians */
    for (int j = i; j > 0 && tl[j] < tl[j - 1]; j--) { double x = tl[j]; tl[j] = tl[j - 1]; tl[j - 1] = x; }
  for (int i = 0; i < reps; i++)
    for (int j = i; j > 0 && tf[j] < tf[j - 1]; j--) { double x = tf[j]; tf[j] = tf[j - 1]; tf[j - 1] = x; }
  printf("handles: light userdata %.1f ns/op, full userdata %.1f ns/op (incl. GC), ratio %.2fx\n",
         tl[reps / 2], tf[reps / 2], tf[reps / 2] / tl[reps / 2]);
  lua_close(L);
  ad_tape_free(&T);
  return 0;
}
