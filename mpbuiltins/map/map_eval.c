/* SPDX-License-Identifier: MIT */
/*
** The work of mp.mapper on one rank: evaluate a contiguous block of jobs and
** write one record per job into an f64 array,
**   m, y[1..m]                    plain call
**   m, y[1..m], J[m x nv] (rows)  differentiated call (nv: the job's inputs
**                                 that are vars on rank 0)
**   ... then H_i[nv x nv], i = 1..m  second order (inside ad.hessian/hvp)
**   m, y[1..m], dy[1..m]          m:jvp (the directional derivative)
** which rank 0 reads back (map_call.c). Every rank, rank 0 included, runs exactly
** this code on exactly the same inputs (decoded copies of f and the data), so
** values and Jacobians do not depend on which rank ran a job or how many
** ranks there are.
**
** Rank 0 reads the records back into outputs (mpb_map_assemble), so the
** format lives in this file only.
**
** A differentiated job runs in a nested region of this rank's tape: leaves
** for phi and theta_j, f's outputs, the Jacobian by ad_jacobian, and the
** region ends whatever happens in f.
*/
#include <stdlib.h>
#include <string.h>

#include "ad_hess.h"
#include "ad_scalar.h"
#include "array/array.h"
#include "adlib/lad.h"
#include "map/map_int.h"

/* ------------------------------------------------------------ scratch */
/* Growable buffers reused across calls (one set per lua_State, owned by a
** userdata in the registry so an error in f never leaks them). */
typedef struct scratch {
  double *rec;   size_t nrec, caprec;  /* the records being written */
  double *jac;   size_t capjac;
  ad_idx *ys;    size_t capys;
  int64_t job;   /* job being run, for the error message */
} scratch;

static const char SCRATCH_KEY[] = "mp.map.scratch";

static int scratch_gc(lua_State *L) {
  scratch *s = lua_touserdata(L, 1);
  free(s->rec), free(s->jac), free(s->ys);
  memset(s, 0, sizeof *s);
  return 0;
}

static scratch *get_scratch(lua_State *L) {
  if (lua_getfield(L, LUA_REGISTRYINDEX, SCRATCH_KEY) == LUA_TUSERDATA) {
    scratch *s = lua_touserdata(L, -1);
    lua_pop(L, 1);
    return s;
  }
  lua_pop(L, 1);
  scratch *s = lua_newuserdatauv(L, sizeof *s, 0);
  memset(s, 0, sizeof *s);
  lua_newtable(L);
  lua_pushcfunction(L, scratch_gc);
  lua_setfield(L, -2, "__gc");
  lua_setmetatable(L, -2);
  lua_setfield(L, LUA_REGISTRYINDEX, SCRATCH_KEY);
  return s;
}

/* Make *p hold at least n elements of size sz. */
static void grow(lua_State *L, void **p, size_t *cap, size_t n, size_t sz) {
  if (n <= *cap) return;
  size_t c = *cap ? *cap : 64;
  while (c < n) c *= 2;
  void *q = realloc(*p, c * sz);
  if (!q) luaL_error(L, "mp.map: out of memory (%I elements)", (LUAI_UACINT)n);
  *p = q;
  *cap = c;
}

static double *rec_reserve(lua_State *L, scratch *s, size_t n) {
  grow(L, (void **)&s->rec, &s->caprec, s->nrec + n, sizeof(double));
  return s->rec + s->nrec;
}

/* ------------------------------------------------------- one job's run */
typedef struct job {
  int entry;            /* stack index of the mapper's entry table (in job_body) */
  int64_t j;            /* global job index (1-based) */
  int64_t dlo;          /* job of the block's first data item */
  int grad, mode;       /* grad: a tape region (any mode but plain) */
  const double *phi, *theta;
  const uint8_t *pmask, *tmask; /* which inputs are vars (differentiated calls) */
  const double *dphi, *dtheta;  /* the direction (m:jvp) */
  size_t np, nt;
  int has_phi;
  scratch *s;
} job;

