/* SPDX-License-Identifier: MIT */
/*
** The seeded scheduler (MPLUA_SCHEDULE=SEED): one seed, one interleaving of
** wildcard matches, as ISP and DAMPI explore them.
**
** Whichever message arrives first is a matter of timing; the scheduler takes
** timing out of the choice. A receive from ANY_SOURCE first waits until
** every other member of its communicator has a message it could take, or
** until MPLUA_SCHEDULE_WAIT seconds (default 0.5) have passed since the
** first candidate came (a member that sends nothing matching must not stall
** it for ever); then a generator seeded by (seed, rank, task) chooses among
** the candidates, one per sender (each sender's oldest: non-overtaking
** holds). Replaying the seed replays every such choice as long as the
** candidates are the same, which they are when the senders send within the
** patience. MPLUA_SCHEDULE_LOG=PREFIX appends each choice to PREFIX.<rank>
** (scripts/explore.lua compares them).
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi/mpi.h"

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
  return n >= g->c->size - !self || mpb_now() - g->since >= g->M->patience;
}

void mpb_mpi_sched_gather(lua_State *L, mpb_mpi *M, const mpb_comm *c, int tag,
                          const char *fname) {
  gather g = {M, c, tag, 0};
  char what[48];
  mpb_mpi_describe(what, sizeof what, fname, MPB_MPI_ANY_SOURCE, tag);
  mpb_waitdesc d = {what, -1, c->id, 0};
  mpb_mpi_wait(L, M, some, &g, &d);
  g.since = mpb_now();
  mpb_mpi_wait(L, M, enough, &g, NULL); /* a deliberate pause, not a blocked rank */
}
