/* SPDX-License-Identifier: MIT */
/*
** A host that runs mplua on a sub-communicator: the even ranks of the world
** open it on their communicator (every opt-out taken) and run tasks, a fault
** and its recovery; meanwhile the odd ranks do their own MPI (collectives
** and a ring on their communicator) undisturbed. Afterwards the whole world
** meets and reduces once more. Prints "ok ..." on world rank 0.
*/
#include <stdio.h>
#include <stdlib.h>

#include <mpi.h>
#include "lauxlib.h"
#include "mplua.h"
#include "host_check.h"

static int l_wrank(lua_State *L) {
  lua_pushinteger(L, rank);
  return 1;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int wsize;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &wsize);
  MPI_Comm sub;
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &sub);
  int srank, ssize;
  MPI_Comm_rank(sub, &srank);
  MPI_Comm_size(sub, &ssize);
  if (rank % 2 == 0) {
    mplua_config c;
    mplua_config_init(&c);
    c.comm = sub;
    c.out = MPLUA_OUT_ALL;
    lua_State *L = mplua_open_config(&argc, &argv, &c);
    if (!L) fail("mplua_open_config");
    if (mplua_size(L) != ssize || mplua_rank(L) != srank) fail("mp's size and rank are the sub-communicator's");
    lua_register(L, "world_rank", l_wrank);
    if (mplua_rank(L) == 0) {
      char code[200];
      /* the even world ranks 0, 2, 4, ...: their sum */
      snprintf(code, sizeof code, "return mp.exec(function() return mp.allreduce(world_rank(), 'sum') "
               "end) == %d", ssize * (ssize - 1));
      run(L, code);
      for (int i = 0; i < 20; i++)
        run(L, "return mp.exec(function() mp.send((mp.rank + 1) % mp.size, mp.rank) "
               "return mp.recv((mp.rank - 1) % mp.size) == (mp.rank - 1) % mp.size end)");
      run(L, "return not pcall(mp.exec, function() error('planned') end)");
      run(L, "return mp.exec(function() return mp.allreduce(1, 'sum') end) == mp.size");
      mplua_close(L, 0);
      printf("ok mplua on the %d even ranks: tasks, messages, a fault and its recovery\n", ssize);
    } else {
      mplua_close(L, mplua_worker(L));
    }
  } else { /* the odd ranks' own work, on their own communicator */
    for (int i = 0; i < 200; i++) {
      int v = srank + i, s = 0, got = -1;
      MPI_Allreduce(&v, &s, 1, MPI_INT, MPI_SUM, sub);
      if (s != ssize * (ssize - 1) / 2 + ssize * i) fail("odd ranks' allreduce");
      MPI_Sendrecv(&v, 1, MPI_INT, (srank + 1) % ssize, 7, &got, 1, MPI_INT,
                   (srank + ssize - 1) % ssize, 7, sub, MPI_STATUS_IGNORE);
      if (got != (srank + ssize - 1) % ssize + i) fail("odd ranks' ring");
    }
  }
  int one = 1, all = 0;
  MPI_Allreduce(&one, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (all != wsize) fail("the world after mplua");
  if (rank == 1) printf("ok the odd ranks' own MPI work, undisturbed\n");
  MPI_Comm_free(&sub);
  MPI_Finalize();
  return 0;
}
