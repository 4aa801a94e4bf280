/* SPDX-License-Identifier: MIT */
/*
** Parallel files (README "Files"): a distributed array in one NumPy .npy
** file (layout_npy.h), written and read collectively through MPI-IO.
**
**   mp.save(path, d)               d a distributed array (its layout, its comm)
**   mp.save(path, a, layout [, opts])  a this rank's block of layout
**   d = mp.load(path, layout [, opts]) this rank's block, distributed
**   (opts.comm: the communicator, default mp.world)
**
** The file holds the global array in the layout's listed order, Fortran
** order (column-major, as mp.Array): any layout of the same dimensions
** writes the same bytes, and any reads them back. A C-order file NumPy wrote
** reads into the layout that lists its dimensions the other way round.
**
** No blocking MPI call waits for a rank that may not come: the ranks first
** agree through an mplua collective (interruptible, aborted cleanly by a
** fault; it also checks that every rank saves the same path and layout),
** and only then call MPI's collective open and set_view, which all of them
** now reach. The data moves with nonblocking collective I/O
** (MPI_File_iwrite_all, iread_all) in the one wait; the wait keeps serving
** the control channel but honours an abort or an interrupt only once the I/O
** every rank started is complete and the file closed (ROMIO's requests can
** be neither cancelled nor abandoned). mp.save writes path.part, and rank 0
** renames it to path only when every rank reports its part written: a fault
** or a failed write never leaves a file claimed complete (an older file at
** path stays as it was), and mp.save returns on every rank after the rename.
*/
#include <errno.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "array/array.h"
#include "layout/file_io.h"
#include "layout/layout_npy.h"
#include "p2p/p2p.h"

typedef mpb_file_vote vote;

/* ------------------------------------------------------------ signature */
static uint64_t signature(const char *path, const mpb_lay *y, int save) {
  uint64_t h = mpb_file_hash(MPB_FILE_HASH0, path, strlen(path) + 1);
  h = mpb_file_hash(h, &y->dtype, sizeof y->dtype);
  h = mpb_file_hash(h, &save, sizeof save);
  for (int k = 0; k < y->l.ndim; k++) h = mpb_file_hash(h, &y->l.extent[k], sizeof y->l.extent[k]);
  return h;
}

/* ------------------------------------------------------------ MPI-IO */
typedef struct {
  MPI_Comm comm;                    /* the file's: ccomm, or a group of it */
  int own_comm;
  MPI_File fh;
  MPI_Datatype etype, ftype;        /* ftype: this rank's box of the file */
  int own_ftype;
  int rc;                           /* the first MPI error */
  char what[64];
} io;

static void note(io *f, int rc, const char *what) {
  if (rc != MPI_SUCCESS && f->rc == MPI_SUCCESS) {
    f->rc = rc;
    snprintf(f->what, sizeof f->what, "%s", what);
  }
}

/* The MPI communicator of c's members (after the agreement: all are here). */
static void open_comm(mpb_state *st, mpb_comm *c, io *f) {
  note(f, mpb_comm_mpi(st, c, &f->comm, &f->own_comm), "MPI_Comm_create_group");
}

/* The box of rank me of layout y as the view of the file after offset. */
static void set_view(const mpb_lay *y, int me, MPI_Offset offset, io *f) {
  const char *what = "";
  f->etype = mpb_file_etype(y->dtype);
  note(f, mpb_file_box(y, me, &offset, &f->ftype, &f->own_ftype, &what), what);
  if (f->rc == MPI_SUCCESS)
    note(f, MPI_File_set_view(f->fh, offset, f->etype, f->ftype, "native", MPI_INFO_NULL),
         "MPI_File_set_view");
}

static void close_io(io *f) {
  if (f->fh != MPI_FILE_NULL) note(f, MPI_File_close(&f->fh), "MPI_File_close");
  if (f->own_ftype) note(f, MPI_Type_free(&f->ftype), "MPI_Type_free"), f->own_ftype = 0;
  if (f->own_comm) note(f, MPI_Comm_free(&f->comm), "MPI_Comm_free"), f->own_comm = 0;
}

typedef struct { MPI_Request req[2]; int n; } reqs;

/* Wait for the I/O this rank started (file_io.h: raising nothing). */
static void io_wait(lua_State *L, reqs *q, io *f, const char *what) {
  note(f, mpb_file_wait(L, q->req, q->n, NULL), what);
  q->n = 0;
}

/* ------------------------------------------------------------ reporting */
static void verdict(lua_State *L, const char *fname, const vote *all, int bad, const char *mine) {
  mpb_file_verdict(L, fname, all, bad, mine, "path, layout or direction");
}

static const char *io_message(lua_State *L, const io *f, const char *path) {
  return mpb_file_message(L, f->rc, lua_pushfstring(L, "%s of", f->what), path);
}

