/* SPDX-License-Identifier: MIT */
/*
** A mapper call (rank 0) and its task (every rank).
**
** m(theta), m(phi, theta), m(phi): plain when no parameter is an ad var
** (f gets ad.Consts, values come back), differentiated otherwise: each job
** returns its Jacobian w.r.t. the var inputs, rank 0 tapes one precomputed
** node per output; inside ad.hessian / ad.hvp (lad_second_order) each job
** also returns the Hessian of each output, and rank 0 tapes precomputed
** nodes with second partials, so the Hessian passes go through the map with
** every job's second order computed on the rank that owns it.
**
** m:jvp(phi, theta, dphi, dtheta) (or (theta, dtheta), (phi, dphi)): the
** forward mode (the seed's fvar case) on numbers: each job's values and
** directional derivative by one forward pass on its owner; the direction
** travels with the parameters, m values and m tangents come back per job.
*/
#include <string.h>

#include "array/array.h"
#include "adlib/lad.h"
#include "map/map_int.h"

#define MALFORMED(what) \
  luaL_error(L, "mp.mapper: [rank %d/%d] malformed " what, st->rank, st->size)

/* The lengths of a rank's block from the wire: toff[0..cnt], checked. */
static int64_t *offsets(lua_State *L, const double *d, int64_t len, int64_t cnt) {
  int64_t *toff = mpb_map_buf(L, (size_t)(cnt + 1) * sizeof(int64_t));
  toff[0] = 0;
  int ok = len >= cnt;
  for (int64_t k = 0; k < cnt && ok; k++) { /* range first, then the cast */
    ok = d[k] >= 0 && d[k] <= (double)(len - cnt) && d[k] == (double)(int64_t)d[k];
    if (ok) toff[k + 1] = toff[k] + (int64_t)d[k];
    ok = ok && toff[k + 1] <= len - cnt;
  }
  return ok && toff[cnt] == len - cnt ? toff : NULL;
}