/* f's result (at idx) as numbers, and in a differentiated call as vars of
** the job's region (constants become leaves there: zero rows). */
static size_t read_outputs(lua_State *L, job *jb, int idx, ad_idx first) {
  ad_tape *t = jb->grad ? lad_tape(L) : NULL;
  scratch *s = jb->s;
  ad_idx v0;
  size_t m;
  mpb_array *a = NULL;
  if (jb->grad && lad_tovec(L, idx, &v0, &m)) {
    if (m && v0 < first) luaL_error(L, "f returned an ad vector that does not come from its arguments");
    double *y = rec_reserve(L, s, 1 + m);
    grow(L, (void **)&s->ys, &s->capys, m, sizeof(ad_idx));
    y[0] = (double)m;
    for (size_t i = 0; i < m; i++) y[1 + i] = t->val[v0 + i], s->ys[i] = v0 + (ad_idx)i;
    return m;
  }
  const double *cx;
  if (lad_toconst(L, idx, &cx, &m)) { /* constants: ad functions of constants */
    double *y = rec_reserve(L, s, 1 + m);
    y[0] = (double)m;
    if (m) memcpy(y + 1, cx, m * sizeof(double));
    if (jb->grad) {
      grow(L, (void **)&s->ys, &s->capys, m, sizeof(ad_idx));
      for (size_t i = 0; i < m; i++) {
        int rc = ad_var_new(t, y[1 + i], &s->ys[i]);
        if (rc) luaL_error(L, "%s", ad_strerror(rc));
      }
    }
    return m;
  }
  if ((a = mpb_array_test(L, idx)) != NULL && MPB_DTYPE_COMPLEX(a->dtype))
    return (size_t)luaL_error(L, "f returned a %s array (expected real numbers)",
                              mpb_dtype_name(a->dtype));
  if (a) m = (size_t)a->n;
  else if (lua_type(L, idx) == LUA_TTABLE) m = lua_rawlen(L, idx);
  else
    return (size_t)luaL_error(L, "f returned a %s (expected a table, an mp.array or an ad vector)",
                              luaL_typename(L, idx));
  double *y = rec_reserve(L, s, 1 + m);
  if (jb->grad) grow(L, (void **)&s->ys, &s->capys, m, sizeof(ad_idx));
  y[0] = (double)m;
  for (size_t i = 0; i < m; i++) {
    if (a) {
      y[1 + i] = mpb_array_getd(a, (int64_t)i);
    } else {
      lua_rawgeti(L, idx, (lua_Integer)i + 1);
      ad_idx v;
      double x;
      int isnum;
      x = lua_tonumberx(L, -1, &isnum);
      if (isnum && lua_type(L, -1) == LUA_TNUMBER) {
        y[1 + i] = x;
        v = AD_NOVAR;
      } else if (lad_tovar(L, -1, &v, &x)) {
        if (!jb->grad)
          luaL_error(L, "f returned an ad var, but no parameter of this call is an ad var");
        if (v < first)
          luaL_error(L, "f returned an ad var that does not come from its arguments (item %I)",
                     (LUAI_UACINT)i + 1);
        y[1 + i] = x;
      } else {
        luaL_error(L, "f returned a %s as item %I (expected a number or an ad var)",
                   luaL_typename(L, -1), (LUAI_UACINT)i + 1);
      }
      lua_pop(L, 1);
      if (jb->grad) s->ys[i] = v;
      continue;
    }
    if (jb->grad) s->ys[i] = AD_NOVAR;
  }
  if (jb->grad) /* constants: leaves of this region, so their rows are zero */
    for (size_t i = 0; i < m; i++)
      if (s->ys[i] == AD_NOVAR) {
        int rc = ad_var_new(t, y[1 + i], &s->ys[i]);
        if (rc) luaL_error(L, "%s", ad_strerror(rc));
      }
  return m;
}

/* Job j's item of the block's static data (nil if the mapper has none). */
static void push_data(lua_State *L, job *jb, const char *field) {
  if (lua_getfield(L, jb->entry, field) == LUA_TTABLE) lua_rawgeti(L, -1, jb->j - jb->dlo + 1);
  else lua_pushnil(L);
  lua_remove(L, -2);
}