/* The layout, the block and the communicator of mp.save's arguments: a
** distributed array at 2, or an array at 2 and its layout at 3 (opts 4). */
static mpb_array *save_args(lua_State *L, mpb_lay *y, mpb_comm **c, const char *fn) {
  mpb_state *st = mpb_get(L);
  mpb_array *a;
  if (lua_isnoneornil(L, 3) && mpb_darray_test(L, 2)) {
    a = mpb_darray_parts(L, 2, y, fn); /* 5: block, 6: comm */
  } else {
    *y = *mpb_lay_check(L, 3, fn);
    if (lua_istable(L, 4) && lua_getfield(L, 4, "comm") != LUA_TNIL) {
      mpb_comm_check(L, st, -1, fn);
    } else {
      lua_settop(L, 4);
      mpb_comm_pushworld(L);
    }
    *c = mpb_comm_check(L, st, 5, fn);
    if ((*c)->size != y->l.nranks)
      mpb_lay_argerror(L, 3, fn, "the communicator has %d ranks, the layout %d", (*c)->size,
                       y->l.nranks);
    a = mpb_lay_check_block(L, y, (*c)->rank, NULL, NULL, 2, fn);
    lua_pushvalue(L, 2);
    lua_insert(L, 5); /* 5: block, 6: comm */
  }
  *c = mpb_comm_check(L, st, 6, fn);
  lua_settop(L, 6);
  return a;
}

/* ------------------------------------------------------------ mp.save */
static int save(lua_State *L) {
  const char *fn = "save";
  mpb_state *st = mpb_get(L);
  const char *path = luaL_checkstring(L, 1);
  lua_settop(L, 4);
  mpb_lay y;
  mpb_comm *c;
  mpb_array *a = save_args(L, &y, &c, fn);
  mpb_file_layout_ok(L, &y, 0, fn);
  char header[1024];
  size_t off = mpb_npy_header(y.dtype, y.l.ndim, y.l.extent, header, sizeof header);
  if (!off) mpb_lay_argerror(L, 1, fn, "the .npy header does not fit");
  const char *tmp = lua_pushfstring(L, "%s.part", path); /* 7 */
  /* this rank's part, contiguous (a view is packed) */
  const void *data = a->data;
  if (!a->contig) {
    void *buf = lua_newuserdatauv(L, mpb_array_bytes(a) ? mpb_array_bytes(a) : 1, 0);
    mpb_array_pack(a, buf);
    data = buf;
  }
  int me = c->rank;
  if (me == 0) unlink(tmp); /* before anyone opens it (the agreement orders it) */
  vote v = {signature(path, &y, 1), 0}, *all = lua_newuserdatauv(L, sizeof *all * (size_t)c->size, 0);
  verdict(L, fn, all, mpb_file_agree(L, c, fn, v, all), NULL);
  /* everyone is here: MPI's collectives cannot wait for a rank that does not come */
  io f = {MPI_COMM_NULL, 0, MPI_FILE_NULL, MPI_DATATYPE_NULL, MPI_DATATYPE_NULL, 0, MPI_SUCCESS, ""};
  reqs q = {{MPI_REQUEST_NULL, MPI_REQUEST_NULL}, 0};
  open_comm(st, c, &f);
  if (f.rc == MPI_SUCCESS)
    note(&f, MPI_File_open(f.comm, tmp, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &f.fh),
         "MPI_File_open");
  if (f.rc == MPI_SUCCESS) {
    if (me == 0) {
      note(&f, MPI_File_iwrite_at(f.fh, 0, header, (int)off, MPI_BYTE, &q.req[q.n++]),
           "MPI_File_iwrite_at (the header)");
      io_wait(L, &q, &f, "writing the header");
    }
    set_view(&y, me, (MPI_Offset)off, &f); /* collective: every rank reaches it */
    if (f.rc == MPI_SUCCESS) {
      note(&f, MPI_File_iwrite_all_c(f.fh, data, (MPI_Count)a->n, f.etype, &q.req[q.n++]),
           "MPI_File_iwrite_all");
      io_wait(L, &q, &f, "writing");
    }
  }
  close_io(&f);
  /* every part written? then the file is complete: rank 0 names it */
  v.status = f.rc != MPI_SUCCESS;
  const char *mine = f.rc != MPI_SUCCESS ? io_message(L, &f, tmp) : NULL;
  int bad = mpb_file_agree(L, c, fn, v, all);
  if (bad >= 0 && me == 0) unlink(tmp);
  verdict(L, fn, all, bad, mine);
  v.status = 0;
  if (me == 0 && rename(tmp, path) != 0) {
    v.status = 1;
    mine = lua_pushfstring(L, "cannot rename '%s' to '%s': %s", tmp, path, strerror(errno));
    unlink(tmp);
  }
  verdict(L, fn, all, mpb_file_agree(L, c, fn, v, all), mine);
  return 0;
}

