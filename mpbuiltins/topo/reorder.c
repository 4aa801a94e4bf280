/* SPDX-License-Identifier: MIT */
/*
** Reordering as a function (README "Reordering"), seed 004: a traffic
** pattern mapped onto the machine, its quality reported before and after,
** and applied as a relabelling that really happens (MPICH's reorder flag
** does nothing). The mapping is topo_reorder.c's (plain C).
**
**   mp.machine([comm])        where each rank runs: {nodes = {...}, numa =
**                             {...}, cpus = {...}, nnodes =, size =}, lists
**                             by rank (0-based ranks, 1-based lists), as the
**                             runtime learnt at start (wake.c's host key
**                             for nodes, sched_getcpu and /sys for NUMA).
**                             Local: no communication, any rank.
**   mp.reorder(traffic [, opts])  traffic: an mp.Cart (unit bytes to each
**                             neighbour, or opts.bytes: a number or one per
**                             axis), an mp.Graph (each edge its weight times
**                             opts.bytes), an n x n mp.Array or a list of n lists
**                             (bytes from i to j; mp.trace.matrix's result).
**                             opts.nodes, opts.numa: the machine (lists by
**                             rank), or opts.machine (mp.machine's value),
**                             default mp.machine(opts.comm). Local and
**                             deterministic. Returns the mapping and its
**                             report (a table: ranks, new_rank, before,
**                             after, changed, moved, report; tostring
**                             prints the report, r:apply(comm) applies).
**   comm:reorder(r)           collective: the relabelled communicator whose
**                             rank k is comm's rank r.ranks[k+1] (comm:split
**                             with the new ranks as keys).
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "array/array.h"
#include "topo/topo.h"
#include "layout/layout_grid.h"
#include "topo/topo_reorder.h"
#include "p2p/p2p.h"

/* The metatables of results, in Lua so that results travel in messages
** (a C function in a metatable could not be sent). */
static const char mts_lua[] =
    "local reorder_mt = {__name = 'mp.Reorder',\n"
    "  __tostring = function(r) return r.report end,\n"
    "  __index = {apply = function(r, comm)\n"
    "    comm = comm or (mp or package.loaded.mp).world\n"
    "    return comm:reorder(r)\n"
    "  end}}\n"
    "local machine_mt = {__name = 'mp.Machine', __tostring = function(m) return m.report end}\n"
    "return reorder_mt, machine_mt\n";

/* --------------------------------------------------------- the machine */
typedef struct {
  int n, nnodes;
  int *node, *numa, *cpu;
} machine;

/* A userdata-owned int array of n (freed by the collector). */
static int *ints(lua_State *L, int n) {
  return lua_newuserdatauv(L, sizeof(int) * (size_t)(n ? n : 1), 0);
}

static void push_list(lua_State *L, int n, const int *v) {
  lua_createtable(L, n, 0);
  for (int i = 0; i < n; i++) {
    lua_pushinteger(L, v[i]);
    lua_rawseti(L, -2, i + 1);
  }
}

static int by_int64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

static int by_int(const void *a, const void *b) {
  int x = *(const int *)a, y = *(const int *)b;
  return (x > y) - (x < y);
}

/* Replace labels by 0, 1, ... in increasing order (a userdata is left on
** the stack). */
static void dense_labels(lua_State *L, int *v, int n) {
  int *u = ints(L, n), k = 0;
  memcpy(u, v, sizeof(int) * (size_t)n);
  qsort(u, (size_t)n, sizeof *u, by_int);
  for (int i = 0; i < n; i++)
    if (i == 0 || u[i] != u[k - 1]) u[k++] = u[i];
  for (int i = 0; i < n; i++) v[i] = (int)((int *)bsearch(&v[i], u, (size_t)k, sizeof *u, by_int) - u);
}

