/* SPDX-License-Identifier: MIT */
/*
** MPI-IO through file pointers (mp.mpi.File's methods): the individual
** pointer (Seek, Get_position, Write, Read, Write_all, Read_all), the shared
** one (Write_shared, Read_shared, Write_ordered, Read_ordered, Seek_shared,
** Get_position_shared), and the file's size (Set_size, Preallocate).
** Offsets count etypes under the view, as MPI's.
**
** Data moves with MPI's nonblocking calls (MPI_File_iwrite, iread,
** iwrite_all, iread_all, iwrite_shared, iread_shared) waited in the one
** wait. MPI has no nonblocking ordered calls, and MPI_File_write_ordered
** blocks in ROMIO's collectives: Write_ordered and Read_ordered agree
** through mplua (every member is there; their counts and rank 0's shared
** pointer travel in the same step), write or read each rank's part at its
** offset with MPI_File_iwrite_at_all / iread_at_all in the one wait, agree
** again (every member's I/O went well, and no abort came meanwhile), then
** move the shared pointer past the whole (MPI_File_seek_shared, blocking,
** which every member then reaches, with no wait before it). Seek_shared,
** Set_size and Preallocate, blocking collectives in MPI, are called once
** every member has agreed on the call and on its argument: ROMIO checks
** that they match only on some ranks, and a mismatch would leave the others
** waiting in its barrier.
*/
#include "coll/coll.h"
#include "mpi/mpi_file.h"

typedef mpb_mfile mfile;
#define argerror mpb_mfile_argerror

/* ------------------------------------------------------------ seeking */
static int whence_arg(lua_State *L, int idx, const char *fn) {
  if (lua_isnoneornil(L, idx)) return MPI_SEEK_SET;
  int ok;
  lua_Integer w = lua_tointegerx(L, idx, &ok);
  if (!ok || (w != MPI_SEEK_SET && w != MPI_SEEK_CUR && w != MPI_SEEK_END))
    argerror(L, 2, fn, "whence %s is not mpi.SEEK_SET, SEEK_CUR or SEEK_END",
             ok ? lua_tostring(L, idx) : luaL_typename(L, idx));
  return (int)w;
}

static lua_Integer seek_offset(lua_State *L, int idx, int whence, const char *fn) {
  int ok;
  lua_Integer o = lua_tointegerx(L, idx, &ok);
  if (!ok) argerror(L, 1, fn, "offset expected, got %s", luaL_typename(L, idx));
  if (o < 0 && whence == MPI_SEEK_SET) argerror(L, 1, fn, "offset %s is negative", lua_tostring(L, idx));
  return o;
}

/* The position whence + o (from here, or the end), or an argument error. */
static MPI_Offset target(lua_State *L, mfile *f, lua_Integer o, int whence, MPI_Offset here,
                         const char *fn) {
  MPI_Offset base = whence == MPI_SEEK_CUR ? here : 0;
  if (whence == MPI_SEEK_END) {
    int rc = mpb_mfile_eof(f, &base);
    if (rc != MPI_SUCCESS) mpb_mfile_raise(L, f, fn, rc, "cannot find the end of");
  }
  if (o < 0 && base + o < 0)
    argerror(L, 1, fn, "offset %s is before the start of the view", lua_pushfstring(L, "%I from %s %I",
             (LUAI_UACINT)o, whence == MPI_SEEK_CUR ? "the position" : "the end", (LUAI_UACINT)base));
  return base + (MPI_Offset)o;
}

/* f:Seek(offset[, whence]) */
static int Seek(lua_State *L) {
  const char *fn = "mpi.File.Seek";
  mfile *f = mpb_mfile_check(L, fn);
  int whence = whence_arg(L, 3, fn);
  lua_Integer o = seek_offset(L, 2, whence, fn);
  MPI_Offset here = 0;
  int rc = MPI_File_get_position(f->fh, &here);
  if (rc != MPI_SUCCESS) mpb_mfile_raise(L, f, fn, rc, "cannot seek in");
  rc = MPI_File_seek(f->fh, target(L, f, o, whence, here, fn), MPI_SEEK_SET);
  if (rc != MPI_SUCCESS) mpb_mfile_raise(L, f, fn, rc, "cannot seek in");
  return 0;
}

