/* SPDX-License-Identifier: MIT */
/*
** Two states in one process (the serial backend): the second is closed and
** the first goes on. A value the closed state's runtime knew (its
** communicators' metatable, say) must not be mistaken for one of the live
** state's: the loop gives a userdata one fresh metatable after another (the
** allocator hands out the closed state's freed blocks again) and passes it
** where a communicator is expected, each time refused. So that the freed
** blocks do come back, both states use an allocator that hands a freed
** small block out again first (a free list per size, last in first out).
** Prints "ok ..." lines; any failure prints FAIL and exits 1.
*/
#include <stdio.h>
#include <stdlib.h>

#include "lauxlib.h"
#include "mplua.h"

static const char chunk[] =
    "mp.exec(function()\n"
    "local send = mp.world.send\n"
    "local u = io.tmpfile()\n"
    "local file_mt = getmetatable(u)\n"
    "local keep = {}\n"
    "for i = 1, 20000 do\n"
    "  local t = {}\n"
    "  keep[i] = t\n"
    "  debug.setmetatable(u, t)\n"
    "  local ok, err = pcall(send, u, 0, 'x')\n"
    "  if ok or not tostring(err):find('communicator expected', 1, true) then\n"
    "    debug.setmetatable(u, file_mt)\n"
    "    error('a userdata taken for a communicator: ' .. tostring(err))\n"
    "  end\n"
    "end\n"
    "debug.setmetatable(u, file_mt)\n"
    "u:close()\n"
    "mp.send(0, 'to self')\n"
    "assert(mp.recv(0) == 'to self')\n"
    "end)\n";

/* Freed blocks of up to SMALL bytes, by size: each one's first word links
** to the next. */
#define SMALL 256
static void *freed[SMALL + 1];

static void *reuse_alloc(void *ud, void *p, size_t osize, size_t nsize) {
  (void)ud;
  if (p && nsize == 0) {
    if (osize >= sizeof(void *) && osize <= SMALL) {
      *(void **)p = freed[osize];
      freed[osize] = p;
    } else {
      free(p);
    }
    return NULL;
  }
  if (!p && nsize >= sizeof(void *) && nsize <= SMALL && freed[nsize]) {
    void *q = freed[nsize];
    freed[nsize] = *(void **)q;
    return q;
  }
  if (nsize == 0) return NULL;
  return realloc(p, nsize);
}

static void fail(const char *what) {
  fprintf(stderr, "FAIL: %s\n", what);
  exit(1);
}

int main(int argc, char **argv) {
  mplua_config c;
  mplua_config_init(&c);
  c.use_mpi = 0;
  c.out = MPLUA_OUT_ALLOC;
  lua_State *a = mplua_open_config(&argc, &argv, &c);
  lua_State *b = a ? mplua_open_config(&argc, &argv, &c) : NULL;
  if (!a || !b) fail("mplua_open_config");
  lua_setallocf(a, reuse_alloc, NULL);
  lua_setallocf(b, reuse_alloc, NULL);
  if (luaL_dostring(b, "mp.exec(function() mp.send(0, 1); assert(mp.recv(0) == 1) end)") != LUA_OK)
    fail(lua_tostring(b, -1));
  mplua_close(b, 0);
  printf("ok second state closed\n");
  if (luaL_loadstring(a, chunk) != LUA_OK) fail(lua_tostring(a, -1));
  if (mplua_docall(a, 0, 0) != LUA_OK) fail(mplua_errmsg(a, -1));
  printf("ok first state goes on\n");
  return mplua_close(a, 0);
}
