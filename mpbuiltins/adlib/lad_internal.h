/* SPDX-License-Identifier: MIT */
/* Shared by the ad binding files (lad*.c) only. */
#ifndef LAD_INTERNAL_H
#define LAD_INTERNAL_H

#include <stdint.h>
#include "lua.h"
#include "lauxlib.h"
#include "ad_dist.h"
#include "ad_hess.h"
#include "ad_mat.h"
#include "ad_scalar.h"
#include "ad_vec.h"
#include "ad_rng.h"
#include "adlib/lad.h"

/* The module's state: a full userdata created inert (ad_tape_init allocates
** nothing), its __gc frees the tape. It is upvalue 1 of every module
** function and metamethod, and registry["ad.State"]. */
typedef struct lad_state {
  ad_tape tape;
  int nanchor;                     /* length of the anchor list */
  int anchor_mark[AD_MAXDEPTH];    /* nanchor when each region began */
  uint8_t second[AD_MAXDEPTH];     /* the region records for a Hessian */
  ad_rng rng;                      /* the _rng functions' generator */
} lad_state;

#define LAD_STATE_KEY "ad.State"

/* A vector var: vars var..var+n-1. A matrix var is one with cols > 0:
** rows x cols, column-major (rows * cols == n). */
typedef struct lad_vec {
  ad_idx var;
  uint32_t serial;
  size_t n, rows, cols;
} lad_vec;

/* A constant vector ("ad.Const"): what ad functions return when no argument
** is a var, and what f gets in a plain mp.mapper call. It indexes, slices
** and does arithmetic like an ad.Vec. x points at the values that follow
** the struct, or into the parent a slice was taken from (its user value).
** Shape as lad_vec. */
typedef struct lad_const {
  double *x;
  size_t n, rows, cols;
} lad_const;

#define LAD_CONST_MT "ad.Const"

static inline lad_state *lad_S(lua_State *L) {
  return (lad_state *)lua_touserdata(L, lua_upvalueindex(1));
}

/* Handles: light userdata = serial << 32 | index. */
static inline void *lad_handle(ad_idx v, uint32_t serial) {
  return (void *)(uintptr_t)(((uint64_t)serial << 32) | v);
}

/* lad.c */
lad_state *lad_getstate(lua_State *L);
void lad_push(lua_State *L, lad_state *S, ad_idx v);
/* Var at idx, checked (raises "bad argument #arg to 'fname' (...)"). Returns
** 1 for a scalar var, 0 if the value is not a light userdata. */
int lad_checkvar(lua_State *L, lad_state *S, int idx, int arg, ad_idx *v);
lad_vec *lad_testvec(lua_State *L, int idx);
void lad_checkvec(lua_State *L, lad_state *S, int idx, int arg, lad_vec *v);
void lad_newvec(lua_State *L, lad_state *S, ad_idx first, size_t n);
/* Indexing ad.Vec and ad.Const like a list: the number at idx as a
** 0-based index into n elements (0 if it is not one: nil, as a table
** gives), and the method named by key 2 of the object at 1 (pushed). */
int lad_index(lua_State *L, int idx, size_t n, size_t *i);
void lad_method(lua_State *L);

/* The shape of a vector or matrix var at a new ad.Vec on top of the stack. */
void lad_setshape(lua_State *L, int idx, size_t rows, size_t cols);

/* lad_const.c: a new ad.Const of n values (pushed; the values are for the
** caller to write), and the ad.Const at idx or NULL. */
double *lad_newconst(lua_State *L, size_t n);
lad_const *lad_testconst(lua_State *L, int idx);
/* Push an ad.Const of elements first..first+n-1 of the ad.Const at idx,
** sharing its values (which it keeps alive). */
void lad_constview(lua_State *L, int idx, size_t first, size_t n);
/* Matrix shape of the value at idx (ad.Vec, ad.Const, 2-d mp.Array): 1 and
** *rows, *cols if it has one, else 0. */
int lad_matshape(lua_State *L, int idx, size_t *rows, size_t *cols);
void lad_open_const(lua_State *L, int state_idx);
/* The arithmetic metamethods (lad.c), shared by ad.Var, ad.Vec, ad.Const. */
extern const luaL_Reg lad_arith_meta[];

/* Raise a Lua error for an ad error code: "bad argument #arg to 'fname' (msg)"
** when arg > 0, "fname: msg" otherwise. */
int lad_error(lua_State *L, int code, int arg, const char *fname);
void lad_region_begin(lua_State *L, lad_state *S);
void lad_region_end(lua_State *L, lad_state *S);

/* lad_args.c: any Lua value a vectorized function takes -> ad_arg. The
** constant vectors' memory is owned by a Lua value left on the stack (its
** index in *owner, or 0); lad_anchor keeps it alive until the region ends. */
ad_arg lad_toarg(lua_State *L, lad_state *S, int idx, int arg, const char *fname,
                 int *owner);
void lad_anchor(lua_State *L, lad_state *S, int owner);
/* Numbers of a table or typed array at idx into a new buffer userdata
** (pushed); returns its data and *n. Raises on anything else. */
double *lad_tonumbers(lua_State *L, int idx, int arg, const char *fname, size_t *n);
/* Push a table of numbers (gradients, values returned to the user). */
void lad_pushnumbers(lua_State *L, const double *x, size_t n);


/* lad_math.c: elementwise math on any argument (fname names the function
** in errors, "ad.exp"); "bad argument #k to 'f' (length 3 does not match
** 4)" for mismatched lengths; a scalar result (number or var); a closure of
** f with upvalues (state, code, "ad.<name>"). */
int lad_unary_any(lua_State *L, lad_state *S, int op, int idx, const char *fname);
int lad_binary_any(lua_State *L, lad_state *S, int op, int ia, int ib, const char *fname);
int lad_size_error(lua_State *L, const ad_arg *args, int nargs, int first_arg,
                   const char *fname);
void lad_push_result(lua_State *L, lad_state *S, double value, ad_idx y);
void lad_push_coded(lua_State *L, int st, lua_CFunction f, int code, const char *name);

/* registration of the other files' functions into the module table */
void lad_open_math(lua_State *L, int state_idx);
void lad_open_dist(lua_State *L, int state_idx);
void lad_open_mat(lua_State *L, int state_idx);
void lad_open_drive(lua_State *L, int state_idx);
void lad_open_rng(lua_State *L, int state_idx);

#endif