static int get_position(lua_State *L, int shared) {
  const char *fn = shared ? "mpi.File.Get_position_shared" : "mpi.File.Get_position";
  mfile *f = mpb_mfile_check(L, fn);
  MPI_Offset o = 0;
  int rc = shared ? MPI_File_get_position_shared(f->fh, &o) : MPI_File_get_position(f->fh, &o);
  if (rc != MPI_SUCCESS) mpb_mfile_raise(L, f, fn, rc, "cannot get the position in");
  lua_pushinteger(L, (lua_Integer)o);
  return 1;
}
static int Get_position(lua_State *L) { return get_position(L, 0); }
static int Get_position_shared(lua_State *L) { return get_position(L, 1); }

/* f:Seek_shared(offset[, whence]): collective */
static int Seek_shared(lua_State *L) {
  const char *fn = "mpi.File.Seek_shared";
  MPB_MPI_REGION(L, mpb_get(L), fn);
  mfile *f = mpb_mfile_check(L, fn);
  int whence = whence_arg(L, 3, fn);
  lua_Integer o = seek_offset(L, 2, whence, fn);
  mpb_mfile_agree(L, f, fn, "Seek_shared", 0);
  /* every member is here: the shared pointer stays as it is until the seek */
  MPI_Offset here = 0;
  int rc = MPI_File_get_position_shared(f->fh, &here);
  if (rc != MPI_SUCCESS) mpb_mfile_raise(L, f, fn, rc, "cannot seek in");
  mpb_mfile_agree_value(L, f, fn, "Seek_shared", (uint64_t)o * 3u + (uint64_t)whence, "offset or whence");
  MPI_Offset to = target(L, f, o, whence, here, fn); /* the same on every member */
  rc = MPI_File_seek_shared(f->fh, to, MPI_SEEK_SET);
  if (rc != MPI_SUCCESS) mpb_mfile_raise(L, f, fn, rc, "cannot seek in");
  return 0;
}

static int Get_byte_offset(lua_State *L) {
  const char *fn = "mpi.File.Get_byte_offset";
  mfile *f = mpb_mfile_check(L, fn);
  MPI_Offset o = mpb_mfile_offset(L, 2, 1, fn), b = 0;
  int rc = MPI_File_get_byte_offset(f->fh, o, &b);
  if (rc != MPI_SUCCESS) mpb_mfile_raise(L, f, fn, rc, "cannot get a byte offset in");
  lua_pushinteger(L, (lua_Integer)b);
  return 1;
}

