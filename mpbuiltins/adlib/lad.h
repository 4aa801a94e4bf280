/* SPDX-License-Identifier: MIT */
/*
** The `ad` Lua module, and the small C API the map code (mpbuiltins/map*.c)
** uses to stitch workers' Jacobians into rank 0's tape.
**
** One tape per lua_State. A scalar var is a light userdata handle
** (serial << 32 | index) sharing the "ad.Var" metatable; a vector var is a
** full userdata "ad.Vec" (a contiguous range of vars). Functions that can
** fail either raise a Lua error (lad_begin, lad_end, lad_newvar,
** lad_precomputed, lad_pushvec) or return an ad error code (lad_jacobian).
*/
#ifndef LAD_H
#define LAD_H

#include <stddef.h>
#include "lua.h"
#include "ad_tape.h"

#define LAD_VAR_MT "ad.Var"
#define LAD_VEC_MT "ad.Vec"

/* Opens the module: returns the `ad` table (1 result). */
int lad_open(lua_State *L);

/* The tape of L's ad module (NULL if lad_open has not run). */
ad_tape *lad_tape(lua_State *L);

/* 1 if the value at idx is a live scalar var (on the current tape, its
** region still open), filling *var and *value (either may be NULL). */
int lad_tovar(lua_State *L, int idx, ad_idx *var, double *value);
/* 1 if the value at idx is a live vector var: vars first..first+n-1. */
int lad_tovec(lua_State *L, int idx, ad_idx *first, size_t *n);
/* 1 if the value at idx is a constant vector (ad.Const): its n values. */
int lad_toconst(lua_State *L, int idx, const double **x, size_t *n);
/* Push an ad.Const holding a copy of x[0..n-1]. */
void lad_pushconst(lua_State *L, const double *x, size_t n);
/* Push the handle of an existing var / a vector var (must be live). */
void lad_pushvar(lua_State *L, ad_idx var);
void lad_pushvec(lua_State *L, ad_idx first, size_t n);
/* Push a new leaf var with value v; *var gets its index (may be NULL). */
void lad_newvar(lua_State *L, double v, ad_idx *var);

/* Nested regions on the current tape (O(1)). Everything recorded after
** lad_begin is released by the matching lad_end, and its vars go stale. */
void lad_begin(lua_State *L);
void lad_end(lua_State *L);
/* 1 while ad.hessian or ad.hvp records its function in the innermost
** region: what is recorded now needs second partials (the map then
** precomputes each job's Hessians, ad_precomputed2). */
int lad_second_order(lua_State *L);
/* J[i*n + j] = d y[i] / d in[j] over the innermost region. 0 or AD_E*. */
int lad_jacobian(lua_State *L, size_t m, const ad_idx *y, size_t n,
                 const ad_idx *in, double *J);
/* Push a var with the given value and partials w.r.t. in[] (the
** precomputed-gradient node). Raises on stale inputs or no memory. */
void lad_precomputed(lua_State *L, double value, size_t n, const ad_idx *in,
                     const double *partial);

#endif
