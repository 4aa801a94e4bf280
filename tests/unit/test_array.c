/* SPDX-License-Identifier: MIT */
/*
** test_array.c: the C API of typed arrays (array.h) and the exact wording of
** the Lua-level errors. The Lua API as a whole is exercised by
** tests/lua/array_*.lua.
*/
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "lauxlib.h"
#include "lualib.h"
#include "array/array.h"
#include "array/array_ops.h"

static lua_State *newstate(void) {
  lua_State *L = luaL_newstate();
  luaL_openlibs(L);
  lua_newtable(L);
  mpb_open_array(L);
  lua_setglobal(L, "mp");
  return L;
}

/* The error message of running code, or NULL if it ran. */
static const char *error_of(lua_State *L, const char *code) {
  if (luaL_dostring(L, code) == LUA_OK) return NULL;
  return lua_tostring(L, -1);
}

static void expect_error(const char *code, const char *msg) {
  lua_State *L = newstate();
  const char *e = error_of(L, code);
  cr_assert_not_null(e, "no error from: %s", code);
  cr_assert(strstr(e, msg) != NULL, "from: %s\n got: %s\nwant: %s", code, e, msg);
  lua_close(L);
}

Test(array, dtypes) {
  const char *names[] = {"f64", "f32", "i64", "i32", "u8", "c64", "c128"};
  const size_t sizes[] = {8, 4, 8, 4, 1, 8, 16};
  for (int d = 0; d < MPB_NDTYPE; d++) {
    cr_assert_str_eq(mpb_dtype_name(d), names[d]);
    cr_assert_eq(mpb_dtype_size(d), sizes[d]);
    cr_assert_eq(mpb_dtype_from_name(names[d]), d);
  }
  cr_assert_null(mpb_dtype_name(MPB_NDTYPE));
  cr_assert_eq(mpb_dtype_size(-1), 0);
  cr_assert_eq(mpb_dtype_from_name("f16"), -1);
}

Test(array, count) {
  int64_t d[3] = {2, 3, 4};
  cr_assert_eq(mpb_array_count(MPB_F64, 3, d), 24);
  d[1] = 0;
  cr_assert_eq(mpb_array_count(MPB_F64, 3, d), 0);
  d[1] = -1;
  cr_assert_eq(mpb_array_count(MPB_F64, 3, d), -1);
  int64_t huge[2] = {INT64_MAX, 2};
  cr_assert_eq(mpb_array_count(MPB_U8, 2, huge), -1);
  int64_t big[2] = {(int64_t)1 << 40, (int64_t)1 << 40};
  cr_assert_eq(mpb_array_count(MPB_U8, 2, big), -1);
  cr_assert_eq(mpb_array_count(MPB_U8, 0, d), -1);
  cr_assert_eq(mpb_array_count(MPB_U8, MPB_ARRAY_MAXDIM + 1, d), -1);
  cr_assert_eq(mpb_array_count(7, 1, d), -1);
}

Test(array, new_view_get_set) {
  lua_State *L = newstate();
  int64_t dims[2] = {3, 4};
  mpb_array *a = mpb_array_new(L, MPB_F64, 2, dims);
  int ai = lua_gettop(L);
  cr_assert_eq(a->n, 12);
  cr_assert_eq(a->ndim, 2);
  cr_assert_eq(((uintptr_t)a->data) % 8, 0, "elements 8-byte aligned");
  for (int64_t i = 0; i < a->n; i++) cr_assert_eq(mpb_array_getd(a, i), 0.0);
  mpb_array_setd(a, 5, 2.5);
  cr_assert_eq(((double *)a->data)[5], 2.5);
  cr_assert_eq(mpb_array_test(L, ai), a);
  cr_assert_eq(mpb_array_check(L, ai), a);
  lua_pushinteger(L, 1);
  cr_assert_null(mpb_array_test(L, -1));
  lua_pop(L, 1);

  /* a view on the middle of a, owned by a */
  int64_t vd[1] = {4};
  mpb_array *v = mpb_array_view(L, ai, (double *)a->data + 4, MPB_F64, 1, vd);
  cr_assert_eq(v->n, 4);
  cr_assert_eq(mpb_array_getd(v, 1), 2.5);
  mpb_array_setd(v, 0, -1);
  cr_assert_eq(mpb_array_getd(a, 4), -1.0);
  lua_getiuservalue(L, -1, 1);
  cr_assert(lua_rawequal(L, -1, ai), "the owner is the view's user value");
  lua_pop(L, 1);
  lua_setglobal(L, "v");
  lua_settop(L, 0);
  lua_gc(L, LUA_GCCOLLECT);
  cr_assert_eq(luaL_dostring(L, "assert(v[1] == -1 and v[2] == 2.5)"), LUA_OK, "%s", lua_tostring(L, -1));
  lua_close(L);
}

