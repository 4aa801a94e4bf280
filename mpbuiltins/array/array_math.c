/* SPDX-License-Identifier: MIT */
/*
** array_math.c: element-wise math on arrays and scalars, in C loops (README:
** "Array math"). Every operation has three forms:
**   mp.Array.add(x, y)        a new array (also a:add(y), and a + b)
**   mp.Array.add(x, y, out)   into out, which it returns (out may be x or y)
**   a:add_(y)                 in place: a = a + y, returns a
** and unary functions likewise (mp.Array.sqrt(a [, out]), a:sqrt_()).
**
** Types (NumPy 2's rules, scalars are "weak"):
**   - two arrays: the smallest dtype holding both (u8 < i32 < i64, f32 <
**     f64, c64 < c128; u8 with f32 is f32, i32 or i64 with any float is
**     f64; a complex dtype with a real one: c64 if both fit in floats (c64,
**     f32, u8), else c128);
**   - an array and a Lua integer: the array's dtype (the integer must fit it);
**     an array and a Lua float: the array's dtype if it is a float or
**     complex, else f64; an array and an mp.Complex: the array's dtype if it
**     is complex, c64 for f32, else c128;
**   - / and ^ always give floats (f64 for integer operands), as in Lua;
**     bitwise ops need integers; float functions of integers give f64;
**     complex arrays have no order (minimum, maximum), mod, idiv, floor...;
**     abs and arg of a complex array give its parts' dtype (f64, f32);
**   - out (or in place) may have another dtype of the same kind (integer,
**     float or complex): the result is computed in its own dtype, then
**     rounded or wrapped into out. Any other mix is an error.
** Shapes broadcast (mpb_broadcast: extents equal or 1, missing trailing
** dimensions are 1); a scalar goes everywhere. Inputs that share memory with
** out other than as the very same view are copied first, so the result is
** always that of reading every input before writing.
*/
#include <string.h>

#include "lauxlib.h"
#include "array/array.h"
#include "array/array_int.h"
#include "array/array_iter.h"
#include "array/array_kern.h"

int mpb_arr_promote(int a, int b) {
  enum { F64 = MPB_F64, F32 = MPB_F32, I64 = MPB_I64, I32 = MPB_I32, U8 = MPB_U8,
         C64 = MPB_C64, C128 = MPB_C128 };
  static const int p[MPB_NDTYPE][MPB_NDTYPE] = {
    /*          f64   f32   i64   i32   u8    c64   c128 */
    /* f64 */ {F64,  F64,  F64,  F64,  F64,  C128, C128},
    /* f32 */ {F64,  F32,  F64,  F64,  F32,  C64,  C128},
    /* i64 */ {F64,  F64,  I64,  I64,  I64,  C128, C128},
    /* i32 */ {F64,  F64,  I64,  I32,  I32,  C128, C128},
    /* u8  */ {F64,  F32,  I64,  I32,  U8,   C64,  C128},
    /* c64 */ {C128, C64,  C128, C128, C64,  C64,  C128},
    /* c128*/ {C128, C128, C128, C128, C128, C128, C128}};
  return p[a][b];
}

/* An operand: an array, or a scalar converted to the result's dtype. */
typedef struct {
  mpb_array *a;
  uint64_t scalar[2]; /* room for one element of any dtype (c128: 16 bytes) */
} operand;

mpb_array *mpb_arr_as_dtype(lua_State *L, mpb_array *x, int R) {
  if (x->dtype == R) return x;
  mpb_array *t = mpb_array_new(L, R, x->ndim, x->dims);
  mpb_arr_cast(t, x);
  return t;
}

/* The Lua number or complex value at arg as one element of dtype R, with
** the storing rules. */
static void scalar_as(lua_State *L, int arg, int R, const char *fname, uint64_t *buf) {
  mpb_array one;
  memset(&one, 0, sizeof one);
  one.data = buf;
  one.dtype = R;
  one.n = 1;
  const char *msg = mpb_array_storev(L, &one, 0, arg);
  if (msg) mpb_arr_argerror(L, arg, fname, "%s", msg);
}

/* An input that shares memory with out (not as the same view) is copied. */
static mpb_array *unalias(lua_State *L, mpb_array *x, const mpb_array *out) {
  if (!x || mpb_array_overlap(x, out) != MPB_OVERLAP) return x;
  mpb_array *t = mpb_array_new(L, x->dtype, x->ndim, x->dims);
  mpb_array_pack(x, t->data);
  return t;
}

