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
#include "layout/laylib.h"
#include "layout/layout_npy.h"
#include "p2p/p2p.h"

/* ------------------------------------------------------------ agreement */
static uint64_t fnv(uint64_t h, const void *p, size_t n) {
  const unsigned char *s = p;
  for (size_t i = 0; i < n; i++) h = (h ^ s[i]) * 1099511628211u;
  return h;
}

/* What a rank brings to a collective step: its call's signature and how
** its part went (0: well, else an error of its own). */
typedef struct { uint64_t sig; int64_t status; } vote;

/* Every member's vote (a collective step on c); returns the first rank
** whose signature or status differs from success, or -1. */
static int agree(lua_State *L, mpb_comm *c, const char *fname, vote mine, vote *all) {
  mpb_state *st = mpb_get(L);
  mpb_coll x = mpb_coll_on(L, st, c, fname, MPB_COLL_FILE);
  mpb_coll_allgather_raw(L, &x, &mine, sizeof mine, all);
  for (int r = 0; r < c->size; r++)
    if (all[r].sig != mine.sig || all[r].status != 0) return r;
  return -1;
}

static uint64_t signature(const char *path, const mpb_lay *y, int save) {
  uint64_t h = fnv(14695981039346656037u, path, strlen(path) + 1);
  h = fnv(h, &y->dtype, sizeof y->dtype);
  h = fnv(h, &save, sizeof save);
  for (int k = 0; k < y->l.ndim; k++) h = fnv(h, &y->l.extent[k], sizeof y->l.extent[k]);
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

static MPI_Datatype etype_of(int dtype) {
  switch (dtype) {
    case MPB_F64: return MPI_DOUBLE;
    case MPB_F32: return MPI_FLOAT;
    case MPB_I64: return MPI_INT64_T;
    case MPB_I32: return MPI_INT32_T;
    case MPB_C64: return MPI_C_FLOAT_COMPLEX;
    case MPB_C128: return MPI_C_DOUBLE_COMPLEX;
    default: return MPI_UINT8_T;
  }
}

/* The MPI communicator of c's members (after the agreement: all are here). */
static void open_comm(mpb_state *st, mpb_comm *c, io *f) {
  note(f, mpb_comm_mpi(st, c, &f->comm, &f->own_comm), "MPI_Comm_create_group");
}

/* The box of rank me of layout y as a view of the file after offset: a
** subarray, or, when the box is one run of the file (the dimensions before
** its first partial one whole, those after it of extent 1: a split of the
** last dimension), a plain displacement, which ROMIO writes as C's
** write_at does. The int-count subarray type: ROMIO (MPICH 4.0) cannot
** flatten the large-count one; an extent of 2^31 or more is refused before
** any I/O (layout_ok). */
static void set_view(const mpb_lay *y, int me, MPI_Offset offset, io *f) {
  int nd = y->l.ndim;
  int sizes[MPB_LAYOUT_MAXDIM], sub[MPB_LAYOUT_MAXDIM], start[MPB_LAYOUT_MAXDIM];
  int64_t lo[MPB_LAYOUT_MAXDIM], len[MPB_LAYOUT_MAXDIM], n = 1, at = 0, stride = 1;
  int run = 1, partial = 0;
  mpb_layout_range(&y->l, me, lo, len);
  for (int k = 0; k < nd; k++) {
    sizes[k] = (int)y->l.extent[k], sub[k] = (int)len[k], start[k] = (int)lo[k];
    n *= len[k];
    if (partial && len[k] != 1) run = 0;
    if (len[k] != y->l.extent[k]) partial = 1;
    at += lo[k] * stride;
    stride *= y->l.extent[k];
  }
  f->etype = etype_of(y->dtype);
  f->ftype = f->etype;
  if (run) offset += (MPI_Offset)at * (MPI_Offset)mpb_dtype_size(y->dtype);
  if (n > 0 && !run) {
    note(f, MPI_Type_create_subarray(nd, sizes, sub, start, MPI_ORDER_FORTRAN, f->etype, &f->ftype),
         "MPI_Type_create_subarray");
    note(f, MPI_Type_commit(&f->ftype), "MPI_Type_commit");
    f->own_ftype = f->rc == MPI_SUCCESS;
  }
  if (f->rc == MPI_SUCCESS)
    note(f, MPI_File_set_view(f->fh, offset, f->etype, f->ftype, "native", MPI_INFO_NULL),
         "MPI_File_set_view");
}

static void close_io(io *f) {
  if (f->fh != MPI_FILE_NULL) note(f, MPI_File_close(&f->fh), "MPI_File_close");
  if (f->own_ftype) note(f, MPI_Type_free(&f->ftype), "MPI_Type_free"), f->own_ftype = 0;
  if (f->own_comm) note(f, MPI_Comm_free(&f->comm), "MPI_Comm_free"), f->own_comm = 0;
}

typedef struct { MPI_Request req[2]; int n, rc; } reqs;

static int io_done(mpb_state *st, void *ud) {
  (void)st;
  reqs *q = ud;
  int flag = 0;
  MPI_Status stat[2];
  int rc = MPI_Testall(q->n, q->req, &flag, stat);
  if (rc != MPI_SUCCESS) return q->rc = rc, 1;
  return flag;
}

/* Wait for the I/O this rank started: the one wait, serving the control
** channel, raising nothing until it is complete (see the top). */
static void io_wait(lua_State *L, reqs *q, io *f, const char *what) {
  mpb_state *st = mpb_get(L);
  q->rc = MPI_SUCCESS;
  if (q->n > 0 && !io_done(st, q)) mpb_wait(L, st, io_done, q, MPB_WAIT_NOABORT | MPB_WAIT_HOT);
  note(f, q->rc, what);
  q->n = 0;
}

/* Extents MPI's subarray types can describe (checked on every rank before
** any message: every rank raises the same error). */
static void layout_ok(lua_State *L, const mpb_lay *y, const char *fname) {
  for (int k = 0; k < y->l.ndim; k++)
    if (y->l.extent[k] > INT32_MAX)
      mpb_lay_argerror(L, 0, fname, "extent %I of '%s' is beyond MPI-IO's subarrays (2^31 - 1)",
                       (LUAI_UACINT)y->l.extent[k], y->l.name[k]);
}

/* ------------------------------------------------------------ reporting */
/* The verdict of the last agreement: raise on every rank if any failed
** (this rank's own message, or whose part failed). */
static void verdict(lua_State *L, mpb_comm *c, const char *fname, const vote *all, int bad,
                    const char *mine) {
  mpb_state *st = mpb_get(L);
  if (bad < 0) return;
  if (mine) luaL_error(L, "mp.%s: " MPB_RANKFMT " %s", fname, st->rank, st->size, mine);
  if (all[bad].status == 0)
    luaL_error(L, "mp.%s: " MPB_RANKFMT " rank %d of the communicator calls it with another "
               "path, layout or direction", fname, st->rank, st->size, bad);
  luaL_error(L, "mp.%s: " MPB_RANKFMT " rank %d of the communicator failed (it says why)",
             fname, st->rank, st->size, bad);
}

static const char *io_message(lua_State *L, const io *f, const char *path) {
  char s[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(f->rc, s, &len) != MPI_SUCCESS) snprintf(s, sizeof s, "MPI error %d", f->rc);
  return lua_pushfstring(L, "%s of '%s': %s", f->what, path, s);
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
  layout_ok(L, &y, fn);
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
  verdict(L, c, fn, all, agree(L, c, fn, v, all), NULL);
  /* everyone is here: MPI's collectives cannot wait for a rank that does not come */
  io f = {MPI_COMM_NULL, 0, MPI_FILE_NULL, MPI_DATATYPE_NULL, MPI_DATATYPE_NULL, 0, MPI_SUCCESS, ""};
  reqs q = {{MPI_REQUEST_NULL, MPI_REQUEST_NULL}, 0, MPI_SUCCESS};
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
  int bad = agree(L, c, fn, v, all);
  if (bad >= 0 && me == 0) unlink(tmp);
  verdict(L, c, fn, all, bad, mine);
  v.status = 0;
  if (me == 0 && rename(tmp, path) != 0) {
    v.status = 1;
    mine = lua_pushfstring(L, "cannot rename '%s' to '%s': %s", tmp, path, strerror(errno));
    unlink(tmp);
  }
  verdict(L, c, fn, all, agree(L, c, fn, v, all), mine);
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
  layout_ok(L, y, fn);
  int me = c->rank;
  int64_t dims[MPB_LAYOUT_MAXDIM];
  int nd = mpb_lay_block_shape(y, me, NULL, dims);
  mpb_array *a = mpb_array_new(L, y->dtype, nd, dims); /* 5 */
  mpb_darray_attach(L, 5, 2, NULL, 4);
  size_t off = 0;
  const char *mine = read_header(L, path, y, &off);
  vote v = {signature(path, y, 0), mine != NULL}, *all = lua_newuserdatauv(L, sizeof *all * (size_t)c->size, 0);
  verdict(L, c, fn, all, agree(L, c, fn, v, all), mine);
  io f = {MPI_COMM_NULL, 0, MPI_FILE_NULL, MPI_DATATYPE_NULL, MPI_DATATYPE_NULL, 0, MPI_SUCCESS, ""};
  reqs q = {{MPI_REQUEST_NULL, MPI_REQUEST_NULL}, 0, MPI_SUCCESS};
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
  verdict(L, c, fn, all, agree(L, c, fn, v, all), mine);
  lua_settop(L, 5);
  return 1;
}

void mpb_open_file(lua_State *L) {
  lua_pushcfunction(L, save);
  lua_setfield(L, -2, "save");
  lua_pushcfunction(L, load);
  lua_setfield(L, -2, "load");
}
