/* SPDX-License-Identifier: MIT */
/*
** array.c: the C side of typed arrays (array.h): dtypes, shapes, storage and
** the element conversion rules. The Lua methods live in array_lib.c.
**
** Storage: an owning array is one userdata holding the mpb_array header
** followed by its elements, so creating an array is one allocation plus a
** memset, whatever its size. Lua aligns userdata memory to LUAI_MAXALIGN and
** sizeof(mpb_array) is a multiple of 8, so the elements are 8-byte aligned;
** those of an array of 4 KiB or more start at a multiple of 64 bytes (a
** cache line: SIMD loops and FFTW's AVX codelets run faster there).
** A view's header points into memory owned by the value in its user value.
**
** Conversion rules (documented in the README):
**   f64, f32  accept any number; integers are converted to the nearest float;
**             a finite value beyond the f32 range is an error (never a
**             silent infinity); inf and nan are stored as such.
**   i64, i32, u8  accept integers, and floats with an exact integer value
**             (2.0 is stored as 2); 1.5, nan and inf are errors, and so is a
**             value outside the dtype's range (i32: -2^31..2^31-1, u8: 0..255).
**   c128, c64 accept numbers (imaginary part 0), mp.Complex values and pairs
**             {re, im}; each part follows the f64 / f32 rule.
** Strings and other values are errors, and so is a complex value for a real
** dtype: no silent coercion.
*/
#include <float.h>
#include <math.h>
#include <string.h>

#include "lauxlib.h"
#include "array/array.h"
#include "array/array_cplx.h"
#include "array/array_int.h"
#include "array/array_iter.h"

static const char *const dtype_names[MPB_NDTYPE] = {"f64", "f32", "i64", "i32", "u8", "c64",
                                                    "c128"};
static const size_t dtype_sizes[MPB_NDTYPE] = {8, 4, 8, 4, 1, 8, 16};

/* Largest payload we agree to describe: keeps n * size and header + payload
** far from any overflow, on every platform. */
#define MAXBYTES ((int64_t)1 << 50)

size_t mpb_dtype_size(int dtype) {
  return (dtype >= 0 && dtype < MPB_NDTYPE) ? dtype_sizes[dtype] : 0;
}

const char *mpb_dtype_name(int dtype) {
  return (dtype >= 0 && dtype < MPB_NDTYPE) ? dtype_names[dtype] : NULL;
}

int mpb_dtype_from_name(const char *name) {
  for (int i = 0; i < MPB_NDTYPE; i++)
    if (strcmp(name, dtype_names[i]) == 0) return i;
  return -1;
}

int64_t mpb_array_count(int dtype, int ndim, const int64_t *dims) {
  size_t es = mpb_dtype_size(dtype);
  if (es == 0 || ndim < 1 || ndim > MPB_ARRAY_MAXDIM) return -1;
  int64_t n = 1;
  int zero = 0;
  for (int k = 0; k < ndim; k++) {
    if (dims[k] < 0 || dims[k] > MAXBYTES) return -1;
    if (dims[k] == 0) zero = 1;
  }
  if (zero) return 0;  /* any extent is fine beside a zero one */
  for (int k = 0; k < ndim; k++) {
    if (n > MAXBYTES / (int64_t)es / dims[k]) return -1;
    n *= dims[k];
  }
  return n;
}

size_t mpb_array_bytes(const mpb_array *a) {
  return (size_t)a->n * mpb_dtype_size(a->dtype);
}

/* strides NULL: the column-major ones. contig says whether the strides are
** the column-major ones wherever they matter (extents above 1). */
static void set_header(mpb_array *a, void *data, int64_t n, int dtype, int ndim,
                       const int64_t *dims, const int64_t *strides) {
  a->data = data;
  a->n = n;
  a->ndim = ndim;
  a->dtype = dtype;
  a->contig = 1;
  a->spare_ = 0;
  int64_t cm = 1;
  for (int k = 0; k < MPB_ARRAY_MAXDIM; k++) {
    a->dims[k] = k < ndim ? dims[k] : 1;
    a->strides[k] = strides && k < ndim ? strides[k] : cm;
    if (a->dims[k] > 1 && a->strides[k] != cm) a->contig = 0;
    /* unsigned: with a zero extent the others' product may pass INT64_MAX (n is 0
    ** then, and the array is contiguous whatever cm says) */
    cm = (int64_t)((uint64_t)cm * (uint64_t)a->dims[k]);
  }
  if (n == 0) a->contig = 1;
}

