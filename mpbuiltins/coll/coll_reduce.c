/* SPDX-License-Identifier: MIT */
/*
** Combining collectives: reduce, allreduce (typed arrays with a named op
** take the C fast path of coll_allred.c), scan, and the combining rules
** they share with mp.handin.
**
** Reduction order (reproducible): reduce folds with a binomial tree on the
** ranks 0..n-1 (for 4 ranks: (v0 op v1) op (v2 op v3)), then rank 0 hands the
** result to the root; allreduce of anything but a typed array with a named
** op is that reduce then a bcast; scan folds left to right.
*/
#include "array/array.h"
#include "array/array_ops.h"
#include "coll/coll.h"
#include "wire/wire.h"

/* Push an uninitialized array (no zero fill: it is about to be overwritten). */
mpb_array *mpb_coll_push_uninit(lua_State *L, const mpb_array *like) {
  size_t bytes = mpb_array_bytes(like);
  void *mem = lua_newuserdatauv(L, bytes ? bytes : 1, 0);
  mpb_array *o = mpb_array_view(L, -1, mem, like->dtype, like->ndim, like->dims);
  lua_remove(L, -2);
  return o;
}

/* ----------------------------------------------------------- combining */
void mpb_coll_op(lua_State *L, mpb_coll *x, int idx, int vidx) {
  if (lua_isfunction(L, idx)) {
    x->op = MPB_COLL_FUNC;
    x->fidx = lua_absindex(L, idx);
    return;
  }
  const char *s = lua_tostring(L, idx);
  if (s && lua_type(L, idx) == LUA_TSTRING && (x->op = mpb_red_from_name(s)) >= 0) {
    /* refuse an op the array's dtype lacks here, before any message: every
    ** rank raises the same error, so no peer is left waiting */
    mpb_array *a = vidx ? mpb_array_test(L, vidx) : NULL;
    if (a && mpb_red_apply(x->op, a->dtype, NULL, NULL, NULL, 0) != 0)
      luaL_error(L, "mp.%s: " MPB_RANKFMT " '%s' is not defined on %s arrays", x->fname,
                 x->st->rank, x->st->size, s, mpb_dtype_name(a->dtype));
    int ok = 1;
    if (vidx && (x->op == MPB_RED_BAND || x->op == MPB_RED_BOR) &&
        lua_type(L, vidx) == LUA_TNUMBER)
      lua_tointegerx(L, vidx, &ok);
    if (!ok)
      luaL_error(L, "bad argument #%d to 'mp.%s' (" MPB_RANKFMT " '%s' needs integers, got "
                 "%f)", vidx - 1, x->fname, x->st->rank, x->st->size, s, lua_tonumber(L, vidx));
    return;
  }
  luaL_error(L, "bad argument #%d to 'mp.%s' (" MPB_RANKFMT " op must be sum, prod, min, max, "
             "land, lor, band, bor or a function)", idx - 1, x->fname, x->st->rank, x->st->size);
}

static int truth(lua_State *L, int idx) {
  if (lua_type(L, idx) == LUA_TNUMBER) return lua_tonumber(L, idx) != 0;
  return lua_toboolean(L, idx);
}

/* A number or an mp.Complex at idx as re + im i; 2 when it is complex. */
static int as_cplx(lua_State *L, int idx, double *re, double *im) {
  if (mpb_complex_test(L, idx, re, im)) return 2;
  if (lua_type(L, idx) != LUA_TNUMBER) return 0;
  *re = lua_tonumber(L, idx), *im = 0;
  return 1;
}

static void cannot(lua_State *L, mpb_coll *x, int op, int from) {
  luaL_error(L, "mp.%s: " MPB_RANKFMT " cannot combine a %s and a %s (from rank %d) with '%s'",
             x->fname, x->st->rank, x->st->size, luaL_typename(L, -2), luaL_typename(L, -1),
             from, mpb_red_name(op));
}

/* The bitwise ops on numbers: Lua's own error would name neither the
** collective nor the value ("number has no integer representation"). A
** float with an integer value (3.0) converts, as in Lua. */
static void check_integers(lua_State *L, mpb_coll *x, int op, int from) {
  int ok, okv;
  lua_tointegerx(L, -2, &ok);
  lua_tointegerx(L, -1, &okv);
  if (ok && okv) return;
  int here = !ok;
  lua_Number v = lua_tonumber(L, here ? -2 : -1);
  luaL_error(L, "mp.%s: " MPB_RANKFMT " '%s' needs integers, got %f %s", x->fname, x->st->rank,
             x->st->size, mpb_red_name(op), v,
             here ? "here" : lua_pushfstring(L, "from rank %d", from));
}

