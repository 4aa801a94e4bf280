/* SPDX-License-Identifier: MIT */
/*
** heat_host: a 2-D heat solver in plain C + MPI that embeds mplua, lends it
** its temperature field, and steps mplua_serve once per iteration, so that
** rank 0's stdin steers the running code (see the README's session):
**
**   mpicc heat_host.c $(pkg-config --cflags --libs mplua) -o heat_host
**   mpiexec -n 4 ./heat_host [nx ny [steps [alpha]]]
**
** With steps, it stops after that many iterations (stdin may end before:
** then it goes on without the prompt) and prints the field's max, middle
** cell and sum as scripts/examples/heat_lua.lua does (the same solver stepped
** from Lua, same numbers). The grid (nx columns, ny rows; the top edge held at 100, the others at 0)
** is split by rows over the ranks. Each rank lends its rows to Lua as the
** global `T`, an nx x nloc mp.Array viewing the solver's own memory (no
** copy). The parameters live in the Lua table `heat` on every rank (alpha,
** paused, stop; step is the solver's count) and the solver reads them every
** iteration; the helpers below change them on every rank at once through a
** task, so all ranks agree. Typed at rank 0's prompt:
**   fmax()  fsum()  row(j)          the field's max, sum, global row j
**   set("alpha", 0.2)  set("paused", true)  set("stop", true)
*/
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>
#include "mplua.h"
#include "lauxlib.h"

static const char prelude[] =
    "heat = {alpha = 0.1, paused = false, stop = false, step = 0}\n"
    "function set(k, v) mp.exec(function(k, v) heat[k] = v end, k, v) end\n"
    "function fmax() return mp.exec(function() return mp.allreduce(T:max(), 'max') end) end\n"
    "function fsum() return mp.exec(function() return mp.allreduce(T:sum(), 'sum') end) end\n"
    "function row(j)\n"
    "  return mp.exec(function(j)\n"
    "    local r, v = j - heat.row0\n"
    "    if r >= 1 and r <= heat.nloc then\n"
    "      local t = {}\n"
    "      for i = 1, heat.nx do t[i] = string.format('%.2f', T[i + (r - 1) * heat.nx]) end\n"
    "      v = table.concat(t, ' ')\n"
    "    end\n"
    "    local owner = mp.allreduce(v and mp.rank or 0, 'max')\n"
    "    if owner == 0 then return v end\n"
    "    if mp.rank == owner then mp.send(0, v) end\n"
    "    if mp.rank == 0 then return mp.recv(owner) end\n"
    "  end, j)\n"
    "end\n";

static double get_num(lua_State *L, const char *k) {
  lua_getglobal(L, "heat");
  lua_getfield(L, -1, k);
  double v = lua_tonumber(L, -1);
  lua_pop(L, 2);
  return v;
}

static int get_bool(lua_State *L, const char *k) {
  lua_getglobal(L, "heat");
  lua_getfield(L, -1, k);
  int v = lua_toboolean(L, -1);
  lua_pop(L, 2);
  return v;
}

static void set_int(lua_State *L, const char *k, long long v) {
  lua_getglobal(L, "heat");
  lua_pushinteger(L, v);
  lua_setfield(L, -2, k);
  lua_pop(L, 1);
}