/* ------------------------------------------------------------ data */
/* f:Write(a), Write_all(a), Write_shared(a); f:Read(count | array [, dtype])
** -> array, count read; Read_all, Read_shared (mpb_mfile_io_call) */
#define IO(name, how, write) \
  static int name(lua_State *L) { return mpb_mfile_io_call(L, how, write, "mpi.File." #name); }
IO(Write, MPB_IO_IND, 1)
IO(Write_all, MPB_IO_ALL, 1)
IO(Write_shared, MPB_IO_SHARED, 1)
IO(Read, MPB_IO_IND, 0)
IO(Read_all, MPB_IO_ALL, 0)
IO(Read_shared, MPB_IO_SHARED, 0)

/* ------------------------------------------------------------ ordered */
/* f:Write_ordered(a), f:Read_ordered(count | array [, dtype]): collective,
** each rank's data after the lower ranks', from the shared pointer. */
static int ordered(lua_State *L, int write, const char *fn) {
  mpb_state *st = mpb_get(L);
  MPB_MPI_REGION(L, st, fn);
  mfile *f = mpb_mfile_check(L, fn);
  mpb_mfile_io io;
  mpb_mfile_args(L, f, MPB_IO_IND, write, fn, &io);
  mpb_array *a = io.a;
  const void *data = io.data;
  int out = io.out;
  mpb_mfile_agree(L, f, fn, write ? "Write_ordered" : "Read_ordered", 0);
  /* every member is here: nobody moves the shared pointer but this call */
  MPI_Offset mine[2] = {(MPI_Offset)(a->n * mpb_dtype_size(a->dtype) / mpb_dtype_size(f->edtype)), 0};
  int rc = f->c->rank == 0 ? MPI_File_get_position_shared(f->fh, &mine[1]) : MPI_SUCCESS;
  if (rc != MPI_SUCCESS) mine[0] = -1; /* every member learns it failed */
  MPI_Offset *all = lua_newuserdatauv(L, sizeof mine * (size_t)f->c->size, 0);
  mpb_coll x = mpb_coll_on(L, st, f->c, fn, MPB_COLL_FILE);
  mpb_coll_allgather_raw(L, &x, mine, sizeof mine, all);
  MPI_Offset at = all[1], total = 0;
  for (int r = 0; r < f->c->size; r++) {
    if (all[2 * r] < 0)
      luaL_error(L, "mp.%s: " MPB_RANKFMT " cannot get the shared file pointer of '%s'", fn,
                 st->rank, st->size, f->path);
    if (r < f->c->rank) at += all[2 * r];
    total += all[2 * r];
  }
  MPI_Request req = MPI_REQUEST_NULL;
  MPI_Status status;
  rc = mpb_mfile_begin(L, f, fn, MPB_IO_AT_ALL, write, MPI_SUCCESS, at, data, a, &req);
  if (rc == MPI_SUCCESS) rc = mpb_file_wait(L, &req, 1, &status);
  else mpb_file_wait(L, &req, 1, MPI_STATUS_IGNORE); /* its stand-in */
  if (mpb_mfile_fault(L, MPB_MFILE_FAULT_WAIT))
    mpb_note(st, "mp.mpi._file_fault: a fault injected in mp.%s", fn);
  /* MPI's seek waits for every member: they agree first (an abort that
  ** came during the I/O, here or elsewhere, ends the agreement on all), and
  ** a member whose I/O failed says so there: then none seeks */
  const char *call = write ? "Write_ordered" : "Read_ordered";
  mpb_file_vote v = {mpb_mfile_sig(call, f->path, 2), rc != MPI_SUCCESS};
  mpb_file_vote *votes = lua_newuserdatauv(L, sizeof *votes * (size_t)f->c->size, 0);
  int bad = mpb_file_agree(L, f->c, fn, v, votes);
  const char *why = bad >= 0 && rc != MPI_SUCCESS
                        ? mpb_file_message(L, rc, write ? "cannot write" : "cannot read", f->path)
                        : NULL;
  mpb_file_verdict(L, fn, votes, bad, why, "call"); /* the failing rank's error is the report's */
  rc = MPI_File_seek_shared(f->fh, all[1] + total, MPI_SEEK_SET);
  if (rc != MPI_SUCCESS) mpb_mfile_raise(L, f, fn, rc, "cannot move the shared file pointer of");
  mpb_check_abort(L, st); /* one that came once every vote was in */
  if (write) return 0;
  return mpb_mfile_rdone(L, f, fn, MPI_SUCCESS, out, a, &status, 1, at);
}
static int Write_ordered(lua_State *L) { return ordered(L, 1, "mpi.File.Write_ordered"); }
static int Read_ordered(lua_State *L) { return ordered(L, 0, "mpi.File.Read_ordered"); }

/* ------------------------------------------------------------ sizes */
static int size_call(lua_State *L, int prealloc) {
  const char *fn = prealloc ? "mpi.File.Preallocate" : "mpi.File.Set_size";
  MPB_MPI_REGION(L, mpb_get(L), fn);
  mfile *f = mpb_mfile_check(L, fn);
  int ok;
  lua_Integer size = lua_tointegerx(L, 2, &ok);
  if (!ok) argerror(L, 1, fn, "size expected, got %s", luaL_typename(L, 2));
  if (size < 0) argerror(L, 1, fn, "size %s is negative", lua_tostring(L, 2));
  const char *call = prealloc ? "Preallocate" : "Set_size";
  mpb_mfile_agree(L, f, fn, call, 0);
  mpb_mfile_agree_value(L, f, fn, call, (uint64_t)size, "size");
  int rc = prealloc ? MPI_File_preallocate(f->fh, (MPI_Offset)size)
                    : MPI_File_set_size(f->fh, (MPI_Offset)size);
  if (rc != MPI_SUCCESS) mpb_mfile_raise(L, f, fn, rc, prealloc ? "cannot preallocate" :
                                         "cannot set the size of");
  return 0;
}
static int Set_size(lua_State *L) { return size_call(L, 0); }
static int Preallocate(lua_State *L) { return size_call(L, 1); }

void mpb_mpi_fileptr_methods(lua_State *L) {
  static const luaL_Reg m[] = {
      {"Seek", Seek}, {"Get_position", Get_position}, {"Seek_shared", Seek_shared},
      {"Get_position_shared", Get_position_shared}, {"Get_byte_offset", Get_byte_offset},
      {"Write", Write}, {"Write_all", Write_all}, {"Write_shared", Write_shared},
      {"Read", Read}, {"Read_all", Read_all}, {"Read_shared", Read_shared},
      {"Write_ordered", Write_ordered}, {"Read_ordered", Read_ordered},
      {"Set_size", Set_size}, {"Preallocate", Preallocate}, {NULL, NULL}};
  luaL_setfuncs(L, m, 0);
}
