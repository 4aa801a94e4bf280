/* SPDX-License-Identifier: MIT */
/*
** fftbench: an mplua host with a `bench` module holding the C baseline of the
** FFT benchmark (scripts/bench/fft.lua): a 3-D complex FFT of N^3 c128 on a
** p1 x p2 pencil grid written directly with FFTW (guru plans, the effort
** given) and MPI_Alltoall transposes, doing what mp.fft does for the layout
** c128[x=N, y=N@1, z=N@2]: the same stages, the same transposes, the same
** places (input -> B0, transposes between the buffers, the middle stage in
** place, the last into the output), so that the ratio measures mplua.
**   mpiexec -n P build/fftbench scripts/bench/fft.lua [rounds] [N]
** Built only with FFTW (a benchmark links it; mplua's library never does).
*/
#include <fftw3.h>
#include <math.h>
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "lauxlib.h"
#include "bench_host.h"
#include "mplua.h"

/* The global value at 0-based (x, y, z): what fft.lua fills too. */
static void value(int x, int y, int z, double *re, double *im) {
  *re = (double)((x + 3 * y + 7 * z) % 17) / 17.0;
  *im = (double)((x * y + z) % 13) / 13.0;
}

/* Copy a 3-D box of extents e: from s (strides ss, in elements) to d (ds);
** dimension 0 has stride 1 on both sides, so lines go by memcpy. */
static void copy3(fftw_complex *d, const int64_t *ds, const fftw_complex *s, const int64_t *ss,
                  const int *e) {
  for (int k = 0; k < e[2]; k++)
    for (int j = 0; j < e[1]; j++)
      memcpy(d + j * ds[1] + k * ds[2], s + j * ss[1] + k * ss[2], (size_t)e[0] * sizeof *d);
}

static void strides(const int *e, int64_t *st) {
  st[0] = 1, st[1] = e[0], st[2] = (int64_t)e[0] * e[1];
}

/* Move the split of dimension a (local extent e[a] here) to dimension b
** (whole here) over the p ranks of comm: pack each destination's range of
** b, MPI_Alltoall, unpack each source's range of a. e becomes the new
** block's extents. */
static void xpose(const fftw_complex *in, fftw_complex *out, int *e, int a, int b, int p,
                  MPI_Comm comm, fftw_complex *sb, fftw_complex *rb) {
  int ce[3] = {e[0], e[1], e[2]};
  ce[b] = e[b] / p;
  size_t chunk = (size_t)ce[0] * ce[1] * ce[2];
  int64_t is[3], cs[3];
  strides(e, is);
  strides(ce, cs);
  for (int q = 0; q < p; q++)
    copy3(sb + q * chunk, cs, in + (int64_t)q * ce[b] * is[b], is, ce);
  MPI_Alltoall(sb, (int)chunk, MPI_C_DOUBLE_COMPLEX, rb, (int)chunk, MPI_C_DOUBLE_COMPLEX, comm);
  int eo[3] = {e[0], e[1], e[2]};
  eo[b] = ce[b];
  eo[a] = e[a] * p;
  int64_t os[3];
  strides(eo, os);
  int pe[3] = {eo[0], eo[1], eo[2]}; /* a source's part */
  pe[a] = e[a];
  int64_t ps[3];
  strides(pe, ps);
  for (int s = 0; s < p; s++) copy3(out + (int64_t)s * e[a] * os[a], os, rb + s * chunk, ps, pe);
  memcpy(e, eo, sizeof eo);
}

/* The plan of the transform along the dimensions in mask (bit k: dim k) of a
** block of extents e, from in to out (the same: in place). */
static fftw_plan stage(const int *e, int mask, fftw_complex *in, fftw_complex *out, unsigned fl) {
  fftw_iodim64 d[3], h[3];
  int64_t st[3];
  strides(e, st);
  int nd = 0, nh = 0;
  for (int k = 0; k < 3; k++) {
    fftw_iodim64 x = {e[k], st[k], st[k]};
    if (mask & 1 << k) d[nd++] = x;
    else h[nh++] = x;
  }
  return fftw_plan_guru64_dft(nd, d, nh, h, in, out, FFTW_FORWARD, fl);
}