static int64_t check_shape(lua_State *L, int dtype, int ndim, const int64_t *dims) {
  int64_t n = mpb_array_count(dtype, ndim, dims);
  if (n >= 0) return n;
  if (mpb_dtype_size(dtype) == 0) luaL_error(L, "invalid array dtype %d", dtype);
  if (ndim < 1 || ndim > MPB_ARRAY_MAXDIM)
    luaL_error(L, "arrays have 1 to %d dimensions, not %d", MPB_ARRAY_MAXDIM, ndim);
  for (int k = 0; k < ndim; k++)
    if (dims[k] < 0) luaL_error(L, "negative array dimension %I", (lua_Integer)dims[k]);
  return luaL_error(L, "array too large");
}

#define ALIGN_BIG 4096
#define ALIGN_TO 64

#define ALLOC_NAMED (1u << 20) /* from here on, a failed allocation says what it was */

static int alloc_ud(lua_State *L) {
  lua_newuserdatauv(L, (size_t)lua_tointeger(L, 1), 2);
  return 1;
}

/* A large array's storage: Lua's "not enough memory" made the user's error
** ("mp.array: [rank 3/4] cannot allocate 8796093022208 bytes (f64, 2^40
** elements)"), through a protected call. */
static mpb_array *alloc_named(lua_State *L, size_t total, int dtype, int64_t n) {
  size_t bytes = (size_t)n * mpb_dtype_size(dtype); /* the data's (total: with the header) */
  lua_pushcfunction(L, alloc_ud);
  lua_pushinteger(L, (lua_Integer)total);
  int rc = lua_pcall(L, 1, 1, 0);
  if (rc == LUA_OK) return lua_touserdata(L, -1);
  if (rc != LUA_ERRMEM) lua_error(L);
  lua_pop(L, 1);
  const char *name = mpb_arr_pushname(L, NULL);
  luaL_error(L, "%s: %scannot allocate %I bytes (%s, %I elements)", name, mpb_arr_pushprefix(L),
             (lua_Integer)bytes, mpb_dtype_name(dtype), (lua_Integer)n);
  return NULL;
}

mpb_array *mpb_array_new(lua_State *L, int dtype, int ndim, const int64_t *dims) {
  int64_t n = check_shape(L, dtype, ndim, dims);
  size_t bytes = (size_t)n * mpb_dtype_size(dtype), pad = bytes >= ALIGN_BIG ? ALIGN_TO : 0;
  size_t total = sizeof(mpb_array) + bytes + pad;
  mpb_array *a = total >= ALLOC_NAMED ? alloc_named(L, total, dtype, n)
                                      : lua_newuserdatauv(L, total, 2);
  char *data = (char *)(a + 1);
  if (pad) data += (ALIGN_TO - (uintptr_t)data % ALIGN_TO) % ALIGN_TO;
  set_header(a, data, n, dtype, ndim, dims, NULL);
  memset(a->data, 0, bytes);
  mpb_array_pushmt(L);
  lua_setmetatable(L, -2);
  return a;
}

mpb_array *mpb_array_view(lua_State *L, int owner_idx, void *data, int dtype,
                          int ndim, const int64_t *dims) {
  return mpb_array_strided(L, owner_idx, data, dtype, ndim, dims, NULL);
}

mpb_array *mpb_array_strided(lua_State *L, int owner_idx, void *data, int dtype,
                             int ndim, const int64_t *dims, const int64_t *strides) {
  owner_idx = lua_absindex(L, owner_idx);
  int64_t n = check_shape(L, dtype, ndim, dims);
  mpb_array *a = lua_newuserdatauv(L, sizeof(mpb_array), 2);
  set_header(a, data, n, dtype, ndim, dims, strides);
  mpb_array_pushmt(L);
  lua_setmetatable(L, -2);
  lua_pushvalue(L, owner_idx);
  lua_setiuservalue(L, -2, 1);
  return a;
}

void mpb_array_setattr(lua_State *L, int idx) { lua_setiuservalue(L, idx, 2); }

int mpb_array_getattr(lua_State *L, int idx) {
  return lua_getiuservalue(L, idx, 2);
}

void mpb_array_copyattr(lua_State *L, int src, int dst) {
  dst = lua_absindex(L, dst);
  if (lua_getiuservalue(L, src, 2) == LUA_TNIL) {
    lua_pop(L, 1);
    return;
  }
  lua_setiuservalue(L, dst, 2);
}

mpb_array *mpb_array_testv(lua_State *L, int idx) {
  return luaL_testudata(L, idx, MPB_ARRAY_MT);
}

