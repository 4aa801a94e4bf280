/* SPDX-License-Identifier: MIT */
/*
** Typed n-dimensional arrays ("mp.Array" userdata): the one numeric bulk type
** shared by messages, collectives and the ad binding. No MPI here.
**
** Layout: column-major (first index varies fastest, as in Fortran, Yorick and
** Julia), 1-based in Lua. `a[i]` is flat element i.
**
** Storage: an array either owns its elements (allocated with the userdata) or
** is a view into memory owned by another Lua object (a received message, a
** parent array); the owner is kept alive in the array's user value, so a view
** never dangles.
**
** Contiguity: most arrays are contiguous (data..data+n holds the elements in
** column-major order). Views over index ranges (a:view, a:interior) may be
** strided; their header says so (contig == 0) and only the array module and
** code calling mpb_array_testv / mpb_array_checkv ever sees them: the plain
** test/check functions, which the rest of mpbuiltins/ uses, refuse them, so no
** caller that assumes contiguous memory is handed a strided view.
*/
#ifndef MPB_ARRAY_H
#define MPB_ARRAY_H

#include <stddef.h>
#include <stdint.h>
#include "lua.h"

#define MPB_ARRAY_MT "mp.Array"
#define MPB_ARRAY_MAXDIM 8

/* c64 and c128: complex numbers, two f32 / two f64 (real part first), as C99's
** float/double _Complex and NumPy's complex64/complex128. The numbers are the
** wire format's: never reorder them. */
typedef enum { MPB_F64 = 0, MPB_F32, MPB_I64, MPB_I32, MPB_U8, MPB_C64, MPB_C128,
               MPB_NDTYPE } mpb_dtype;
#define MPB_DTYPE_COMPLEX(d) ((d) == MPB_C64 || (d) == MPB_C128)

typedef struct mpb_array {
  void *data;        /* element 1 (flat), suitably aligned for dtype */
  int64_t n;         /* number of elements (product of dims; 0 allowed) */
  int ndim;          /* 1..MPB_ARRAY_MAXDIM */
  int dtype;         /* mpb_dtype */
  int64_t dims[MPB_ARRAY_MAXDIM];
  /* added by the array module (the fields above are the contract): */
  int64_t strides[MPB_ARRAY_MAXDIM]; /* elements between neighbours along each
                        dimension (may be negative); contiguous: 1, d1, d1*d2.. */
  int contig;        /* 1 when the strides are the column-major ones */
  int spare_;        /* keeps sizeof a multiple of 8 (elements follow it) */
} mpb_array;

/* What the array layer's errors say first: it has no rank of its own, so
** an upper layer registers, at this registry key, a C function returning
** the words ("[rank 3/4]"); none registered: nothing. */
#define MPB_ARRAY_PREFIX_KEY "mp.Array.prefix"

/* Size in bytes of one element of dtype, or 0 for an invalid dtype. */
size_t mpb_dtype_size(int dtype);
/* "f64", "f32", ... ; NULL for an invalid dtype. */
const char *mpb_dtype_name(int dtype);
/* dtype from its name, or -1. */
int mpb_dtype_from_name(const char *name);

/* Push a new zero-filled array owning its storage; returns it. Raises on a
** bad shape (negative dims, too many dims, overflow). */
mpb_array *mpb_array_new(lua_State *L, int dtype, int ndim, const int64_t *dims);
/* Push a view on `data` whose memory is owned by the Lua value at owner_idx
** (kept alive as the view's user value). `data` must stay valid while the
** owner lives. */
mpb_array *mpb_array_view(lua_State *L, int owner_idx, void *data, int dtype,
                          int ndim, const int64_t *dims);
/* The contiguous array at idx, or NULL if it is not one (a strided view gives
** NULL: copy it first). */
mpb_array *mpb_array_test(lua_State *L, int idx);
/* The contiguous array at idx, or raises a standard argument error (for a
** strided view: "contiguous mp.Array expected, got a strided view ..."). */
mpb_array *mpb_array_check(lua_State *L, int idx);
/* Element i (0-based offset from data: the flat index for a contiguous array,
** mpb_array_offset's result for a view) as a double / set from a double (with
** the dtype's conversion; complex dtypes: the real part, and an imaginary
** part 0). No bounds check: callers check. */
double mpb_array_getd(const mpb_array *a, int64_t i);
void mpb_array_setd(mpb_array *a, int64_t i, double v);