/* bench.fft3d(iters, n, p1, p2, effort): seconds per forward transform
** (rank 0's), the output's 2-norm and its first element's real part over the
** ranks (checks against mp's). */
static int fft3d(lua_State *L) {
  int iters = (int)luaL_checkinteger(L, 1), n = (int)luaL_checkinteger(L, 2);
  int p1 = (int)luaL_checkinteger(L, 3), p2 = (int)luaL_checkinteger(L, 4);
  unsigned fl = strcmp(luaL_optstring(L, 5, "estimate"), "measure") == 0 ? FFTW_MEASURE : FFTW_ESTIMATE;
  MPI_Comm c = mplua_comm(L), row, col;
  int r;
  MPI_Comm_rank(c, &r);
  int c1 = r % p1, c2 = r / p1;
  if (n % p1 || n % p2) return luaL_error(L, "bench.fft3d: the grid does not divide %d", n);
  MPI_Comm_split(c, c2, c1, &row); /* the ranks of one c2: axis 1 */
  MPI_Comm_split(c, c1, c2, &col); /* of one c1: axis 2 */
  int e[3] = {n, n / p1, n / p2};
  size_t len = (size_t)e[0] * e[1] * e[2];
  fftw_complex *in = fftw_malloc(len * sizeof *in), *out = fftw_malloc(len * sizeof *out);
  fftw_complex *b0 = fftw_malloc(len * sizeof *in), *b1 = fftw_malloc(len * sizeof *in);
  fftw_complex *sb = fftw_malloc(len * sizeof *in), *rb = fftw_malloc(len * sizeof *in);
  /* the stages, as mp.fft chains them for c128[x=n, y=n@1, z=n@2] over p1 x p2 */
  int ea[3] = {e[0], e[1], e[2]}, eb[3], ec[3];
  fftw_plan pa, pb = NULL, pc = NULL;
  int kind = p1 == 1 && p2 == 1 ? 0 : p2 == 1 ? 1 : p1 == 1 ? 2 : 3;
  switch (kind) {
    case 0: pa = stage(ea, 7, b1, out, fl); break;      /* one 3-D transform */
    case 1: pa = stage(ea, 5, b1, b0, fl); break;       /* x and z whole, then y */
    case 2: pa = stage(ea, 3, b1, b0, fl); break;       /* x and y whole, then z */
    default: pa = stage(ea, 1, b1, b0, fl); break;      /* x, then y, then z */
  }
  memcpy(eb, ea, sizeof ea);
  if (kind == 1) { eb[1] = n, eb[2] = n / p1; pb = stage(eb, 2, b1, out, fl); }
  if (kind == 2) { eb[1] = n / p2, eb[2] = n; pb = stage(eb, 4, b1, out, fl); }
  if (kind == 3) {
    eb[0] = n / p1, eb[1] = n;
    pb = stage(eb, 2, b1, b1, fl);
    memcpy(ec, eb, sizeof eb);
    ec[1] = n / p2, ec[2] = n;
    pc = stage(ec, 4, b0, out, fl);
  }
  for (int z = 0; z < e[2]; z++)
    for (int y = 0; y < e[1]; y++)
      for (int x = 0; x < e[0]; x++) {
        size_t i = (size_t)x + (size_t)e[0] * ((size_t)y + (size_t)e[1] * (size_t)z);
        value(x, c1 * e[1] + y, c2 * e[2] + z, &in[i][0], &in[i][1]);
      }
  double t = 0;
  for (int it = -1; it < iters; it++) {
    if (it == 0) {
      MPI_Barrier(c);
      t = MPI_Wtime();
    }
    int ex[3] = {e[0], e[1], e[2]};
    fftw_execute_dft(pa, in, kind == 0 ? out : b0);
    if (kind == 1) { xpose(b0, b1, ex, 1, 2, p1, c, sb, rb); fftw_execute_dft(pb, b1, out); }
    if (kind == 2) { xpose(b0, b1, ex, 2, 1, p2, c, sb, rb); fftw_execute_dft(pb, b1, out); }
    if (kind == 3) {
      xpose(b0, b1, ex, 1, 0, p1, row, sb, rb);
      fftw_execute_dft(pb, b1, b1);
      xpose(b1, b0, ex, 2, 1, p2, col, sb, rb);
      fftw_execute_dft(pc, b0, out);
    }
  }
  t = MPI_Wtime() - t;
  double sum[2] = {0, r == 0 ? out[0][0] : 0}, all[2];
  for (size_t i = 0; i < len; i++) sum[0] += out[i][0] * out[i][0] + out[i][1] * out[i][1];
  MPI_Allreduce(sum, all, 2, MPI_DOUBLE, MPI_SUM, c);
  all[0] = sqrt(all[0]);
  fftw_destroy_plan(pa);
  if (pb) fftw_destroy_plan(pb);
  if (pc) fftw_destroy_plan(pc);
  fftw_free(in), fftw_free(out), fftw_free(b0), fftw_free(b1), fftw_free(sb), fftw_free(rb);
  MPI_Comm_free(&row);
  MPI_Comm_free(&col);
  lua_pushnumber(L, t / iters);
  lua_pushnumber(L, all[0]);
  lua_pushnumber(L, all[1]);
  return 3;
}

static int open_bench(lua_State *L) {
  static const luaL_Reg funcs[] = {{"fft3d", fft3d}, {NULL, NULL}};
  luaL_newlib(L, funcs);
  return 1;
}

int main(int argc, char **argv) { return bench_host_main(argc, argv, 1, open_bench); }