/* Push "8 ranks on 2 nodes (4+4), NUMA domains per node: 1 1". */
static void push_machine_text(lua_State *L, const machine *m) {
  int nn = 0;
  for (int i = 0; i < m->n; i++)
    if (m->node[i] + 1 > nn) nn = m->node[i] + 1;
  int *cnt = ints(L, 2 * (nn + 1)), *doms = cnt + nn + 1; /* below the buffer */
  memset(cnt, 0, sizeof(int) * 2 * (size_t)(nn + 1));
  int distinct = 0;
  int64_t *pair = lua_newuserdatauv(L, sizeof(int64_t) * (size_t)(m->n ? m->n : 1), 0);
  for (int i = 0; i < m->n; i++) {
    if (!cnt[m->node[i]]++) distinct++;
    pair[i] = (int64_t)m->node[i] << 32 | (uint32_t)(m->numa ? m->numa[i] : 0);
  }
  qsort(pair, (size_t)m->n, sizeof *pair, by_int64);
  for (int i = 0; i < m->n; i++)
    if (i == 0 || pair[i] != pair[i - 1]) doms[pair[i] >> 32]++;
  lua_pop(L, 1);
  int same_cnt = 1, same_doms = 1, k0 = m->n ? m->node[0] : 0;
  for (int k = 0; k < nn; k++)
    if (cnt[k]) {
      same_cnt &= cnt[k] == cnt[k0];
      same_doms &= doms[k] == doms[k0];
    }
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  lua_pushfstring(L, "%d rank%s on %d node%s (", m->n, m->n == 1 ? "" : "s", distinct,
                  distinct == 1 ? "" : "s");
  luaL_addvalue(&b);
  for (int pass = 0; pass < 2; pass++) {
    int same = pass ? same_doms : same_cnt;
    if (pass) luaL_addstring(&b, same ? "), NUMA domains per node: " : "), NUMA domains: ");
    if (same && (pass || distinct > 1)) {
      lua_pushfstring(L, pass ? "%d" : "%d each", pass ? doms[k0] : cnt[k0]);
      luaL_addvalue(&b);
      continue;
    }
    for (int k = 0, first = 1; k < nn; k++) {
      if (!cnt[k]) continue;
      if (distinct > 16 && !first) {
        luaL_addstring(&b, pass ? "+..." : "+...");
        break;
      }
      lua_pushfstring(L, first ? "%d" : "+%d", pass ? doms[k] : cnt[k]);
      luaL_addvalue(&b);
      first = 0;
    }
  }
  luaL_pushresult(&b);
  lua_remove(L, -2);
}

/* The machine of comm's ranks (or of every runtime rank), nodes numbered
** by first appearance. Pushes nothing that stays: arrays are userdata left
** on the stack (three values). */
static void machine_of(lua_State *L, mpb_state *st, const mpb_comm *c, machine *m) {
  m->n = c ? c->size : st->size;
  m->node = ints(L, m->n);
  m->numa = ints(L, m->n);
  m->cpu = ints(L, m->n);
  int *node_of_host = ints(L, st->size); /* hosts are named by a rank */
  for (int r = 0; r < st->size; r++) node_of_host[r] = -1;
  m->nnodes = 0;
  for (int i = 0; i < m->n; i++) {
    int r = c ? c->ranks[i] : i, host;
    mpb_where(st, r, &host, &m->cpu[i], &m->numa[i]);
    if (host < 0 || host >= st->size) m->node[i] = m->nnodes++;
    else if (node_of_host[host] < 0) m->node[i] = node_of_host[host] = m->nnodes++;
    else m->node[i] = node_of_host[host];
  }
  lua_pop(L, 1);
}

/* mp.machine([comm]) */
static int l_machine(lua_State *L) {
  mpb_state *st = mpb_get(L);
  const mpb_comm *c = NULL;
  if (!lua_isnoneornil(L, 1)) c = mpb_comm_check(L, st, 1, "machine");
  machine m;
  machine_of(L, st, c, &m);
  lua_createtable(L, 0, 6);
  push_list(L, m.n, m.node);
  lua_setfield(L, -2, "nodes");
  push_list(L, m.n, m.numa);
  lua_setfield(L, -2, "numa");
  push_list(L, m.n, m.cpu);
  lua_setfield(L, -2, "cpus");
  lua_pushinteger(L, m.nnodes);
  lua_setfield(L, -2, "nnodes");
  lua_pushinteger(L, m.n);
  lua_setfield(L, -2, "size");
  push_machine_text(L, &m);
  lua_pushfstring(L, "mp.machine: %s", lua_tostring(L, -1));
  lua_setfield(L, -3, "report");
  lua_pop(L, 1);
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_setmetatable(L, -2);
  return 1;
}