/* Registers the metatable and adds mp.array (and friends) to the table on top
** of the stack. */
void mpb_open_array(lua_State *L);

/* ---- Added by the array module (additions only; the above is the contract) */

/* Number of elements of that shape, or -1 if the dtype or shape is invalid
** (ndim outside 1..MPB_ARRAY_MAXDIM, a negative dim, or a size beyond 2^50
** bytes). Never raises: the wire decoder validates shapes with it. */
int64_t mpb_array_count(int dtype, int ndim, const int64_t *dims);
/* Size of a's elements in bytes (n * element size). */
size_t mpb_array_bytes(const mpb_array *a);
/* Push element i (0-based flat) as a Lua number: an integer for i64, i32 and
** u8, a float for f64 and f32, an mp.Complex for c64 and c128. No bounds
** check. */
void mpb_array_pushelem(lua_State *L, const mpb_array *a, int64_t i);
/* Store the Lua value at idx into element i (0-based, not bounds checked)
** with the checked conversion rules (README: 1.5 into an integer dtype, 300
** into u8, a string... are refused). Returns NULL, or an error message that
** it pushed on the stack (the caller raises, e.g. with luaL_argerror). */
const char *mpb_array_storev(lua_State *L, mpb_array *a, int64_t i, int idx);
/* Copy src's elements into dst converting with the same rules. src's shape
** broadcasts to dst's (equal shapes are the usual case), or both are
** contiguous with the same n (copied flat). Either may be a strided view.
** Returns NULL, or a pushed error message naming the element (column-major
** over dst, 1-based); the elements before it have been written. */
const char *mpb_array_convert(lua_State *L, mpb_array *dst, const mpb_array *src);
/* Push the "mp.Array" metatable, creating it on first use (so arrays work
** even before mpb_open_array, e.g. in the wire unit tests). */
void mpb_array_pushmt(lua_State *L);
/* Any array at idx, strided views included, or NULL. */
mpb_array *mpb_array_testv(lua_State *L, int idx);
/* Any array at idx, strided views included, or raises an argument error. */
mpb_array *mpb_array_checkv(lua_State *L, int idx);
/* Push a view of dtype and shape dims whose element (1, 1, ...) is at `data`
** and whose strides (in elements) are `strides`, owned by the Lua value at
** owner_idx (kept alive). Sets contig when the strides are column-major. */
mpb_array *mpb_array_strided(lua_State *L, int owner_idx, void *data, int dtype,
                             int ndim, const int64_t *dims, const int64_t *strides);
/* Offset from a->data (in elements) of flat column-major element i (0-based). */
int64_t mpb_array_offset(const mpb_array *a, int64_t i);
/* Copy a's elements, in column-major order, to dst (mpb_array_bytes(a) bytes) /
** from src into a. The packing and unpacking of messages and transposes. */
void mpb_array_pack(const mpb_array *a, void *dst);
void mpb_array_unpack(mpb_array *a, const void *src);
/* ---- Complex values ("mp.Complex", array_complex.c): an immutable pair of
** doubles with arithmetic; what an element of a c64 or c128 array reads as. */
#define MPB_COMPLEX_MT "mp.Complex"
/* Push the complex value re + im i. */
void mpb_complex_push(lua_State *L, double re, double im);
/* Whether the value at idx is an mp.Complex; its parts go to *re, *im. */
int mpb_complex_test(lua_State *L, int idx, double *re, double *im);

/* ---- Attributes: an array may carry one Lua value (its second user value)
** that the array layer does not interpret; layout/ attaches a distributed
** array's layout. A table attribute is consulted before the array's own
** methods for string keys (its fields and its metatable's __index: a.layout,
** a:sum()), tostring(a) calls its `tostring` field when it has one, and the
** result of an element-wise operation, copy or *_like carries the attribute
** of its operand (of the first one that has one, when the shapes agree).
** Views do not: a view is a plain array. */
void mpb_array_setattr(lua_State *L, int idx);  /* pops the value (nil: none) */
int mpb_array_getattr(lua_State *L, int idx);   /* pushes it; returns its type */
/* Give the array at dst the attribute of the array at src, if it has one. */
void mpb_array_copyattr(lua_State *L, int src, int dst);

/* Note on mpb_array_setd (C callers, never raises): integer dtypes truncate
** toward zero and saturate at their range (nan stores 0); f32 overflows to
** +-inf. Lua code always goes through the checked rules instead. */

#endif