mpb_array *mpb_array_checkv(lua_State *L, int idx) {
  return luaL_checkudata(L, idx, MPB_ARRAY_MT);
}

mpb_array *mpb_array_test(lua_State *L, int idx) {
  mpb_array *a = luaL_testudata(L, idx, MPB_ARRAY_MT);
  return a && a->contig ? a : NULL;
}

mpb_array *mpb_array_check(lua_State *L, int idx) {
  mpb_array *a = luaL_checkudata(L, idx, MPB_ARRAY_MT);
  if (!a->contig)
    mpb_arr_argmsg(L, idx, "contiguous mp.Array expected, got a strided view (copy it with :copy())");
  return a;
}

int64_t mpb_array_offset(const mpb_array *a, int64_t i) {
  if (a->contig) return i;
  int64_t off = 0;
  for (int k = 0; k < a->ndim; k++) {
    off += (i % a->dims[k]) * a->strides[k];
    i /= a->dims[k];
  }
  return off;
}

/* Pack and unpack are one strided copy each, between a and a contiguous
** buffer described as an array of a's shape. */
static void copy_between(const mpb_array *dst, const mpb_array *src) {
  mpb_iter it;
  size_t es = mpb_dtype_size(src->dtype);
  mpb_iter_init(&it, dst->ndim, dst->dims);
  mpb_iter_add(&it, dst);
  mpb_iter_add(&it, src);
  mpb_iter_run(&it, mpb_run_copy, &es);
}

void mpb_array_pack(const mpb_array *a, void *dst) {
  mpb_array buf;
  set_header(&buf, dst, a->n, a->dtype, a->ndim, a->dims, NULL);
  copy_between(&buf, a);
}

void mpb_array_unpack(mpb_array *a, const void *src) {
  mpb_array buf;
  set_header(&buf, (void *)src, a->n, a->dtype, a->ndim, a->dims, NULL);
  copy_between(a, &buf);
}

double mpb_array_getd(const mpb_array *a, int64_t i) {
  switch (a->dtype) {
    case MPB_F64: return ((const double *)a->data)[i];
    case MPB_F32: return ((const float *)a->data)[i];
    case MPB_I64: return (double)((const int64_t *)a->data)[i];
    case MPB_I32: return ((const int32_t *)a->data)[i];
    case MPB_C64: return ((const mpb_c64 *)a->data)[i].re;
    case MPB_C128: return ((const mpb_c128 *)a->data)[i].re;
    default: return ((const uint8_t *)a->data)[i];
  }
}

/* Saturating conversion: C leaves out-of-range float->int casts undefined. */
static int64_t sat(double v, double lo, double hi) {
  if (v != v) return 0;
  if (v <= lo) return (int64_t)lo;
  if (v >= hi) return (int64_t)hi;
  return (int64_t)v;
}

void mpb_array_setd(mpb_array *a, int64_t i, double v) {
  switch (a->dtype) {
    case MPB_F64: ((double *)a->data)[i] = v; break;
    case MPB_F32:
      ((float *)a->data)[i] = v > FLT_MAX ? INFINITY : v < -FLT_MAX ? -INFINITY : (float)v;
      break;
    case MPB_I64:
      /* 2^63 itself is out of range: the largest double below it is exact */
      ((int64_t *)a->data)[i] = sat(v, -9223372036854775808.0, 9223372036854774784.0);
      break;
    case MPB_I32: ((int32_t *)a->data)[i] = (int32_t)sat(v, -2147483648.0, 2147483647.0); break;
    case MPB_C64: {
      mpb_c64 z = {v > FLT_MAX ? INFINITY : v < -FLT_MAX ? -INFINITY : (float)v, 0.0f};
      ((mpb_c64 *)a->data)[i] = z;
      break;
    }
    case MPB_C128: {
      mpb_c128 z = {v, 0.0};
      ((mpb_c128 *)a->data)[i] = z;
      break;
    }
    default: ((uint8_t *)a->data)[i] = (uint8_t)sat(v, 0.0, 255.0); break;
  }
}

void mpb_array_pushelem(lua_State *L, const mpb_array *a, int64_t i) {
  switch (a->dtype) {
    case MPB_F64: lua_pushnumber(L, ((const double *)a->data)[i]); break;
    case MPB_F32: lua_pushnumber(L, ((const float *)a->data)[i]); break;
    case MPB_I64: lua_pushinteger(L, ((const int64_t *)a->data)[i]); break;
    case MPB_I32: lua_pushinteger(L, ((const int32_t *)a->data)[i]); break;
    case MPB_C64: {
      mpb_c64 z = ((const mpb_c64 *)a->data)[i];
      mpb_complex_push(L, z.re, z.im);
      break;
    }
    case MPB_C128: {
      mpb_c128 z = ((const mpb_c128 *)a->data)[i];
      mpb_complex_push(L, z.re, z.im);
      break;
    }
    default: lua_pushinteger(L, ((const uint8_t *)a->data)[i]); break;
  }
}