Test(array, setd_saturates) {
  lua_State *L = newstate();
  int64_t n[1] = {1};
  mpb_array *i32 = mpb_array_new(L, MPB_I32, 1, n);
  mpb_array_setd(i32, 0, 1e20);
  cr_assert_eq(((int32_t *)i32->data)[0], INT32_MAX);
  mpb_array_setd(i32, 0, -2.7);
  cr_assert_eq(((int32_t *)i32->data)[0], -2);
  mpb_array_setd(i32, 0, NAN);
  cr_assert_eq(((int32_t *)i32->data)[0], 0);
  mpb_array *u8 = mpb_array_new(L, MPB_U8, 1, n);
  mpb_array_setd(u8, 0, -5);
  cr_assert_eq(((uint8_t *)u8->data)[0], 0);
  mpb_array_setd(u8, 0, 300);
  cr_assert_eq(((uint8_t *)u8->data)[0], 255);
  mpb_array *i64 = mpb_array_new(L, MPB_I64, 1, n);
  mpb_array_setd(i64, 0, 1e30);
  cr_assert_eq(((int64_t *)i64->data)[0], INT64_MAX - 1023);
  mpb_array *f32 = mpb_array_new(L, MPB_F32, 1, n);
  mpb_array_setd(f32, 0, 1e300);
  cr_assert(isinf(((float *)f32->data)[0]));
  lua_close(L);
}

Test(array, storev_and_pushelem) {
  lua_State *L = newstate();
  int64_t n[1] = {2};
  mpb_array *a = mpb_array_new(L, MPB_I64, 1, n);
  lua_pushinteger(L, INT64_MIN);
  cr_assert_null(mpb_array_storev(L, a, 1, -1));
  mpb_array_pushelem(L, a, 1);
  cr_assert(lua_isinteger(L, -1) && lua_tointeger(L, -1) == INT64_MIN);
  lua_pushnumber(L, 0.5);
  const char *msg = mpb_array_storev(L, a, 0, -1);
  cr_assert_str_eq(msg, "cannot store 0.5 in an i64 array (not an integer)");
  lua_close(L);
}

Test(array, zero_elements) {
  lua_State *L = newstate();
  int64_t d[2] = {5, 0};
  mpb_array *a = mpb_array_new(L, MPB_F32, 2, d);
  cr_assert_eq(a->n, 0);
  cr_assert_eq(mpb_array_bytes(a), 0);
  cr_assert_eq(luaL_dostring(L, "local z = mp.array('f64', 0) assert(#z == 0 and z:sum() == 0)"), LUA_OK);
  lua_close(L);
}

static int new_bad(lua_State *L) {
  int64_t d[2] = {3, -1};
  mpb_array_new(L, MPB_F64, (int)lua_tointeger(L, 1), d);
  return 1;
}

Test(array, bad_shapes_raise) {
  lua_State *L = newstate();
  lua_pushcfunction(L, new_bad);
  lua_pushinteger(L, 2);
  cr_assert_eq(lua_pcall(L, 1, 1, 0), LUA_ERRRUN);
  cr_assert(strstr(lua_tostring(L, -1), "negative array dimension -1"), "%s", lua_tostring(L, -1));
  lua_pushcfunction(L, new_bad);
  lua_pushinteger(L, 9);
  cr_assert_eq(lua_pcall(L, 1, 1, 0), LUA_ERRRUN);
  cr_assert(strstr(lua_tostring(L, -1), "1 to 8 dimensions"), "%s", lua_tostring(L, -1));
  lua_close(L);
}

