/* SPDX-License-Identifier: MIT */
/*
** MPI-IO on mp.Arrays: mpi.File_open and the methods of its files
** ("mp.mpi.File"): Write_at, Read_at, Write_at_all, Read_at_all, Set_view,
** Get_size, Sync, Close, through ROMIO (MPICH's).
**
** MPI's collective file calls block until every member calls them, so each
** (open, set_view, sync, close, and the collective reads and writes) first
** agrees through an mplua collective on the file's communicator
** (layout/file_io.h): a fault elsewhere ends that wait cleanly, and a member
** making another call (another path, mode or etype, or another call
** altogether) is an error on every member instead of a hang. Data moves with
** MPI's nonblocking calls (MPI_File_iwrite_at, iread_at, iwrite_at_all,
** iread_at_all) waited in the one wait, which serves the control channel;
** ROMIO's requests can be neither cancelled nor abandoned, so an abort or an
** interrupt is honoured once this rank's I/O is complete, at the end of the
** call (a collective call's I/O always completes: every member started it).
**
** A file belongs to the task that opened it: at the end of each rank's task
** body the files still open are closed (collectively, in the order they
** were opened, which is the same on every member); after an abort, the
** protocol closes them on every rank once all are out of the task.
*/
#include <string.h>

#include "array/array.h"
#include "chan/class.h"
#include "layout/file_io.h"
#include "mpi/mpi.h"
#include "tasks/tasks.h"

#define FILE_MT "mp.mpi.File"
#define FILES_KEY "mp.mpi.files" /* registry: the files of the task, in opening order */

typedef struct {
  MPI_File fh;         /* MPI_FILE_NULL: closed */
  MPI_Comm comm;       /* the file's MPI communicator (owned when own_comm) */
  int own_comm;
  int amode;
  int edtype;          /* the view's etype as a dtype (u8: bytes, the default view) */
  int64_t task;
  mpb_comm *c;         /* user value 1 anchors it */
  const char *path;    /* user value 2 */
} mfile;

/* ------------------------------------------------------------ arguments */
static int argerror(lua_State *L, int arg, const char *fname, const char *fmt, const char *what) {
  mpb_state *st = mpb_get(L);
  return luaL_error(L, "bad argument #%d to 'mp.%s' (" MPB_RANKFMT " %s)", arg, fname, st->rank,
                    st->size, lua_pushfstring(L, fmt, what));
}

/* The open file at 1 (a method's self), in this task. */
static mfile *check_file(lua_State *L, const char *fname) {
  mfile *f = luaL_checkudata(L, 1, FILE_MT);
  mpb_state *st = mpb_get(L);
  mpb_check_task(L, st, fname);
  if (f->fh == MPI_FILE_NULL || f->task != st->task)
    luaL_error(L, "mp.%s: " MPB_RANKFMT " '%s' is closed (a file ends with the task that opened "
               "it)", fname, st->rank, st->size, f->path);
  return f;
}

/* An offset or a displacement at idx (argument arg): an integer >= 0. */
static MPI_Offset offset_arg(lua_State *L, int idx, int arg, const char *fname) {
  int ok;
  lua_Integer o = lua_tointegerx(L, idx, &ok);
  if (!ok) argerror(L, arg, fname, "offset expected, got %s", luaL_typename(L, idx));
  if (o < 0) argerror(L, arg, fname, "offset %s is negative", lua_tostring(L, idx));
  return (MPI_Offset)o;
}

static int dtype_arg(lua_State *L, int idx, int arg, const char *fname) {
  const char *name = lua_tostring(L, idx);
  int d = name ? mpb_dtype_from_name(name) : -1;
  if (d < 0) argerror(L, arg, fname, "dtype expected ('f64', 'i32', ...), got %s",
                      name ? lua_pushfstring(L, "'%s'", name) : luaL_typename(L, idx));
  return d;
}

