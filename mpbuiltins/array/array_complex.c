/* SPDX-License-Identifier: MIT */
/*
** array_complex.c: complex values ("mp.Complex"), what an element of a c64 or
** c128 array reads as (README: "Complex numbers"). A value is immutable: two
** doubles in a userdata, like a Lua number it is made, combined and dropped.
**
**   mp.complex(re [, im])      also mp.complex(z), mp.complex({re, im})
**   z.re, z.im                 the parts; z:parts() returns both
**   + - * / ^ and unary -      with numbers and complex values (with an
**                              array: the array's operation)
**   z == w                     both complex, part by part (a number is never
**                              equal to a complex value, as 1 ~= "1")
**   z:abs() z:arg() z:conj() z:real() z:imag() z:exp() z:log() z:log10()
**   z:sqrt() z:sin() z:cos() z:tan() z:asin() z:acos() z:atan() z:sinh()
**   z:cosh() z:tanh()          also mp.Complex.f(x), x a number or a value
**   tostring(z)                "1.5-2i" (each part as Lua prints a float)
** The arithmetic is array_cplx.h's, shared with the array kernels.
*/
#include <stdio.h>
#include <string.h>

#include "lauxlib.h"
#include "array/array.h"
#include "array/array_cplx.h"
#include "array/array_int.h"

void mpb_complex_push(lua_State *L, double re, double im) {
  mpb_cplx *z = lua_newuserdatauv(L, sizeof *z, 0);
  z->re = re;
  z->im = im;
  if (luaL_getmetatable(L, MPB_COMPLEX_MT) == LUA_TNIL) { /* before mpb_open_array */
    lua_pop(L, 1);
    mpb_complex_pushmt(L);
  }
  lua_setmetatable(L, -2);
}

int mpb_complex_test(lua_State *L, int idx, double *re, double *im) {
  mpb_cplx *z = luaL_testudata(L, idx, MPB_COMPLEX_MT);
  if (!z) return 0;
  *re = z->re;
  *im = z->im;
  return 1;
}

/* A number or a complex value at idx, or 0. */
static int tocplx(lua_State *L, int idx, mpb_cplx *z) {
  if (lua_type(L, idx) == LUA_TNUMBER) {
    *z = mpb_cx(lua_tonumber(L, idx), 0);
    return 1;
  }
  return mpb_complex_test(L, idx, &z->re, &z->im);
}

static mpb_cplx checkcplx(lua_State *L, int idx, const char *fname) {
  mpb_cplx z;
  if (!tocplx(L, idx, &z))
    luaL_error(L, "bad argument #%d to 'mp.Complex.%s' (number or mp.Complex expected, got %s)",
               idx, fname, luaL_typename(L, idx));
  return z;
}

/* ------------------------------------------------------------- making */
/* mp.complex(re [, im]) | mp.complex(z) | mp.complex({re, im}) */
static int make(lua_State *L) {
  mpb_cplx z;
  if (lua_type(L, 1) == LUA_TTABLE && lua_rawlen(L, 1) == 2) {
    lua_rawgeti(L, 1, 1);
    lua_rawgeti(L, 1, 2);
    if (lua_type(L, -2) != LUA_TNUMBER || lua_type(L, -1) != LUA_TNUMBER)
      luaL_argerror(L, 1, "a pair {re, im} of numbers expected");
    z = mpb_cx(lua_tonumber(L, -2), lua_tonumber(L, -1));
  } else if (mpb_complex_test(L, 1, &z.re, &z.im)) {
    if (!lua_isnoneornil(L, 2)) luaL_argerror(L, 2, "no imaginary part expected after a complex value");
  } else {
    z.re = luaL_checknumber(L, 1);
    z.im = luaL_optnumber(L, 2, 0);
  }
  mpb_complex_push(L, z.re, z.im);
  return 1;
}

/* ------------------------------------------------------------- arithmetic */
static int arith(lua_State *L, const char *event, mpb_cplx (*op)(mpb_cplx, mpb_cplx)) {
  mpb_cplx a, b;
  if (!tocplx(L, 1, &a) || !tocplx(L, 2, &b)) {
    if (mpb_arr_defer(L, event, 0) >= 0) return 1; /* an array, an ad variable */
    int bad = tocplx(L, 1, &a) ? 2 : 1;
    return luaL_error(L, "attempt to perform arithmetic on a %s value (with an mp.Complex)",
                      luaL_typename(L, bad));
  }
  mpb_cplx r = op(a, b);
  mpb_complex_push(L, r.re, r.im);
  return 1;
}

static int mm_add(lua_State *L) { return arith(L, "__add", mpb_cadd); }
static int mm_sub(lua_State *L) { return arith(L, "__sub", mpb_csub); }
static int mm_mul(lua_State *L) { return arith(L, "__mul", mpb_cmul); }
static int mm_div(lua_State *L) { return arith(L, "__div", mpb_cdiv); }
static int mm_pow(lua_State *L) { return arith(L, "__pow", mpb_cpow); }

