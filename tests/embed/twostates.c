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
** Each state reports errors under its own program name (mplua_config.progname).
**
** With the argument "mpi" (under mpiexec, 2 ranks or more) both states run
** on MPI: the second is closed, then in the first a rank spinning in pure
** Lua must still be reached by an abort (the interrupt hook is each
** state's: closing one leaves the other's in place).
** Prints "ok ..." lines (rank 0); any failure prints FAIL and exits 1.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>
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

/* Rank 0 of each state reports an error of its own: under its own name. */
static void report_as(lua_State *L, const char *what) {
  if (mplua_rank(L) != 0) return;
  luaL_loadstring(L, what);
  mplua_report(L, mplua_docall(L, 0, 0));
}

static lua_State *open_as(int *argc, char ***argv, int use_mpi, const char *name) {
  mplua_config c;
  mplua_config_init(&c);
  c.use_mpi = use_mpi;
  c.out = MPLUA_OUT_ALLOC;
  c.progname = name;
  lua_State *L = mplua_open_config(argc, argv, &c);
  if (!L) fail("mplua_open_config");
  return L;
}

/* Rank 0 runs code in L (else: L's worker loop until rank 0 closes it). */
static void lead(lua_State *L, const char *code) {
  if (mplua_rank(L) != 0) {
    mplua_worker(L);
    return;
  }
  if (luaL_loadstring(L, code) != LUA_OK) fail(lua_tostring(L, -1));
  if (mplua_docall(L, 0, 0) != LUA_OK) fail(mplua_errmsg(L, -1));
}

static const char spin_chunk[] =
    "local ok, err = pcall(mp.exec, function()\n"
    "  if mp.rank == 0 then mp.recv(1); error('stop', 0) end\n"
    "  if mp.rank == 1 then mp.send(0, 'spinning') end\n"
    "  while true do end\n"
    "end)\n"
    "assert(not ok and tostring(err):find('stop', 1, true), tostring(err))\n"
    "assert(mp.exec(function() return mp.handin(1) end) == mp.size)\n";

static int main_mpi(int argc, char **argv) {
  if (MPI_Init(&argc, &argv) != MPI_SUCCESS) fail("MPI_Init");
  lua_State *a = open_as(&argc, &argv, 1, "alpha");
  lua_State *b = open_as(&argc, &argv, 1, "beta");
  lead(b, "mp.exec(function() assert(mp.handin(1) == mp.size or mp.rank ~= 0) end)");
  report_as(b, "error('from b', 0)");
  mplua_close(b, 0);
  if (mplua_rank(a) == 0) printf("ok second state closed\n");
  report_as(a, "error('from a', 0)");
  lead(a, spin_chunk);
  if (mplua_rank(a) == 0) printf("ok first state's spinning rank reached by an abort\n");
  int rank0 = mplua_rank(a) == 0;
  int status = mplua_close(a, 0);
  MPI_Finalize();
  if (rank0) printf("ok first state closed\n");
  return status;
}

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "mpi") == 0) return main_mpi(argc, argv);
  lua_State *a = open_as(&argc, &argv, 0, "alpha");
  lua_State *b = open_as(&argc, &argv, 0, "beta");
  lua_setallocf(a, reuse_alloc, NULL);
  lua_setallocf(b, reuse_alloc, NULL);
  report_as(a, "error('from a', 0)");
  if (luaL_dostring(b, "mp.exec(function() mp.send(0, 1); assert(mp.recv(0) == 1) end)") != LUA_OK)
    fail(lua_tostring(b, -1));
  report_as(b, "error('from b', 0)");
  mplua_close(b, 0);
  printf("ok second state closed\n");
  if (luaL_loadstring(a, chunk) != LUA_OK) fail(lua_tostring(a, -1));
  if (mplua_docall(a, 0, 0) != LUA_OK) fail(mplua_errmsg(a, -1));
  report_as(a, "error('from a again', 0)");
  printf("ok first state goes on\n");
  return mplua_close(a, 0);
}