/* mp._map_run(id, njobs, mode, phi, pmask or dphi, dead): the task of a call. */
int mpb_map_run(lua_State *L) {
  mpb_state *st = mpb_get(L);
  lua_Integer id = luaL_checkinteger(L, 1);
  int64_t n = luaL_checkinteger(L, 2);
  mpb_map_in in;
  memset(&in, 0, sizeof in);
  in.mode = (int)luaL_optinteger(L, 3, MPB_MAP_PLAIN);
  int deriv = in.mode == MPB_MAP_GRAD || in.mode == MPB_MAP_HESS;
  mpb_array *phi = mpb_array_test(L, 4), *p5 = mpb_array_test(L, 5);
  in.has_phi = phi != NULL;
  in.phi = phi ? phi->data : NULL;
  in.np = phi ? (size_t)phi->n : 0;
  if (in.mode < MPB_MAP_PLAIN || in.mode > MPB_MAP_JVP ||
      (phi && deriv && (!p5 || p5->dtype != MPB_U8 || p5->n != phi->n)) ||
      (phi && in.mode == MPB_MAP_JVP && (!p5 || p5->dtype != MPB_F64 || p5->n != phi->n)))
    return MALFORMED("call");
  if (deriv) in.pmask = p5 ? p5->data : NULL;
  if (in.mode == MPB_MAP_JVP) in.dphi = p5 ? p5->data : NULL;
  mpb_map_free_dead(L, 6);
  mpb_map_registry(L, MPB_MAP_MAPS_KEY);
  if (lua_rawgeti(L, -1, id) != LUA_TTABLE)
    return luaL_error(L, "mp.mapper: [rank %d/%d] mapper %I is unknown here", st->rank,
                      st->size, (LUAI_UACINT)id);
  int entry = lua_gettop(L);
  int64_t lo, hi;
  mpb_map_block(n, st->size, st->rank, &lo, &hi);
  if (st->rank != 0) {
    if (lo > hi) return 0;
    int64_t cnt = hi - lo + 1;
    int top = lua_gettop(L);
    mpb_push_msg(L, st, mpb_user_take(L, st, MPB_CH_MAP, 0, "mapper"), "mapper");
    mpb_array *a = mpb_map_array(L, top + 1, MPB_F64, 0);
    int64_t *toff = offsets(L, a->data, a->n, cnt);
    if (!toff) return MALFORMED("parameters");
    if (in.mode != MPB_MAP_PLAIN) { /* the masks, or the direction */
      mpb_array *b = mpb_map_array(L, top + 2, in.mode == MPB_MAP_JVP ? MPB_F64 : MPB_U8, 0);
      if (b->n != toff[cnt]) return MALFORMED("parameters");
      if (deriv) in.tmask = b->data;
      else in.dtheta = b->data;
    }
    in.theta = (const double *)a->data + cnt;
    in.toff = toff;
    mpb_map_eval(L, entry, lo, hi, &in);
    mpb_map_send(L, st, 0, lua_gettop(L), 1);
    return 0;
  }
  if (lua_getfield(L, LUA_REGISTRYINDEX, MPB_MAP_CALL_KEY) != LUA_TLIGHTUSERDATA)
    return luaL_error(L, "mp._map_run is mp.mapper's own task");
  mpb_map_call *c = lua_touserdata(L, -1);
  for (int r = 1; r < st->size; r++) { /* scatter: each rank its thetas */
    int64_t rlo, rhi;
    mpb_map_block(n, st->size, r, &rlo, &rhi);
    if (rlo > rhi) continue;
    int64_t cnt = rhi - rlo + 1, t0 = c->toff[rlo - 1], nt = c->toff[rhi] - t0;
    int top = lua_gettop(L);
    double *d = mpb_map_vec(L, MPB_F64, NULL, cnt + nt)->data;
    for (int64_t k = 0; k < cnt; k++) d[k] = (double)(c->toff[rlo + k] - c->toff[rlo + k - 1]);
    memcpy(d + cnt, c->tv + t0, (size_t)nt * sizeof(double));
    if (deriv) mpb_map_vec(L, MPB_U8, c->tmask + t0, nt);
    if (in.mode == MPB_MAP_JVP) mpb_map_vec(L, MPB_F64, c->dtv + t0, nt);
    mpb_map_send(L, st, r, top + 1, lua_gettop(L) - top);
    lua_settop(L, top);
  }
  lua_createtable(L, st->size, 0);
  int res = lua_gettop(L);
  if (lo <= hi) {
    in.theta = c->tv;
    in.toff = c->toff + (lo - 1);
    in.tmask = c->tmask;
    in.dtheta = c->dtv;
    mpb_map_eval(L, entry, lo, hi, &in);
    lua_rawseti(L, res, 0);
  }
  for (int r = 1; r < st->size; r++) { /* gather */
    int64_t rlo, rhi;
    mpb_map_block(n, st->size, r, &rlo, &rhi);
    if (rlo > rhi) continue;
    mpb_push_msg(L, st, mpb_user_take(L, st, MPB_CH_MAP, r, "mapper"), "mapper");
    lua_rawseti(L, res, r);
  }
  return 1;
}

/* ------------------------------------------------------------- a call */

/* Is the value at idx one parameter vector (phi) rather than a list of them
** (theta)? An ad vector, an ad.Const, an mp.array, or a table whose first
** item is a number or a scalar var. */
static int is_vector(lua_State *L, int idx) {
  ad_idx v;
  size_t n;
  const double *x;
  if (lad_tovec(L, idx, &v, &n) || lad_toconst(L, idx, &x, &n) || mpb_array_test(L, idx))
    return 1;
  if (lua_type(L, idx) != LUA_TTABLE) return 0;
  int t = lua_rawgeti(L, idx, 1);
  lua_pop(L, 1);
  return t == LUA_TNUMBER || t == LUA_TLIGHTUSERDATA;
}

/* Push theta for m(phi): an empty vector per job. */
static void empty_thetas(lua_State *L, const mpb_mapper *m) {
  mpb_state *st = mpb_get(L);
  if (m->njobs < 0)
    luaL_error(L, "bad argument #1 to 'mp.mapper' ([rank %d/%d] m(phi) needs the number of jobs, and this mapper has no data: call m(phi, theta))",
               st->rank, st->size);
  lua_createtable(L, (int)m->njobs, 0);
  for (int64_t j = 1; j <= m->njobs; j++) {
    lua_newtable(L);
    lua_rawseti(L, -2, j);
  }
}