/* "r", "r+", "w", "w+" (C's fopen modes; "w" truncates) or C's amode number. */
static int mode_arg(lua_State *L, int idx, int *truncate) {
  *truncate = 0;
  if (lua_type(L, idx) == LUA_TNUMBER) {
    int ok;
    lua_Integer m = lua_tointegerx(L, idx, &ok);
    if (!ok || m <= 0 || m > INT32_MAX)
      argerror(L, 3, "mpi.File_open", "mode %s is not an amode", lua_tostring(L, idx));
    return (int)m;
  }
  const char *s = lua_tostring(L, idx);
  if (s && strcmp(s, "r") == 0) return MPI_MODE_RDONLY;
  if (s && strcmp(s, "r+") == 0) return MPI_MODE_RDWR;
  if (s && strcmp(s, "w") == 0) return *truncate = 1, MPI_MODE_WRONLY | MPI_MODE_CREATE;
  if (s && strcmp(s, "w+") == 0) return *truncate = 1, MPI_MODE_RDWR | MPI_MODE_CREATE;
  return argerror(L, 3, "mpi.File_open", "mode 'r', 'r+', 'w', 'w+' or an amode expected, "
                  "got %s", s ? lua_pushfstring(L, "'%s'", s) : luaL_typename(L, idx));
}

/* ------------------------------------------------------------ agreement */
static uint64_t sig_of(const char *call, const char *path, int extra) {
  uint64_t h = mpb_file_hash(MPB_FILE_HASH0, call, strlen(call) + 1);
  h = mpb_file_hash(h, path, strlen(path) + 1);
  return mpb_file_hash(h, &extra, sizeof extra);
}

/* Every member of c is here making the same call (or raise on all). */
static void agree(lua_State *L, mpb_comm *c, const char *fname, uint64_t sig, const char *differs) {
  mpb_file_vote v = {sig, 0}, *all = lua_newuserdatauv(L, sizeof *all * (size_t)c->size, 0);
  mpb_file_verdict(L, fname, all, mpb_file_agree(L, c, fname, v, all), NULL, differs);
  lua_pop(L, 1);
}

/* What a member whose signature is sig calls on f, in words. */
static const char *other_call(lua_State *L, const mfile *f, uint64_t sig) {
  static const char *const calls[] = {"Close", "Write_at_all", "Read_at_all", "Sync"};
  for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++)
    if (sig_of(calls[i], f->path, 0) == sig)
      return lua_pushfstring(L, "call: mpi.File.%s%s", calls[i],
                             i == 0 ? " (or it ended its task, which closes the file)" : "");
  for (int d = 0; d < MPB_NDTYPE; d++)
    if (sig_of("Set_view", f->path, d) == sig)
      return lua_pushfstring(L, "call: mpi.File.Set_view, etype %s", mpb_dtype_name(d));
  return "call: on another file";
}

/* Every member of f's communicator is here making the same call (or raise
** on all, saying what the first that differs calls). */
static void file_agree(lua_State *L, mfile *f, const char *fname, const char *call, int extra) {
  mpb_file_vote v = {sig_of(call, f->path, extra), 0};
  mpb_file_vote *all = lua_newuserdatauv(L, sizeof *all * (size_t)f->c->size, 0);
  int bad = mpb_file_agree(L, f->c, fname, v, all);
  const char *differs = bad >= 0 && all[bad].status == 0 ? other_call(L, f, all[bad].sig) : "";
  mpb_file_verdict(L, fname, all, bad, NULL, differs);
  lua_pop(L, 1);
}

/* Raise MPI's error rc of this file's call what ("cannot write 'x': ..."). */
static void raise_io(lua_State *L, mfile *f, const char *fname, int rc, const char *what) {
  mpb_state *st = mpb_get(L);
  const char *msg = mpb_file_message(L, rc, what, f->path);
  luaL_error(L, "mp.%s: " MPB_RANKFMT " %s", fname, st->rank, st->size, msg);
}

/* Wait for this rank's request, then honour what came meanwhile. */
static int io_wait(lua_State *L, MPI_Request *req, MPI_Status *status) {
  int rc = mpb_file_wait(L, req, 1, status);
  if (rc == MPI_SUCCESS) mpb_check_abort(L, mpb_get(L));
  return rc;
}

/* ------------------------------------------------------------ closing */
static int close_now(mfile *f) {
  int rc = MPI_SUCCESS;
  if (f->fh != MPI_FILE_NULL) rc = MPI_File_close(&f->fh);
  f->fh = MPI_FILE_NULL;
  if (f->own_comm) {
    int rc2 = MPI_Comm_free(&f->comm);
    if (rc == MPI_SUCCESS) rc = rc2;
    f->own_comm = 0;
  }
  return rc;
}

static void close_agreed(lua_State *L, mfile *f, const char *fname) {
  file_agree(L, f, fname, "Close", 0);
  int rc = close_now(f);
  if (rc != MPI_SUCCESS) raise_io(L, f, fname, rc, "cannot close");
}