/* ---------------------------------------------------------------- checked stores */

enum { CV_OK, CV_NOTINT, CV_RANGE, CV_COMPLEX };

static int f32_fits(double v) { return !(isfinite(v) && fabs(v) > FLT_MAX); }

/* re + im i into a complex element (c64: each part by the f32 rule); a real
** dtype takes no complex value. */
static int store_cplx(mpb_array *a, int64_t i, double re, double im) {
  if (a->dtype == MPB_C128) {
    mpb_c128 z = {re, im};
    ((mpb_c128 *)a->data)[i] = z;
    return CV_OK;
  }
  if (a->dtype != MPB_C64) return CV_COMPLEX;
  if (!f32_fits(re) || !f32_fits(im)) return CV_RANGE;
  mpb_c64 z = {(float)re, (float)im};
  ((mpb_c64 *)a->data)[i] = z;
  return CV_OK;
}

static int store_int(mpb_array *a, int64_t i, lua_Integer v) {
  switch (a->dtype) {
    case MPB_F64: ((double *)a->data)[i] = (double)v; return CV_OK;
    case MPB_F32: ((float *)a->data)[i] = (float)v; return CV_OK;
    case MPB_C64: case MPB_C128: return store_cplx(a, i, (double)v, 0);
    case MPB_I64: ((int64_t *)a->data)[i] = v; return CV_OK;
    case MPB_I32:
      if (v < INT32_MIN || v > INT32_MAX) return CV_RANGE;
      ((int32_t *)a->data)[i] = (int32_t)v;
      return CV_OK;
    default:
      if (v < 0 || v > 255) return CV_RANGE;
      ((uint8_t *)a->data)[i] = (uint8_t)v;
      return CV_OK;
  }
}

static int store_flt(mpb_array *a, int64_t i, double v) {
  switch (a->dtype) {
    case MPB_F64: ((double *)a->data)[i] = v; return CV_OK;
    case MPB_F32:
      if (!f32_fits(v)) return CV_RANGE;
      ((float *)a->data)[i] = (float)v;
      return CV_OK;
    case MPB_C64: case MPB_C128: return store_cplx(a, i, v, 0);
    default:
      if (isnan(v) || (isfinite(v) && floor(v) != v)) return CV_NOTINT;
      /* [-2^63, 2^63) written as exact doubles */
      if (!(v >= -9223372036854775808.0 && v < 9223372036854775808.0)) return CV_RANGE;
      return store_int(a, i, (lua_Integer)v);
  }
}

static const char *range_text(int dtype) {
  switch (dtype) {
    case MPB_F32: case MPB_C64: return "beyond the f32 range";
    case MPB_I64: return "out of range -2^63..2^63-1";
    case MPB_I32: return "out of range -2147483648..2147483647";
    default: return "out of range 0..255";
  }
}

/* Message for a failed store of the number at idx (pushed on the stack). */
static const char *conv_msg(lua_State *L, int dtype, int idx, int r) {
  const char *num = luaL_tolstring(L, idx, NULL);
  const char *dt = mpb_dtype_name(dtype);
  const char *an = dt[0] == 'f' || dt[0] == 'i' ? "an" : "a"; /* "an f64", "a u8", "a c64" */
  if (r == CV_NOTINT)
    return lua_pushfstring(L, "cannot store %s in %s %s array (not an integer)", num,
                           an, dt);
  if (r == CV_COMPLEX)
    return lua_pushfstring(L, "cannot store %s in %s %s array (a complex value: take its real "
                           "part)", num, an, dt);
  return lua_pushfstring(L, "cannot store %s in %s %s array (%s)", num,
                         an, dt,
                         range_text(dtype));
}

/* A pair {re, im} of two numbers at idx (complex dtypes take one). */
static int pair_at(lua_State *L, int idx, double *re, double *im) {
  if (lua_type(L, idx) != LUA_TTABLE || lua_rawlen(L, idx) != 2) return 0;
  int ok = lua_rawgeti(L, idx, 1) == LUA_TNUMBER && lua_rawgeti(L, idx, 2) == LUA_TNUMBER;
  if (ok) *re = lua_tonumber(L, -2), *im = lua_tonumber(L, -1);
  lua_pop(L, 2);
  return ok;
}