/* The max, the middle cell (global row ny/2, column nx/2) and the sum of the
** ranks' sums in rank order: heat_lua.lua's line. */
static void print_stats(const double *T, int nx, int ny, int nloc, int row0, int rank, int size,
                        long long step) {
  double mx = 0, sum = 0, v = -1, all[2];
  for (size_t c = (size_t)nx; c < (size_t)nx * (size_t)(nloc + 1); c++) {
    if (T[c] > mx) mx = T[c];
    sum += T[c];
  }
  int r = ny / 2 - row0;
  if (r >= 0 && r < nloc) v = T[(size_t)(r + 1) * nx + nx / 2];
  double mine[2] = {mx, v};
  MPI_Allreduce(mine, all, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  double *sums = malloc(sizeof *sums * (size_t)size);
  if (!sums) MPI_Abort(MPI_COMM_WORLD, 1);
  MPI_Gather(&sum, 1, MPI_DOUBLE, sums, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    double s = 0;
    for (int i = 0; i < size; i++) s += sums[i];
    printf("heat %dx%d after %lld steps: max %.17g mid %.17g sum %.17g\n", nx, ny, step, all[0],
           all[1], s);
  }
  free(sums);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int nx = argc > 1 ? atoi(argv[1]) : 64, ny = argc > 2 ? atoi(argv[2]) : 64;
  long long steps = argc > 3 ? atoll(argv[3]) : -1; /* -1: until stopped */
  if (nx < 3 || ny < size) {
    if (rank == 0) fprintf(stderr, "heat_host: need nx >= 3 and ny >= ranks\n");
    MPI_Finalize();
    return 2;
  }
  int nloc = ny / size + (rank < ny % size), row0 = rank * (ny / size) + (rank < ny % size ? rank : ny % size);
  /* rows 0 and nloc+1 are ghosts (the neighbours' edge rows, or the boundary) */
  double *T = calloc((size_t)nx * (size_t)(nloc + 2), sizeof *T);
  double *Tn = calloc((size_t)nx * (size_t)(nloc + 2), sizeof *Tn);
  if (!T || !Tn) MPI_Abort(MPI_COMM_WORLD, 1);
  if (rank == 0)
    for (int i = 0; i < nx; i++) T[i] = 100.0;
  int up = rank > 0 ? rank - 1 : MPI_PROC_NULL, down = rank < size - 1 ? rank + 1 : MPI_PROC_NULL;

  /* mplua on the solver's communicator, changing nothing else in the
  ** process but stdout's line buffering (ranks share mpiexec's pipe) */
  mplua_config c;
  mplua_config_init(&c);
  c.comm = MPI_COMM_WORLD;
  c.out = MPLUA_OUT_ALL & ~MPLUA_OUT_STDIO;
  lua_State *L = mplua_open_config(&argc, &argv, &c);
  if (!L) MPI_Abort(MPI_COMM_WORLD, 1);
  if (luaL_dostring(L, prelude) != LUA_OK) {
    fprintf(stderr, "heat_host: %s\n", lua_tostring(L, -1));
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  if (argc > 4) { /* the starting alpha */
    lua_getglobal(L, "heat");
    lua_pushnumber(L, atof(argv[4]));
    lua_setfield(L, -2, "alpha");
    lua_pop(L, 1);
  }
  set_int(L, "nx", nx), set_int(L, "ny", ny), set_int(L, "nloc", nloc), set_int(L, "row0", row0);
  int64_t dims[2] = {nx, nloc};
  mplua_array(L, "T", T + nx, MPLUA_F64, 2, dims); /* the interior rows, lent */

  long long step = 0;
  int serving = 1;
  for (;;) {
    if (get_bool(L, "stop") || step == steps) break;
    int paused = get_bool(L, "paused");
    if (!paused) {
      double alpha = get_num(L, "alpha");
      MPI_Sendrecv(T + nx, nx, MPI_DOUBLE, up, 0, T + (size_t)nx * (nloc + 1), nx, MPI_DOUBLE,
                   down, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Sendrecv(T + (size_t)nx * nloc, nx, MPI_DOUBLE, down, 1, T, nx, MPI_DOUBLE, up, 1,
                   MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      for (int j = 1; j <= nloc; j++)
        for (int i = 1; i < nx - 1; i++) {
          size_t k = (size_t)j * nx + i;
          Tn[k] = T[k] + alpha * (T[k - 1] + T[k + 1] + T[k - nx] + T[k + nx] - 4 * T[k]);
        }
      for (int j = 1; j <= nloc; j++) memcpy(T + (size_t)j * nx + 1, Tn + (size_t)j * nx + 1,
                                             (size_t)(nx - 2) * sizeof *T);
      set_int(L, "step", ++step);
    }
    /* the prompt: one step; waits a little for input only while paused */
    if (serving && mplua_serve(L, paused ? 0.05 : 0) != 0) {
      if (steps < 0) break;
      serving = 0; /* input ended: a run of fixed length goes on */
    }
  }
  if (steps >= 0) print_stats(T, nx, ny, nloc, row0, rank, size, step);
  if (rank == 0) printf("heat_host: stopped after %lld steps\n", step);
  mplua_close(L, 0);
  free(T), free(Tn);
  MPI_Finalize();
  return 0;
}
