/* SPDX-License-Identifier: MIT */
/*
** What the files of mp.mpi's MPI-IO share: the file (mp.mpi.File), its
** argument checks, the agreement before MPI's blocking collectives, the
** wait for its requests, its errors; the datatypes that views are made of.
**
**   mpi_file.c       File_open, the explicit-offset calls, Close, the task's end
**   mpi_fileptr.c    individual and shared file pointers, sizes
**   mpi_filesplit.c  split collectives
**   mpi_fileireq.c   nonblocking calls as user requests (Iwrite_at, ...)
**   mpi_fileattr.c   atomicity, File_delete
**   mpi_fileinfo.c   hints (MPI_Info from and to Lua tables)
**   mpi_fileview.c   Set_view: etypes, filetypes, data representations
**   mpi_type.c       derived datatypes (mp.mpi.Datatype)
*/
#ifndef MPB_MPI_FILE_H
#define MPB_MPI_FILE_H

#include "array/array.h"
#include "layout/file_io.h"
#include "mpi/mpi.h"

#define MPB_FILE_MT "mp.mpi.File"

/* A split collective outstanding on a file (MPI allows one per file). */
enum { MPB_SPLIT_NONE, MPB_SPLIT_WRITE_AT, MPB_SPLIT_READ_AT, MPB_SPLIT_WRITE, MPB_SPLIT_READ };

typedef struct mpb_mfile {
  MPI_File fh;         /* MPI_FILE_NULL: closed */
  MPI_Comm comm;       /* the file's MPI communicator (owned when own_comm) */
  int own_comm;
  int amode;
  int edtype;          /* the view's etype as a dtype (u8: bytes, the default view) */
  int64_t task;
  mpb_comm *c;         /* user value 1 anchors it */
  const char *path;    /* user value 2 */
  int datarep;         /* the view's: an index in mpb_mfile_datareps */
  MPI_Offset split_at; /* the etype its read starts at */
  int split;           /* MPB_SPLIT_*: the split collective begun (user value 3: its array) */
  MPI_Request split_req;
  struct mpb_fileireq *ireqs; /* the nonblocking requests MPI has not completed (mpi_fileireq.c) */
} mpb_mfile;

/* The data representations of views, NULL-terminated ("native" first).
** ROMIO (MPICH 4.0) converts external32 in its blocking calls only, and its
** nonblocking collective ones write and read garbage under it: a view in
** external32 is a native one to ROMIO, and the data is converted here
** (MPI_Pack_external, MPI_Unpack_external), which gives the same file: the
** dtypes' external32 sizes are their native ones. */
#define MPB_DATAREP_EXT32 1
extern const char *const mpb_mfile_datareps[];

/* I/O through a file pointer or at an offset, independent or collective. */
enum { MPB_IO_AT, MPB_IO_AT_ALL, MPB_IO_IND, MPB_IO_ALL, MPB_IO_SHARED };

/* ------------------------------------------------------- mpi_file.c */
/* Raise "bad argument #arg to 'mp.fname' ([rank r/n] <fmt with what>)". */
int mpb_mfile_argerror(lua_State *L, int arg, const char *fname, const char *fmt,
                       const char *what);
/* The open file at 1 (a method's self), in this task. */
mpb_mfile *mpb_mfile_check(lua_State *L, const char *fname);
/* An offset at idx (argument arg): an integer >= 0. */
MPI_Offset mpb_mfile_offset(lua_State *L, int idx, int arg, const char *fname);
/* A dtype name at idx (argument arg). */
int mpb_mfile_dtype(lua_State *L, int idx, int arg, const char *fname);
/* Every member of f's communicator is here making the call whose
** signature is (call, extra) on f (or raise on all, naming what the first
** that differs calls). */
void mpb_mfile_agree(lua_State *L, mpb_mfile *f, const char *fname, const char *call,
                     uint64_t extra);