static int mm_unm(lua_State *L) {
  mpb_cplx a = checkcplx(L, 1, "__unm");
  mpb_complex_push(L, -a.re, -a.im);
  return 1;
}

static int mm_eq(lua_State *L) {
  mpb_cplx a, b;
  lua_pushboolean(L, mpb_complex_test(L, 1, &a.re, &a.im) && mpb_complex_test(L, 2, &b.re, &b.im)
                         && a.re == b.re && a.im == b.im);
  return 1;
}

/* "1.5-2i": each part as Lua prints a float ("%.14g"); -0 keeps its sign. */
static int mm_tostring(lua_State *L) {
  mpb_cplx z = checkcplx(L, 1, "__tostring");
  char re[64], im[64];
  snprintf(re, sizeof re, "%.14g", z.re);
  snprintf(im, sizeof im, "%.14g", z.im);
  const char *sign = im[0] == '-' ? "" : "+";
  lua_pushfstring(L, "%s%s%si", re, sign, im);
  return 1;
}

/* z.re, z.im, then the methods (upvalue 1) */
static int mm_index(lua_State *L) {
  mpb_cplx z = checkcplx(L, 1, "__index");
  const char *k = lua_tostring(L, 2);
  if (k && lua_type(L, 2) == LUA_TSTRING && k[0] && k[1] && !k[2]) {
    if (k[0] == 'r' && k[1] == 'e') return lua_pushnumber(L, z.re), 1;
    if (k[0] == 'i' && k[1] == 'm') return lua_pushnumber(L, z.im), 1;
  }
  lua_pushvalue(L, 2);
  lua_rawget(L, lua_upvalueindex(1));
  return 1;
}

static int mm_newindex(lua_State *L) {
  return luaL_error(L, "mp.Complex values cannot be changed (make a new one with mp.complex)");
}

/* ------------------------------------------------------------- methods */
static int parts(lua_State *L) {
  mpb_cplx z = checkcplx(L, 1, "parts");
  lua_pushnumber(L, z.re);
  lua_pushnumber(L, z.im);
  return 2;
}

#define REAL_FN(name, EXPR)                                                  \
  static int m_##name(lua_State *L) {                                        \
    mpb_cplx z = checkcplx(L, 1, #name);                                     \
    lua_pushnumber(L, (EXPR));                                               \
    return 1;                                                                \
  }
REAL_FN(abs, mpb_cabs(z))
REAL_FN(arg, mpb_carg(z))
REAL_FN(real, z.re)
REAL_FN(imag, z.im)

#define CPLX_FN(name, EXPR)                                                  \
  static int m_##name(lua_State *L) {                                        \
    mpb_cplx z = checkcplx(L, 1, #name), r = (EXPR);                         \
    mpb_complex_push(L, r.re, r.im);                                         \
    return 1;                                                                \
  }
CPLX_FN(conj, mpb_cconj(z))
CPLX_FN(exp, mpb_cexp(z))
CPLX_FN(log, mpb_clog(z))
CPLX_FN(log10, mpb_clog10(z))
CPLX_FN(sqrt, mpb_csqrt(z))
CPLX_FN(sin, mpb_csin(z))
CPLX_FN(cos, mpb_ccos(z))
CPLX_FN(tan, mpb_ctan(z))
CPLX_FN(asin, mpb_casin(z))
CPLX_FN(acos, mpb_cacos(z))
CPLX_FN(atan, mpb_catan(z))
CPLX_FN(sinh, mpb_csinh(z))
CPLX_FN(cosh, mpb_ccosh(z))
CPLX_FN(tanh, mpb_ctanh(z))

#define M(name) {#name, m_##name}
static const luaL_Reg methods[] = {
  {"parts", parts}, M(abs), M(arg), M(real), M(imag), M(conj), M(exp), M(log), M(log10),
  M(sqrt), M(sin), M(cos), M(tan), M(asin), M(acos), M(atan), M(sinh), M(cosh), M(tanh),
  {NULL, NULL}};

static const luaL_Reg metamethods[] = {
  {"__add", mm_add}, {"__sub", mm_sub}, {"__mul", mm_mul}, {"__div", mm_div},
  {"__pow", mm_pow}, {"__unm", mm_unm}, {"__eq", mm_eq}, {"__tostring", mm_tostring},
  {"__newindex", mm_newindex}, {NULL, NULL}};

void mpb_complex_pushmt(lua_State *L) {
  if (luaL_newmetatable(L, MPB_COMPLEX_MT)) {
    luaL_setfuncs(L, metamethods, 0);
    luaL_newlib(L, methods);
    lua_pushcclosure(L, mm_index, 1);
    lua_setfield(L, -2, "__index");
  }
}

/* mp.complex and mp.Complex (the methods: mp.Complex.abs(z)). */
void mpb_open_complex(lua_State *L) {
  mpb_complex_pushmt(L);
  lua_getfield(L, -1, "__index");
  lua_getupvalue(L, -1, 1);
  lua_setfield(L, -4, "Complex");
  lua_pop(L, 2);
  lua_pushcfunction(L, make);
  lua_setfield(L, -2, "complex");
}
