/* SPDX-License-Identifier: MIT */
/*
** The runtime's life cycle: starting it (MPI, the tables, the wake-ups, the
** hook) and stopping it (what is in flight completes, then MPI ends).
**
** Four private duplicates of the base communicator: `ctl` carries commands
** and the abort protocol, `user` every mp message (channels are MPI tags),
** `bulk` the parts of messages sent in parts (matched by tag, never probed),
** and `ccomm` is lent to compiled extensions. All four return MPI errors
** instead of aborting, so a failure on a user path becomes a Lua error that
** names the rank and MPI's reason.
*/
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "chan/arrive.h"
#include "chan/ctl.h"
#include "chan/hook.h"
#include "chan/mailbox.h"
#include "chan/outbox.h"
#include "chan/start.h"
#include "chan/wait.h"
#include "chan/wake.h"
#include "wire/wire.h"
#include "wire/wire_lstr.h"

/* ------------------------------------------------------------ start-up */
/* Duplicate the base communicator into c, returning errors. */
static int dup_comm(mpb_state *st, MPI_Comm *c) {
  *c = MPI_COMM_NULL;
  int rc = MPI_Comm_dup(st->base, c);
  if (rc == MPI_SUCCESS) rc = MPI_Comm_set_errhandler(*c, MPI_ERRORS_RETURN);
  return rc;
}

/* Workers ignore Ctrl-C (hydra forwards it to every rank; rank 0 decides).
** The launcher's environment says the rank before MPI_Init, which takes
** most of the start-up: a Ctrl-C then must not kill a worker either. */
static void workers_ignore_sigint(int rank) {
  if (rank == 0) return;
  signal(SIGINT, SIG_IGN);
  signal(SIGUSR1, SIG_IGN);
}

static int launcher_rank(void) {
  static const char *const vars[] = {"PMI_RANK", "PMIX_RANK", "OMPI_COMM_WORLD_RANK",
                                     "SLURM_PROCID"};
  for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
    const char *v = getenv(vars[i]);
    if (v && *v) return atoi(v);
  }
  return 0;
}

static int start_mpi(mpb_state *st, MPI_Comm comm, int *argc, char ***argv, char *err,
                     size_t errlen) {
  int inited = 0, rc, inter = 0;
  int sig = !(st->out & MPB_OUT_SIGNALS);
  if (sig) workers_ignore_sigint(launcher_rank());
  if ((rc = MPI_Initialized(&inited)) != MPI_SUCCESS) {
    mpb_mpi_string(rc, err, errlen);
    return -1;
  }
  if (!inited) {
    if (MPI_Init(argc, argv) != MPI_SUCCESS) {
      snprintf(err, errlen, "MPI_Init failed");
      return -1;
    }
    st->own_mpi = 1;
  }
  st->base = comm == MPI_COMM_NULL ? MPI_COMM_WORLD : comm;
  if (MPI_Comm_test_inter(st->base, &inter) != MPI_SUCCESS || inter) {
    snprintf(err, errlen, "the communicator must be an intra-communicator");
    return -1;
  }
  /* the runtime works on its own duplicates (errors returned there); a
  ** host's communicator keeps the error handler the host gave it */
  int *ub = NULL, flag = 0;
  if ((rc = MPI_Comm_rank(st->base, &st->rank)) == MPI_SUCCESS && sig)
    workers_ignore_sigint(st->rank);
  if (rc != MPI_SUCCESS || (rc = MPI_Comm_size(st->base, &st->size)) != MPI_SUCCESS ||
      (st->own_mpi && (rc = MPI_Comm_set_errhandler(st->base, MPI_ERRORS_RETURN)) != MPI_SUCCESS) ||
      (rc = dup_comm(st, &st->ctl)) != MPI_SUCCESS || (rc = dup_comm(st, &st->user)) != MPI_SUCCESS ||
      (rc = dup_comm(st, &st->bulk)) != MPI_SUCCESS || (rc = dup_comm(st, &st->ccomm)) != MPI_SUCCESS ||
      (rc = MPI_Comm_get_attr(st->bulk, MPI_TAG_UB, &ub, &flag)) != MPI_SUCCESS) {
    mpb_mpi_string(rc, err, errlen);
    return -1;
  }
  st->tag_ub = flag && ub && *ub > 0 ? *ub : 32767;
  return 0;
}

static int alloc_tables(mpb_state *st) {
  size_t n = (size_t)st->size;
  st->inbox = calloc(n * MPB_NCHAN, sizeof *st->inbox);
  st->sent_to = calloc(n, sizeof *st->sent_to);
  st->recvd_from = calloc(n, sizeof *st->recvd_from);
  st->part_tag = calloc(n, sizeof *st->part_tag);
  st->pending_from = calloc(2 * n, sizeof *st->pending_from);
  st->arr_blocked = calloc(2 * n, sizeof *st->arr_blocked);
  st->arrivals_tail = &st->arrivals;
  return st->inbox && st->sent_to && st->recvd_from && st->part_tag && st->pending_from &&
         st->arr_blocked && mpb_msg_mem_init(&st->msgmem) == 0 ? 0 : -1;
}

static void free_tables(mpb_state *st) {
  if (st->inbox) mpb_inbox_free(st);
  mpb_queue_clear(&st->cmdq);
  free(st->inbox), free(st->sent_to), free(st->recvd_from), free(st->part_tag);
  free(st->pending_from), free(st->arr_blocked);
  mpb_msg_mem_free(&st->msgmem);
  st->inbox = NULL;
}

