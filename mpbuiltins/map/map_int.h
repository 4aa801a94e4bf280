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

/* The parameters of a block of jobs lo..hi: job j gets theta + toff[j - lo]
** (toff[j - lo + 1] - toff[j - lo] numbers) and phi (np numbers; passed to f
** only when has_phi). In a differentiated call, pmask/tmask (laid out like
** phi/theta) say which inputs are vars on rank 0: the Jacobian has a column
** for each of those only. */
typedef struct mpb_map_in {
  int grad, has_phi;
  const double *phi;
  size_t np;
  const double *theta;
  const int64_t *toff;
  const uint8_t *pmask, *tmask;
} mpb_map_in;

/* Evaluate jobs lo..hi of the mapper whose entry table is at `entry` and push
** an f64 array of their records (map_eval.c):
**   m, y[1..m]                  plain call
**   m, y[1..m], J[m x nv] rows  differentiated (nv: var inputs of the job)
** A job's error names the job and keeps its traceback; the abort error
** passes through. */
void mpb_map_eval(lua_State *L, int entry, int64_t lo, int64_t hi, const mpb_map_in *a);

/* A call in progress, on rank 0's C stack (its buffers are userdata on the
** Lua stack): the parameters' values and vars (AD_NOVAR: a constant). */
typedef struct mpb_map_call {
  int64_t n;          /* jobs */
  int grad;
  size_t np;
  const double *pv;
  const ad_idx *pvar;
  double *tv;
  ad_idx *tvar;
  uint8_t *tmask;     /* tvar[i] != AD_NOVAR */
  int64_t *toff;      /* job j's theta: tv[toff[j-1] .. toff[j]-1] */
  size_t maxnt;
} mpb_map_call;

/* Rank 0, after a call's task: the records of each rank r (f64 arrays at
** res[r]) become the outputs (a table of n vectors), pushed. Output lengths
** are checked against and recorded in the table at nout. */
void mpb_map_assemble(lua_State *L, const mpb_map_call *c, int res, int nout);

/* map.c helpers: a scratch buffer userdata (pushed); a new 1-d array of n
** elements copied from x (unless NULL), pushed; the array at idx, checked
** (a malformed message from rank r raises). */
void *mpb_map_buf(lua_State *L, size_t bytes);
struct mpb_array *mpb_map_vec(lua_State *L, int dtype, const void *x, int64_t n);
struct mpb_array *mpb_map_array(lua_State *L, int idx, int dtype, int r);

/* map_args.c. A parameter vector's length (raises naming what[j] if the
** value is not one) and its values and vars (AD_NOVAR: a constant); returns
** how many are vars. */
int64_t mpb_map_param_len(lua_State *L, int idx, const char *what, int64_t j);
size_t mpb_map_param_read(lua_State *L, int idx, double *v, ad_idx *var, const char *what,
                          int64_t j);
/* Check that the data at idx can be shipped (errors name argument arg);
** with snapshot, push a deep copy of it. */
void mpb_map_check_data(lua_State *L, int idx, int arg, int snapshot);
/* Are the values at a and b deeply equal (functions in them are not compared)? */
int mpb_map_same(lua_State *L, int a, int b);

/* map.c: mp.mapper, mp.map_rect, mp.map. */
void mpb_open_map(lua_State *L);

#endif
