/* SPDX-License-Identifier: MIT */
/* Shared by map.c (handles, calls, rank 0's assembly) and map_eval.c (jobs). */
#ifndef MPB_MAP_INT_H
#define MPB_MAP_INT_H

#include "tasks/tasks.h"
#include "ad_tape.h"

/* Rank r's jobs out of n: the contiguous, balanced block lo..hi (none when
** lo > hi). */
static inline void mpb_map_block(int64_t n, int size, int r, int64_t *lo, int64_t *hi) {
  *lo = n * r / size + 1;
  *hi = n * (r + 1) / size;
}

/* What a call computes for each job (and what its records hold, below). */
enum {
  MPB_MAP_PLAIN = 0, /* values: f gets ad.Consts */
  MPB_MAP_GRAD,      /* values and the Jacobian w.r.t. the inputs that are vars */
  MPB_MAP_HESS,      /* ... and each output's Hessian (inside ad.hessian/ad.hvp) */
  MPB_MAP_JVP        /* values and a directional derivative (m:jvp) */
};

/* The parameters of a block of jobs lo..hi: job j gets theta + toff[j - lo]
** (toff[j - lo + 1] - toff[j - lo] numbers) and phi (np numbers; passed to f
** only when has_phi). In a differentiated call (GRAD, HESS), pmask/tmask
** (laid out like phi/theta) say which inputs are vars on rank 0: the
** derivatives have a column for each of those only. In a JVP call,
** dphi/dtheta (laid out like phi/theta) are the direction. */
typedef struct mpb_map_in {
  int mode, has_phi;
  const double *phi;
  size_t np;
  const double *theta;
  const int64_t *toff;
  const uint8_t *pmask, *tmask;
  const double *dphi, *dtheta;
} mpb_map_in;

/* Evaluate jobs lo..hi of the mapper whose entry table is at `entry` and push
** an f64 array of their records (map_eval.c):
**   m, y[1..m]                               PLAIN
**   m, y[1..m], J[m x nv] rows               GRAD (nv: var inputs of the job)
**   m, y[1..m], J rows, H_1..H_m [nv x nv]   HESS
**   m, y[1..m], dy[1..m]                     JVP
** A job's error names the job and keeps its traceback; the abort error
** passes through. */
void mpb_map_eval(lua_State *L, int entry, int64_t lo, int64_t hi, const mpb_map_in *a);

/* A call in progress, on rank 0's C stack (its buffers are userdata on the
** Lua stack): the parameters' values and vars (AD_NOVAR: a constant). */
typedef struct mpb_map_call {
  int64_t n;          /* jobs */
  int mode;           /* MPB_MAP_* */
  size_t np;
  const double *pv;
  const ad_idx *pvar;
  double *tv;
  ad_idx *tvar;
  uint8_t *tmask;     /* tvar[i] != AD_NOVAR */
  int64_t *toff;      /* job j's theta: tv[toff[j-1] .. toff[j]-1] */
  size_t maxnt;
  const double *dpv;  /* JVP: the direction, laid out like pv and tv */
  double *dtv;
} mpb_map_call;

/* Rank 0, after a call's task: the records of each rank r (f64 arrays at
** res[r]) become the outputs (a table of n vectors), pushed; a JVP call
** pushes the values and the directional derivatives (two tables). Output
** lengths are checked against and recorded in the table at nout. Returns
** the number of results pushed. */
int mpb_map_assemble(lua_State *L, const mpb_map_call *c, int res, int nout);

/* The handle (map.c): a full userdata "mp.Mapper"; its entry {f, xr, xi,
** lo, nout} lives under registry[MPB_MAP_MAPS_KEY][id] on every rank. */
#define MPB_MAPPER_MT "mp.Mapper"
#define MPB_MAP_MAPS_KEY "mp.maps"      /* id -> entry, every rank */
#define MPB_MAP_CALL_KEY "mp.maps.call" /* rank 0: the call in progress */
typedef struct mpb_mapper {
  lua_Integer id;
  int64_t njobs;     /* -1 until the first call of a mapper without data */
  int check;         /* opts.check_data: uservalues 1, 2 hold x_r, x_i, 4, 5 copies */
  int freed;         /* uservalue 3: each job's output length, once known */
} mpb_mapper;

/* map.c: the handle at idx (raises if freed); push registry[key] (a table,
** created if absent); the list of freed ids for the next task (or nil), and
** forgetting those a task took; on every rank, forgetting the listed ids; a
** to-be-closed guard that clears registry[MPB_MAP_CALL_KEY]; sending values
** first..first+n-1 on the map channel to dst. */
mpb_mapper *mpb_map_check(lua_State *L, int idx);
void mpb_map_registry(lua_State *L, const char *key);
void mpb_map_push_dead(lua_State *L);
void mpb_map_forget_dead(lua_State *L, int idx);
void mpb_map_free_dead(lua_State *L, int idx);
void mpb_map_guard(lua_State *L);
void mpb_map_send(lua_State *L, mpb_state *st, int dst, int first, int n);

/* map_call.c: m(...) (__call), m:jvp(...), and mp._map_run, a call's task. */
int mpb_mapper_call(lua_State *L);
int mpb_mapper_jvp(lua_State *L);
int mpb_map_run(lua_State *L);

/* map.c helpers: a scratch buffer userdata (pushed); a new 1-d array of n
** elements copied from x (unless NULL), pushed; the array at idx, checked
** (a malformed message from rank r raises). */
void *mpb_map_buf(lua_State *L, size_t bytes);
struct mpb_array *mpb_map_vec(lua_State *L, int dtype, const void *x, int64_t n);
struct mpb_array *mpb_map_array(lua_State *L, int idx, int dtype, int r);

/* map_args.c. A parameter vector's length (raises naming what[j] if the
** value is not one) and its len values and vars (AD_NOVAR: a constant), len
** being the length measured before the buffers were made (a vector that
** changed since raises); returns how many are vars. */
int64_t mpb_map_param_len(lua_State *L, int idx, const char *what, int64_t j);
size_t mpb_map_param_read(lua_State *L, int idx, double *v, ad_idx *var, size_t len,
                          const char *what, int64_t j);
/* Check that the data at idx can be shipped (errors name argument arg);
** with snapshot, push a deep copy of it. */
void mpb_map_check_data(lua_State *L, int idx, int arg, int snapshot);
/* Are the values at a and b deeply equal (functions in them are not compared)? */
int mpb_map_same(lua_State *L, int a, int b);

/* map.c: mp.mapper, mp.map_rect, mp.map. */
void mpb_open_map(lua_State *L);

#endif