static int state_gc(lua_State *L) {
  mpb_state *st = lua_touserdata(L, 1);
  if (st->L) {
    mpb_stop(L);
  }
  return 0;
}

static int all_sent(mpb_state *st, void *ud) {
  (void)ud;
  return !st->sends && !st->csends && (!st->settled || st->settled(st));
}

static int req_done(mpb_state *st, void *ud) {
  int flag = 0;
  return MPI_Test(ud, &flag, MPI_STATUS_IGNORE) != MPI_SUCCESS || flag || !st;
}

static int opt_env(const char *name, int dflt) {
  const char *v = getenv(name);
  return v && *v ? atoi(v) : dflt;
}

mpb_state *mpb_start(lua_State *L, const mpb_opts *o, int *argc, char ***argv, char *err,
                     size_t errlen) {
  int use_mpi = o->use_mpi;
  mpb_state *st = lua_newuserdatauv(L, sizeof *st, 0);
  memset(st, 0, sizeof *st); /* inert: __gc does nothing until st->L is set */
  lua_newtable(L);
  lua_pushcfunction(L, state_gc);
  lua_setfield(L, -2, "__gc");
  lua_setmetatable(L, -2);
  lua_setfield(L, LUA_REGISTRYINDEX, MPB_STATE_KEY);
  *(mpb_state **)lua_getextraspace(L) = st;
  st->use_mpi = use_mpi;
  st->out = o->out;
  st->size = 1;
  st->nfan = opt_env("MPLUA_NFAN", MPB_NFAN_DEFAULT); /* tests make deep trees at few ranks */
  if (st->nfan < 1) st->nfan = MPB_NFAN_DEFAULT;
  /* MPLUA_OPTIMAL_PATH is accepted as an alias when MPLUA_ZERO_COPY is unset */
  st->zero_copy = opt_env("MPLUA_ZERO_COPY", opt_env("MPLUA_OPTIMAL_PATH", 1)) != 0;
  if (use_mpi && start_mpi(st, o->comm, argc, argv, err, errlen) != 0) return NULL;
  st->L = L;
  st->lstr = mpb_lstr_of(L); /* NULL: strings are copied */
  /* every rank learns whether all could start before any goes on */
  int ok = alloc_tables(st) == 0;
  if (!ok) snprintf(err, errlen, "out of memory starting the runtime");
  if (ok && use_mpi) ok = mpb_wake_init(st, err, errlen) == 0;
  if (use_mpi) {
    int all = ok;
    if (MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, st->base) != MPI_SUCCESS) all = 0;
    if (ok && !all) snprintf(err, errlen, "another rank could not start the runtime");
    ok = all;
    mpb_wake_ready(st);
  }
  if (!ok) return NULL;
  mpb_ctl_on(st, 0, NULL);
  mpb_hook_init(L, st);
  return st;
}

void mpb_stop(lua_State *L) {
  mpb_state *st = *(mpb_state **)lua_getextraspace(L);
  if (!st || !st->L) return;
  mpb_hook_close(st);
  if (st->use_mpi) {
    /* complete what is in flight so MPI_Finalize has nothing pending; a peer
    ** that is gone cannot take its messages: give up after a while */
    if (!mpb_wait_bounded(st, all_sent, NULL, 10.0)) {
      fprintf(stderr, "mplua: " MPB_RANKFMT " messages still in flight at exit (a rank "
              "stopped receiving)\n", st->rank, st->size);
      fflush(stderr);
    }
    if (st->no_finalize) { /* the host leaves with _exit: meet once more, then go */
      MPI_Request req;
      if (mpb_mpi_warn(st, MPI_Ibarrier(st->ctl, &req), "the last barrier") == MPI_SUCCESS)
        mpb_wait_bounded(st, req_done, &req, 10.0);
      if (mpb_pmi_leave() < 0) /* else the process manager takes this exit for a crash */
        fprintf(stderr, "mplua: " MPB_RANKFMT " the process manager did not acknowledge the "
                "end of this rank\n", st->rank, st->size);
      st->L = NULL;
      return;
    }
    mpb_wake_close(st);
    mpb_arrivals_free(st);
    mpb_mpi_warn(st, MPI_Comm_free(&st->ctl), "freeing a communicator at exit");
    mpb_mpi_warn(st, MPI_Comm_free(&st->user), "freeing a communicator at exit");
    mpb_mpi_warn(st, MPI_Comm_free(&st->bulk), "freeing a communicator at exit");
    mpb_mpi_warn(st, MPI_Comm_free(&st->ccomm), "freeing a communicator at exit");
    int done = 1;
    if (st->ends_process && MPI_Finalized(&done) != MPI_SUCCESS) done = 1;
    if (st->own_mpi || !done) mpb_mpi_warn(st, MPI_Finalize(), "MPI_Finalize");
  }
  mpb_sends_free(st);
  free_tables(st);
  /* a buffer made by a task in a finalizer at lua_close is never finalized
  ** (Lua registers no finalizer while closing) */
  if (st->wscratch) mpb_wbuf_release(st->wscratch);
  st->L = NULL;
}

void mpb_end_process(lua_State *L, int status, int close) {
  mpb_state *st = mpb_get(L);
  int fast = st->use_mpi && st->own_mpi && !mpb_all_local(st) && mpb_finalize_may_hang();
  st->no_finalize = fast;
  st->ends_process = 1;
  if (close) lua_close(L);
  else mpb_stop(L);
  fflush(NULL);
  if (fast) _exit(status);
  exit(status);
}