const char *mpb_array_storev(lua_State *L, mpb_array *a, int64_t i, int idx) {
  int r;
  double re, im;
  idx = lua_absindex(L, idx);
  if (lua_type(L, idx) != LUA_TNUMBER) {
    int cplx = MPB_DTYPE_COMPLEX(a->dtype);
    if (mpb_complex_test(L, idx, &re, &im) || (cplx && pair_at(L, idx, &re, &im)))
      r = store_cplx(a, i, re, im);
    else
      return lua_pushfstring(L, "%s expected, got %s", cplx ? "number, mp.Complex or {re, im}"
                             : "number", luaL_typename(L, idx));
    if (r == CV_OK) return NULL;
    if (lua_type(L, idx) == LUA_TTABLE) mpb_complex_push(L, re, im), idx = lua_gettop(L);
    return conv_msg(L, a->dtype, idx, r);
  }
  if (lua_isinteger(L, idx))
    r = store_int(a, i, lua_tointeger(L, idx));
  else
    r = store_flt(a, i, lua_tonumber(L, idx));
  return r == CV_OK ? NULL : conv_msg(L, a->dtype, idx, r);
}

/* The checked conversion as a run function: operand 0 the destination (dtype
** dd), operand 1 the source (dtype sd). On a refused element it records the
** element's flat index (column-major over the destination) and value. */
typedef struct {
  int dd, sd, code;
  int64_t done, bad;
  lua_Integer ival;
  double fval, fimag;
} conv_ctx;

static int conv_run(void *c, char *const *p, const int64_t *st, int64_t n) {
  conv_ctx *x = c;
  mpb_array d;
  d.data = p[0];
  d.dtype = x->dd;
  for (int64_t i = 0; i < n; i++) {
    const char *s = p[1] + i * st[1] * (int64_t)mpb_dtype_size(x->sd);
    int r;
    switch (x->sd) {
      case MPB_F64: r = store_flt(&d, i * st[0], x->fval = *(const double *)s); break;
      case MPB_F32: r = store_flt(&d, i * st[0], x->fval = *(const float *)s); break;
      case MPB_I64: r = store_int(&d, i * st[0], x->ival = *(const int64_t *)s); break;
      case MPB_I32: r = store_int(&d, i * st[0], x->ival = *(const int32_t *)s); break;
      case MPB_C64: {
        const mpb_c64 *z = (const mpb_c64 *)s;
        r = store_cplx(&d, i * st[0], x->fval = z->re, x->fimag = z->im);
        break;
      }
      case MPB_C128: {
        const mpb_c128 *z = (const mpb_c128 *)s;
        r = store_cplx(&d, i * st[0], x->fval = z->re, x->fimag = z->im);
        break;
      }
      default: r = store_int(&d, i * st[0], x->ival = *(const uint8_t *)s); break;
    }
    if (r != CV_OK) {
      x->code = r;
      x->bad = x->done + i;
      return 1;
    }
  }
  x->done += n;
  return 0;
}

const char *mpb_array_convert(lua_State *L, mpb_array *dst, const mpb_array *src) {
  mpb_iter it;
  mpb_array d = *dst, s = *src;
  if (!mpb_broadcasts_to(src->ndim, src->dims, dst->ndim, dst->dims)) {
    /* not a broadcast: both contiguous with the same n, walked flat */
    set_header(&d, dst->data, dst->n, dst->dtype, 1, &dst->n, NULL);
    set_header(&s, src->data, src->n, src->dtype, 1, &src->n, NULL);
  }
  mpb_iter_init(&it, d.ndim, d.dims);
  mpb_iter_add(&it, &d);
  mpb_iter_add(&it, &s);
  if (dst->dtype == src->dtype) {
    size_t es = mpb_dtype_size(dst->dtype);
    mpb_iter_run(&it, mpb_run_copy, &es);
    return NULL;
  }
  conv_ctx x = {dst->dtype, src->dtype, CV_OK, 0, 0, 0, 0, 0};
  if (mpb_iter_run(&it, conv_run, &x) == 0) return NULL;
  if (MPB_DTYPE_COMPLEX(src->dtype))
    mpb_complex_push(L, x.fval, x.fimag);
  else if (src->dtype == MPB_F64 || src->dtype == MPB_F32)
    lua_pushnumber(L, x.fval);
  else
    lua_pushinteger(L, x.ival);
  const char *msg = conv_msg(L, dst->dtype, -1, x.code);
  return lua_pushfstring(L, "element %I: %s", (lua_Integer)x.bad + 1, msg);
}