/* ------------------------------------------------------------ arguments */
#define FN "reorder"

/* The list of n integers lo.. at stack index idx (field name what of
** argument arg) into v. */
static void int_list(lua_State *L, int idx, int n, int *v, int arg, const char *what, int lo) {
  if (!lua_istable(L, idx))
    mpb_lay_argerror(L, arg, FN, "%s: a list expected, got %s", what, luaL_typename(L, idx));
  lua_Integer len = luaL_len(L, idx);
  if (len != n)
    mpb_lay_argerror(L, arg, FN, "%s has %I entries, the traffic %d slots", what,
                     (LUAI_UACINT)len, n);
  for (int i = 0; i < n; i++) {
    int ok;
    lua_geti(L, idx, i + 1);
    lua_Integer x = lua_tointegerx(L, -1, &ok);
    if (!ok || x < lo || x > INT32_MAX)
      mpb_lay_argerror(L, arg, FN, "%s[%d] must be an integer %d or more, got %s", what, i + 1,
                       lo, ok ? lua_tostring(L, -1) : luaL_typename(L, -1));
    v[i] = (int)x;
    lua_pop(L, 1);
  }
}

/* Traffic edges, growing userdata arrays. */
typedef struct {
  int n;
  int64_t ne, cap;
  int *from, *to;
  double *bytes;
  int slot; /* stack index of the userdata holding the three arrays */
} edges;

static void add_edge(lua_State *L, edges *e, int i, int j, double b) {
  if (e->ne == e->cap) {
    int64_t cap = e->cap ? 2 * e->cap : 64;
    size_t isz = sizeof(int) * (size_t)cap;
    char *u = lua_newuserdatauv(L, 2 * isz + sizeof(double) * (size_t)cap, 0);
    int *from = (int *)(void *)(u + sizeof(double) * (size_t)cap), *to = from + cap;
    double *bytes = (double *)(void *)u;
    if (e->ne) {
      memcpy(from, e->from, sizeof(int) * (size_t)e->ne);
      memcpy(to, e->to, sizeof(int) * (size_t)e->ne);
      memcpy(bytes, e->bytes, sizeof(double) * (size_t)e->ne);
    }
    lua_replace(L, e->slot);
    e->from = from, e->to = to, e->bytes = bytes, e->cap = cap;
  }
  e->from[e->ne] = i, e->to[e->ne] = j, e->bytes[e->ne] = b;
  e->ne++;
}

static double bytes_at(lua_State *L, int idx, int arg, const char *what) {
  int ok;
  lua_Number v = lua_tonumberx(L, idx, &ok);
  if (!ok || !(v >= 0) || !isfinite(v))
    mpb_lay_argerror(L, arg, FN, "%s must be a finite number 0 or more, got %s", what,
                     ok ? lua_tostring(L, idx) : luaL_typename(L, idx));
  return v;
}

/* A Cartesian topology: each rank sends bytes (opts.bytes: a number, or one
** per axis; default 1) to each of its neighbours. */
static void cart_edges(lua_State *L, const mpb_cart *t, int opts, edges *e) {
  double per[MPB_LAYOUT_MAXDIM];
  for (int a = 0; a < t->ndim; a++) per[a] = 1;
  if (opts && lua_getfield(L, opts, "bytes") != LUA_TNIL) {
    if (lua_istable(L, -1)) {
      if (luaL_len(L, -1) != t->ndim)
        mpb_lay_argerror(L, 2, FN, "bytes: a number or one per axis (%d) expected", t->ndim);
      for (int a = 0; a < t->ndim; a++) {
        lua_geti(L, -1, a + 1);
        per[a] = bytes_at(L, -1, 2, "bytes");
        lua_pop(L, 1);
      }
    } else {
      double b = bytes_at(L, -1, 2, "bytes");
      for (int a = 0; a < t->ndim; a++) per[a] = b;
    }
  }
  if (opts) lua_pop(L, 1);
  e->n = t->nranks;
  for (int r = 0; r < t->nranks; r++)
    for (int a = 0; a < t->ndim; a++)
      for (int s = -1; s <= 1; s += 2) {
        int q = mpb_cart_shift(t, r, a, s);
        if (q >= 0) add_edge(L, e, r, q, per[a]);
      }
}