/* Where the result goes. out (at outarg, may be NULL) must have shape S and
** R's kind; returns the array to compute into: out itself when its dtype is
** R, else a temporary of dtype R (pushed) that finish() converts into out.
** Without out, a new array (pushed) that is also the result. */
static mpb_array *target(lua_State *L, mpb_array *out, int outarg, int inplace, int R, int nd,
                         const int64_t *S, const char *fname) {
  if (!out) return mpb_array_new(L, R, nd, S);
  if (out->ndim != nd || memcmp(out->dims, S, (size_t)nd * sizeof *S) != 0)
    mpb_arr_shapeerror(L, outarg, fname, "out has shape %s, the result %s", out->ndim, out->dims, nd, S);
  if (out->dtype == R) return out;
  if (MPB_KIND(out->dtype) != MPB_KIND(R))
    mpb_arr_argerror(L, outarg, fname, "the result is %s, %s is %s", mpb_dtype_name(R),
                     inplace ? "the array" : "out", mpb_dtype_name(out->dtype));
  return mpb_array_new(L, R, nd, S);
}

/* Run kernel f over (t, inputs...), then move t into out if they differ. */
static void run(lua_State *L, mpb_run_fn f, mpb_array *t, mpb_array *out, operand *in, int nin,
                int errarg, const char *fname) {
  mpb_iter it;
  mpb_iter_init(&it, t->ndim, t->dims);
  mpb_iter_add(&it, t);
  for (int k = 0; k < nin; k++) {
    if (in[k].a)
      mpb_iter_add(&it, in[k].a);
    else
      mpb_iter_addscalar(&it, in[k].scalar, mpb_dtype_size(t->dtype));
  }
  if (mpb_iter_run(&it, f, NULL) == MPB_KERR_ZERODIV)
    mpb_arr_argerror(L, errarg, fname, "integer division by zero");
  if (out && t != out) mpb_arr_cast(out, t);
}

/* A new result (at r) carries the attribute of operand a (or b: 0 none) when
** it has one and the result's shape (a broadcast may have grown it). */
static void keep_attr(lua_State *L, int r, int a, int b) {
  const mpb_array *res = lua_touserdata(L, r);
  for (int k = 0; k < 2; k++) {
    int idx = k ? b : a;
    const mpb_array *x = idx ? mpb_array_testv(L, idx) : NULL;
    if (!x || x->ndim != res->ndim || memcmp(x->dims, res->dims, sizeof(int64_t) * (size_t)x->ndim))
      continue;
    if (mpb_array_getattr(L, idx) != LUA_TNIL) {
      mpb_array_setattr(L, r);
      return;
    }
    lua_pop(L, 1);
  }
}

/* ---------------------------------------------------------------- binary */

static int is_bitwise(int op) { return op == MPB_OP_BAND || op == MPB_OP_BOR || op == MPB_OP_BXOR; }

static int is_complex_scalar(lua_State *L, int arg) {
  double re, im;
  return mpb_complex_test(L, arg, &re, &im);
}

/* The result dtype of x op y (either may be a scalar: NULL, Lua value at 1/2). */
static int result_dtype(lua_State *L, int op, const mpb_array *x, const mpb_array *y,
                        const char *fname) {
  int R;
  if (x && y) {
    R = mpb_arr_promote(x->dtype, y->dtype);
  } else {
    const mpb_array *a = x ? x : y;
    int sarg = x ? 2 : 1;
    R = a->dtype;
    if (is_complex_scalar(L, sarg)) {
      if (!MPB_ISCPLX(R)) R = MPB_CPLX_OF(R);
    } else if (!MPB_ISFLOAT(R) && !MPB_ISCPLX(R) && !lua_isinteger(L, sarg) && !is_bitwise(op)) {
      R = MPB_F64;
    }
  }
  if (MPB_ISCPLX(R) && !mpb_kern_binary(op, R))
    mpb_arr_argerror(L, x && MPB_ISCPLX(x->dtype) ? 1 : 2, fname, "not defined on complex "
                     "values (%s)", mpb_dtype_name(R));
  if ((op == MPB_OP_DIV || op == MPB_OP_POW) && MPB_KIND(R) == 0) R = MPB_F64;
  if (is_bitwise(op) && MPB_ISFLOAT(R)) { /* only a float array makes R a float here */
    const mpb_array *f = x && MPB_ISFLOAT(x->dtype) ? x : y;
    mpb_arr_argerror(L, f == x ? 1 : 2, fname, "integer operands expected, got %s",
                     mpb_dtype_name(f->dtype));
  }
  return R;
}

static mpb_array *operand_arg(lua_State *L, int arg, const char *fname) {
  mpb_array *a = mpb_array_testv(L, arg);
  if (!a && lua_type(L, arg) != LUA_TNUMBER && !is_complex_scalar(L, arg))
    mpb_arr_argerror(L, arg, fname, "mp.Array, number or mp.Complex expected, got %s",
                     luaL_typename(L, arg));
  return a;
}

