/* SPDX-License-Identifier: MIT */
/*
** MPI-IO on mp.Arrays: mpi.File_open and the methods of its files
** ("mp.mpi.File") at explicit offsets: Write_at, Read_at, Write_at_all,
** Read_at_all, Get_size, Sync, Close, through ROMIO (MPICH's); and what the
** other methods share (mpi_file.h: the checks, the agreement, the data of
** a read or write, MPI's nonblocking call of each kind, external32's
** conversion). The file pointers, split collectives, hints and views are
** in mpi_fileptr.c, mpi_filesplit.c, mpi_fileinfo.c and mpi_fileview.c.
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
#include <stdlib.h>
#include <string.h>

#include "chan/class.h"
#include "mpi/mpi_file.h"
#include "tasks/tasks.h"

#define FILES_KEY "mp.mpi.files" /* registry: the files of the task, in opening order */

typedef mpb_mfile mfile;

/* ------------------------------------------------------------ arguments */
int mpb_mfile_argerror(lua_State *L, int arg, const char *fname, const char *fmt,
                       const char *what) {
  mpb_state *st = mpb_get(L);
  return luaL_error(L, "bad argument #%d to 'mp.%s' (" MPB_RANKFMT " %s)", arg, fname, st->rank,
                    st->size, lua_pushfstring(L, fmt, what));
}
#define argerror mpb_mfile_argerror

mfile *mpb_mfile_check(lua_State *L, const char *fname) {
  mfile *f = luaL_checkudata(L, 1, MPB_FILE_MT);
  mpb_state *st = mpb_get(L);
  mpb_check_task(L, st, fname);
  if (f->fh == MPI_FILE_NULL || f->task != st->task)
    luaL_error(L, "mp.%s: " MPB_RANKFMT " '%s' is closed (a file ends with the task that opened "
               "it)", fname, st->rank, st->size, f->path);
  return f;
}

MPI_Offset mpb_mfile_offset(lua_State *L, int idx, int arg, const char *fname) {
  int ok;
  lua_Integer o = lua_tointegerx(L, idx, &ok);
  if (!ok) argerror(L, arg, fname, "offset expected, got %s", luaL_typename(L, idx));
  if (o < 0) argerror(L, arg, fname, "offset %s is negative", lua_tostring(L, idx));
  return (MPI_Offset)o;
}

int mpb_mfile_dtype(lua_State *L, int idx, int arg, const char *fname) {
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
uint64_t mpb_mfile_sig(const char *call, const char *path, uint64_t extra) {
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
  static const char *const calls[] = {
      "Close", "Write_at_all", "Read_at_all", "Sync", "Write_all", "Read_all", "Write_ordered",
      "Read_ordered", "Seek_shared", "Set_size", "Preallocate", "Set_info",
      "Write_at_all_begin", "Read_at_all_begin", "Write_all_begin", "Read_all_begin",
      "Write_at_all_end", "Read_at_all_end", "Write_all_end", "Read_all_end", "Iwrite_at_all",
      "Iread_at_all", "Iwrite_all", "Iread_all", "Set_atomicity"};
  for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++)
    if (mpb_mfile_sig(calls[i], f->path, 0) == sig)
      return lua_pushfstring(L, "call: mpi.File.%s%s", calls[i],
                             i == 0 ? " (or it ended its task, which closes the file)" : "");
  for (int d = 0; d < MPB_NDTYPE; d++)
    for (int rep = 0; mpb_mfile_datareps[rep]; rep++)
      if (mpb_mfile_sig("Set_view", f->path, (uint64_t)(d + MPB_NDTYPE * rep)) == sig)
        return lua_pushfstring(L, "call: mpi.File.Set_view, etype %s%s%s", mpb_dtype_name(d),
                               rep ? ", datarep " : "", rep ? mpb_mfile_datareps[rep] : "");
  return "call: on another file";
}