/* A graph topology (whole: a distributed one knows only its rank's edges):
** each edge carries its weight times opts.bytes (a number; default 1). */
static void graph_edges(lua_State *L, const mpb_graph *g, int opts, edges *e) {
  if (g->me >= 0)
    mpb_lay_argerror(L, 1, FN, "a distributed graph knows only rank %d's edges: pass the "
                     "whole graph (mp.graph)", g->me);
  double per = 1;
  if (opts && lua_getfield(L, opts, "bytes") != LUA_TNIL) per = bytes_at(L, -1, 2, "bytes");
  if (opts) lua_pop(L, 1);
  e->n = g->nranks;
  for (int r = 0; r < g->nranks; r++)
    for (int64_t k = g->ooff[r]; k < g->ooff[r + 1]; k++)
      if (g->oto[k] != r && g->ow[k] * per > 0) add_edge(L, e, r, g->oto[k], g->ow[k] * per);
}

/* An n x n mp.Array: element (i, j) is bytes from slot i-1 to slot j-1. */
static void array_edges(lua_State *L, const mpb_array *a, edges *e) {
  if (MPB_DTYPE_COMPLEX(a->dtype))
    mpb_lay_argerror(L, 1, FN, "a real traffic matrix expected, got a %s array",
                     mpb_dtype_name(a->dtype));
  if (a->ndim != 2 || a->dims[0] != a->dims[1] || a->dims[0] < 1 || a->dims[0] > INT32_MAX)
    mpb_lay_argerror(L, 1, FN, "an n x n traffic matrix expected, got a %s array of %d "
                     "dimensions (%I x ...)", mpb_dtype_name(a->dtype), a->ndim,
                     (LUAI_UACINT)a->dims[0]);
  int n = (int)a->dims[0];
  e->n = n;
  for (int j = 0; j < n; j++)
    for (int i = 0; i < n; i++) {
      double v = mpb_array_getd(a, (int64_t)i * a->strides[0] + (int64_t)j * a->strides[1]);
      if (!(v >= 0) || !isfinite(v))
        mpb_lay_argerror(L, 1, FN, "traffic[%d][%d] must be a finite number 0 or more, got %f",
                         i + 1, j + 1, v);
      if (v > 0 && i != j) add_edge(L, e, i, j, v);
    }
}

/* A list of n lists of n numbers. */
static void table_edges(lua_State *L, edges *e) {
  lua_Integer n = luaL_len(L, 1);
  if (n < 1 || n > INT32_MAX) mpb_lay_argerror(L, 1, FN, "an n x n traffic matrix expected, "
                                               "got an empty table");
  e->n = (int)n;
  for (int i = 0; i < e->n; i++) {
    if (lua_geti(L, 1, i + 1) != LUA_TTABLE || luaL_len(L, -1) != n)
      mpb_lay_argerror(L, 1, FN, "row %d of the traffic matrix must be a list of %d numbers",
                       i + 1, e->n);
    for (int j = 0; j < e->n; j++) {
      lua_geti(L, -1, j + 1);
      char what[48];
      snprintf(what, sizeof what, "traffic[%d][%d]", i + 1, j + 1);
      double v = bytes_at(L, -1, 1, what);
      lua_pop(L, 1);
      if (v > 0 && i != j) add_edge(L, e, i, j, v);
    }
    lua_pop(L, 1);
  }
}