static int binop(lua_State *L, int op, const char *fname, int inplace) {
  mpb_array *x = operand_arg(L, 1, fname), *y = operand_arg(L, 2, fname), *out = NULL;
  if (!x && !y) mpb_arr_argerror(L, 1, fname, "mp.Array expected, got two numbers");
  if (inplace && !x) mpb_arr_argerror(L, 1, fname, "mp.Array expected, got number");
  if (inplace) out = x;
  else if (!lua_isnoneornil(L, 3)) out = mpb_arr_check(L, 3, fname);
  lua_settop(L, 3);
  int R = result_dtype(L, op, x, y, fname);
  int64_t S[MPB_ARRAY_MAXDIM];
  int nd = mpb_broadcast(x ? x->ndim : 0, x ? x->dims : NULL, y ? y->ndim : 0,
                         y ? y->dims : NULL, S);
  if (nd < 0) mpb_arr_shapeerror(L, 2, fname, "shape %s vs %s", y->ndim, y->dims, x->ndim, x->dims);
  if (inplace && !mpb_broadcasts_to(nd, S, x->ndim, x->dims))
    mpb_arr_shapeerror(L, 2, fname, "shape %s does not broadcast to %s", y->ndim, y->dims, x->ndim,
                       x->dims);
  operand in[2] = {{x, {0, 0}}, {y, {0, 0}}};
  if (!x) scalar_as(L, 1, R, fname, in[0].scalar);
  if (!y) scalar_as(L, 2, R, fname, in[1].scalar);
  mpb_array *t = target(L, out, inplace ? 1 : 3, inplace, R, nd, S, fname);
  int result = out ? (inplace ? 1 : 3) : lua_gettop(L);
  for (int k = 0; k < 2; k++) {
    if (!in[k].a) continue;
    in[k].a = unalias(L, in[k].a, t);
    in[k].a = mpb_arr_as_dtype(L, in[k].a, R);
  }
  run(L, mpb_kern_binary(op, R), t, out, in, 2, 2, fname);
  if (!out) keep_attr(L, result, x ? 1 : 2, x && y ? 2 : 0);
  lua_pushvalue(L, result);
  return 1;
}

/* ---------------------------------------------------------------- unary */

static int unop(lua_State *L, int fn, const char *fname, int inplace) {
  mpb_array *x = mpb_arr_check(L, 1, fname), *out = NULL;
  if (inplace) out = x;
  else if (!lua_isnoneornil(L, 2)) out = mpb_arr_check(L, 2, fname);
  lua_settop(L, 2);
  int R = x->dtype, D = R; /* the result's dtype; the input's, as the kernel reads it */
  mpb_run_fn f;
  if (fn == MPB_FN_BNOT && MPB_KIND(R) != 0)
    mpb_arr_argerror(L, 1, fname, "integer array expected, got %s", mpb_dtype_name(R));
  if (MPB_ISCPLX(R)) {
    f = mpb_kern_cplx_real(fn, R);
    if (f) R = MPB_PARTS(R);  /* abs, arg: real */
    else f = mpb_kern_unary(fn, R);
    if (!f) mpb_arr_argerror(L, 1, fname, "not defined on complex arrays (%s)", mpb_dtype_name(R));
  } else {
    if (!MPB_ISFLOAT(R) && !MPB_FN_KEEPS_INT(fn)) R = D = MPB_F64;
    f = mpb_kern_unary(fn, R);
  }
  mpb_array *t = target(L, out, inplace ? 1 : 2, inplace, R, x->ndim, x->dims, fname);
  int result = out ? (inplace ? 1 : 2) : lua_gettop(L);
  operand in = {x, {0, 0}};
  in.a = unalias(L, in.a, t);
  in.a = mpb_arr_as_dtype(L, in.a, D);
  run(L, f, t, out, &in, 1, 1, fname);
  if (!out) keep_attr(L, result, 1, 0);
  lua_pushvalue(L, result);
  return 1;
}

/* ---------------------------------------------------------------- the functions */

/* ew_ ("element-wise") prefixes the C names: most Lua names here (sqrt, floor,
** pow...) are C library functions or luaconf.h macros (l_floor). */
#define BIN(name, op)                                                              \
  static int ew_##name(lua_State *L) { return binop(L, op, #name, 0); }             \
  static int ew_##name##_(lua_State *L) { return binop(L, op, #name "_", 1); }
#define UN(name, fn)                                                               \
  static int ew_##name(lua_State *L) { return unop(L, fn, #name, 0); }              \
  static int ew_##name##_(lua_State *L) { return unop(L, fn, #name "_", 1); }

