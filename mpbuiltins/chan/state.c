/* SPDX-License-Identifier: MIT */
/*
** The per-state runtime: its life cycle, the clock, and how MPI failures
** become errors.
**
** Four private duplicates of the base communicator: `ctl` carries commands
** and the abort protocol, `user` every mp message (channels are MPI tags),
** `bulk` the parts of messages sent in parts (matched by tag, never probed),
** and `ccomm` is lent to compiled extensions. All four return MPI errors
** instead of aborting, so a failure on a user path becomes a Lua error that
** names the rank and MPI's reason.
**
** The state lives in the registry (its __gc finalizes MPI); a pointer to it
** sits in the lua_State's extra space, copied into every coroutine, so the
** hot path finds it without a lookup.
*/
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>

#include "chan/chan.h"

static const char STATE_KEY[] = "mp.state";

mpb_state *mpb_get(lua_State *L) {
  mpb_state *st = *(mpb_state **)lua_getextraspace(L);
  if (!st) luaL_error(L, "mp: the runtime is not started (mplua_open)");
  return st;
}

mpb_state *mpb_find(lua_State *L) {
  lua_getfield(L, LUA_REGISTRYINDEX, STATE_KEY);
  mpb_state *st = lua_touserdata(L, -1);
  lua_pop(L, 1);
  return st && st->L ? st : NULL;
}

double mpb_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* ------------------------------------------------------------ failures */
static void mpi_string(int rc, char *out, size_t n) {
  char s[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(rc, s, &len) != MPI_SUCCESS || len <= 0) {
    snprintf(out, n, "MPI error %d", rc);
    return;
  }
  snprintf(out, n, "%.*s", len, s);
}

int mpb_mpi_raise(lua_State *L, mpb_state *st, int rc, const char *fname, const char *what) {
  char s[MPB_ERRLEN];
  mpi_string(rc, s, sizeof s);
  return luaL_error(L, "mp.%s: " MPB_RANKFMT " %s: %s", fname, st->rank, st->size, what, s);
}

int mpb_mpi_note(mpb_state *st, int rc, const char *what) {
  if (rc != MPI_SUCCESS) {
    char s[MPB_ERRLEN / 2];
    mpi_string(rc, s, sizeof s);
    mpb_note(st, "%.100s: %s", what, s);
  }
  return rc;
}

void mpb_note(mpb_state *st, const char *fmt, ...) {
  if (st->mpi_err[0] != '\0') return; /* the first one is raised */
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(st->mpi_err, sizeof st->mpi_err, fmt, ap);
  va_end(ap);
}

/* MPICH's launcher can end the job on MPI_Abort before its proxy has read
** what this rank wrote to its stdout and stderr pipes just before, and the
** report of why the job ends is then lost (seen 1 run in 11 on a loaded
** host). So wait until the pipes are empty (bounded: a reader that is gone
** never empties them). */
void mpb_abort_job(MPI_Comm comm, int status) {
  fflush(stdout);
  fflush(stderr);
  for (int fd = 1; fd <= 2; fd++) {
    struct stat sb;
    if (fstat(fd, &sb) != 0 || !S_ISFIFO(sb.st_mode)) continue;
    for (int i = 0; i < 2000; i++) { /* 2 s at most */
      int unread = 0;
      if (ioctl(fd, FIONREAD, &unread) != 0 || unread <= 0) break;
      nanosleep(&(struct timespec){0, 1000000L}, NULL);
    }
  }
  MPI_Abort(comm, status);
  abort(); /* MPI_Abort does not return; if it did, nothing sane remains */
}

int mpb_mpi_warn(mpb_state *st, int rc, const char *what) {
  if (rc != MPI_SUCCESS) {
    char s[MPB_ERRLEN / 2];
    mpi_string(rc, s, sizeof s);
    fflush(stdout);
    fprintf(stderr, "mplua: " MPB_RANKFMT " %s: %s\n", st->rank, st->size, what, s);
    fflush(stderr);
  }
  return rc;
}

void mpb_fatal_mpi(mpb_state *st, int rc, const char *what) {
  char s[MPB_ERRLEN / 2];
  mpi_string(rc, s, sizeof s);
  mpb_fatal(st, "%.100s: %s", what, s);
}

void mpb_fatal(mpb_state *st, const char *fmt, ...) {
  char msg[MPB_ERRLEN];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  fflush(stdout);
  fprintf(stderr, "mplua: " MPB_RANKFMT " %s: ending the job\n", st->rank, st->size, msg);
  /* Most often a rank has died (MPI fails towards it): the process manager
  ** is then ending the job itself, and its report names the rank that died
  ** and its signal, where ours names the peer we failed to reach (perhaps
  ** one it already killed). It gets a second to come first. */
  struct timespec left = {1, 0};
  while (nanosleep(&left, &left) != 0 && errno == EINTR) {}
  mpb_abort_job(st->base, 1);
}

void mpb_warn(lua_State *L, const char *fmt, ...) {
  mpb_state *st = mpb_get(L);
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (st->host.warn) st->host.warn(L, msg, st->host.ud);
  else lua_warning(L, msg, 0);
}

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
    mpi_string(rc, err, errlen);
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
    mpi_string(rc, err, errlen);
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
         st->arr_blocked && mpb_msg_reserve_init(&st->reserve) == 0 ? 0 : -1;
}

static void free_tables(mpb_state *st) {
  if (st->inbox)
    for (int i = 0; i < st->size * MPB_NCHAN; i++) mpb_queue_clear(&st->inbox[i]);
  mpb_queue_clear(&st->cmdq);
  free(st->inbox), free(st->sent_to), free(st->recvd_from), free(st->part_tag);
  free(st->pending_from), free(st->arr_blocked);
  mpb_msg_reserve_free(&st->reserve);
  free(st->first.msg);
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
  lua_setfield(L, LUA_REGISTRYINDEX, STATE_KEY);
  *(mpb_state **)lua_getextraspace(L) = st;
  st->use_mpi = use_mpi;
  st->out = o->out;
  st->size = 1;
  st->nfan = MPB_NFAN_DEFAULT;
  st->first.rank = -1;
  st->optimal = opt_env("MPLUA_OPTIMAL_PATH", 1) != 0;
  if (use_mpi && start_mpi(st, o->comm, argc, argv, err, errlen) != 0) return NULL;
  st->L = L;
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
  mpb_abort_error_init(L);
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
    if (st->own_mpi) mpb_mpi_warn(st, MPI_Finalize(), "MPI_Finalize");
  }
  mpb_sends_free(st);
  free_tables(st);
  mpb_msg_drop_spare();
  st->L = NULL;
}
