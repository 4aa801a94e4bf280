/*
** array.c: the C side of typed arrays (array.h): dtypes, shapes, storage and
** the element conversion rules. The Lua methods live in array_lib.c.
**
** Storage: an owning array is one userdata holding the mpb_array header
** followed by its elements, so creating an array is one allocation plus a
** memset, whatever its size. Lua aligns userdata memory to LUAI_MAXALIGN and
** sizeof(mpb_array) is a multiple of 8, so the elements are 8-byte aligned.
** A view's header points into memory owned by the value in its user value.
**
** Conversion rules (documented in the README):
**   f64, f32  accept any number; integers are converted to the nearest float;
**             a finite value beyond the f32 range is an error (never a
**             silent infinity); inf and nan are stored as such.
**   i64, i32, u8  accept integers, and floats with an exact integer value
**             (2.0 is stored as 2); 1.5, nan and inf are errors, and so is a
**             value outside the dtype's range (i32: -2^31..2^31-1, u8: 0..255).
** Strings and other values are errors: no silent coercion.
*/
#include <float.h>
#include <math.h>
#include <string.h>

#include "lauxlib.h"
#include "array/array.h"

static const char *const dtype_names[MPB_NDTYPE] = {"f64", "f32", "i64", "i32", "u8"};
static const size_t dtype_sizes[MPB_NDTYPE] = {8, 4, 8, 4, 1};

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