BIN(add, MPB_OP_ADD) BIN(sub, MPB_OP_SUB) BIN(mul, MPB_OP_MUL) BIN(div, MPB_OP_DIV)
BIN(pow, MPB_OP_POW) BIN(mod, MPB_OP_MOD) BIN(idiv, MPB_OP_IDIV)
BIN(minimum, MPB_OP_MIN) BIN(maximum, MPB_OP_MAX)
BIN(band, MPB_OP_BAND) BIN(bor, MPB_OP_BOR) BIN(bxor, MPB_OP_BXOR)
UN(neg, MPB_FN_NEG) UN(abs, MPB_FN_ABS) UN(bnot, MPB_FN_BNOT) UN(floor, MPB_FN_FLOOR)
UN(ceil, MPB_FN_CEIL) UN(trunc, MPB_FN_TRUNC) UN(sqrt, MPB_FN_SQRT) UN(cbrt, MPB_FN_CBRT)
UN(exp, MPB_FN_EXP) UN(expm1, MPB_FN_EXPM1) UN(log, MPB_FN_LOG) UN(log1p, MPB_FN_LOG1P)
UN(log2, MPB_FN_LOG2) UN(log10, MPB_FN_LOG10) UN(sin, MPB_FN_SIN) UN(cos, MPB_FN_COS)
UN(tan, MPB_FN_TAN) UN(asin, MPB_FN_ASIN) UN(acos, MPB_FN_ACOS) UN(atan, MPB_FN_ATAN)
UN(sinh, MPB_FN_SINH) UN(cosh, MPB_FN_COSH) UN(tanh, MPB_FN_TANH) UN(conj, MPB_FN_CONJ)
UN(arg, MPB_FN_ARG)

int mpb_arr_defer(lua_State *L, const char *event, int arrays) {
  lua_settop(L, 2);
  for (int k = 1; k <= 2; k++) {
    if ((arrays && mpb_array_testv(L, k)) || lua_type(L, k) == LUA_TNUMBER ||
        is_complex_scalar(L, k))
      continue;
    if (luaL_getmetafield(L, k, event) == LUA_TNIL) continue;
    lua_pushvalue(L, 1);
    lua_pushvalue(L, 2);
    lua_call(L, 2, 1);
    return 1;
  }
  return -1;
}

#define MM(name, event)                                                            \
  static int mm_##name(lua_State *L) {                                            \
    int r = mpb_arr_defer(L, event, 1);                                             \
    return r >= 0 ? r : ew_##name(L);                                               \
  }
MM(add, "__add") MM(sub, "__sub") MM(mul, "__mul") MM(div, "__div") MM(pow, "__pow")
MM(mod, "__mod") MM(idiv, "__idiv") MM(band, "__band") MM(bor, "__bor") MM(bxor, "__bxor")

/* -a and ~a: Lua passes the operand twice; the second is not an out. */
static int mm_unm(lua_State *L) {
  lua_settop(L, 1);
  return unop(L, MPB_FN_NEG, "neg", 0);
}

static int mm_bnot(lua_State *L) {
  lua_settop(L, 1);
  return unop(L, MPB_FN_BNOT, "bnot", 0);
}

#define REG(name) {#name, ew_##name}, {#name "_", ew_##name##_}
static const luaL_Reg funcs[] = {
  REG(add), REG(sub), REG(mul), REG(div), REG(pow), REG(mod), REG(idiv), REG(minimum),
  REG(maximum), REG(band), REG(bor), REG(bxor), REG(neg), REG(abs), REG(bnot), REG(floor),
  REG(ceil), REG(trunc), REG(sqrt), REG(cbrt), REG(exp), REG(expm1), REG(log), REG(log1p),
  REG(log2), REG(log10), REG(sin), REG(cos), REG(tan), REG(asin), REG(acos), REG(atan),
  REG(sinh), REG(cosh), REG(tanh), REG(conj), REG(arg), {NULL, NULL}};

/* Operators: the metatable (below the methods table) gets the same C
** functions: a + b is mp.Array.add(a, b). */
static const luaL_Reg operators[] = {
  {"__add", mm_add}, {"__sub", mm_sub}, {"__mul", mm_mul}, {"__div", mm_div}, {"__pow", mm_pow},
  {"__mod", mm_mod}, {"__idiv", mm_idiv}, {"__band", mm_band}, {"__bor", mm_bor},
  {"__bxor", mm_bxor}, {"__unm", mm_unm}, {"__bnot", mm_bnot}, {NULL, NULL}};

void mpb_array_open_math(lua_State *L) {
  luaL_setfuncs(L, funcs, 0);
  lua_pushvalue(L, -2);
  luaL_setfuncs(L, operators, 0);
  lua_pop(L, 1);
}