/* After mpb_mfile_agree on call: every member gives the same value (else
** raise on all: "... calls it with another <what>"). Two steps, so that a
** member still before the call (moving the shared pointer, say) is not
** taken for one with another value. */
void mpb_mfile_agree_value(lua_State *L, mpb_mfile *f, const char *fname, const char *call,
                           uint64_t value, const char *what);
/* The signature of call on path with extra. */
uint64_t mpb_mfile_sig(const char *call, const char *path, uint64_t extra);
/* Raise MPI's error rc of this file's call ("mp.fname: [rank] what 'path': ..."). */
void mpb_mfile_raise(lua_State *L, mpb_mfile *f, const char *fname, int rc, const char *what);
/* The data of the array at idx (argument arg) to write: checked against
** the view's etype, packed into a pushed userdata when strided. */
const void *mpb_mfile_wdata(lua_State *L, mpb_mfile *f, int idx, int arg, const char *fname,
                            mpb_array **a);
/* The array to read into, pushed: a new one of count elements (count at
** idx, dtype at idx + 1, default the etype) or the contiguous array at idx. */
mpb_array *mpb_mfile_rbuf(lua_State *L, mpb_mfile *f, int idx, int arg, const char *fname);
/* Start MPI's nonblocking call how (MPB_IO_*) on a's elements. */
int mpb_mfile_start(mpb_mfile *f, int how, int write, MPI_Offset off, const void *data,
                    const mpb_array *a, MPI_Request *req);
/* After a read: push the array at out and the elements read (from status;
** for a collective read from etype start, coll 1: from the end of the file,
** the rest zeroed, since ROMIO's collective reads count what was asked
** for and fill what is past the end with its buffers' leftovers). */
int mpb_mfile_rdone(lua_State *L, mpb_mfile *f, const char *fname, int rc, int out,
                    const mpb_array *a, MPI_Status *status, int coll, MPI_Offset start);
/* An I/O call's arguments from index 2: the offset (explicit offsets),
** then the array to write, or count | array [, dtype] to read into. */
typedef struct mpb_mfile_io {
  MPI_Offset off;      /* the explicit offset (0 through a pointer) */
  MPI_Offset start;    /* the etype a read starts at (mpb_mfile_io_start) */
  mpb_array *a;        /* the array written, or read into */
  const void *data;    /* what MPI reads or fills */
  int out;             /* stack index: what must live while MPI uses data (a read's array) */
} mpb_mfile_io;
void mpb_mfile_args(lua_State *L, mpb_mfile *f, int how, int write, const char *fname,
                    mpb_mfile_io *io);
/* Start the I/O how (MPB_IO_*) of io; a collective one once every member
** agrees on the call (named by fname's last part). Returns MPI's code (on
** a collective call's failure, *req is its stand-in: mpb_mfile_begin). */
int mpb_mfile_io_start(lua_State *L, mpb_mfile *f, int how, int write, const char *fname,
                       mpb_mfile_io *io, MPI_Request *req);
/* The blocking call fname: arguments, start, the one wait, the result. */
int mpb_mfile_io_call(lua_State *L, int how, int write, const char *fname);
/* The C part of a read's end (mpb_mfile_rdone): *n, the elements read;
** returns MPI's code, *what the words of its error. */
int mpb_mfile_rcount(mpb_mfile *f, int rc, const mpb_array *a, MPI_Status *status, int coll,
                     MPI_Offset start, MPI_Count *n, const char **what);
/* mpb_mfile_start unless rc (a failure before it) is not MPI_SUCCESS, and
** through the test knob (mp.mpi._file_fault "start", "standin"). A
** collective call that fails on this rank still takes its part, on no
** elements: *req is then that stand-in, which the caller completes as it
** would the call's request, then reports the failure; when the stand-in
** cannot start either, the job ends (fname says whose). Returns MPI's code. */
int mpb_mfile_begin(lua_State *L, mpb_mfile *f, const char *fname, int how, int write, int rc,
                    MPI_Offset off, const void *data, const mpb_array *a, MPI_Request *req);