static void set_header(mpb_array *a, void *data, int64_t n, int dtype, int ndim,
                       const int64_t *dims) {
  a->data = data;
  a->n = n;
  a->ndim = ndim;
  a->dtype = dtype;
  for (int k = 0; k < MPB_ARRAY_MAXDIM; k++) a->dims[k] = k < ndim ? dims[k] : 1;
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

mpb_array *mpb_array_new(lua_State *L, int dtype, int ndim, const int64_t *dims) {
  int64_t n = check_shape(L, dtype, ndim, dims);
  size_t bytes = (size_t)n * mpb_dtype_size(dtype);
  mpb_array *a = lua_newuserdatauv(L, sizeof(mpb_array) + bytes, 1);
  set_header(a, a + 1, n, dtype, ndim, dims);
  memset(a->data, 0, bytes);
  mpb_array_pushmt(L);
  lua_setmetatable(L, -2);
  return a;
}

mpb_array *mpb_array_view(lua_State *L, int owner_idx, void *data, int dtype,
                          int ndim, const int64_t *dims) {
  owner_idx = lua_absindex(L, owner_idx);
  int64_t n = check_shape(L, dtype, ndim, dims);
  mpb_array *a = lua_newuserdatauv(L, sizeof(mpb_array), 1);
  set_header(a, data, n, dtype, ndim, dims);
  mpb_array_pushmt(L);
  lua_setmetatable(L, -2);
  lua_pushvalue(L, owner_idx);
  lua_setiuservalue(L, -2, 1);
  return a;
}

mpb_array *mpb_array_test(lua_State *L, int idx) {
  return luaL_testudata(L, idx, MPB_ARRAY_MT);
}

mpb_array *mpb_array_check(lua_State *L, int idx) {
  return luaL_checkudata(L, idx, MPB_ARRAY_MT);
}

double mpb_array_getd(const mpb_array *a, int64_t i) {
  switch (a->dtype) {
    case MPB_F64: return ((const double *)a->data)[i];
    case MPB_F32: return ((const float *)a->data)[i];
    case MPB_I64: return (double)((const int64_t *)a->data)[i];
    case MPB_I32: return ((const int32_t *)a->data)[i];
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
    default: ((uint8_t *)a->data)[i] = (uint8_t)sat(v, 0.0, 255.0); break;
  }
}

void mpb_array_pushelem(lua_State *L, const mpb_array *a, int64_t i) {
  switch (a->dtype) {
    case MPB_F64: lua_pushnumber(L, ((const double *)a->data)[i]); break;
    case MPB_F32: lua_pushnumber(L, ((const float *)a->data)[i]); break;
    case MPB_I64: lua_pushinteger(L, ((const int64_t *)a->data)[i]); break;
    case MPB_I32: lua_pushinteger(L, ((const int32_t *)a->data)[i]); break;
    default: lua_pushinteger(L, ((const uint8_t *)a->data)[i]); break;
  }
}

/* ---------------------------------------------------------------- checked stores */

enum { CV_OK, CV_NOTINT, CV_RANGE };

static int store_int(mpb_array *a, int64_t i, lua_Integer v) {
  switch (a->dtype) {
    case MPB_F64: ((double *)a->data)[i] = (double)v; return CV_OK;
    case MPB_F32: ((float *)a->data)[i] = (float)v; return CV_OK;
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
      if (isfinite(v) && fabs(v) > FLT_MAX) return CV_RANGE;
      ((float *)a->data)[i] = (float)v;
      return CV_OK;
    default:
      if (isnan(v) || (isfinite(v) && floor(v) != v)) return CV_NOTINT;
      /* [-2^63, 2^63) written as exact doubles */
      if (!(v >= -9223372036854775808.0 && v < 9223372036854775808.0)) return CV_RANGE;
      return store_int(a, i, (lua_Integer)v);
  }
}

static const char *range_text(int dtype) {
  switch (dtype) {
    case MPB_F32: return "beyond the f32 range";
    case MPB_I64: return "out of range -2^63..2^63-1";
    case MPB_I32: return "out of range -2147483648..2147483647";
    default: return "out of range 0..255";
  }
}

/* Message for a failed store of the number at idx (pushed on the stack). */
static const char *conv_msg(lua_State *L, int dtype, int idx, int r) {
  const char *num = luaL_tolstring(L, idx, NULL);
  const char *dt = mpb_dtype_name(dtype);
  if (r == CV_NOTINT)
    return lua_pushfstring(L, "cannot store %s in %s %s array (not an integer)", num,
                           dtype == MPB_U8 ? "a" : "an", dt);
  return lua_pushfstring(L, "cannot store %s in %s %s array (%s)", num,
                         dtype == MPB_U8 ? "a" : "an", dt,
                         range_text(dtype));
}

const char *mpb_array_storev(lua_State *L, mpb_array *a, int64_t i, int idx) {
  int r;
  if (lua_type(L, idx) != LUA_TNUMBER)
    return lua_pushfstring(L, "number expected, got %s", luaL_typename(L, idx));
  if (lua_isinteger(L, idx))
    r = store_int(a, i, lua_tointeger(L, idx));
  else
    r = store_flt(a, i, lua_tonumber(L, idx));
  return r == CV_OK ? NULL : conv_msg(L, a->dtype, idx, r);
}

const char *mpb_array_convert(lua_State *L, mpb_array *dst, const mpb_array *src) {
  if (dst->dtype == src->dtype) {
    memmove(dst->data, src->data, mpb_array_bytes(src));
    return NULL;
  }
  for (int64_t i = 0; i < src->n; i++) {
    int r;
    switch (src->dtype) {
      case MPB_F64: r = store_flt(dst, i, ((const double *)src->data)[i]); break;
      case MPB_F32: r = store_flt(dst, i, ((const float *)src->data)[i]); break;
      case MPB_I64: r = store_int(dst, i, ((const int64_t *)src->data)[i]); break;
      case MPB_I32: r = store_int(dst, i, ((const int32_t *)src->data)[i]); break;
      default: r = store_int(dst, i, ((const uint8_t *)src->data)[i]); break;
    }
    if (r != CV_OK) {
      mpb_array_pushelem(L, src, i);
      const char *msg = conv_msg(L, dst->dtype, -1, r);
      return lua_pushfstring(L, "element %I: %s", (lua_Integer)i + 1, msg);
    }
  }
  return NULL;
}