/* A placement of a grid's slots to try (mpb_reorder_traffic.hint): when
** every node has the same number c of ranks, the blocks of a process grid
** of n/c blocks over t (mp.dims's choice among those dividing the extents
** evenly), block k on the k-th node in label order. NULL if none. */
static int *grid_hint(lua_State *L, const mpb_cart *t, const machine *m) {
  int n = m->n, K = 0, c = 0;
  int *lab = ints(L, n); /* the labels, sorted */
  memcpy(lab, m->node, sizeof(int) * (size_t)n);
  for (int i = 1; i < n; i++) /* insertion sort: n is a few thousand at most */
    for (int j = i; j > 0 && lab[j - 1] > lab[j]; j--) {
      int x = lab[j];
      lab[j] = lab[j - 1], lab[j - 1] = x;
    }
  for (int i = 0, run = 0; i < n; i++) {
    run++;
    if (i + 1 == n || lab[i + 1] != lab[i]) {
      if (c && run != c) return NULL;
      c = run, run = 0, K++;
    }
  }
  if (K < 2 || n % K) return NULL;
  int64_t ext[MPB_LAYOUT_MAXDIM];
  int b[MPB_LAYOUT_MAXDIM] = {0};
  for (int a = 0; a < t->ndim; a++) ext[a] = t->dims[a];
  if (mpb_grid_factor_even(K, t->ndim, ext, b) < 0) return NULL;
  int *hint = ints(L, n);
  for (int r = 0; r < n; r++) {
    int q = r, blk = 0, mul = 1;
    for (int a = 0; a < t->ndim; a++) {
      int x = q % t->dims[a];
      q /= t->dims[a];
      blk += x / (t->dims[a] / b[a]) * mul;
      mul *= b[a];
    }
    hint[r] = blk;
  }
  return hint;
}

/* --------------------------------------------------------------- result */
static void setnum(lua_State *L, const char *k, double v) {
  if (v == floor(v) && fabs(v) < 9.0e15) lua_pushinteger(L, (lua_Integer)v);
  else lua_pushnumber(L, v);
  lua_setfield(L, -2, k);
}

static void push_cost(lua_State *L, const mpb_reorder_cost *c) {
  lua_createtable(L, 0, 3);
  setnum(L, "cross_node", c->cross_node);
  setnum(L, "cross_numa", c->cross_numa);
  setnum(L, "total", c->total);
}

static void add_row(lua_State *L, luaL_Buffer *b, const char *what, double x, double y) {
  char line[128];
  snprintf(line, sizeof line, "\n  %-28s %14.15g %14.15g", what, x, y);
  luaL_addstring(b, line);
}

static void report(lua_State *L, const machine *m, const char *traffic, int changed,
                   const mpb_reorder_cost *cb, const mpb_reorder_cost *ca, const int *proc,
                   int moved) {
  push_machine_text(L, m);
  int text = lua_gettop(L);
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  luaL_addstring(&b, "mp.reorder: ");
  luaL_addstring(&b, traffic);
  luaL_addstring(&b, " onto ");
  lua_pushvalue(L, text);
  luaL_addvalue(&b);
  char line[128];
  snprintf(line, sizeof line, "\n  %-28s %14s %14s", "metric (bytes)", "before", "after");
  luaL_addstring(&b, line);
  add_row(L, &b, "crossing nodes", cb->cross_node, ca->cross_node);
  add_row(L, &b, "crossing NUMA domains", cb->cross_numa, ca->cross_numa);
  add_row(L, &b, "in all", cb->total, ca->total);
  if (!changed) {
    luaL_addstring(&b, "\n  identity kept: no mapping found is better");
  } else {
    lua_pushfstring(L, "\n  %d of %d ranks move; old rank of each new rank:", moved, m->n);
    luaL_addvalue(&b);
    for (int k = 0; k < m->n; k++) {
      if (k == 32 && m->n > 40) {
        luaL_addstring(&b, " ... (r.ranks)");
        break;
      }
      lua_pushfstring(L, " %d", proc[k]);
      luaL_addvalue(&b);
    }
  }
  luaL_pushresult(&b);
  lua_remove(L, text);
}

