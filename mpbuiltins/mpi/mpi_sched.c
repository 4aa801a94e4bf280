/* SPDX-License-Identifier: MIT */
/*
** The seeded scheduler (MPLUA_SCHEDULE=SEED): one seed, one interleaving of
** wildcard matches, as ISP and DAMPI explore them.
**
** Whichever message arrives first is a matter of timing; the scheduler takes
** timing out of the choice. A receive from ANY_SOURCE first waits for a
** candidate, then pauses (mpb_wait_paused) until every other member of its
** communicator has a message it could take, or until nothing else can
** happen: rank 0's look around (tasks/where.c) finds every rank blocked,
** paused or finished, nothing in flight, and this pause the first of the
** paused ones in an order the seed draws (its turn), and lets it go. Then a generator seeded by (seed, rank, task) chooses among
** the candidates, one per sender (each sender's oldest: non-overtaking
** holds). The candidates are then those of a state every timing reaches
** (the ranks run deterministically between such choices, a message from a
** named source being the same whenever it comes), so replaying the seed
** replays every choice. A member that keeps running (polling with Iprobe or
** Test, or computing) is waited for at most MPLUA_SCHEDULE_WAIT seconds
** (default 0.5) after the first candidate came; only a choice made then
** depends on timing. mpi.Schedule(seed) sets the seed from a script: the generator
** then counts tasks from the one that set it, so setting the same seed in a
** task replays that task's choices. MPLUA_SCHEDULE_LOG=PREFIX appends each choice to PREFIX.<rank>
** (scripts/explore.lua compares them).
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi/mpi.h"
#include "tasks/tasks.h"

void mpb_mpi_sched_init(mpb_mpi *M) {
  const char *s = getenv("MPLUA_SCHEDULE");
  M->sched = s && *s;
  M->seed = M->sched ? strtoull(s, NULL, 0) : 0;
  const char *w = getenv("MPLUA_SCHEDULE_WAIT");
  M->patience = w && *w ? atof(w) : 0.5;
  const char *log = getenv("MPLUA_SCHEDULE_LOG");
  M->log = NULL;
  if (M->sched && log && *log) {
    size_t n = strlen(log) + 16;
    M->log = malloc(n);
    if (M->log) snprintf(M->log, n, "%s.%d", log, M->st->rank);
  }
}

void mpb_mpi_sched_reseed(mpb_mpi *M) {
  M->rng = M->seed ^ (0x9e3779b97f4a7c15ull * (uint64_t)(M->st->rank + 1)) ^
           (0xc2b2ae3d27d4eb4full * (uint64_t)(M->st->task - M->sched_task));
  M->decisions = 0;
}

/* mpi.Schedule(seed | nil [, from]): the scheduler on with seed (off with
** nil) on this rank, from now: its generator restarts as at a task's start
** (or counts tasks from task `from`). Every rank calls it alike (in a task,
** or in a -j file for every task). Returns the seed before (nil: off) and
** the task it counted from, so that a caller can put them back. */
int mpb_mpi_schedule(lua_State *L) {
  mpb_mpi *M = mpb_mpi_get(L);
  lua_settop(L, 2); /* the arguments stay at 1 and 2 below what is returned */
  if (M->sched) lua_pushinteger(L, (lua_Integer)M->seed);
  else lua_pushnil(L);
  lua_pushinteger(L, (lua_Integer)M->sched_task);
  if (lua_isnoneornil(L, 1)) {
    M->sched = 0;
    return 2;
  }
  int ok;
  lua_Integer seed = lua_tointegerx(L, 1, &ok);
  if (!ok)
    luaL_error(L, "bad argument #1 to 'mp.mpi.Schedule' (" MPB_RANKFMT " integer seed or nil "
               "expected, got %s)", M->st->rank, M->st->size, luaL_typename(L, 1));
  lua_Integer from = M->st->task; /* tasks count from here: a seed set in a task replays it */
  if (!lua_isnoneornil(L, 2)) {
    from = lua_tointegerx(L, 2, &ok);
    if (!ok)
      luaL_error(L, "bad argument #2 to 'mp.mpi.Schedule' (" MPB_RANKFMT " task number "
                 "expected, got %s)", M->st->rank, M->st->size, luaL_typename(L, 2));
  }
  M->sched = 1;
  M->seed = (uint64_t)seed;
  M->sched_task = from;
  mpb_mpi_sched_reseed(M);
  return 2;
}

static uint64_t splitmix(uint64_t *x) {
  uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

int mpb_mpi_sched_pick(mpb_mpi *M, int n, const int *srcs) {
  int k = (int)(splitmix(&M->rng) % (uint64_t)n);
  M->decisions++;
  if (M->log) {
    FILE *f = fopen(M->log, "a");
    if (f) {
      fprintf(f, "task %lld choice %llu: rank %d took rank %d's message of {", (long long)M->task,
              (unsigned long long)M->decisions, M->st->rank, srcs[k]);
      for (int i = 0; i < n; i++) fprintf(f, "%s%d", i ? "," : "", srcs[i]);
      fprintf(f, "}\n");
      fclose(f);
    }
  }
  return k;
}

typedef struct {
  mpb_mpi *M;
  const mpb_comm *c;
  int tag;
  uint32_t pause, turn; /* its number (mpb_where_pause), its turn among pauses */
  double since; /* the first candidate came (0: not yet) */
} gather;

static int some(mpb_state *st, void *ud) {
  gather *g = ud;
  int self;
  mpb_mpi_settle(g->M);
  return mpb_mpi_candidates(g->M, g->c, g->tag, &self) > 0;
}

static int enough(mpb_state *st, void *ud) {
  gather *g = ud;
  int self;
  mpb_mpi_settle(g->M);
  int n = mpb_mpi_candidates(g->M, g->c, g->tag, &self);
  return n >= g->c->size - !self || (g->pause && st->go == g->pause) ||
         mpb_now() - g->since >= g->M->patience;
}

static int enough_or_acks(mpb_state *st, void *ud) {
  gather *g = ud;
  return enough(st, ud) || g->M->nacks > 0;
}

void mpb_mpi_sched_gather(lua_State *L, mpb_mpi *M, const mpb_comm *c, int tag,
                          const char *fname) {
  uint64_t x = M->rng ^ 0x5851f42d4c957f2dull; /* the turn: seeded, drawn apart from the picks */
  gather g = {M, c, tag, 0, (uint32_t)(splitmix(&x) >> 32), 0};
  char what[48];
  mpb_mpi_describe(what, sizeof what, fname, MPB_MPI_ANY_SOURCE, tag);
  mpb_waitdesc d = {what, -1, c->id, 0, NULL};
  mpb_mpi_wait(L, M, some, &g, &d);
  g.since = mpb_now();
  if (enough(M->st, &g)) return;
  g.pause = mpb_where_pause(M->st);
  for (;;) { /* mpb_mpi_wait's loop, paused: the acknowledgements owed go out */
    int done = enough(M->st, &g);
    if (M->nacks) mpb_mpi_flush(L, M);
    if (done) return;
    mpb_wait_paused(L, M->st, enough_or_acks, &g, &d, g.pause, g.turn);
  }
}