/* Whether the test knob is armed with mode in this task (it is disarmed). */
enum { MPB_MFILE_FAULT_START = 1, MPB_MFILE_FAULT_WAIT, MPB_MFILE_FAULT_STANDIN };
int mpb_mfile_fault(lua_State *L, int mode);
/* The end of the file in etypes under the view. */
int mpb_mfile_eof(mpb_mfile *f, MPI_Offset *eof);
/* Wait for this rank's request, then honour what came meanwhile. */
int mpb_mfile_wait(lua_State *L, MPI_Request *req, MPI_Status *status);

/* --------------------------------------------------- the other files */
void mpb_mpi_fileptr_methods(lua_State *L);   /* into the methods table on top */
void mpb_mpi_filesplit_methods(lua_State *L);
void mpb_mpi_fileinfo_methods(lua_State *L);
void mpb_mpi_fileview_methods(lua_State *L);
void mpb_mpi_fileireq_methods(lua_State *L);
void mpb_mpi_fileattr_methods(lua_State *L);
void mpb_mpi_fileattr_funcs(lua_State *L);    /* File_delete, into the mp.mpi table on top */
/* Complete f's nonblocking requests (the task's end, Close: in the one
** wait; after an abort: MPI_Wait, every member started the collective
** ones). Returns MPI's code. */
int mpb_mfile_ireq_finish(lua_State *L, mpb_mfile *f, int aborted);
/* How many of f's nonblocking requests MPI has not completed (tests them). */
int mpb_mfile_ireq_pending(mpb_mfile *f);
/* Complete the split collective outstanding on f (the task's end: in the
** one wait; after an abort: MPI_Wait, every member started it). */
int mpb_mfile_split_finish(lua_State *L, mpb_mfile *f, int aborted);

/* The hints at idx (a table of string keys and values, or nil), checked
** (argument arg); returns their signature (0: none). */
uint64_t mpb_mfile_info_check(lua_State *L, int idx, int arg, const char *fname);
/* MPI_Info of the checked table at idx (MPI_INFO_NULL for nil); never
** raises: *info is freed by the caller (MPI_Info_free). Returns MPI's code. */
int mpb_mfile_info_make(lua_State *L, int idx, MPI_Info *info);

/* ------------------------------------------------------- mpi_type.c */
/* A derived datatype: committed, freed at the end of the task that made it. */
typedef struct mpb_mtype {
  MPI_Datatype t;      /* MPI_DATATYPE_NULL: freed */
  int dtype;           /* the element type it is made of */
  int64_t task;
} mpb_mtype;
#define MPB_TYPE_MT "mp.mpi.Datatype"
/* The live datatype at idx of this task, or NULL when idx holds none (raises
** when it is freed). */
mpb_mtype *mpb_mpi_type_test(lua_State *L, int idx, int arg, const char *fname);
void mpb_mpi_type_funcs(lua_State *L);   /* into the mp.mpi table on top */
/* What the datatype constructors share (mpi_type.c, mpi_typecons.c):
** the old type at idx (a dtype name or a datatype; *dtype its elements');
** an int at idx in [lo, 2^31-1] (what names it); a list of ints (*n < 0:
** its length, else it must have *n; at most max); a new empty datatype of
** dtype's elements (pushed); made: commit what the call made (rc its
** code), list it in the task's, return 1 (raises MPI's error). */
#define MPB_MTYPE_MAXDIMS 32
MPI_Datatype mpb_mtype_old(lua_State *L, int idx, int arg, const char *fn, int *dtype);
int mpb_mtype_int(lua_State *L, int idx, int arg, const char *fn, const char *what, int lo);
void mpb_mtype_ints(lua_State *L, int idx, int arg, const char *fn, const char *what, int lo,
                    int *out, int *n, int max);
mpb_mtype *mpb_mtype_new(lua_State *L, int dtype);
int mpb_mtype_made(lua_State *L, mpb_mtype *t, int rc, const char *fn);
void mpb_mpi_typecons_funcs(lua_State *L); /* mpi_typecons.c, into the mp.mpi table on top */

#endif