/* ------------------------------------------------------------ mp.load */
/* Read and check path's header against layout y: NULL (offset in *off) or
** a message (pushed). */
static const char *read_header(lua_State *L, const char *path, const mpb_lay *y, size_t *off) {
  char buf[4096];
  FILE *fp = fopen(path, "rb");
  if (!fp) return lua_pushfstring(L, "cannot open '%s': %s", path, strerror(errno));
  size_t got = fread(buf, 1, sizeof buf, fp);
  struct stat sb;
  int have = fstat(fileno(fp), &sb) == 0;
  fclose(fp);
  mpb_npy h;
  size_t need;
  const char *err = mpb_npy_parse(buf, got, &h, &need);
  if (err) return lua_pushfstring(L, "'%s': %s", path, err);
  if (h.dtype != y->dtype)
    return lua_pushfstring(L, "'%s' holds %s, the layout is %s", path, mpb_dtype_name(h.dtype),
                           mpb_dtype_name(y->dtype));
  int same = h.ndim == y->l.ndim;
  for (int k = 0; same && k < h.ndim; k++)
    same = h.dims[h.fortran ? k : h.ndim - 1 - k] == y->l.extent[k];
  if (!same) {
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    for (int k = 0; k < h.ndim; k++) {
      lua_pushfstring(L, k ? ", %I" : "%I", (LUAI_UACINT)h.dims[k]);
      luaL_addvalue(&b);
    }
    luaL_pushresult(&b);
    return lua_pushfstring(L, "'%s' holds an array of shape (%s) in %s order, which is not the "
                           "layout's global shape", path, lua_tostring(L, -1),
                           h.fortran ? "Fortran" : "C");
  }
  double bytes = (double)mpb_dtype_size(y->dtype);
  for (int k = 0; k < h.ndim; k++) bytes *= (double)h.dims[k];
  if (have && (double)sb.st_size < (double)h.offset + bytes)
    return lua_pushfstring(L, "'%s' is shorter than its header says (%I bytes)", path,
                           (LUAI_UACINT)sb.st_size);
  *off = h.offset;
  return NULL;
}

/* mp.load(path, layout [, opts]) */
static int load(lua_State *L) {
  const char *fn = "load";
  mpb_state *st = mpb_get(L);
  const char *path = luaL_checkstring(L, 1);
  mpb_lay *y = mpb_lay_check(L, 2, fn);
  lua_settop(L, 3);
  if (lua_istable(L, 3) && lua_getfield(L, 3, "comm") != LUA_TNIL) mpb_comm_check(L, st, -1, fn);
  else lua_settop(L, 3), mpb_comm_pushworld(L);
  lua_settop(L, 4); /* 4: comm */
  mpb_comm *c = mpb_comm_check(L, st, 4, fn);
  if (c->size != y->l.nranks)
    mpb_lay_argerror(L, 2, fn, "the communicator has %d ranks, the layout %d", c->size, y->l.nranks);
  mpb_file_layout_ok(L, y, 0, fn);
  int me = c->rank;
  int64_t dims[MPB_LAYOUT_MAXDIM];
  int nd = mpb_lay_block_shape(y, me, NULL, dims);
  mpb_array *a = mpb_array_new(L, y->dtype, nd, dims); /* 5 */
  mpb_darray_attach(L, 5, 2, NULL, 4);
  size_t off = 0;
  const char *mine = read_header(L, path, y, &off);
  vote v = {signature(path, y, 0), mine != NULL}, *all = lua_newuserdatauv(L, sizeof *all * (size_t)c->size, 0);
  verdict(L, fn, all, mpb_file_agree(L, c, fn, v, all), mine);
  io f = {MPI_COMM_NULL, 0, MPI_FILE_NULL, MPI_DATATYPE_NULL, MPI_DATATYPE_NULL, 0, MPI_SUCCESS, ""};
  reqs q = {{MPI_REQUEST_NULL, MPI_REQUEST_NULL}, 0};
  open_comm(st, c, &f);
  if (f.rc == MPI_SUCCESS)
    note(&f, MPI_File_open(f.comm, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &f.fh), "MPI_File_open");
  if (f.rc == MPI_SUCCESS) set_view(y, me, (MPI_Offset)off, &f);
  if (f.rc == MPI_SUCCESS) {
    note(&f, MPI_File_iread_all_c(f.fh, a->data, (MPI_Count)a->n, f.etype, &q.req[q.n++]),
         "MPI_File_iread_all");
    io_wait(L, &q, &f, "reading");
  }
  close_io(&f);
  v.status = f.rc != MPI_SUCCESS;
  mine = f.rc != MPI_SUCCESS ? io_message(L, &f, path) : NULL;
  verdict(L, fn, all, mpb_file_agree(L, c, fn, v, all), mine);
  lua_settop(L, 5);
  return 1;
}

void mpb_open_file(lua_State *L) {
  lua_pushcfunction(L, save);
  lua_setfield(L, -2, "save");
  lua_pushcfunction(L, load);
  lua_setfield(L, -2, "load");
}
