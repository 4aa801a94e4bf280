/* Shared by the ad binding files (lad*.c) only. */
#ifndef LAD_INTERNAL_H
#define LAD_INTERNAL_H

#include <stdint.h>
#include "lua.h"
#include "lauxlib.h"
#include "ad_dist.h"
#include "ad_hess.h"
#include "ad_scalar.h"
#include "ad_vec.h"
#include "adlib/lad.h"

/* The module's state: a full userdata created inert (ad_tape_init allocates
** nothing), its __gc frees the tape. It is upvalue 1 of every module
** function and metamethod, and registry["ad.State"]. */
typedef struct lad_state {
  ad_tape tape;
  int nanchor;                     /* length of the anchor list */
  int anchor_mark[AD_MAXDEPTH];    /* nanchor when each region began */
} lad_state;

#define LAD_STATE_KEY "ad.State"

typedef struct lad_vec {
  ad_idx var;
  uint32_t serial;
  size_t n;
} lad_vec;

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
/* Push the result of a vector computation: table of numbers. */
void lad_pushnumbers(lua_State *L, const double *x, size_t n);

/* registration of the other files' functions into the module table */
void lad_open_math(lua_State *L, int state_idx);
void lad_open_drive(lua_State *L, int state_idx);

#endif
