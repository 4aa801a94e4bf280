/* SPDX-License-Identifier: MIT */
/*
** MPI-IO's hints: a Lua table of string keys and values (numbers and
** booleans are written as Lua writes them) as MPI_Info, for
** mpi.File_open(comm, path, mode, info), f:Set_info(info) and f:Get_info().
**
** Every member must give the same hints (checked by the agreement before
** MPI's collective call): ROMIO requires it of the ones that shape
** collective I/O (cb_buffer_size, cb_nodes, ...), and checks it on some
** ranks only, which would leave the others waiting. An MPI_Info never
** outlives the C call that made it, even when a Lua error is raised while
** it exists (a guard userdata frees it).
*/
#include <stdio.h>
#include <string.h>

#include "mpi/mpi_file.h"

#define INFO_MT "mp.mpi.Info" /* the guard of an MPI_Info made by a call */

/* The value at idx as hint text in buf (never raises); NULL when it is not
** a string, a number or a boolean. */
static const char *value_text(lua_State *L, int idx, char *buf, size_t n) {
  switch (lua_type(L, idx)) {
    case LUA_TSTRING: return lua_tostring(L, idx);
    case LUA_TBOOLEAN: return lua_toboolean(L, idx) ? "true" : "false";
    case LUA_TNUMBER:
      if (lua_isinteger(L, idx)) snprintf(buf, n, LUA_INTEGER_FMT, (LUAI_UACINT)lua_tointeger(L, idx));
      else snprintf(buf, n, LUA_NUMBER_FMT, (LUAI_UACNUMBER)lua_tonumber(L, idx));
      return buf;
    default: return NULL;
  }
}

uint64_t mpb_mfile_info_check(lua_State *L, int idx, int arg, const char *fname) {
  if (lua_isnoneornil(L, idx)) return 0;
  if (!lua_istable(L, idx))
    mpb_mfile_argerror(L, arg, fname, "table of hints expected, got %s", luaL_typename(L, idx));
  uint64_t sig = 0; /* no hints: as nil */
  char buf[64];
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    if (lua_type(L, -2) != LUA_TSTRING)
      mpb_mfile_argerror(L, arg, fname, "hint keys are strings, got %s", luaL_typename(L, -2));
    const char *key = lua_tostring(L, -2), *val = value_text(L, -1, buf, sizeof buf);
    if (!val)
      mpb_mfile_argerror(L, arg, fname, "hint '%s' is not a string, number or boolean", key);
    if (strlen(key) >= MPI_MAX_INFO_KEY || strlen(key) == 0)
      mpb_mfile_argerror(L, arg, fname, "hint key '%s' is empty or longer than MPI's 255 bytes", key);
    if (strlen(val) >= MPI_MAX_INFO_VAL)
      mpb_mfile_argerror(L, arg, fname, "the value of hint '%s' is longer than MPI's 1024 bytes", key);
    uint64_t h = mpb_file_hash(MPB_FILE_HASH0, key, strlen(key) + 1);
    sig += mpb_file_hash(h, val, strlen(val) + 1); /* any order: a sum */
    lua_pop(L, 1);
  }
  return sig;
}

int mpb_mfile_info_make(lua_State *L, int idx, MPI_Info *info) {
  *info = MPI_INFO_NULL;
  if (lua_isnoneornil(L, idx)) return MPI_SUCCESS;
  int rc = MPI_Info_create(info);
  char buf[64];
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    if (rc == MPI_SUCCESS)
      rc = MPI_Info_set(*info, lua_tostring(L, -2), value_text(L, -1, buf, sizeof buf));
    lua_pop(L, 1);
  }
  if (rc != MPI_SUCCESS && *info != MPI_INFO_NULL) MPI_Info_free(info);
  return rc;
}

/* ------------------------------------------------------------ the guard */
static void free_info(MPI_Info *info) {
  int fin = 1;
  if (*info != MPI_INFO_NULL && MPI_Finalized(&fin) == MPI_SUCCESS && !fin) MPI_Info_free(info);
  *info = MPI_INFO_NULL;
}

static int guard_gc(lua_State *L) {
  free_info(luaL_checkudata(L, 1, INFO_MT));
  return 0;
}

static MPI_Info *guard(lua_State *L) {
  MPI_Info *info = lua_newuserdatauv(L, sizeof *info, 0);
  *info = MPI_INFO_NULL;
  luaL_setmetatable(L, INFO_MT);
  return info;
}

/* f:Get_info() -> {key = value, ...}: the hints in use */
static int Get_info(lua_State *L) {
  const char *fn = "mpi.File.Get_info";
  mpb_mfile *f = mpb_mfile_check(L, fn);
  MPI_Info *info = guard(L);
  lua_newtable(L);
  int rc = MPI_File_get_info(f->fh, info), n = 0;
  if (rc == MPI_SUCCESS) rc = MPI_Info_get_nkeys(*info, &n);
  for (int i = 0; rc == MPI_SUCCESS && i < n; i++) {
    char key[MPI_MAX_INFO_KEY + 1], val[MPI_MAX_INFO_VAL + 1];
    int len = (int)sizeof val, flag = 0;
    rc = MPI_Info_get_nthkey(*info, i, key);
    if (rc == MPI_SUCCESS) rc = MPI_Info_get_string(*info, key, &len, val, &flag);
    if (rc == MPI_SUCCESS && flag) {
      lua_pushstring(L, val);
      lua_setfield(L, -2, key);
    }
  }
  free_info(info);
  return rc == MPI_SUCCESS ? 1 : (mpb_mfile_raise(L, f, fn, rc, "cannot get the hints of"), 0);
}

/* f:Set_info(info): collective */
static int Set_info(lua_State *L) {
  const char *fn = "mpi.File.Set_info";
  MPB_MPI_REGION(L, mpb_get(L), fn);
  mpb_mfile *f = mpb_mfile_check(L, fn);
  if (lua_isnoneornil(L, 2)) mpb_mfile_argerror(L, 1, fn, "table of hints expected, got %s", "nil");
  uint64_t sig = mpb_mfile_info_check(L, 2, 1, fn);
  mpb_mfile_agree(L, f, fn, "Set_info", 0);
  mpb_mfile_agree_value(L, f, fn, "Set_info", sig, "set of hints");
  MPI_Info *info = guard(L);
  int rc = mpb_mfile_info_make(L, 2, info);
  if (rc == MPI_SUCCESS) rc = MPI_File_set_info(f->fh, *info);
  free_info(info);
  if (rc != MPI_SUCCESS) mpb_mfile_raise(L, f, fn, rc, "cannot set the hints of");
  return 0;
}

void mpb_mpi_fileinfo_methods(lua_State *L) {
  static const luaL_Reg m[] = {{"Get_info", Get_info}, {"Set_info", Set_info}, {NULL, NULL}};
  luaL_setfuncs(L, m, 0);
  if (luaL_newmetatable(L, INFO_MT)) {
    lua_pushcfunction(L, guard_gc);
    lua_setfield(L, -2, "__gc");
  }
  lua_pop(L, 1);
}