/* Read phi (at pidx, 0: none) and theta (at tidx) into c; returns how many
** inputs are vars. Buffers are userdata pushed on the stack. */
static size_t read_params(lua_State *L, const mpb_mapper *m, mpb_map_call *c, int pidx, int tidx) {
  mpb_state *st = mpb_get(L);
  size_t nvar = 0;
  if (lua_type(L, tidx) != LUA_TTABLE)
    luaL_error(L, "bad argument #%d to 'mp.mapper' ([rank %d/%d] theta must be a list of parameter vectors, got %s)",
               tidx - 1, st->rank, st->size, luaL_typename(L, tidx));
  c->n = (int64_t)lua_rawlen(L, tidx);
  if (m->njobs >= 0 && c->n != m->njobs)
    luaL_error(L, "bad argument #%d to 'mp.mapper' ([rank %d/%d] theta has %I vectors, the mapper has %I jobs)",
               tidx - 1, st->rank, st->size, (LUAI_UACINT)c->n, (LUAI_UACINT)m->njobs);
  for (int a = 1; a <= 2 && m->check; a++) {
    lua_getiuservalue(L, 1, a);     /* the caller's data */
    lua_getiuservalue(L, 1, a + 3); /* what was shipped */
    if (!mpb_map_same(L, -2, -1))
      luaL_error(L, "mp.mapper: [rank 0/%d] %s changed since the mapper was made (it computes with the data it shipped then: make a new mapper)",
                 st->size, a == 1 ? "x_r" : "x_i");
    lua_pop(L, 2);
  }
  if (pidx) {
    c->np = (size_t)mpb_map_param_len(L, pidx, "phi", 0);
    double *pv = mpb_map_buf(L, c->np * sizeof(double));
    ad_idx *pvar = mpb_map_buf(L, c->np * sizeof(ad_idx));
    nvar += mpb_map_param_read(L, pidx, pv, pvar, c->np, "phi", 0);
    c->pv = pv, c->pvar = pvar;
  }
  c->toff = mpb_map_buf(L, (size_t)(c->n + 1) * sizeof(int64_t));
  c->toff[0] = 0;
  for (int64_t j = 1; j <= c->n; j++) {
    lua_rawgeti(L, tidx, j);
    int64_t k = mpb_map_param_len(L, -1, "theta", j);
    lua_pop(L, 1);
    c->toff[j] = c->toff[j - 1] + k;
    if ((size_t)k > c->maxnt) c->maxnt = (size_t)k;
  }
  size_t nt = (size_t)c->toff[c->n];
  c->tv = mpb_map_buf(L, nt * sizeof(double));
  c->tvar = mpb_map_buf(L, nt * sizeof(ad_idx));
  for (int64_t j = 1; j <= c->n; j++) {
    lua_rawgeti(L, tidx, j);
    int64_t at = c->toff[j - 1];
    nvar += mpb_map_param_read(L, -1, c->tv + at, c->tvar + at, (size_t)(c->toff[j] - at),
                               "theta", j);
    lua_pop(L, 1);
  }
  return nvar;
}

/* Run the call's task and push its results (arguments read into c). */
static int run_call(lua_State *L, mpb_mapper *m, mpb_map_call *c, int has_phi) {
  mpb_state *st = mpb_get(L);
  size_t nt = (size_t)c->toff[c->n];
  int deriv = c->mode == MPB_MAP_GRAD || c->mode == MPB_MAP_HESS;
  uint8_t *pmask = NULL;
  if (deriv) {
    c->tmask = mpb_map_buf(L, nt);
    for (size_t i = 0; i < nt; i++) c->tmask[i] = c->tvar[i] != AD_NOVAR;
    pmask = mpb_map_buf(L, c->np);
    for (size_t i = 0; i < c->np; i++) pmask[i] = c->pvar[i] != AD_NOVAR;
  }
  mpb_map_guard(L);
  lua_pushlightuserdata(L, c);
  lua_setfield(L, LUA_REGISTRYINDEX, MPB_MAP_CALL_KEY);
  mpb_map_push_dead(L);
  int dead = lua_gettop(L);
  lua_pushcfunction(L, mpb_map_run); /* shipped by name (mp._map_run) */
  lua_pushinteger(L, m->id);
  lua_pushinteger(L, c->n);
  lua_pushinteger(L, c->mode);
  if (has_phi) mpb_map_vec(L, MPB_F64, c->pv, (int64_t)c->np);
  else lua_pushnil(L);
  if (has_phi && deriv) mpb_map_vec(L, MPB_U8, pmask, (int64_t)c->np);
  else if (has_phi && c->mode == MPB_MAP_JVP) mpb_map_vec(L, MPB_F64, c->dpv, (int64_t)c->np);
  else lua_pushnil(L);
  lua_pushvalue(L, dead);
  mpb_task_run(L, st, MPB_TASK_CALL, 7, "mapper");
  mpb_map_forget_dead(L, dead);
  m->njobs = c->n;
  lua_getiuservalue(L, 1, 3);
  return mpb_map_assemble(L, c, dead + 1, lua_gettop(L));
}

