/*
** The abort/restart protocol (DESIGN.md section 5).
**
** A rank that raises an error in a task sends FAULT to rank 0; rank 0 (on a
** FAULT, its own error, or Ctrl-C) sends ABORT to every worker. Waiting ranks
** see ABORT in the one wait, computing ranks in the poll hook; all unwind to
** their task runner and meet in mpb_resync:
**   1. workers make sure they hold this task's ABORT;
**   2. one alltoall on the control communicator tells each rank how many user
**      messages every peer sent it since the last resync, and rank 0 how many
**      ranks sent FAULT;
**   3. each rank receives (and drops) until its counts match and its own sends
**      have completed; rank 0 until it holds every FAULT;
**   4. a barrier: nobody starts the next task before everyone is clean.
** MPI traffic is thus drained, not abandoned: no request stays pending, so the
** user communicator is reused and no context id is spent per abort. Messages
** also carry their task number, so nothing from before the abort is ever
** delivered after it.
*/
#include <stdlib.h>
#include <string.h>

#include "tasks/tasks.h"

void mpb_fault_record(mpb_state *st, int rank, const char *msg, size_t len) {
  if (st->first.rank >= 0) return;
  st->first.rank = rank;
  st->first.msg = malloc(len + 1);
  if (st->first.msg) {
    memcpy(st->first.msg, msg, len);
    st->first.msg[len] = '\0';
  }
}

void mpb_abort_begin(mpb_state *st) {
  st->aborting = 1;
  if (st->use_mpi)
    for (int r = 1; r < st->size; r++)
      mpb_ctl_send(st, r, MPB_CTL_ABORT, st->task, 0, 0, NULL, 0);
}

static int abort_received(mpb_state *st, void *ud) {
  (void)ud;
  return st->abort_task >= st->task;
}

static int req_done(mpb_state *st, void *ud) {
  int flag = 0;
  if (MPI_Test((MPI_Request *)ud, &flag, MPI_STATUS_IGNORE) != MPI_SUCCESS)
    mpb_fatal(st, "the abort protocol failed");
  return flag;
}

static int drained(mpb_state *st, void *ud) {
  const int64_t *expect = ud;
  for (int p = 0; p < st->size; p++)
    if (st->recvd_from[p] < expect[p]) return 0;
  return st->sends == NULL && mpb_arrivals_idle(st) && st->nfault_msgs >= st->nfault_expect;
}

static void wait_req(lua_State *L, mpb_state *st, MPI_Request *req) {
  mpb_wait(L, st, req_done, req, MPB_WAIT_NOABORT | MPB_WAIT_CTL | MPB_WAIT_HOT);
}

/* Forget everything of the aborted epoch: queued messages and counts. */
static void clean(mpb_state *st) {
  mpb_inbox_clear(st, 1);
  memset(st->sent_to, 0, sizeof *st->sent_to * (size_t)st->size);
  memset(st->recvd_from, 0, sizeof *st->recvd_from * (size_t)st->size);
}

void mpb_resync(lua_State *L, mpb_state *st) {
  int64_t task = st->task;
  MPB_TRACE_SPAN(NULL, st, MPB_TR_RESYNC, 0, -1, (uint32_t)task, 0);
  st->naborts++;
  st->in_task = 0;
  if (st->use_mpi && st->size > 1) {
    if (st->rank != 0) mpb_wait(L, st, abort_received, NULL, MPB_WAIT_NOABORT | MPB_WAIT_CTL | MPB_WAIT_HOT);
    size_t n = (size_t)st->size;
    int64_t *out = malloc(4 * n * sizeof *out), *in = out + 2 * n, *expect = out;
    if (!out) mpb_fatal(st, "out of memory in the abort protocol");
    for (size_t p = 0; p < n; p++) {
      out[2 * p] = st->sent_to[p];
      out[2 * p + 1] = st->faulted;
    }
    MPI_Request req;
    if (MPI_Ialltoall(out, 2, MPI_INT64_T, in, 2, MPI_INT64_T, st->ctl, &req) != MPI_SUCCESS)
      mpb_fatal(st, "the abort protocol failed");
    wait_req(L, st, &req);
    int nf = 0;
    for (size_t p = 0; p < n; p++) {
      if (p > 0) nf += (int)in[2 * p + 1];
      expect[p] = in[2 * p];
    }
    st->nfault_expect = st->rank == 0 ? nf : 0;
    mpb_wait(L, st, drained, expect, MPB_WAIT_NOABORT | MPB_WAIT_CTL | MPB_WAIT_HOT);
    free(out);
    /* Clean before the barrier: a rank that leaves the barrier first may
    ** start the next task, whose messages must survive here. */
    clean(st);
    if (MPI_Ibarrier(st->ctl, &req) != MPI_SUCCESS) mpb_fatal(st, "the abort protocol failed");
    wait_req(L, st, &req);
    /* compiled extensions get a fresh communicator: whatever they left
    ** pending on the old one can never match after the abort */
    MPI_Comm_free(&st->ccomm);
    if (MPI_Comm_idup(st->base, &st->ccomm, &req) != MPI_SUCCESS)
      mpb_fatal(st, "cannot renew the extensions' communicator");
    wait_req(L, st, &req);
    st->nself = st->faulted + nf;
  } else {
    clean(st);
    st->nself = st->faulted;
  }
  st->faulted = 0;
  st->nfault_expect = 0;
  /* an ABORT of the next task may have arrived during the barrier */
  st->aborting = st->abort_task > task;
  mpb_hook_arm(st, 0);
}