/* acc (at -2) op v (at -1) -> result at -2, v popped. With own, acc may be
** updated in place (it is ours: decoded or made here). */
static void combine_named(lua_State *L, mpb_coll *x, int op, int from, int own, int depth) {
  int ta = lua_type(L, -2), tv = lua_type(L, -1);
  if (ta == LUA_TNUMBER && tv == LUA_TNUMBER) {
    switch (op) {
      case MPB_RED_SUM: lua_arith(L, LUA_OPADD); return;
      case MPB_RED_PROD: lua_arith(L, LUA_OPMUL); return;
      case MPB_RED_BAND: case MPB_RED_BOR:
        check_integers(L, x, op, from);
        lua_arith(L, op == MPB_RED_BAND ? LUA_OPBAND : LUA_OPBOR);
        return;
      case MPB_RED_MIN:
      case MPB_RED_MAX: {
        int lt = lua_compare(L, -1, -2, LUA_OPLT); /* v < acc */
        if ((op == MPB_RED_MIN) == lt) lua_replace(L, -2);
        else lua_pop(L, 1);
        return;
      }
    }
  }
  double zr[2], zi[2];
  int ka = as_cplx(L, -2, &zr[0], &zi[0]), kb = as_cplx(L, -1, &zr[1], &zi[1]);
  if (ka && kb && (ka == 2 || kb == 2) && (op == MPB_RED_SUM || op == MPB_RED_PROD)) {
    lua_pop(L, 2); /* complex values: sum and product (array_cplx.h's formulas) */
    if (op == MPB_RED_SUM) mpb_complex_push(L, zr[0] + zr[1], zi[0] + zi[1]);
    else mpb_complex_push(L, zr[0] * zr[1] - zi[0] * zi[1], zr[0] * zi[1] + zi[0] * zr[1]);
    return;
  }
  if ((op == MPB_RED_LAND || op == MPB_RED_LOR) && ta != LUA_TTABLE && ta != LUA_TUSERDATA &&
      tv != LUA_TTABLE && tv != LUA_TUSERDATA) {
    int r = op == MPB_RED_LAND ? (truth(L, -2) && truth(L, -1)) : (truth(L, -2) || truth(L, -1));
    lua_pop(L, 2);
    lua_pushboolean(L, r);
    return;
  }
  mpb_array *a = mpb_array_test(L, -2), *b = mpb_array_test(L, -1);
  if (a && b) {
    if (a->dtype != b->dtype || a->n != b->n)
      luaL_error(L, "mp.%s: " MPB_RANKFMT " %s array of %I elements from rank %d, %s of %I here",
                 x->fname, x->st->rank, x->st->size, mpb_dtype_name(b->dtype),
                 (LUAI_UACINT)b->n, from, mpb_dtype_name(a->dtype), (LUAI_UACINT)a->n);
    mpb_array *o = own ? a : mpb_coll_push_uninit(L, a);
    if (mpb_red_apply(op, a->dtype, o->data, a->data, b->data, a->n) != 0)
      luaL_error(L, "mp.%s: " MPB_RANKFMT " '%s' is not defined on %s arrays", x->fname,
                 x->st->rank, x->st->size, mpb_red_name(op), mpb_dtype_name(a->dtype));
    if (!own) lua_replace(L, -3);
    lua_pop(L, 1);
    return;
  }
  if (ta == LUA_TTABLE && tv == LUA_TTABLE && depth < MPB_WIRE_MAXDEPTH) {
    int ai = lua_absindex(L, -2), vi = lua_absindex(L, -1);
    int oi = ai;
    if (!own) {
      lua_newtable(L);
      oi = lua_gettop(L);
    }
    lua_Integer na = 0, nv = 0;
    lua_pushnil(L);
    while (lua_next(L, vi)) { nv++; lua_pop(L, 1); }
    lua_pushnil(L);
    while (lua_next(L, ai)) {
      na++;
      lua_pushvalue(L, -2);
      if (lua_rawget(L, vi) == LUA_TNIL) cannot(L, x, op, from);
      combine_named(L, x, op, from, own, depth + 1);
      lua_pushvalue(L, -2);
      lua_insert(L, -2);
      lua_rawset(L, oi);
    }
    if (na != nv) {
      lua_settop(L, vi);
      luaL_error(L, "mp.%s: " MPB_RANKFMT " table of %I fields from rank %d, %I here", x->fname,
                 x->st->rank, x->st->size, (LUAI_UACINT)nv, from, (LUAI_UACINT)na);
    }
    if (!own) lua_replace(L, ai);
    lua_settop(L, ai);
    return;
  }
  cannot(L, x, op, from);
}