void mpb_mfile_agree(lua_State *L, mfile *f, const char *fname, const char *call,
                     uint64_t extra) {
  mpb_file_vote v = {mpb_mfile_sig(call, f->path, extra), 0};
  mpb_file_vote *all = lua_newuserdatauv(L, sizeof *all * (size_t)f->c->size, 0);
  int bad = mpb_file_agree(L, f->c, fname, v, all);
  const char *differs = bad >= 0 && all[bad].status == 0 ? other_call(L, f, all[bad].sig) : "";
  mpb_file_verdict(L, fname, all, bad, NULL, differs);
  lua_pop(L, 1);
}
#define file_agree mpb_mfile_agree

void mpb_mfile_agree_value(lua_State *L, mfile *f, const char *fname, const char *call,
                           uint64_t value, const char *what) {
  mpb_file_vote v = {mpb_mfile_sig(call, f->path, value ^ 0x9e3779b97f4a7c15u), 0};
  mpb_file_vote *all = lua_newuserdatauv(L, sizeof *all * (size_t)f->c->size, 0);
  mpb_file_verdict(L, fname, all, mpb_file_agree(L, f->c, fname, v, all), NULL, what);
  lua_pop(L, 1);
}

void mpb_mfile_raise(lua_State *L, mfile *f, const char *fname, int rc, const char *what) {
  mpb_state *st = mpb_get(L);
  const char *msg = mpb_file_message(L, rc, what, f->path);
  luaL_error(L, "mp.%s: " MPB_RANKFMT " %s", fname, st->rank, st->size, msg);
}
#define raise_io mpb_mfile_raise

