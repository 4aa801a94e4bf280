/* SPDX-License-Identifier: MIT */
/*
** arraybench: an mplua host (no MPI) with a `bench` module of plain-C array
** kernels, so that a benchmark script times array math and the C loop it
** replaces in one process, interleaved.
**   build/arraybench scripts/bench/jacobi.lua [n] [rounds]
** The kernels work on the elements of mp.Array values (contiguous f64).
*/
#include <stdio.h>
#include <time.h>

#include "lauxlib.h"
#include "array/array.h"
#include "bench_host.h"
#include "mplua.h"

/* bench.now(): a monotonic clock in seconds (os.clock is CPU time). */
static int now(lua_State *L) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  lua_pushnumber(L, (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec);
  return 1;
}

static const double *f64_2d(lua_State *L, int arg, int64_t *n, int64_t *m) {
  mpb_array *a = mpb_array_check(L, arg);
  luaL_argcheck(L, a->dtype == MPB_F64 && a->ndim == 2, arg, "2-D f64 array expected");
  *n = a->dims[0];
  *m = a->dims[1];
  return a->data;
}

/* bench.jacobi(u, v, steps): `steps` times, the interior of v = the mean of
** the four neighbours in u (the 5-point Jacobi step, column-major, as a C
** programmer writes it). Returns seconds per step. */
static int jacobi(lua_State *L) {
  int64_t n, m, n2, m2;
  const double *u = f64_2d(L, 1, &n, &m);
  double *v = (double *)f64_2d(L, 2, &n2, &m2);
  lua_Integer steps = luaL_checkinteger(L, 3);
  luaL_argcheck(L, n == n2 && m == m2, 2, "shape differs from u's");
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (lua_Integer s = 0; s < steps; s++)
    for (int64_t j = 1; j < m - 1; j++)
      for (int64_t i = 1; i < n - 1; i++)
        v[i + j * n] = 0.25 * (u[i - 1 + j * n] + u[i + 1 + j * n] + u[i + (j - 1) * n] +
                               u[i + (j + 1) * n]);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  double dt = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
  lua_pushnumber(L, dt / (double)steps);
  return 1;
}

static int open_bench(lua_State *L) {
  static const luaL_Reg funcs[] = {{"now", now}, {"jacobi", jacobi}, {NULL, NULL}};
  luaL_newlib(L, funcs);
  return 1;
}

int main(int argc, char **argv) { return bench_host_main(argc, argv, 0, open_bench); }