/* Protected part of a job: arguments, f, outputs, Jacobian, record. */
static int job_body(lua_State *L) {
  job *jb = lua_touserdata(L, 1);
  jb->entry = 2; /* this frame's copy of the entry table */
  scratch *s = jb->s;
  size_t n = jb->np + jb->nt;
  ad_idx first = 0;
  lua_getfield(L, jb->entry, "f");
  if (jb->grad) {
    double *x = rec_reserve(L, s, n); /* staging: overwritten by the record */
    if (jb->np) memcpy(x, jb->phi, jb->np * sizeof(double));
    if (jb->nt) memcpy(x + jb->np, jb->theta, jb->nt * sizeof(double));
    int rc = ad_vars_new(lad_tape(L), n, x, &first);
    if (rc) luaL_error(L, "%s", ad_strerror(rc));
    if (jb->has_phi) lad_pushvec(L, first, jb->np);
    lad_pushvec(L, first + (ad_idx)jb->np, jb->nt);
  } else {
    /* constant vectors, so f computes with the same code as on vars (ad
    ** functions of constants compute and return constants); fresh copies: a
    ** job cannot reach another's parameters */
    if (jb->has_phi) lad_pushconst(L, jb->phi, jb->np);
    lad_pushconst(L, jb->theta, jb->nt);
  }
  push_data(L, jb, "xr");
  push_data(L, jb, "xi");
  lua_call(L, jb->has_phi ? 4 : 3, 1);
  size_t m = read_outputs(L, jb, lua_gettop(L), first);
  s->nrec += 1 + m;
  if (!jb->grad || !m) return 0;
  ad_idx outer = ad_region_outer_read(lad_tape(L));
  if (outer != AD_NOVAR)
    luaL_error(L, "f used an ad var that is not one of its arguments (a global or an upvalue?): "
                  "its derivatives would be lost");
  ad_idx *in = (ad_idx *)lua_newuserdatauv(L, (n ? n : 1) * sizeof(ad_idx), 0);
  int rc;
  if (jb->mode == MPB_MAP_JVP) { /* one forward pass along (dphi, dtheta_j) */
    grow(L, (void **)&s->jac, &s->capjac, m + n, sizeof(double));
    double *dir = s->jac + m;
    for (size_t i = 0; i < n; i++) in[i] = first + (ad_idx)i;
    if (jb->np) memcpy(dir, jb->dphi, jb->np * sizeof(double));
    if (jb->nt) memcpy(dir + jb->np, jb->dtheta, jb->nt * sizeof(double));
    if ((rc = ad_jvp(lad_tape(L), m, s->ys, n, in, dir, s->jac))) luaL_error(L, "%s", ad_strerror(rc));
    memcpy(rec_reserve(L, s, m), s->jac, m * sizeof(double));
    s->nrec += m;
    return 0;
  }
  /* the Jacobian w.r.t. the inputs that are vars on rank 0 (constants get none) */
  size_t nv = 0;
  for (size_t i = 0; i < n; i++)
    if (i < jb->np ? jb->pmask[i] : jb->tmask[i - jb->np]) in[nv++] = first + (ad_idx)i;
  if (!nv) return 0;
  if (jb->mode == MPB_MAP_HESS) {
    /* each output's gradient (the Jacobian's row) and Hessian from one
    ** forward-over-reverse pass; the record holds the rows, then the Hessians */
    double *J = rec_reserve(L, s, m * nv + m * nv * nv), *H = J + m * nv;
    for (size_t i = 0; i < m; i++)
      if ((rc = ad_hessian(lad_tape(L), s->ys[i], nv, in, J + i * nv, H + i * nv * nv)))
        luaL_error(L, "%s", ad_strerror(rc));
    s->nrec += m * nv + m * nv * nv;
    return 0;
  }
  grow(L, (void **)&s->jac, &s->capjac, m * nv, sizeof(double));
  if ((rc = lad_jacobian(L, m, s->ys, nv, in, s->jac))) luaL_error(L, "%s", ad_strerror(rc));
  memcpy(rec_reserve(L, s, m * nv), s->jac, m * nv * sizeof(double));
  s->nrec += m * nv;
  return 0;
}

static int errtostring(lua_State *L) {
  lua_rawgeti(L, 1, 1);
  return 1;
}