/* mp.reorder(traffic [, opts]) */
static int l_reorder(lua_State *L) {
  mpb_state *st = mpb_get(L);
  lua_settop(L, 2);
  int opts = 0;
  if (lua_istable(L, 2)) opts = 2;
  else if (!lua_isnil(L, 2))
    mpb_lay_argerror(L, 2, FN, "options table expected, got %s", luaL_typename(L, 2));
  lua_pushnil(L); /* 3: the edge arrays */
  edges e;
  memset(&e, 0, sizeof e);
  e.slot = 3;
  char what[64];
  const mpb_cart *t = mpb_cart_test(L, 1);
  const mpb_graph *g = t ? NULL : mpb_graph_test(L, 1);
  const mpb_array *a = t || g ? NULL : mpb_array_testv(L, 1);
  if (g) {
    graph_edges(L, g, opts, &e);
    snprintf(what, sizeof what, "graph of %d ranks, %lld edges", g->nranks, (long long)g->nout);
  } else if (t) {
    cart_edges(L, t, opts, &e);
    lua_pushvalue(L, 1);
    snprintf(what, sizeof what, "%s", luaL_tolstring(L, -1, NULL));
    lua_pop(L, 2);
  } else if (a) {
    array_edges(L, a, &e);
    snprintf(what, sizeof what, "traffic matrix %dx%d", e.n, e.n);
  } else if (lua_istable(L, 1)) {
    table_edges(L, &e);
    snprintf(what, sizeof what, "traffic matrix %dx%d", e.n, e.n);
  } else {
    mpb_lay_argerror(L, 1, FN, "traffic expected (an mp.Cart, an mp.Graph, an n x n mp.Array "
                     "or a list of lists), got %s", luaL_typename(L, 1));
  }
  if (opts && !t && !g && lua_getfield(L, opts, "bytes") != LUA_TNIL)
    mpb_lay_argerror(L, 2, FN, "bytes is for a topology; a matrix holds its bytes");
  lua_settop(L, 3);
  /* the machine: opts.nodes / opts.numa, opts.machine, or mp.machine(opts.comm) */
  machine m;
  memset(&m, 0, sizeof m);
  int model = 0;
  if (opts) {
    if (lua_getfield(L, opts, "machine") != LUA_TNIL) {
      if (!lua_istable(L, -1))
        mpb_lay_argerror(L, 2, FN, "machine: mp.machine()'s table expected, got %s",
                         luaL_typename(L, -1));
      model = lua_gettop(L);
    } else if (lua_getfield(L, opts, "nodes") != LUA_TNIL) {
      model = opts;
    } else if (lua_getfield(L, opts, "numa") != LUA_TNIL) {
      mpb_lay_argerror(L, 2, FN, "numa goes with nodes (a machine model: both lists)");
    }
  }
  if (model) {
    m.n = e.n;
    m.node = ints(L, e.n);
    m.numa = ints(L, e.n);
    lua_getfield(L, model, "nodes");
    int_list(L, -1, e.n, m.node, 2, model == opts ? "nodes" : "machine.nodes", 0);
    lua_pop(L, 1);
    dense_labels(L, m.node, e.n);
    if (lua_getfield(L, model, "numa") != LUA_TNIL)
      int_list(L, -1, e.n, m.numa, 2, model == opts ? "numa" : "machine.numa", -1);
    else
      memset(m.numa, 0, sizeof(int) * (size_t)e.n);
    lua_pop(L, 1);
  } else {
    const mpb_comm *c = NULL;
    if (opts && lua_getfield(L, opts, "comm") != LUA_TNIL)
      c = mpb_comm_check(L, st, lua_gettop(L), "reorder");
    machine_of(L, st, c, &m);
    if (m.n != e.n)
      mpb_lay_argerror(L, 1, FN, "the traffic has %d slots but the machine %d ranks (give "
                       "opts.nodes, or opts.comm of %d ranks)", e.n, m.n, e.n);
  }
  int *proc = ints(L, e.n);
  mpb_reorder_traffic tr = {e.n, e.ne, e.from, e.to, e.bytes, t ? grid_hint(L, t, &m) : NULL};
  mpb_reorder_cost cb, ca;
  int rc = mpb_reorder_map(&tr, m.node, m.numa, proc, &cb, &ca);
  if (rc == -1) mpb_lay_argerror(L, 0, FN, "out of memory mapping %d slots", e.n);
  if (rc < 0) mpb_lay_argerror(L, 1, FN, "bad traffic");
  int *newr = ints(L, e.n), moved = 0;
  for (int k = 0; k < e.n; k++) {
    newr[proc[k]] = k;
    moved += proc[k] != k;
  }
  lua_createtable(L, 0, 9);
  int res = lua_gettop(L);
  push_list(L, e.n, proc);
  lua_setfield(L, res, "ranks");
  push_list(L, e.n, newr);
  lua_setfield(L, res, "new_rank");
  push_cost(L, &cb);
  lua_setfield(L, res, "before");
  push_cost(L, &ca);
  lua_setfield(L, res, "after");
  lua_pushboolean(L, rc == 1);
  lua_setfield(L, res, "changed");
  lua_pushinteger(L, moved);
  lua_setfield(L, res, "moved");
  lua_pushstring(L, "bytes crossing nodes, then bytes crossing NUMA domains");
  lua_setfield(L, res, "metric");
  report(L, &m, what, rc == 1, &cb, &ca, proc, moved);
  lua_setfield(L, res, "report");
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_setmetatable(L, res);
  return 1;
}