/* Exact messages, worded like lauxlib's. */
Test(array, messages) {
  expect_error("local a = mp.array('f64', 2, 3) a:set(1, 7, 0)",
               "bad argument #2 to 'a:set' (index 7 out of range 1..3)");
  expect_error("local a = mp.array('f64', 6) a:set(7, 0)",
               "bad argument #1 to 'a:set' (index 7 out of range 1..6)");
  expect_error("local a = mp.array('f64', 6) return a[7]", "index 7 out of range 1..6");
  expect_error("local a = mp.array('i32', 6) a[1] = 1.5",
               "bad value in 'a[i] = v' (cannot store 1.5 in an i32 array (not an integer))");
  expect_error("mp.array('u8', 1):fill(256)", "cannot store 256 in a u8 array (out of range 0..255)");
  expect_error("mp.array('x', 1)",
               "bad argument #1 to 'mp.array' (invalid dtype 'x' (expected f64, f32, i64, i32, u8, c64 or "
               "c128))");
  expect_error("mp.array('f64')", "bad argument #2 to 'mp.array' (dimensions, table or array expected)");
  expect_error("mp.array('f64', {{1}, {2, 3}})", "at [2]: ragged nested table (length 2, expected 1)");
  expect_error("mp.array('f64', 3):reshape(2, 2)", "new shape has 4 elements, array has 3");
  expect_error("mp.array('f64', 3).x = 1", "array index expected, got string");
  expect_error("mp.array('f64', 1, 1):get(1, 1, 1)", "2 indices expected for a 2-D array, got 3");
  expect_error("mp.array('f64', {{{{{{{{{1}}}}}}}}})", "nested deeper than 8 levels");
}

Test(array, big) {
  /* 64 MiB: one allocation and a memset (no timing here: tests never depend on it) */
  lua_State *L = newstate();
  cr_assert_eq(luaL_dostring(L, "local a = mp.array('u8', 64 << 20)\n"
                                "assert(#a == 64 << 20 and a[#a] == 0 and a[1] == 0)"),
               LUA_OK, "%s", lua_tostring(L, -1));
  lua_close(L);
}

/* Strided views: only the array module sees them; test/check refuse them. */
Test(array, strided_views_c_api) {
  lua_State *L = newstate();
  int64_t dims[2] = {4, 5};
  mpb_array *a = mpb_array_new(L, MPB_I32, 2, dims);
  int ai = lua_gettop(L);
  for (int i = 0; i < 20; i++) ((int32_t *)a->data)[i] = i;
  cr_assert(a->contig);
  cr_assert_eq(a->strides[0], 1);
  cr_assert_eq(a->strides[1], 4);
  /* rows 2..3, columns 1, 3, 5 */
  int64_t vd[2] = {2, 3}, vs[2] = {1, 8};
  mpb_array *v = mpb_array_strided(L, ai, (int32_t *)a->data + 1, MPB_I32, 2, vd, vs);
  int vi = lua_gettop(L);
  cr_assert_not(v->contig);
  cr_assert_null(mpb_array_test(L, vi));
  cr_assert_eq(mpb_array_testv(L, vi), v);
  cr_assert_eq(mpb_array_checkv(L, vi), v);
  cr_assert_eq(mpb_array_offset(v, 0), 0);
  cr_assert_eq(mpb_array_offset(v, 3), 9);  /* (2, 2): 1 + 8 */
  cr_assert_eq(mpb_array_offset(v, 5), 17);
  int32_t packed[6];
  mpb_array_pack(v, packed);
  const int32_t want[6] = {1, 2, 9, 10, 17, 18};
  for (int i = 0; i < 6; i++) cr_assert_eq(packed[i], want[i]);
  for (int i = 0; i < 6; i++) packed[i] = -packed[i];
  mpb_array_unpack(v, packed);
  cr_assert_eq(((int32_t *)a->data)[17], -17);
  cr_assert_eq(((int32_t *)a->data)[16], 16);
  /* a view whose strides happen to be column-major is contiguous */
  int64_t cd[2] = {4, 2}, cs[2] = {1, 4};
  cr_assert(mpb_array_strided(L, ai, (int32_t *)a->data + 4, MPB_I32, 2, cd, cs)->contig);
  /* checked conversion into a strided view, with broadcasting */
  int64_t one[1] = {2};
  mpb_array *src = mpb_array_new(L, MPB_F64, 1, one);
  ((double *)src->data)[0] = 5;
  ((double *)src->data)[1] = 6.5;
  const char *msg = mpb_array_convert(L, v, src);
  cr_assert_str_eq(msg, "element 2: cannot store 6.5 in an i32 array (not an integer)");
  cr_assert_eq(((int32_t *)a->data)[1], 5);
  ((double *)src->data)[1] = 6;
  cr_assert_null(mpb_array_convert(L, v, src));
  cr_assert_eq(((int32_t *)a->data)[18], 6);
  lua_close(L);
}