/* Message handler of a job: the message names the job, keeps its
** traceback, and travels as an object whose __tostring is that text, so the
** task's handler does not add a second traceback. The abort error passes. */
static int job_msgh(lua_State *L) {
  if (mpb_is_abort(L, 1)) return 1;
  scratch *s = get_scratch(L);
  mpb_msgh(L);
  lua_pushfstring(L, "job %I: %s", (LUAI_UACINT)s->job, lua_tostring(L, -1));
  lua_newtable(L);
  lua_pushvalue(L, -2);
  lua_rawseti(L, -2, 1);
  if (luaL_newmetatable(L, "mp.JobError")) {
    lua_pushcfunction(L, errtostring);
    lua_setfield(L, -2, "__tostring");
  }
  lua_setmetatable(L, -2);
  return 1;
}

void mpb_map_eval(lua_State *L, int entry, int64_t lo, int64_t hi, const mpb_map_in *in) {
  scratch *s = get_scratch(L);
  s->nrec = 0;
  int base = lua_gettop(L);
  lua_pushcfunction(L, job_msgh);
  lua_pushcfunction(L, job_body);
  entry = lua_absindex(L, entry);
  lua_getfield(L, entry, "lo");
  int grad = in->mode != MPB_MAP_PLAIN;
  job jb = {entry, 0, lua_tointeger(L, -1), grad, in->mode, in->phi, NULL, in->pmask, NULL,
            in->dphi, NULL, in->np, 0, in->has_phi, s};
  lua_pop(L, 1);
  for (int64_t j = lo; j <= hi; j++) {
    MPB_TRACE_SPAN(NULL, mpb_get(L), MPB_TR_MAP, in->mode, -1, (uint32_t)j, 0);
    jb.j = s->job = j;
    jb.theta = in->theta + in->toff[j - lo];
    jb.tmask = in->tmask ? in->tmask + in->toff[j - lo] : NULL;
    jb.dtheta = in->dtheta ? in->dtheta + in->toff[j - lo] : NULL;
    jb.nt = (size_t)(in->toff[j - lo + 1] - in->toff[j - lo]);
    ad_tape *t = grad ? lad_tape(L) : NULL;
    int depth = t ? t->depth + 1 : 0;
    if (t) lad_begin(L);
    lua_pushvalue(L, base + 2);
    lua_pushlightuserdata(L, &jb);
    lua_pushvalue(L, entry);
    int status = lua_pcall(L, 2, 0, base + 1);
    while (t && t->depth >= depth) lad_end(L); /* f's own regions too */
    if (status != LUA_OK) lua_error(L);
  }
  lua_settop(L, base);
  mpb_map_vec(L, MPB_F64, s->rec, (int64_t)s->nrec);
}

/* ------------------------------------------------ reading them back */
/* The vars among job j's inputs (phi, then theta[j]): their count. */
static size_t job_vars(const mpb_map_call *c, int64_t j, ad_idx *in) {
  size_t nv = 0;
  for (size_t k = 0; k < c->np; k++)
    if (c->pvar[k] != AD_NOVAR) in[nv++] = c->pvar[k];
  for (int64_t k = c->toff[j - 1]; k < c->toff[j]; k++)
    if (c->tvar[k] != AD_NOVAR) in[nv++] = c->tvar[k];
  return nv;
}

/* The length of job j's record after m (its derivatives), by mode. */
static int64_t deriv_len(const mpb_map_call *c, int64_t m, int64_t nv) {
  switch (c->mode) {
    case MPB_MAP_GRAD: return m * nv;
    case MPB_MAP_HESS: return m * nv + m * nv * nv;
    case MPB_MAP_JVP: return m;
    default: return 0;
  }
}