/* m(theta), m(phi, theta), or m(phi). */
int mpb_mapper_call(lua_State *L) {
  mpb_mapper *m = mpb_map_check(L, 1);
  int has_phi = !lua_isnoneornil(L, 3);
  lua_settop(L, 3);
  if (!has_phi && is_vector(L, 2)) {
    has_phi = 1;
    empty_thetas(L, m);
    lua_replace(L, 3);
  }
  mpb_map_call c;
  memset(&c, 0, sizeof c);
  size_t nvar = read_params(L, m, &c, has_phi ? 2 : 0, has_phi ? 3 : 2);
  if (c.n == 0) {
    lua_newtable(L);
    return 1;
  }
  c.mode = !nvar ? MPB_MAP_PLAIN : lad_second_order(L) ? MPB_MAP_HESS : MPB_MAP_GRAD;
  return run_call(L, m, &c, has_phi);
}

/* m:jvp(phi, theta, dphi, dtheta), m:jvp(theta, dtheta), m:jvp(phi, dphi):
** values and directional derivatives (two lists of vectors), on numbers. */
int mpb_mapper_jvp(lua_State *L) {
  mpb_state *st = mpb_get(L);
  mpb_mapper *m = mpb_map_check(L, 1);
  int nargs = lua_gettop(L) - 1, has_phi = nargs == 4;
  if (nargs != 2 && nargs != 4)
    return luaL_error(L, "mp.mapper: m:jvp takes (phi, theta, dphi, dtheta), (theta, dtheta) or (phi, dphi)");
  lua_settop(L, 5);
  if (nargs == 2 && is_vector(L, 2)) { /* (phi, dphi): empty thetas both ways */
    has_phi = 1;
    lua_pushvalue(L, 3);
    lua_replace(L, 4);
    empty_thetas(L, m);
    lua_pushvalue(L, -1);
    lua_replace(L, 3);
    lua_replace(L, 5);
  } else if (nargs == 2) {
    lua_pushvalue(L, 3);
    lua_replace(L, 5);
    lua_pushnil(L);
    lua_replace(L, 3);
    lua_pushnil(L);
    lua_replace(L, 4);
  }
  /* now: 2 phi or theta, 3 theta or nil, 4 dphi or nil, 5 dtheta */
  mpb_map_call c, d;
  memset(&c, 0, sizeof c);
  memset(&d, 0, sizeof d);
  int pidx = has_phi ? 2 : 0, tidx = has_phi ? 3 : 2;
  if (read_params(L, m, &c, pidx, tidx) ||
      read_params(L, m, &d, has_phi ? 4 : 0, 5))
    return luaL_error(L, "mp.mapper: [rank 0/%d] m:jvp takes numbers, not ad vars (inside ad.jvp, call m itself)",
                      st->size);
  if (d.n != c.n || d.np != c.np || memcmp(d.toff, c.toff, (size_t)(c.n + 1) * sizeof(int64_t)))
    return luaL_error(L, "mp.mapper: [rank 0/%d] m:jvp: the direction's lengths do not match the parameters'",
                      st->size);
  if (c.n == 0) {
    lua_newtable(L);
    lua_newtable(L);
    return 2;
  }
  c.mode = MPB_MAP_JVP;
  c.dpv = d.pv;
  c.dtv = d.tv;
  return run_call(L, m, &c, has_phi);
}