int mpb_mfile_wait(lua_State *L, MPI_Request *req, MPI_Status *status) {
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

/* (A split collective still outstanding at the task's end is finished once
** every member is here.) */
static void close_agreed(lua_State *L, mfile *f, const char *fname) {
  file_agree(L, f, fname, "Close", 0);
  int rc = mpb_mfile_split_finish(L, f, 0);
  if (rc != MPI_SUCCESS) close_now(f), raise_io(L, f, fname, rc, "cannot end the split collective on");
  rc = mpb_mfile_ireq_finish(L, f, 0);
  if (rc != MPI_SUCCESS) close_now(f), raise_io(L, f, fname, rc, "cannot complete the requests on");
  rc = close_now(f);
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
        int rc = mpb_mfile_split_finish(L, f, 1);
        if (rc != MPI_SUCCESS) mpb_mpi_warn(st, rc, "MPI_Wait of a split collective after an abort");
        rc = mpb_mfile_ireq_finish(L, f, 1);
        if (rc != MPI_SUCCESS) mpb_mpi_warn(st, rc, "MPI_Wait of a file request after an abort");
        rc = close_now(f);
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
/* f = mpi.File_open(comm, path, mode[, info]) */
static int File_open(lua_State *L) {
  const char *fn = "mpi.File_open";
  mpb_mpi *M = mpb_mpi_get(L);
  mpb_state *st = M->st;
  MPB_MPI_REGION(L, st, fn);
  mpb_comm *c = mpb_mpi_comm(L, M, 1, fn);
  const char *path = lua_tostring(L, 2);
  if (!path) argerror(L, 2, fn, "path expected, got %s", luaL_typename(L, 2));
  int truncate, amode = mode_arg(L, 3, &truncate);
  uint64_t hints = mpb_mfile_info_check(L, 4, 4, fn);
  if (!st->use_mpi)
    luaL_error(L, "mp.%s: " MPB_RANKFMT " MPI-IO needs MPI (mplua runs without it)", fn, st->rank,
               st->size);
  lua_settop(L, 4);
  if (lua_isnil(L, 1)) mpb_comm_pushworld(L), lua_replace(L, 1);
  mfile *f = lua_newuserdatauv(L, sizeof *f, 3); /* 5 */
  memset(f, 0, sizeof *f);
  f->fh = MPI_FILE_NULL;
  f->comm = MPI_COMM_NULL;
  f->amode = amode;
  f->edtype = MPB_U8;
  f->task = st->task;
  f->c = c;
  f->split_req = MPI_REQUEST_NULL;
  lua_pushvalue(L, 1);
  lua_setiuservalue(L, 5, 1);
  lua_pushvalue(L, 2);
  lua_setiuservalue(L, 5, 2);
  f->path = lua_tostring(L, 2);
  luaL_setmetatable(L, MPB_FILE_MT);
  agree(L, c, fn, mpb_file_hash(mpb_mfile_sig("File_open", path, (uint64_t)amode), &hints,
                                sizeof hints), "path, mode or hints");
  /* every member is here: MPI's collectives cannot wait for a rank that does not come */
  const char *what = "cannot open";
  MPI_Info info = MPI_INFO_NULL;
  int rc = mpb_comm_mpi(st, c, &f->comm, &f->own_comm);
  if (rc == MPI_SUCCESS) what = "cannot make the hints of", rc = mpb_mfile_info_make(L, 4, &info);
  if (rc == MPI_SUCCESS) what = "cannot open", rc = MPI_File_open(f->comm, path, amode, info, &f->fh);
  if (info != MPI_INFO_NULL) MPI_Info_free(&info);
  if (rc != MPI_SUCCESS) f->fh = MPI_FILE_NULL;
  if (rc == MPI_SUCCESS) { /* it is open on every member: the task closes it */
    if (lua_getfield(L, LUA_REGISTRYINDEX, FILES_KEY) != LUA_TTABLE) {
      lua_pop(L, 1);
      lua_newtable(L);
      lua_pushvalue(L, -1);
      lua_setfield(L, LUA_REGISTRYINDEX, FILES_KEY);
    }
    lua_pushvalue(L, 5);
    lua_rawseti(L, -2, (lua_Integer)lua_rawlen(L, -2) + 1);
    lua_pop(L, 1);
    if (truncate) what = "cannot truncate", rc = MPI_File_set_size(f->fh, 0);
  }
  if (rc != MPI_SUCCESS) {
    if (f->own_comm && f->fh == MPI_FILE_NULL) close_now(f);
    raise_io(L, f, fn, rc, what);
  }
  lua_settop(L, 5);
  return 1;
}

/* ------------------------------------------------------------ data */
const void *mpb_mfile_wdata(lua_State *L, mfile *f, int idx, int arg, const char *fname,
                            mpb_array **out) {
  mpb_array *a = *out = mpb_array_testv(L, idx);
  if (!a) argerror(L, arg, fname, "mp.Array expected, got %s", luaL_typename(L, idx));
  if (a->dtype != f->edtype && f->edtype != MPB_U8)
    argerror(L, arg, fname, "%s", lua_pushfstring(L, "the array holds %s, the view's etype is %s",
             mpb_dtype_name(a->dtype), mpb_dtype_name(f->edtype)));
  const void *data = a->data;
  size_t bytes = mpb_array_bytes(a) ? mpb_array_bytes(a) : 1;
  if (!a->contig) {
    void *buf = lua_newuserdatauv(L, bytes, 0);
    mpb_array_pack(a, buf);
    data = buf;
  }
  if (f->datarep == MPB_DATAREP_EXT32) {
    void *ext = lua_newuserdatauv(L, bytes, 0);
    MPI_Aint pos = 0;
    int rc = MPI_Pack_external("external32", data, (MPI_Count)a->n, mpb_file_etype(a->dtype), ext,
                               (MPI_Aint)bytes, &pos);
    if (rc != MPI_SUCCESS) raise_io(L, f, fname, rc, "cannot convert to external32 for");
    data = ext;
  }
  return data;
}

mpb_array *mpb_mfile_rbuf(lua_State *L, mfile *f, int idx, int arg, const char *fname) {
  mpb_array *a;
  if (lua_type(L, idx) == LUA_TNUMBER) {
    int ok;
    lua_Integer n = lua_tointegerx(L, idx, &ok);
    if (!ok || n < 0) argerror(L, arg, fname, "count %s is not an integer >= 0", lua_tostring(L, idx));
    int d = lua_isnoneornil(L, idx + 1) ? f->edtype : mpb_mfile_dtype(L, idx + 1, arg + 1, fname);
    int64_t dims[1] = {n};
    a = mpb_array_new(L, d, 1, dims);
  } else {
    a = mpb_array_test(L, idx);
    if (!a) argerror(L, arg, fname, "count or contiguous mp.Array expected, got %s",
                     mpb_array_testv(L, idx) ? "a strided view" : luaL_typename(L, idx));
    lua_pushvalue(L, idx);
  }
  if (a->dtype != f->edtype && f->edtype != MPB_U8)
    argerror(L, arg + (lua_type(L, idx) == LUA_TNUMBER), fname, "%s",
             lua_pushfstring(L, "the array holds %s, the view's etype is %s",
                             mpb_dtype_name(a->dtype), mpb_dtype_name(f->edtype)));
  return a;
}

int mpb_mfile_start(mfile *f, int how, int write, MPI_Offset off, const void *data,
                    const mpb_array *a, MPI_Request *req) {
  MPI_Datatype t = mpb_file_etype(a->dtype);
  MPI_Count n = (MPI_Count)a->n;
  void *buf = (void *)(uintptr_t)data; /* MPI's reads take a non-const pointer */
  switch (how * 2 + write) {
    case MPB_IO_AT * 2 + 1: return MPI_File_iwrite_at_c(f->fh, off, data, n, t, req);
    case MPB_IO_AT * 2: return MPI_File_iread_at_c(f->fh, off, buf, n, t, req);
    case MPB_IO_AT_ALL * 2 + 1: return MPI_File_iwrite_at_all_c(f->fh, off, data, n, t, req);
    case MPB_IO_AT_ALL * 2: return MPI_File_iread_at_all_c(f->fh, off, buf, n, t, req);
    case MPB_IO_IND * 2 + 1: return MPI_File_iwrite_c(f->fh, data, n, t, req);
    case MPB_IO_IND * 2: return MPI_File_iread_c(f->fh, buf, n, t, req);
    case MPB_IO_ALL * 2 + 1: return MPI_File_iwrite_all_c(f->fh, data, n, t, req);
    case MPB_IO_ALL * 2: return MPI_File_iread_all_c(f->fh, buf, n, t, req);
    case MPB_IO_SHARED * 2 + 1: return MPI_File_iwrite_shared_c(f->fh, data, n, t, req);
    default: return MPI_File_iread_shared_c(f->fh, buf, n, t, req);
  }
}

/* ------------------------------------------------------------ test knob */
/* mp.mpi._file_fault(mode) arms this rank's next collective file I/O of the
** task: "start", MPI's start of it fails on this rank (MPI_ERR_OTHER), as it
** may on one rank only; "standin", so does the start of its stand-in; "wait",
** a fault is noted on this rank as it waits for the I/O of Write_ordered or
** Read_ordered (an abort that comes then). */
static int file_fault(lua_State *L) {
  static const char *const modes[] = {"start", "wait", "standin", NULL};
  mpb_mpi *M = mpb_mpi_get(L);
  M->file_fault = 1 + luaL_checkoption(L, 1, NULL, modes);
  M->file_fault_task = M->st->task;
  return 0;
}

int mpb_mfile_fault(lua_State *L, int mode) {
  lua_getfield(L, LUA_REGISTRYINDEX, "mp.mpi.state");
  mpb_mpi *M = lua_touserdata(L, -1);
  lua_pop(L, 1);
  if (!M || M->file_fault != mode || M->file_fault_task != M->st->task) return 0;
  M->file_fault = 0;
  return 1;
}

/* A collective call that fails to start here leaves the other members'
** parts waiting for this one's (ROMIO's collective I/O exchanges among all):
** this rank joins them with the same call on no elements (the stand-in), and
** completes it as the call's own request (its failure is reported then).
** Should the stand-in not start either, the others' parts can never complete
** and ROMIO's requests can be neither cancelled nor abandoned: nothing but
** the job's end frees them, so it ends, saying why, rather than hang. */
int mpb_mfile_begin(lua_State *L, mfile *f, const char *fname, int how, int write, int rc,
                    MPI_Offset off, const void *data, const mpb_array *a, MPI_Request *req) {
  int coll = how == MPB_IO_AT_ALL || how == MPB_IO_ALL, standin_fails = 0;
  if (rc == MPI_SUCCESS && coll && mpb_mfile_fault(L, MPB_MFILE_FAULT_START)) rc = MPI_ERR_OTHER;
  if (rc == MPI_SUCCESS && coll && mpb_mfile_fault(L, MPB_MFILE_FAULT_STANDIN))
    rc = MPI_ERR_OTHER, standin_fails = 1;
  if (rc == MPI_SUCCESS) rc = mpb_mfile_start(f, how, write, off, data, a, req);
  if (rc == MPI_SUCCESS || !coll) return rc;
  *req = MPI_REQUEST_NULL;
  mpb_array none;
  memset(&none, 0, sizeof none);
  none.dtype = a->dtype;
  int rc2 = standin_fails ? MPI_ERR_OTHER : mpb_mfile_start(f, how, write, 0, data, &none, req);
  if (rc2 != MPI_SUCCESS) {
    char why[MPB_ERRLEN / 4], why2[MPB_ERRLEN / 4];
    mpb_mpi_string(rc, why, sizeof why);
    mpb_mpi_string(rc2, why2, sizeof why2);
    mpb_fatal(mpb_get(L), "mp.%s: '%s': cannot start this rank's part (%s) nor its stand-in on "
              "no elements (%s), which the other members' collective I/O waits for", fname,
              f->path, why, why2);
  }
  return rc;
}

int mpb_mfile_eof(mfile *f, MPI_Offset *eof) {
  MPI_Offset here; /* (the individual pointer goes there and back: it is this rank's) */
  int rc = MPI_File_get_position(f->fh, &here);
  if (rc != MPI_SUCCESS) return rc;
  int cls = 0;
  *eof = 0;
  rc = MPI_File_seek(f->fh, 0, MPI_SEEK_END);
  if (rc == MPI_SUCCESS) rc = MPI_File_get_position(f->fh, eof);
  else if (MPI_Error_class(rc, &cls) == MPI_SUCCESS && cls == MPI_ERR_ARG)
    rc = MPI_SUCCESS; /* ROMIO: the end is before the view's start ("negative offset") */
  if (rc == MPI_SUCCESS) rc = MPI_File_seek(f->fh, here, MPI_SEEK_SET);
  return rc;
}

int mpb_mfile_rcount(mfile *f, int rc, const mpb_array *a, MPI_Status *status, int coll,
                     MPI_Offset start, MPI_Count *n, const char **what) {
  MPI_Count got = 0;
  MPI_Offset eof = 0;
  *what = "cannot read";
  *n = 0;
  if (rc == MPI_SUCCESS) rc = MPI_Get_count_c(status, mpb_file_etype(a->dtype), &got);
  if (rc == MPI_SUCCESS && coll) rc = mpb_mfile_eof(f, &eof);
  if (rc != MPI_SUCCESS) return rc;
  if (got == MPI_UNDEFINED) got = 0;
  if (coll) { /* the etypes there are, in a's elements */
    MPI_Offset avail = eof > start ? eof - start : 0;
    double fit = (double)avail * (double)mpb_dtype_size(f->edtype) / (double)mpb_dtype_size(a->dtype);
    if ((double)got > fit) got = (MPI_Count)fit;
    memset((char *)a->data + (size_t)got * mpb_dtype_size(a->dtype), 0,
           (size_t)(a->n - (int64_t)got) * mpb_dtype_size(a->dtype));
  }
  if (f->datarep == MPB_DATAREP_EXT32 && got > 0) { /* the big-endian data read, in place */
    *what = "cannot convert from external32 for";
    size_t bytes = (size_t)got * mpb_dtype_size(a->dtype);
    void *ext = malloc(bytes);
    if (!ext) return MPI_ERR_NO_MEM;
    memcpy(ext, a->data, bytes);
    MPI_Aint pos = 0;
    rc = MPI_Unpack_external("external32", ext, (MPI_Aint)bytes, &pos, a->data, got,
                             mpb_file_etype(a->dtype));
    free(ext);
    if (rc != MPI_SUCCESS) return rc;
  }
  *n = got;
  return MPI_SUCCESS;
}

int mpb_mfile_rdone(lua_State *L, mfile *f, const char *fname, int rc, int out,
                    const mpb_array *a, MPI_Status *status, int coll, MPI_Offset start) {
  MPI_Count got = 0;
  const char *what;
  rc = mpb_mfile_rcount(f, rc, a, status, coll, start, &got, &what);
  if (rc != MPI_SUCCESS) raise_io(L, f, fname, rc, what);
  lua_pushvalue(L, out);
  lua_pushinteger(L, (lua_Integer)got);
  return 2;
}

void mpb_mfile_args(lua_State *L, mfile *f, int how, int write, const char *fname,
                    mpb_mfile_io *io) {
  int at = how == MPB_IO_AT || how == MPB_IO_AT_ALL;
  int idx = 2 + at, top = lua_gettop(L);
  io->off = at ? mpb_mfile_offset(L, 2, 1, fname) : 0;
  if (write) {
    io->data = mpb_mfile_wdata(L, f, idx, 1 + at, fname, &io->a);
    io->out = lua_gettop(L) > top ? lua_gettop(L) : idx;
  } else {
    io->a = mpb_mfile_rbuf(L, f, idx, 1 + at, fname);
    io->data = io->a->data;
    io->out = lua_gettop(L);
  }
}

int mpb_mfile_io_start(lua_State *L, mfile *f, int how, int write, const char *fname,
                       mpb_mfile_io *io, MPI_Request *req) {
  int coll = how == MPB_IO_AT_ALL || how == MPB_IO_ALL;
  if (coll) file_agree(L, f, fname, strrchr(fname, '.') + 1, 0);
  io->start = io->off;
  int rc = how == MPB_IO_ALL && !write ? MPI_File_get_position(f->fh, &io->start) : MPI_SUCCESS;
  return mpb_mfile_begin(L, f, fname, how, write, rc, io->off, io->data, io->a, req);
}

/* f:Write_at(offset, a), Write(a), ...; f:Read_at(offset, count | array [,
** dtype]) -> array, count read; Read(...), ...: the blocking calls. */
int mpb_mfile_io_call(lua_State *L, int how, int write, const char *fn) {
  MPB_MPI_REGION(L, mpb_get(L), fn);
  mfile *f = mpb_mfile_check(L, fn);
  mpb_mfile_io io;
  mpb_mfile_args(L, f, how, write, fn, &io);
  MPI_Request req = MPI_REQUEST_NULL;
  MPI_Status status;
  int rc = mpb_mfile_io_start(L, f, how, write, fn, &io, &req);
  if (rc == MPI_SUCCESS) rc = mpb_mfile_wait(L, &req, &status);
  else mpb_file_wait(L, &req, 1, MPI_STATUS_IGNORE); /* a stand-in (mpb_mfile_begin) */
  if (!write)
    return mpb_mfile_rdone(L, f, fn, rc, io.out, io.a, &status,
                           how == MPB_IO_AT_ALL || how == MPB_IO_ALL, io.start);
  if (rc != MPI_SUCCESS) raise_io(L, f, fn, rc, "cannot write");
  return 0;
}

static int Write_at(lua_State *L) { return mpb_mfile_io_call(L, MPB_IO_AT, 1, "mpi.File.Write_at"); }
static int Write_at_all(lua_State *L) {
  return mpb_mfile_io_call(L, MPB_IO_AT_ALL, 1, "mpi.File.Write_at_all");
}
static int Read_at(lua_State *L) { return mpb_mfile_io_call(L, MPB_IO_AT, 0, "mpi.File.Read_at"); }
static int Read_at_all(lua_State *L) {
  return mpb_mfile_io_call(L, MPB_IO_AT_ALL, 0, "mpi.File.Read_at_all");
}

/* ------------------------------------------------------------ the rest */
static int Get_size(lua_State *L) {
  const char *fn = "mpi.File.Get_size";
  mfile *f = mpb_mfile_check(L, fn);
  MPI_Offset size = 0;
  int rc = MPI_File_get_size(f->fh, &size);
  if (rc != MPI_SUCCESS) raise_io(L, f, fn, rc, "cannot get the size of");
  lua_pushinteger(L, (lua_Integer)size);
  return 1;
}

static int Sync(lua_State *L) {
  const char *fn = "mpi.File.Sync";
  MPB_MPI_REGION(L, mpb_get(L), fn);
  mfile *f = mpb_mfile_check(L, fn);
  file_agree(L, f, fn, "Sync", 0);
  int rc = MPI_File_sync(f->fh);
  if (rc != MPI_SUCCESS) raise_io(L, f, fn, rc, "cannot sync");
  return 0;
}

static int Close(lua_State *L) {
  const char *fn = "mpi.File.Close";
  MPB_MPI_REGION(L, mpb_get(L), fn);
  mfile *f = mpb_mfile_check(L, fn);
  if (f->split != MPB_SPLIT_NONE)
    luaL_error(L, "mp.%s: " MPB_RANKFMT " '%s' has a split collective begun (MPI: end it before "
               "closing)", fn, mpb_get(L)->rank, mpb_get(L)->size, f->path);
  int pending = mpb_mfile_ireq_pending(f);
  if (pending)
    luaL_error(L, "mp.%s: " MPB_RANKFMT " '%s' has %d nonblocking request%s pending (MPI: complete "
               "them before closing)", fn, mpb_get(L)->rank, mpb_get(L)->size, f->path, pending,
               pending > 1 ? "s" : "");
  close_agreed(L, f, fn);
  return 0;
}

static int f_tostring(lua_State *L) {
  mfile *f = luaL_checkudata(L, 1, MPB_FILE_MT);
  lua_pushfstring(L, "mp.mpi.File '%s' (%s)", f->path,
                  f->fh == MPI_FILE_NULL ? "closed" : "open");
  return 1;
}

void mpb_mpi_file_funcs(lua_State *L) {
  mpb_state *st = mpb_get(L);
  static const luaL_Reg methods[] = {
      {"Write_at", Write_at}, {"Read_at", Read_at}, {"Write_at_all", Write_at_all},
      {"Read_at_all", Read_at_all}, {"Get_size", Get_size}, {"Sync", Sync}, {"Close", Close},
      {NULL, NULL}};
  static const luaL_Reg meta[] = {{"__tostring", f_tostring}, {NULL, NULL}};
  mpb_class_begin(L, MPB_FILE_MT, methods);
  mpb_mpi_fileptr_methods(L);
  mpb_mpi_filesplit_methods(L);
  mpb_mpi_fileireq_methods(L);
  mpb_mpi_fileattr_methods(L);
  mpb_mpi_fileinfo_methods(L);
  mpb_mpi_fileview_methods(L);
  mpb_class_end(L, NULL, meta);
  lua_getfield(L, LUA_REGISTRYINDEX, "mp.mpi.state"); /* upvalue 1 of every mpi function */
  lua_pushcclosure(L, File_open, 1);
  lua_setfield(L, -2, "File_open");
  lua_getfield(L, LUA_REGISTRYINDEX, "mp.mpi.state");
  lua_pushcclosure(L, file_fault, 1);
  lua_setfield(L, -2, "_file_fault");
  mpb_mpi_fileattr_funcs(L);
  static const struct { const char *name; int v; } k[] = {
      {"MODE_RDONLY", MPI_MODE_RDONLY}, {"MODE_WRONLY", MPI_MODE_WRONLY},
      {"MODE_RDWR", MPI_MODE_RDWR}, {"MODE_CREATE", MPI_MODE_CREATE},
      {"MODE_EXCL", MPI_MODE_EXCL}, {"MODE_APPEND", MPI_MODE_APPEND},
      {"MODE_DELETE_ON_CLOSE", MPI_MODE_DELETE_ON_CLOSE},
      {"MODE_UNIQUE_OPEN", MPI_MODE_UNIQUE_OPEN}, {"MODE_SEQUENTIAL", MPI_MODE_SEQUENTIAL},
      {"SEEK_SET", MPI_SEEK_SET}, {"SEEK_CUR", MPI_SEEK_CUR}, {"SEEK_END", MPI_SEEK_END}};
  for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
    lua_pushinteger(L, k[i].v);
    lua_setfield(L, -2, k[i].name);
  }
  mpb_task_on_end(L, st, files_end);
  mpb_mpi_type_funcs(L); /* (their end after the files') */
}