/* The task's end (tasks.h): close what is open, collectively, in order; after
** an abort every rank is out of the task, so MPI's close is reached by all. */
static void files_end(lua_State *L, mpb_state *st, int aborted) {
  if (lua_getfield(L, LUA_REGISTRYINDEX, FILES_KEY) != LUA_TTABLE) {
    lua_pop(L, 1);
    return;
  }
  lua_Integer n = (lua_Integer)lua_rawlen(L, -1);
  for (lua_Integer i = 1; i <= n; i++) {
    lua_rawgeti(L, -1, i);
    mfile *f = lua_touserdata(L, -1);
    if (f && f->fh != MPI_FILE_NULL) {
      if (!aborted) {
        close_agreed(L, f, "mpi.File.Close");
      } else {
        int rc = close_now(f);
        if (rc != MPI_SUCCESS) mpb_mpi_warn(st, rc, "MPI_File_close after an abort");
      }
    }
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
  lua_pushnil(L);
  lua_setfield(L, LUA_REGISTRYINDEX, FILES_KEY);
}

/* ------------------------------------------------------------ opening */
/* f = mpi.File_open(comm, path, mode) */
static int File_open(lua_State *L) {
  const char *fn = "mpi.File_open";
  mpb_mpi *M = mpb_mpi_get(L);
  mpb_state *st = M->st;
  MPB_MPI_REGION(L, st, fn);
  mpb_comm *c = mpb_mpi_comm(L, M, 1, fn);
  const char *path = luaL_checkstring(L, 2);
  int truncate, amode = mode_arg(L, 3, &truncate);
  if (!st->use_mpi)
    luaL_error(L, "mp.%s: " MPB_RANKFMT " MPI-IO needs MPI (mplua runs without it)", fn, st->rank,
               st->size);
  lua_settop(L, 3);
  if (lua_isnil(L, 1)) mpb_comm_pushworld(L), lua_replace(L, 1);
  mfile *f = lua_newuserdatauv(L, sizeof *f, 2); /* 4 */
  memset(f, 0, sizeof *f);
  f->fh = MPI_FILE_NULL;
  f->comm = MPI_COMM_NULL;
  f->amode = amode;
  f->edtype = MPB_U8;
  f->task = st->task;
  f->c = c;
  lua_pushvalue(L, 1);
  lua_setiuservalue(L, 4, 1);
  lua_pushvalue(L, 2);
  lua_setiuservalue(L, 4, 2);
  f->path = lua_tostring(L, 2);
  luaL_setmetatable(L, FILE_MT);
  agree(L, c, fn, sig_of("File_open", path, amode), "path or mode");
  /* every member is here: MPI's collectives cannot wait for a rank that does not come */
  const char *what = "cannot open";
  int rc = mpb_comm_mpi(st, c, &f->comm, &f->own_comm);
  if (rc == MPI_SUCCESS) rc = MPI_File_open(f->comm, path, amode, MPI_INFO_NULL, &f->fh);
  if (rc != MPI_SUCCESS) f->fh = MPI_FILE_NULL;
  if (rc == MPI_SUCCESS) { /* it is open on every member: the task closes it */
    if (lua_getfield(L, LUA_REGISTRYINDEX, FILES_KEY) != LUA_TTABLE) {
      lua_pop(L, 1);
      lua_newtable(L);
      lua_pushvalue(L, -1);
      lua_setfield(L, LUA_REGISTRYINDEX, FILES_KEY);
    }
    lua_pushvalue(L, 4);
    lua_rawseti(L, -2, (lua_Integer)lua_rawlen(L, -2) + 1);
    lua_pop(L, 1);
    if (truncate) what = "cannot truncate", rc = MPI_File_set_size(f->fh, 0);
  }
  if (rc != MPI_SUCCESS) {
    if (f->own_comm && f->fh == MPI_FILE_NULL) close_now(f);
    raise_io(L, f, fn, rc, what);
  }
  lua_settop(L, 4);
  return 1;
}

/* ------------------------------------------------------------ data */
/* The contiguous data of the array at idx (a strided view packed into a
** userdata pushed on the stack). */
static const void *data_of(lua_State *L, const mpb_array *a) {
  if (a->contig) return a->data;
  void *buf = lua_newuserdatauv(L, mpb_array_bytes(a) ? mpb_array_bytes(a) : 1, 0);
  mpb_array_pack(a, buf);
  return buf;
}

static int write_at(lua_State *L, int coll, const char *fn) {
  MPB_MPI_REGION(L, mpb_get(L), fn);
  mfile *f = check_file(L, fn);
  MPI_Offset off = offset_arg(L, 2, 1, fn);
  mpb_array *a = mpb_array_testv(L, 3);
  if (!a) argerror(L, 2, fn, "mp.Array expected, got %s", luaL_typename(L, 3));
  const void *data = data_of(L, a);
  if (coll) file_agree(L, f, fn, "Write_at_all", 0);
  MPI_Request req = MPI_REQUEST_NULL;
  MPI_Datatype t = mpb_file_etype(a->dtype);
  int rc = coll ? MPI_File_iwrite_at_all_c(f->fh, off, data, (MPI_Count)a->n, t, &req)
                : MPI_File_iwrite_at_c(f->fh, off, data, (MPI_Count)a->n, t, &req);
  if (rc == MPI_SUCCESS) rc = io_wait(L, &req, NULL);
  if (rc != MPI_SUCCESS) raise_io(L, f, fn, rc, "cannot write");
  return 0;
}

/* f:Read_at(offset, count | array [, dtype]) -> array, count read */
static int read_at(lua_State *L, int coll, const char *fn) {
  MPB_MPI_REGION(L, mpb_get(L), fn);
  mfile *f = check_file(L, fn);
  MPI_Offset off = offset_arg(L, 2, 1, fn);
  mpb_array *a;
  if (lua_type(L, 3) == LUA_TNUMBER) {
    int ok;
    lua_Integer n = lua_tointegerx(L, 3, &ok);
    if (!ok || n < 0) argerror(L, 2, fn, "count %s is not an integer >= 0", lua_tostring(L, 3));
    int d = lua_isnoneornil(L, 4) ? f->edtype : dtype_arg(L, 4, 3, fn);
    int64_t dims[1] = {n};
    a = mpb_array_new(L, d, 1, dims);
  } else {
    a = mpb_array_test(L, 3);
    if (!a) argerror(L, 2, fn, "count or contiguous mp.Array expected, got %s",
                     mpb_array_testv(L, 3) ? "a strided view" : luaL_typename(L, 3));
    lua_pushvalue(L, 3);
  }
  int out = lua_gettop(L);
  if (coll) file_agree(L, f, fn, "Read_at_all", 0);
  MPI_Request req = MPI_REQUEST_NULL;
  MPI_Status status;
  MPI_Datatype t = mpb_file_etype(a->dtype);
  int rc = coll ? MPI_File_iread_at_all_c(f->fh, off, a->data, (MPI_Count)a->n, t, &req)
                : MPI_File_iread_at_c(f->fh, off, a->data, (MPI_Count)a->n, t, &req);
  if (rc == MPI_SUCCESS) rc = io_wait(L, &req, &status);
  MPI_Count got = 0;
  if (rc == MPI_SUCCESS) rc = MPI_Get_count_c(&status, t, &got);
  if (rc != MPI_SUCCESS) raise_io(L, f, fn, rc, "cannot read");
  lua_pushvalue(L, out);
  lua_pushinteger(L, got == MPI_UNDEFINED ? 0 : (lua_Integer)got);
  return 2;
}

static int Write_at(lua_State *L) { return write_at(L, 0, "mpi.File.Write_at"); }
static int Write_at_all(lua_State *L) { return write_at(L, 1, "mpi.File.Write_at_all"); }
static int Read_at(lua_State *L) { return read_at(L, 0, "mpi.File.Read_at"); }
static int Read_at_all(lua_State *L) { return read_at(L, 1, "mpi.File.Read_at_all"); }

/* ------------------------------------------------------------ views */
/* f:Set_view(disp, etype[, filetype]): filetype nil (the etype itself) or a
** layout of etype's dtype, whose box of this rank (its rank in the file's
** communicator) the view shows. */
static int Set_view(lua_State *L) {
  const char *fn = "mpi.File.Set_view";
  MPB_MPI_REGION(L, mpb_get(L), fn);
  mfile *f = check_file(L, fn);
  MPI_Offset disp = offset_arg(L, 2, 1, fn);
  int d = lua_isnoneornil(L, 3) ? MPB_U8 : dtype_arg(L, 3, 2, fn);
  MPI_Datatype etype = mpb_file_etype(d), ftype = etype;
  int own = 0;
  const mpb_lay *y = NULL;
  if (!lua_isnoneornil(L, 4) && !(lua_type(L, 4) == LUA_TSTRING && dtype_arg(L, 4, 3, fn) == d)) {
    if (lua_type(L, 4) == LUA_TSTRING)
      argerror(L, 3, fn, "filetype '%s' differs from the etype", lua_tostring(L, 4));
    y = mpb_lay_check(L, 4, "mpi.File.Set_view");
    if (y->dtype != d)
      argerror(L, 3, fn, "the layout holds %s, not the etype", mpb_dtype_name(y->dtype));
    if (y->l.nranks != f->c->size)
      argerror(L, 3, fn, "the layout has %s ranks, not the file's communicator",
               lua_pushfstring(L, "%d", y->l.nranks));
    mpb_file_layout_ok(L, y, 3, fn);
  }
  file_agree(L, f, fn, "Set_view", d);
  const char *what = "cannot set the view of";
  int rc = y ? mpb_file_box(y, f->c->rank, &disp, &ftype, &own, &what) : MPI_SUCCESS;
  if (rc == MPI_SUCCESS) rc = MPI_File_set_view(f->fh, disp, etype, ftype, "native", MPI_INFO_NULL);
  if (own) MPI_Type_free(&ftype); /* the view keeps what it needs */
  if (rc != MPI_SUCCESS) raise_io(L, f, fn, rc, what);
  f->edtype = d;
  return 0;
}

/* ------------------------------------------------------------ the rest */
static int Get_size(lua_State *L) {
  const char *fn = "mpi.File.Get_size";
  mfile *f = check_file(L, fn);
  MPI_Offset size = 0;
  int rc = MPI_File_get_size(f->fh, &size);
  if (rc != MPI_SUCCESS) raise_io(L, f, fn, rc, "cannot get the size of");
  lua_pushinteger(L, (lua_Integer)size);
  return 1;
}

static int Sync(lua_State *L) {
  const char *fn = "mpi.File.Sync";
  MPB_MPI_REGION(L, mpb_get(L), fn);
  mfile *f = check_file(L, fn);
  file_agree(L, f, fn, "Sync", 0);
  int rc = MPI_File_sync(f->fh);
  if (rc != MPI_SUCCESS) raise_io(L, f, fn, rc, "cannot sync");
  return 0;
}

static int Close(lua_State *L) {
  MPB_MPI_REGION(L, mpb_get(L), "mpi.File.Close");
  close_agreed(L, check_file(L, "mpi.File.Close"), "mpi.File.Close");
  return 0;
}

static int f_tostring(lua_State *L) {
  mfile *f = luaL_checkudata(L, 1, FILE_MT);
  lua_pushfstring(L, "mp.mpi.File '%s' (%s)", f->path,
                  f->fh == MPI_FILE_NULL ? "closed" : "open");
  return 1;
}

void mpb_mpi_file_funcs(lua_State *L) {
  mpb_state *st = mpb_get(L);
  static const luaL_Reg methods[] = {
      {"Write_at", Write_at}, {"Read_at", Read_at}, {"Write_at_all", Write_at_all},
      {"Read_at_all", Read_at_all}, {"Set_view", Set_view}, {"Get_size", Get_size},
      {"Sync", Sync}, {"Close", Close}, {NULL, NULL}};
  static const luaL_Reg meta[] = {{"__tostring", f_tostring}, {NULL, NULL}};
  mpb_class(L, FILE_MT, methods, NULL, meta);
  lua_getfield(L, LUA_REGISTRYINDEX, "mp.mpi.state"); /* upvalue 1 of every mpi function */
  lua_pushcclosure(L, File_open, 1);
  lua_setfield(L, -2, "File_open");
  static const struct { const char *name; int v; } k[] = {
      {"MODE_RDONLY", MPI_MODE_RDONLY}, {"MODE_WRONLY", MPI_MODE_WRONLY},
      {"MODE_RDWR", MPI_MODE_RDWR}, {"MODE_CREATE", MPI_MODE_CREATE},
      {"MODE_EXCL", MPI_MODE_EXCL}, {"MODE_APPEND", MPI_MODE_APPEND},
      {"MODE_DELETE_ON_CLOSE", MPI_MODE_DELETE_ON_CLOSE},
      {"MODE_UNIQUE_OPEN", MPI_MODE_UNIQUE_OPEN}, {"MODE_SEQUENTIAL", MPI_MODE_SEQUENTIAL}};
  for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
    lua_pushinteger(L, k[i].v);
    lua_setfield(L, -2, k[i].name);
  }
  mpb_task_on_end(L, st, files_end);
}