static int check_strided(lua_State *L) {
  mpb_array_check(L, 1);
  return 0;
}

Test(array, check_refuses_strided) {
  lua_State *L = newstate();
  lua_pushcfunction(L, check_strided);
  lua_setglobal(L, "check");
  const char *e = error_of(L, "check(mp.array('f64', 3, 3):view({1, 2}, ':'))");
  cr_assert(e && strstr(e, "contiguous mp.Array expected, got a strided view"), "%s", e);
  cr_assert_null(error_of(L, "check(mp.array('f64', 3, 3):view(':', {1, 2}))"), "whole columns are contiguous");
  lua_close(L);
}

/* The collectives' kernels are array math's: min and max propagate NaN from
** either side; integer sums wrap. */
Test(array, red_apply) {
  double a[3] = {1, NAN, 3}, b[3] = {NAN, 2, 1}, o[3];
  cr_assert_eq(mpb_red_apply(MPB_RED_MIN, MPB_F64, o, a, b, 3), 0);
  cr_assert(isnan(o[0]) && isnan(o[1]) && o[2] == 1);
  cr_assert_eq(mpb_red_apply(MPB_RED_MAX, MPB_F64, o, a, b, 3), 0);
  cr_assert(isnan(o[0]) && isnan(o[1]) && o[2] == 3);
  int32_t x[2] = {INT32_MAX, 5}, y[2] = {1, 3}, z[2];
  cr_assert_eq(mpb_red_apply(MPB_RED_SUM, MPB_I32, z, x, y, 2), 0);
  cr_assert(z[0] == INT32_MIN && z[1] == 8);
  cr_assert_eq(mpb_red_apply(MPB_RED_BAND, MPB_I32, z, x, y, 2), 0);
  cr_assert(z[0] == 1 && z[1] == 1);
  cr_assert_eq(mpb_red_apply(MPB_RED_LOR, MPB_I32, z, x, y, 2), 0);
  cr_assert(z[0] == 1 && z[1] == 1);
  cr_assert_eq(mpb_red_apply(MPB_RED_BOR, MPB_F64, o, a, b, 3), -1);
  cr_assert_eq(mpb_red_apply(MPB_RED_SUM, MPB_F64, NULL, NULL, NULL, 0), 0);
  cr_assert_eq(mpb_red_from_name("prod"), MPB_RED_PROD);
  cr_assert_str_eq(mpb_red_name(MPB_RED_LAND), "land");
}

/* Array math errors, worded like lauxlib's with the function's full name. */
Test(array, math_messages) {
  expect_error("return mp.array('f64', 3, 4) + mp.array('f64', 4, 3)",
               "bad argument #2 to 'mp.Array.add' (shape 4x3 vs 3x4)");
  expect_error("return mp.array('u8', 2) + 300",
               "bad argument #2 to 'mp.Array.add' (cannot store 300 in a u8 array (out of range 0..255))");
  expect_error("return mp.array('i32', 2) // 0",
               "bad argument #2 to 'mp.Array.idiv' (integer division by zero)");
  expect_error("return mp.array('f64', 2) & 1",
               "bad argument #1 to 'mp.Array.band' (integer operands expected, got f64)");
  expect_error("mp.array('i32', 2):add_(0.5)",
               "bad argument #1 to 'mp.Array.add_' (the result is f64, the array is i32)");
  expect_error("mp.array('f64', 2):view(3)",
               "bad argument #2 to 'mp.Array.view' (index 3 out of range 1..2 of dimension 1)");
  expect_error("mp.array('f64', 0):min()", "bad argument #1 to 'mp.Array.min' (empty array)");
}