void mpb_fault_report(lua_State *L, mpb_state *st, const char *fname) {
  int others = st->size - st->nself;
  if (st->first.rank < 0) {
    lua_pushfstring(L, "mp.%s: task aborted", fname);
    return;
  }
  lua_pushfstring(L, "mp.%s: rank %d/%d faulted: %s\n(%d rank%s faulted on %s own, %d stopped)",
                  fname, st->first.rank, st->size, st->first.msg ? st->first.msg : "?",
                  st->nself, st->nself == 1 ? "" : "s", st->nself == 1 ? "its" : "their",
                  others < 0 ? 0 : others);
}

/* mp.abort([msg]): stop the current task on purpose (an error on this rank). */
static int mp_abort(lua_State *L) {
  mpb_state *st = mpb_get(L);
  const char *msg = luaL_optstring(L, 1, "aborted");
  return luaL_error(L, "mp.abort: [rank %d/%d] %s", st->rank, st->size, msg);
}

/* os.exit on a worker inside a job would leave the others waiting forever:
** end the whole job instead, with a report. */
static int worker_exit(lua_State *L) {
  mpb_state *st = mpb_get(L);
  int status = lua_isboolean(L, 1) ? (lua_toboolean(L, 1) ? 0 : 1)
                                   : (int)luaL_optinteger(L, 1, 0);
  fflush(stdout);
  fprintf(stderr, "mplua: rank %d/%d called os.exit(%d) in a task: ending the job\n",
          st->rank, st->size, status);
  fflush(stderr);
  MPI_Abort(st->base, status ? status : 1);
  return 0;
}

/* ------------------------------------------------------ control handlers */
static void on_fault(mpb_state *st, mpb_msg *m, const mpb_chdr *h) {
  if (h->task == st->task && st->rank == 0) {
    st->nfault_msgs++;
    mpb_fault_record(st, m->src, m->buf + sizeof *h, m->len - sizeof *h);
    if (!st->aborting) mpb_abort_begin(st);
  }
  mpb_msg_free(m);
}

static void on_abort(mpb_state *st, mpb_msg *m, const mpb_chdr *h) {
  if (h->task > st->abort_task) {
    st->abort_task = h->task;
    if (h->task >= st->task) {
      st->task = h->task;
      st->aborting = 1;
    }
  }
  mpb_msg_free(m);
}

/* Rank 0 interrupted inside a task: a fault of rank 0, whatever its code
** catches (the hook keeps raising until the task runner has it). */
static void on_interrupt(mpb_state *st) {
  mpb_fault_record(st, 0, "interrupted!", 12);
  st->faulted = 1;
  if (!st->aborting) mpb_abort_begin(st);
}

void mpb_abort_handlers(mpb_state *st) {
  mpb_ctl_on(st, MPB_CTL_FAULT, on_fault);
  mpb_ctl_on(st, MPB_CTL_ABORT, on_abort);
  st->on_interrupt = on_interrupt;
}

void mpb_open_abort(lua_State *L) {
  mpb_abort_handlers(mpb_get(L));
  lua_pushcfunction(L, mp_abort);
  lua_setfield(L, -2, "abort");
  mpb_state *st = mpb_get(L);
  if (st->rank != 0 && st->use_mpi) {
    lua_getglobal(L, "os");
    if (lua_istable(L, -1)) {
      lua_pushcfunction(L, worker_exit);
      lua_setfield(L, -2, "exit");
    }
    lua_pop(L, 1);
  }
}