/* ------------------------------------------------------------- applying */
/* comm:reorder(r): r is mp.reorder's result (or its ranks list): new rank k
** is comm's rank r.ranks[k+1]. Collective: comm:split(0, new rank). */
static int c_reorder(lua_State *L) {
  const char *fn = "Comm.reorder";
  mpb_state *st = mpb_get(L);
  mpb_comm *c = mpb_comm_check(L, st, 1, fn);
  if (!lua_istable(L, 2))
    mpb_lay_argerror(L, 1, fn, "mp.reorder's result or a list of ranks expected, got %s",
                     luaL_typename(L, 2));
  int list = 2;
  if (lua_getfield(L, 2, "ranks") == LUA_TTABLE) list = lua_gettop(L);
  lua_Integer n = luaL_len(L, list);
  if (n != c->size)
    mpb_lay_argerror(L, 1, fn, "the mapping is for %I ranks, the communicator has %d",
                     (LUAI_UACINT)n, c->size);
  char *seen = lua_newuserdatauv(L, (size_t)c->size, 0);
  memset(seen, 0, (size_t)c->size);
  int key = -1;
  for (int k = 0; k < c->size; k++) {
    int ok;
    lua_geti(L, list, k + 1);
    lua_Integer r = lua_tointegerx(L, -1, &ok);
    if (!ok || r < 0 || r >= c->size || seen[r]++)
      mpb_lay_argerror(L, 1, fn, "ranks[%d] (%s) is not a rank of 0..%d, or comes twice: the "
                       "mapping must be a permutation", k + 1, luaL_tolstring(L, -1, NULL),
                       c->size - 1);
    if (r == c->rank) key = k;
    lua_pop(L, 1);
  }
  lua_getfield(L, LUA_REGISTRYINDEX, MPB_COMM_METHODS);
  lua_getfield(L, -1, "split");
  lua_pushvalue(L, 1);
  lua_pushinteger(L, 0);
  lua_pushinteger(L, key);
  lua_call(L, 3, 1);
  return 1;
}

void mpb_open_reorder(lua_State *L) {
  int mpt = lua_gettop(L);
  if (luaL_loadbuffer(L, mts_lua, sizeof mts_lua - 1, "=mp.reorder") != LUA_OK)
    lua_error(L);
  lua_call(L, 0, 2); /* reorder_mt, machine_mt */
  lua_pushcclosure(L, l_machine, 1);
  lua_setfield(L, mpt, "machine");
  lua_pushcclosure(L, l_reorder, 1);
  lua_setfield(L, mpt, "reorder");
  lua_getfield(L, LUA_REGISTRYINDEX, MPB_COMM_METHODS);
  lua_pushcfunction(L, c_reorder);
  lua_setfield(L, -2, "reorder");
  lua_pop(L, 1);
}