/* acc (at -2) op v (at -1): a Lua function is called as op(acc, v). */
void mpb_coll_combine(lua_State *L, mpb_coll *x, int from, int own) {
  if (x->op == MPB_COLL_FUNC) {
    lua_pushvalue(L, x->fidx);
    lua_insert(L, -3);
    lua_call(L, 2, 1);
  } else {
    combine_named(L, x, x->op, from, own, 0);
  }
}

/* ------------------------------------------------------------- reduce */
/* Binomial fold to rank 0 of v (at vidx); leaves the result on top at rank
** 0, nothing elsewhere. Returns 1 at rank 0. */
static int reduce0(lua_State *L, mpb_coll *x, int vidx) {
  int n = x->c->size, me = x->c->rank, own = 0;
  lua_pushvalue(L, vidx);
  for (int mask = 1; mask < n; mask <<= 1) {
    if (me & mask) {
      mpb_coll_send_vals(L, x, me & ~mask, lua_gettop(L), 1, NULL);
      lua_pop(L, 1);
      return 0;
    }
    if ((me | mask) < n) {
      mpb_coll_recv_val(L, x, me | mask);
      mpb_coll_combine(L, x, me | mask, own);
      own = x->op != MPB_COLL_FUNC;
    }
  }
  if (!own && mpb_array_test(L, -1)) { /* never hand back the caller's own array */
    lua_getfield(L, -1, "copy");
    lua_insert(L, -2);
    lua_call(L, 1, 1);
  }
  return 1;
}

/* comm:reduce(v, op, root=0): the result at root, nil elsewhere. */
static int c_reduce(lua_State *L) {
  mpb_coll x = mpb_coll_begin(L, "reduce", MPB_COLL_REDUCE);
  mpb_coll_op(L, &x, 3, 2);
  int root = lua_isnoneornil(L, 4) ? 0 : mpb_comm_checkrank(L, x.st, x.c, 4, 3, "reduce");
  x.root = root;
  MPB_TRACE_SPAN(L, x.st, MPB_TR_COLL, x.kind, x.root, x.seq, x.c->id);
  lua_settop(L, 3);
  int have = reduce0(L, &x, 2);
  if (root == 0) return have;
  if (x.c->rank == 0) {
    mpb_coll_send_vals(L, &x, root, lua_gettop(L), 1, NULL);
    return 0;
  }
  if (x.c->rank != root) return 0;
  mpb_coll_recv_val(L, &x, 0);
  return 1;
}

/* comm:allreduce(v, op): the reduction on every rank. */
static int c_allreduce(lua_State *L) {
  mpb_coll x = mpb_coll_begin(L, "allreduce", MPB_COLL_ALLRED);
  MPB_TRACE_SPAN(L, x.st, MPB_TR_COLL, x.kind, x.root, x.seq, x.c->id);
  mpb_coll_op(L, &x, 3, 2);
  lua_settop(L, 3);
  if (mpb_array_test(L, 2) && x.op != MPB_COLL_FUNC && x.c->size > 1) {
    mpb_coll_allreduce_array(L, &x);
    return 1;
  }
  if (!reduce0(L, &x, 2)) lua_pushnil(L); /* then rank 0 hands the result out */
  mpb_coll_bcast_at(L, &x, 4, 0);
  return 1;
}

/* comm:scan(v, op): inclusive prefix v0 op v1 op ... op v(rank), folded left
** to right along the ranks. */
static int c_scan(lua_State *L) {
  mpb_coll x = mpb_coll_begin(L, "scan", MPB_COLL_SCAN);
  MPB_TRACE_SPAN(L, x.st, MPB_TR_COLL, x.kind, x.root, x.seq, x.c->id);
  mpb_coll_op(L, &x, 3, 2);
  lua_settop(L, 3);
  int me = x.c->rank;
  if (me > 0) {
    mpb_coll_recv_val(L, &x, me - 1);
    lua_pushvalue(L, 2);
    mpb_coll_combine(L, &x, me - 1, 1);
  } else {
    mpb_coll_push_own(L, &x, 2, 1);
  }
  if (me + 1 < x.c->size) mpb_coll_send_vals(L, &x, me + 1, lua_gettop(L), 1, NULL);
  return 1;
}

void mpb_coll_reduce_methods(lua_State *L, int mpt) {
  mpb_comm_setboth(L, mpt, "reduce", c_reduce);
  mpb_comm_setboth(L, mpt, "allreduce", c_allreduce);
  mpb_comm_setboth(L, mpt, "scan", c_scan);
}
