/* SPDX-License-Identifier: MIT */
/*
** A file's view (mp.mpi.File's Set_view): an etype (a dtype, or bytes), a
** filetype (the etype itself, a layout's box of this rank, or a datatype
** of mpi_type.c made of the etype) and a data representation ("native",
** "internal", "external32": converted by mp.mpi, see mpi_file.h). A
** collective call: the members agree on the
** etype and the representation (MPI requires them alike) before MPI's.
*/
#include <string.h>

#include "mpi/mpi_file.h"

const char *const mpb_mfile_datareps[] = {"native", "external32", "internal", NULL};

static int datarep_arg(lua_State *L, int idx, const char *fn) {
  if (lua_isnoneornil(L, idx)) return 0;
  const char *s = lua_tostring(L, idx);
  for (int i = 0; s && mpb_mfile_datareps[i]; i++)
    if (strcmp(s, mpb_mfile_datareps[i]) == 0) return i;
  return mpb_mfile_argerror(L, 4, fn, "datarep 'native', 'external32' or 'internal' expected, "
                            "got %s", s ? lua_pushfstring(L, "'%s'", s) : luaL_typename(L, idx));
}

/* f:Set_view(disp, etype[, filetype[, datarep]]) */
static int Set_view(lua_State *L) {
  const char *fn = "mpi.File.Set_view";
  MPB_MPI_REGION(L, mpb_get(L), fn);
  mpb_mfile *f = mpb_mfile_check(L, fn);
  MPI_Offset disp = mpb_mfile_offset(L, 2, 1, fn);
  int d = lua_isnoneornil(L, 3) ? MPB_U8 : mpb_mfile_dtype(L, 3, 2, fn);
  int rep = datarep_arg(L, 5, fn);
  MPI_Datatype etype = mpb_file_etype(d), ftype = etype;
  int own = 0;
  const mpb_lay *y = NULL;
  mpb_mtype *t = NULL;
  if (f->split != MPB_SPLIT_NONE)
    luaL_error(L, "mp.%s: " MPB_RANKFMT " '%s' has a split collective begun (MPI: end it first)",
               fn, mpb_get(L)->rank, mpb_get(L)->size, f->path);
  int pending = mpb_mfile_ireq_pending(f);
  if (pending)
    luaL_error(L, "mp.%s: " MPB_RANKFMT " '%s' has %d nonblocking request%s pending (MPI: "
               "complete them first)", fn, mpb_get(L)->rank, mpb_get(L)->size, f->path, pending,
               pending > 1 ? "s" : "");
  if ((t = mpb_mpi_type_test(L, 4, 3, fn)) != NULL) {
    if (t->dtype != d)
      mpb_mfile_argerror(L, 3, fn, "the datatype is made of %s, not the etype",
                         mpb_dtype_name(t->dtype));
    ftype = t->t;
  } else if (!lua_isnoneornil(L, 4) &&
             !(lua_type(L, 4) == LUA_TSTRING && mpb_mfile_dtype(L, 4, 3, fn) == d)) {
    if (lua_type(L, 4) == LUA_TSTRING)
      mpb_mfile_argerror(L, 3, fn, "filetype '%s' differs from the etype", lua_tostring(L, 4));
    y = mpb_lay_check(L, 4, fn);
    if (y->dtype != d)
      mpb_mfile_argerror(L, 3, fn, "the layout holds %s, not the etype", mpb_dtype_name(y->dtype));
    if (y->l.nranks != f->c->size)
      mpb_mfile_argerror(L, 3, fn, "the layout has %s ranks, not the file's communicator",
                         lua_pushfstring(L, "%d", y->l.nranks));
    mpb_file_layout_ok(L, y, 3, fn);
  }
  mpb_mfile_agree(L, f, fn, "Set_view", (uint64_t)(d + MPB_NDTYPE * rep));
  const char *what = "cannot set the view of";
  int rc = y ? mpb_file_box(y, f->c->rank, &disp, &ftype, &own, &what) : MPI_SUCCESS;
  if (rc == MPI_SUCCESS)
    rc = MPI_File_set_view(f->fh, disp, etype, ftype,
                           mpb_mfile_datareps[rep == MPB_DATAREP_EXT32 ? 0 : rep], MPI_INFO_NULL);
  if (own) MPI_Type_free(&ftype); /* the view keeps what it needs */
  if (rc != MPI_SUCCESS) mpb_mfile_raise(L, f, fn, rc, what);
  f->edtype = d;
  f->datarep = rep;
  return 0;
}

/* f:Get_view() -> disp (bytes), etype (a dtype name), datarep */
static int Get_view(lua_State *L) {
  const char *fn = "mpi.File.Get_view";
  mpb_mfile *f = mpb_mfile_check(L, fn);
  MPI_Offset disp = 0;
  MPI_Datatype etype, ftype;
  char rep[MPI_MAX_DATAREP_STRING + 1];
  int rc = MPI_File_get_view(f->fh, &disp, &etype, &ftype, rep);
  if (rc != MPI_SUCCESS) mpb_mfile_raise(L, f, fn, rc, "cannot get the view of");
  MPI_Datatype got[2] = {etype, ftype};
  for (int i = 0; i < 2; i++) { /* MPI's copies, unless predefined */
    int ni, na, nt, comb;
    if (MPI_Type_get_envelope(got[i], &ni, &na, &nt, &comb) == MPI_SUCCESS &&
        comb != MPI_COMBINER_NAMED)
      MPI_Type_free(&got[i]);
  }
  lua_pushinteger(L, (lua_Integer)disp);
  lua_pushstring(L, mpb_dtype_name(f->edtype));
  lua_pushstring(L, mpb_mfile_datareps[f->datarep]);
  return 3;
}

void mpb_mpi_fileview_methods(lua_State *L) {
  static const luaL_Reg m[] = {{"Set_view", Set_view}, {"Get_view", Get_view}, {NULL, NULL}};
  luaL_setfuncs(L, m, 0);
}
