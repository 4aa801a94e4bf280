/* SPDX-License-Identifier: MIT */
/*
** MPI-IO's split collectives (mp.mpi.File's methods): Write_at_all_begin /
** _end, Read_at_all_begin / _end, Write_all_begin / _end, Read_all_begin /
** _end. One may be outstanding per file, as MPI's.
**
** ROMIO's begin calls are its blocking collectives (the end only returns
** the status), so a begin here is the nonblocking collective call
** (MPI_File_iwrite_at_all, ...) once every member has agreed on it (and a
** second agreement returns once every member has started it), and the
** end waits for its request in the one wait, once every member has agreed
** on the end too (a member computing between begin and end does not drive
** its part: MPI's progress comes from the waits). The array stays anchored
** to the file until the end. A split collective still outstanding when the
** task ends is finished there, before the file is closed; after an abort,
** by MPI_Wait (every member started it, so every member's part completes).
*/
#include "mpi/mpi_file.h"

typedef mpb_mfile mfile;

/* By kind (MPB_SPLIT_*): the calls' names; + CALL: the call alone. */
static const char *const begin_fn[] = {NULL, "mpi.File.Write_at_all_begin",
                                       "mpi.File.Read_at_all_begin", "mpi.File.Write_all_begin",
                                       "mpi.File.Read_all_begin"};
static const char *const end_fn[] = {NULL, "mpi.File.Write_at_all_end", "mpi.File.Read_at_all_end",
                                     "mpi.File.Write_all_end", "mpi.File.Read_all_end"};
#define CALL (sizeof "mpi.File." - 1)

/* f:Write_at_all_begin(offset, a), Write_all_begin(a),
** Read_at_all_begin(offset, count | array [, dtype]), Read_all_begin(...) */
static int begin(lua_State *L, int kind) {
  mpb_state *st = mpb_get(L);
  const char *fn = begin_fn[kind];
  MPB_MPI_REGION(L, st, fn);
  mfile *f = mpb_mfile_check(L, fn);
  if (f->split != MPB_SPLIT_NONE)
    luaL_error(L, "mp.%s: " MPB_RANKFMT " '%s' has a split collective begun (%s): MPI allows one "
               "per file", fn, st->rank, st->size, f->path, begin_fn[f->split] + CALL);
  static const int how[] = {0, MPB_IO_AT_ALL, MPB_IO_AT_ALL, MPB_IO_ALL, MPB_IO_ALL};
  int write = kind == MPB_SPLIT_WRITE_AT || kind == MPB_SPLIT_WRITE;
  mpb_mfile_io io;
  mpb_mfile_args(L, f, how[kind], write, fn, &io);
  int rc = mpb_mfile_io_start(L, f, how[kind], write, fn, &io, &f->split_req);
  f->split_at = io.start;
  f->split = kind;
  lua_pushvalue(L, io.out); /* what MPI reads or fills */
  lua_setiuservalue(L, 1, 3);
  /* every member has started it before any returns: a fault in the code
  ** before the end then finds every member's part started (the abort
  ** completes them), not some still in the first agreement */
  mpb_mfile_agree(L, f, fn, begin_fn[kind] + CALL, 1);
  /* one that failed here began its stand-in (mpb_mfile_begin), which the
  ** abort that this error brings completes with the others' parts */
  if (rc != MPI_SUCCESS) mpb_mfile_raise(L, f, fn, rc, write ? "cannot write" : "cannot read");
  return 0;
}

/* f:Write_at_all_end(), ... ; the reads' give the array and the count read */
static int end(lua_State *L, int kind) {
  mpb_state *st = mpb_get(L);
  const char *fn = end_fn[kind];
  MPB_MPI_REGION(L, st, fn);
  mfile *f = mpb_mfile_check(L, fn);
  if (f->split != kind)
    luaL_error(L, "mp.%s: " MPB_RANKFMT " no %s on '%s' to end%s%s", fn, st->rank, st->size,
               begin_fn[kind] + CALL, f->path, f->split ? " (the split collective begun is " : "",
               f->split ? lua_pushfstring(L, "%s)", begin_fn[f->split] + CALL) : "");
  mpb_mfile_agree(L, f, fn, end_fn[kind] + CALL, 0);
  MPI_Status status;
  int rc = mpb_file_wait(L, &f->split_req, 1, &status);
  f->split = MPB_SPLIT_NONE;
  lua_getiuservalue(L, 1, 3);
  int out = lua_gettop(L);
  lua_pushnil(L);
  lua_setiuservalue(L, 1, 3);
  if (rc == MPI_SUCCESS) mpb_check_abort(L, st);
  if (kind == MPB_SPLIT_WRITE_AT || kind == MPB_SPLIT_WRITE) {
    if (rc != MPI_SUCCESS) mpb_mfile_raise(L, f, fn, rc, "cannot write");
    return 0;
  }
  return mpb_mfile_rdone(L, f, fn, rc, out, mpb_array_test(L, out), &status, 1, f->split_at);
}

int mpb_mfile_split_finish(lua_State *L, mfile *f, int aborted) {
  if (f->split == MPB_SPLIT_NONE) return MPI_SUCCESS;
  f->split = MPB_SPLIT_NONE;
  return aborted ? MPI_Wait(&f->split_req, MPI_STATUS_IGNORE)
                 : mpb_file_wait(L, &f->split_req, 1, NULL);
}

static int Write_at_all_begin(lua_State *L) { return begin(L, MPB_SPLIT_WRITE_AT); }
static int Read_at_all_begin(lua_State *L) { return begin(L, MPB_SPLIT_READ_AT); }
static int Write_all_begin(lua_State *L) { return begin(L, MPB_SPLIT_WRITE); }
static int Read_all_begin(lua_State *L) { return begin(L, MPB_SPLIT_READ); }
static int Write_at_all_end(lua_State *L) { return end(L, MPB_SPLIT_WRITE_AT); }
static int Read_at_all_end(lua_State *L) { return end(L, MPB_SPLIT_READ_AT); }
static int Write_all_end(lua_State *L) { return end(L, MPB_SPLIT_WRITE); }
static int Read_all_end(lua_State *L) { return end(L, MPB_SPLIT_READ); }

void mpb_mpi_filesplit_methods(lua_State *L) {
  static const luaL_Reg m[] = {
      {"Write_at_all_begin", Write_at_all_begin}, {"Write_at_all_end", Write_at_all_end},
      {"Read_at_all_begin", Read_at_all_begin}, {"Read_at_all_end", Read_at_all_end},
      {"Write_all_begin", Write_all_begin}, {"Write_all_end", Write_all_end},
      {"Read_all_begin", Read_all_begin}, {"Read_all_end", Read_all_end}, {NULL, NULL}};
  luaL_setfuncs(L, m, 0);
}
