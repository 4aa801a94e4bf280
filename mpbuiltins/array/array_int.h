/* SPDX-License-Identifier: MIT */
/*
** What the Lua-facing files of the array module share (not for the rest of
** mpbuiltins/, which uses array.h): making views, argument errors named
** 'mp.Array.f', and the registration of each file's methods.
*/
#ifndef MPB_ARRAY_INT_H
#define MPB_ARRAY_INT_H

#include "lua.h"
#include "array/array.h"

/* Push a view of the array at idx (a) with element (1, 1, ...) at data, shape
** dims and strides (NULL: column-major). Its owner is a's owner, or a itself,
** so views of views do not chain. */
mpb_array *mpb_arr_pushview(lua_State *L, int idx, const mpb_array *a, void *data, int ndim,
                            const int64_t *dims, const int64_t *strides);
/* Raise "bad argument #arg to 'mp.Array.fname' (message)"; the message is
** formatted like lua_pushfstring. Self counts as #1 (a:f(x) reports x as #2),
** so the numbers are those of the function form mp.Array.f(a, x). */
int mpb_arr_argerror(lua_State *L, int arg, const char *fname, const char *fmt, ...);
/* Push the registered prefix and a space ("[rank 3/4] "), or "". */
const char *mpb_arr_pushprefix(lua_State *L);
/* Push the running function's name as the user called it ("mp.array",
** "a:reshape", "mp.Array.reshape", "a[i]", "a[i] = v"); *arg, when not
** NULL, is made the user's argument number (a method's self is not one). */
const char *mpb_arr_pushname(lua_State *L, int *arg);
/* Raise "bad argument #arg to '<name>' ([rank r/n] msg)", the name from
** mpb_arr_pushname: luaL_argerror with the user's words. */
int mpb_arr_argmsg(lua_State *L, int arg, const char *msg);
/* Dimensions from arguments first..last (at least one, each >= 0, at most
** MPB_ARRAY_MAXDIM, not too large); returns their number. */
int mpb_arr_checkdims(lua_State *L, int first, int last, int64_t *dims);
/* Push "3x4" for a shape. */
const char *mpb_arr_pushshape(lua_State *L, int ndim, const int64_t *dims);
/* Raise a shape error at arg: fmt has two %s, given the two shapes. */
int mpb_arr_shapeerror(lua_State *L, int arg, const char *fname, const char *fmt, int na,
                       const int64_t *da, int nb, const int64_t *db);
/* dst = src converted (unchecked cast, mpb_kern_cast), src broadcast to dst. */
void mpb_arr_cast(mpb_array *dst, const mpb_array *src);
#define MPB_ISFLOAT(d) ((d) == MPB_F64 || (d) == MPB_F32)
#define MPB_ISCPLX(d) MPB_DTYPE_COMPLEX(d)
/* The kind of a dtype: 0 integer, 1 float, 2 complex (out arrays and in-place
** forms keep the kind of the result). */
#define MPB_KIND(d) (MPB_ISCPLX(d) ? 2 : MPB_ISFLOAT(d) ? 1 : 0)
/* The real dtype of a complex one's parts (f64 for c128, f32 for c64), and
** the complex dtype whose parts are a float dtype. */
#define MPB_PARTS(d) ((d) == MPB_C64 ? MPB_F32 : MPB_F64)
#define MPB_CPLX_OF(d) ((d) == MPB_F32 ? MPB_C64 : MPB_C128)
/* The array at arg (strided views included), or raise naming fname. */
mpb_array *mpb_arr_check(lua_State *L, int arg, const char *fname);

/* The dtype of x op y for two arrays of dtypes a and b (array_math.c). */
int mpb_arr_promote(int a, int b);
/* x as an array of dtype R: x itself, or a converted copy (unchecked cast,
** mpb_kern_cast) pushed on the stack. */
mpb_array *mpb_arr_as_dtype(lua_State *L, mpb_array *x, int R);

/* x + v where v is neither a number nor a complex value (nor an array, when
** arrays: an ad var, say): Lua asked the metamethod of x first; give v's its
** turn (called with both operands, its result left on the stack, returns
** 1), as Lua would if x's type had none. -1: neither has one. */
int mpb_arr_defer(lua_State *L, const char *event, int arrays);

/* mp.Complex values (array_complex.c): push their metatable (made on first
** use); add mp.complex and mp.Complex to the table on top. */
void mpb_complex_pushmt(lua_State *L);
void mpb_open_complex(lua_State *L);

/* Each file adds its functions to the methods table on top of the stack
** (array_view.c, array_math.c, array_reduce.c, array_lincomb.c). array_math
** also sets the arithmetic metamethods of the metatable just below it. */
void mpb_array_open_view(lua_State *L);
void mpb_array_open_math(lua_State *L);
void mpb_array_open_reduce(lua_State *L);
void mpb_array_open_lincomb(lua_State *L);

#endif
