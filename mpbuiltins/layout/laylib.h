/* SPDX-License-Identifier: MIT */
/*
** What the Lua-facing files of layout/ share: the "mp.Layout" userdata (a
** layout_calc.h layout and a dtype), argument errors worded like lauxlib's
** with the rank, and each file's opener. The plain-C core is layout_*.h.
**
**   laylib.c     mp.layout, mp.dims, layout values (fields, printing, with)
**   layquery.c   layout queries: local_shape, range, owner, coords, rank,
**                alloc, wrap, describe
**   xchg.c       the exchange of array boxes (transposes and halos): pack,
**                tagged messages, unpack on arrival; "mp.Exchange" requests
**   transpose.c  mp.transpose plans
**   halo.c       halo exchanges of an array with a layout
**   darray.c     distributed arrays: an array carrying its layout; whole-array
**                reductions, gather, scatter, redistribute
**   file.c       mp.save, mp.load: a distributed array in one .npy file,
**                collectively through MPI-IO (layout_npy.c: the header)
**   fft.c        mp.fft plans (layout_fft.c chains their layouts); fft_run.c
**                runs them; the local transforms come from a plug-in
**                (fft_backend.h, mpbuiltins/fftw/)
*/
#ifndef MPB_LAYLIB_H
#define MPB_LAYLIB_H

#include "coll/coll.h"
#include "layout/layout_calc.h"

#define MPB_LAYOUT_MT "mp.Layout"

typedef struct mpb_lay {
  mpb_layout l;      /* the listed order is the local memory order (l.order is 0, 1, ...) */
  int dtype;         /* mpb_dtype */
} mpb_lay;

/* Raise "bad argument #arg to 'mp.fname' ([rank r/n] <fmt>)" (arg 0: no
** argument: "mp.fname: [rank r/n] <fmt>"). fmt as lua_pushfstring's. */
int mpb_lay_argerror(lua_State *L, int arg, const char *fname, const char *fmt, ...);
/* The checks every request of layout/ makes before a wait or a test (an
** mp.Exchange's, an mp.FFTRequest's): raise if an abort is pending, if it
** was made in another task (task) or before an abort (naborts), outside a
** task, or used already (used). */
void mpb_lay_check_request(lua_State *L, int64_t task, int64_t naborts, int used,
                           const char *fname);
/* The layout at arg, or raise naming fname. */
mpb_lay *mpb_lay_check(lua_State *L, int arg, const char *fname);
/* Push a copy of a as a new layout value. */
mpb_lay *mpb_lay_push(lua_State *L, const mpb_lay *a);
/* The rank argument at arg of a query on y: default this rank of the world,
** checked against y's ranks. */
int mpb_lay_rankarg(lua_State *L, const mpb_lay *y, int arg, const char *fname);
/* Shape of y's block on rank r plus 2 * halo[k] on each dimension k (halo
** NULL: none), in the listed order; returns the number of dimensions. */
int mpb_lay_block_shape(const mpb_lay *y, int r, const int64_t *halo, int64_t *dims);
/* The halo widths of argument arg (nil: 0; a number: that width on every
** split dimension; a list: one width per dimension) into w[]. */
void mpb_lay_halo_arg(lua_State *L, const mpb_lay *y, int arg, const char *fname, int64_t *w);
/* Check that the array at arg is y's block of rank r (with halo widths w,
** or NULL) in y's dtype; returns it. shape: that block's shape when the
** caller has it (a plan computes it once), else NULL. */
struct mpb_array *mpb_lay_check_block(lua_State *L, const mpb_lay *y, int r, const int64_t *w,
                                      const int64_t *shape, int arg, const char *fname);

/* A grid topology as layout/ sees one (a halo takes its periodicity from
** it). topo/ registers, under MPB_LAY_GRID_KEY in the registry, a C function
** (value, light userdata mpb_lay_grid *) -> boolean: whether the value is a
** grid topology, g filled in. */
typedef struct mpb_lay_grid {
  int ndim;
  int dims[MPB_LAYOUT_MAXDIM];
  int periodic[MPB_LAYOUT_MAXDIM];
} mpb_lay_grid;
#define MPB_LAY_GRID_KEY "mp.layout.grid_of"
/* Whether the value at idx is a grid topology (g filled in). */
int mpb_lay_grid_of(lua_State *L, int idx, mpb_lay_grid *g);

/* Transpose plans (transpose.c): push the plan from layout a (at aidx) to b
** (bidx) on the communicator at cidx (errors name fname's arguments 2 and
** 3); apply the plan at pidx in direction dir (0 forward, 1 back) to the
** array at sidx into the one at didx, both checked by the caller to be the
** blocks of this rank: wait 1 runs it to the end (nothing pushed), wait 0
** pushes its mp.Exchange request. */
void mpb_transpose_push(lua_State *L, int aidx, int bidx, int cidx, const char *fname);
void mpb_transpose_run(lua_State *L, int pidx, int dir, int sidx, int didx, int wait,
                       const char *fname);

/* Openers: each adds its functions to the mp table on top (mpb_open_layout
** calls the others). */
void mpb_open_layout(lua_State *L);
void mpb_layout_open_query(lua_State *L, int methods);
void mpb_open_xchg(lua_State *L);
void mpb_open_transpose(lua_State *L);
void mpb_open_halo(lua_State *L);
/* darray.c: distributed arrays (an mp.Array with its layout as attribute).
** Attach layout (at layidx; the array's dtype rules) to the array at aidx,
** with halo widths (NULL: none) and the communicator at cidx (0: mp.world
** when used). mpb_open_darray adds mp.darray to the mp table at mpt and
** scatter to the layouts' methods at laymethods. */
void mpb_darray_attach(lua_State *L, int aidx, int layidx, const int64_t *halo, int cidx);
/* Whether the value at idx is a distributed array. */
int mpb_darray_test(lua_State *L, int idx);
/* The distributed array at idx: pushes its owned block (a view, the halo
** left out) and its communicator (mp.world when it has none; checked
** against the layout), returns the block; its layout, with the array's
** dtype, goes to *y. Raises naming fname if idx is not one. */
struct mpb_array *mpb_darray_parts(lua_State *L, int idx, mpb_lay *y, const char *fname);
void mpb_open_darray(lua_State *L, int mpt, int laymethods);
/* file.c: mp.save and mp.load (NumPy's .npy files through MPI-IO). */
void mpb_open_file(lua_State *L);
/* fft.c: mp.fft and its plans. */
void mpb_open_fft(lua_State *L);

#endif
