/* SPDX-License-Identifier: MIT */
/*
** A file's atomicity (f:Set_atomicity(flag), f:Get_atomicity()) and
** mpi.File_delete(path[, info]).
**
** MPI_File_set_atomicity is a blocking collective in which ROMIO checks the
** flag on some ranks only: the members agree on the call, then on the flag
** (a mismatch is an error on every member, not a hang), and only then call
** MPI. MPI_File_delete is local (MPI: "not collective"): deleting a file
** that another rank still has open is the user's affair, as in C.
*/
#include "mpi/mpi_file.h"

typedef mpb_mfile mfile;

/* f:Set_atomicity(flag): collective; every member gives the same flag */
static int Set_atomicity(lua_State *L) {
  const char *fn = "mpi.File.Set_atomicity";
  MPB_MPI_REGION(L, mpb_get(L), fn);
  mfile *f = mpb_mfile_check(L, fn);
  if (!lua_isboolean(L, 2))
    mpb_mfile_argerror(L, 1, fn, "flag (a boolean) expected, got %s", luaL_typename(L, 2));
  int flag = lua_toboolean(L, 2);
  mpb_mfile_agree(L, f, fn, "Set_atomicity", 0);
  mpb_mfile_agree_value(L, f, fn, "Set_atomicity", (uint64_t)flag, "flag");
  int rc = MPI_File_set_atomicity(f->fh, flag);
  if (rc != MPI_SUCCESS) mpb_mfile_raise(L, f, fn, rc, "cannot set the atomicity of");
  return 0;
}

/* f:Get_atomicity() -> boolean */
static int Get_atomicity(lua_State *L) {
  const char *fn = "mpi.File.Get_atomicity";
  mfile *f = mpb_mfile_check(L, fn);
  int flag = 0;
  int rc = MPI_File_get_atomicity(f->fh, &flag);
  if (rc != MPI_SUCCESS) mpb_mfile_raise(L, f, fn, rc, "cannot get the atomicity of");
  lua_pushboolean(L, flag);
  return 1;
}

/* mpi.File_delete(path[, info]) */
static int File_delete(lua_State *L) {
  const char *fn = "mpi.File_delete";
  mpb_state *st = mpb_get(L);
  if (lua_type(L, 1) != LUA_TSTRING)
    mpb_mfile_argerror(L, 1, fn, "path (a string) expected, got %s", luaL_typename(L, 1));
  const char *path = lua_tostring(L, 1);
  mpb_mfile_info_check(L, 2, 2, fn);
  if (!st->use_mpi)
    luaL_error(L, "mp.%s: " MPB_RANKFMT " MPI-IO needs MPI (mplua runs without it)", fn, st->rank,
               st->size);
  MPI_Info info = MPI_INFO_NULL;
  const char *what = "cannot make the hints of";
  int rc = mpb_mfile_info_make(L, 2, &info);
  if (rc == MPI_SUCCESS) what = "cannot delete", rc = MPI_File_delete(path, info);
  if (info != MPI_INFO_NULL) MPI_Info_free(&info);
  if (rc != MPI_SUCCESS)
    luaL_error(L, "mp.%s: " MPB_RANKFMT " %s", fn, st->rank, st->size,
               mpb_file_message(L, rc, what, path));
  return 0;
}

void mpb_mpi_fileattr_methods(lua_State *L) {
  static const luaL_Reg m[] = {
      {"Set_atomicity", Set_atomicity}, {"Get_atomicity", Get_atomicity}, {NULL, NULL}};
  luaL_setfuncs(L, m, 0);
}

void mpb_mpi_fileattr_funcs(lua_State *L) {
  lua_pushcfunction(L, File_delete);
  lua_setfield(L, -2, "File_delete");
}