/* Rank 0, after a call's task (map_call.c): the records. A first pass
** checks them and the jobs' output lengths (fixed by the first call that
** succeeds), so a bad call adds nothing to the tape; the second makes the
** outputs: plain vectors, precomputed nodes (with second partials for
** HESS), or values and tangents (JVP). */
int mpb_map_assemble(lua_State *L, const mpb_map_call *c, int res, int nout) {
  mpb_state *st = mpb_get(L);
  int deriv = c->mode == MPB_MAP_GRAD || c->mode == MPB_MAP_HESS;
  ad_tape *t = deriv ? lad_tape(L) : NULL;
  ad_idx *in = mpb_map_buf(L, (c->np + c->maxnt) * sizeof(ad_idx));
  const double **rec = mpb_map_buf(L, (size_t)c->n * sizeof(double *));
  int out = 0, tan = 0;
  for (int pass = 0; pass < 2; pass++) {
    if (pass) {
      lua_createtable(L, (int)c->n, 0);
      out = lua_gettop(L);
      if (c->mode == MPB_MAP_JVP) lua_createtable(L, (int)c->n, 0);
      tan = lua_gettop(L);
    }
    for (int r = 0; r < st->size; r++) {
      int64_t lo, hi, at = 0;
      mpb_map_block(c->n, st->size, r, &lo, &hi);
      if (lo > hi) continue;
      lua_rawgeti(L, res, r);
      mpb_array *a = mpb_map_array(L, -1, MPB_F64, r);
      lua_pop(L, 1); /* res keeps it */
      const double *d = a->data;
      for (int64_t j = lo; j <= hi; j++) {
        int64_t nv = deriv ? (int64_t)job_vars(c, j, in) : 0;
        if (pass) {
          const double *y = rec[j - 1] + 1, *dy = y + (int64_t)rec[j - 1][0];
          int64_t m = (int64_t)rec[j - 1][0];
          if (!deriv) {
            mpb_map_vec(L, MPB_F64, y, m);
            if (c->mode == MPB_MAP_JVP) {
              mpb_map_vec(L, MPB_F64, dy, m);
              lua_rawseti(L, tan, j);
            }
          } else {
            ad_idx first = t->nvar, yv;
            for (int64_t i = 0; i < m; i++) {
              const double *g = dy + i * nv, *H = dy + m * nv + i * nv * nv;
              int rc = c->mode == MPB_MAP_HESS ? ad_precomputed2(t, y[i], (size_t)nv, in, g, H, &yv)
                                               : ad_precomputed(t, y[i], (size_t)nv, in, g, &yv);
              if (rc) luaL_error(L, "mp.mapper: %s", ad_strerror(rc));
            }
            lad_pushvec(L, first, (size_t)m);
          }
          lua_rawseti(L, out, j);
          continue;
        }
        double dm = at < a->n ? d[at] : -1; /* from the wire: range before the cast */
        if (!(dm >= 0 && dm <= (double)(a->n - at - 1)) || dm != (double)(int64_t)dm)
          luaL_error(L, "mp.mapper: [rank 0/%d] malformed results from rank %d", st->size, r);
        int64_t m = (int64_t)dm, left = a->n - at - 1 - m;
        /* m + derivatives must fit what is left (nv, m <= 2^32: no overflow) */
        if (m > a->n - at - 1 || (nv && m && (m > left / nv || (c->mode == MPB_MAP_HESS &&
                                                m * nv > left / (nv + 1)))) ||
            (c->mode == MPB_MAP_JVP && m > left))
          luaL_error(L, "mp.mapper: [rank 0/%d] malformed results from rank %d", st->size, r);
        rec[j - 1] = d + at;
        at += 1 + m + deriv_len(c, m, nv);
        if (lua_rawgeti(L, nout, j) == LUA_TNUMBER && lua_tointeger(L, -1) != m)
          luaL_error(L, "mp.mapper: [rank %d/%d] job %I returned %I values, %I on earlier calls (a job's output length must not change)",
                     r, st->size, (LUAI_UACINT)j, (LUAI_UACINT)m, (LUAI_UACINT)lua_tointeger(L, -1));
        lua_pop(L, 1);
      }
      if (!pass && at != a->n)
        luaL_error(L, "mp.mapper: [rank 0/%d] malformed results from rank %d", st->size, r);
    }
  }
  for (int64_t j = 1; j <= c->n; j++) { /* lengths known from now on */
    lua_pushinteger(L, (lua_Integer)rec[j - 1][0]);
    lua_rawseti(L, nout, j);
  }
  if (c->mode != MPB_MAP_JVP) return 1;
  lua_pushvalue(L, out);
  lua_pushvalue(L, tan);
  return 2;
}
