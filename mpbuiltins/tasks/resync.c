/* SPDX-License-Identifier: MIT */
/*
** The resynchronization after an abort (DESIGN.md section 5), in control
** messages on the fan-out tree the ABORT came down:
**   1. workers make sure they hold this task's ABORT (it names the tree);
**   2. up the tree (RS_UP): per peer, how many user messages the subtree
**      sent it since the last resync, how many of its ranks faulted, and
**      whether one lent the extensions' communicator; rank 0 has the sums;
**   3. down the tree (RS_DOWN): the sums, each rank takes its own: how many
**      user messages it must hold; rank 0 how many ranks sent FAULT;
**   4. each rank receives (and drops) until it holds that many and its own
**      sends have completed (a rank never holds more from a peer than the
**      peer sent, so the totals match only when every pair's do); rank 0
**      until it holds every FAULT;
**   5. up the tree (RS_WHERE): every rank's whereabouts, once it is clean:
**      rank 0, the only one that starts tasks, leaves when every rank is.
** MPI traffic is thus drained, not abandoned: no request stays pending, so the
** user communicator is reused and no context id is spent per abort.
**
** Why messages and not MPI's collectives: every control message comes with
** a wake-up (chan/wake.c), so a rank waits for its part asleep and is woken
** when it comes; MPI's nonblocking collectives move only while every rank
** polls, so on a host with more ranks than cores each rank would nap and
** poll, nap and poll, through every round. 3 (P - 1) messages, in
** 3 log_F(P) steps of the tree.
*/
#include <stdlib.h>
#include <string.h>

#include "tasks/tasks.h"

/* What has come for the resync of task `task` (reset when a message of a
** later one comes: children may start before their parent enters). */
struct mpb_resync {
  int64_t task;
  int ups, downs, wheres;  /* RS_UP / RS_DOWN / RS_WHERE received */
  int64_t *sum;            /* [size]: user messages sent to each rank, this subtree */
  int64_t faults, lent;    /* of this subtree */
  int64_t *total;          /* [size]: from RS_DOWN */
  int64_t renew;           /* from RS_DOWN: renew the extensions' communicator */
  char *bundle;            /* whereabouts of the subtree: (int32 rank, text) records */
  size_t blen, bcap;
};

#define RECORD (4 + MPB_WHERE_LEN)

static struct mpb_resync *rs_of(mpb_state *st) {
  mpb_tasks *tk = mpb_tasks_of(st);
  if (!tk->rs) {
    struct mpb_resync *r = calloc(1, sizeof *r);
    size_t n = (size_t)(st->size > 0 ? st->size : 1);
    if (r) r->sum = calloc(n, sizeof *r->sum), r->total = calloc(n, sizeof *r->total);
    if (!r || !r->sum || !r->total) mpb_fatal(st, "out of memory in the abort protocol");
    r->task = -1;
    tk->rs = r;
  }
  return tk->rs;
}

void mpb_resync_close(mpb_tasks *tk) {
  struct mpb_resync *r = tk->rs;
  if (!r) return;
  free(r->sum);
  free(r->total);
  free(r->bundle);
  free(r);
  tk->rs = NULL;
}

/* The record of task t: a later task's first message starts it afresh; an
** earlier task's is stale (NULL). */
static struct mpb_resync *rs_for(mpb_state *st, int64_t t) {
  struct mpb_resync *r = rs_of(st);
  if (t < r->task) return NULL;
  if (t > r->task) {
    r->task = t;
    r->ups = r->downs = r->wheres = 0;
    r->faults = r->lent = r->renew = 0;
    memset(r->sum, 0, sizeof *r->sum * (size_t)st->size);
    r->blen = 0;
  }
  return r;
}

static void bundle_add(mpb_state *st, struct mpb_resync *r, const char *p, size_t len) {
  if (r->blen + len > r->bcap) {
    size_t cap = r->bcap ? r->bcap : RECORD * 4;
    while (cap < r->blen + len) cap *= 2;
    char *b = realloc(r->bundle, cap);
    if (!b) mpb_fatal(st, "out of memory in the abort protocol");
    r->bundle = b, r->bcap = cap;
  }
  memcpy(r->bundle + r->blen, p, len);
  r->blen += len;
}

/* ------------------------------------------------------------ handlers */
static void on_up(mpb_state *st, mpb_msg *m, const mpb_chdr *h) {
  struct mpb_resync *r = rs_for(st, h->task);
  if (r && m->len == sizeof *h + sizeof *r->sum * (size_t)st->size) {
    const char *b = m->buf + sizeof *h;
    for (int p = 0; p < st->size; p++) {
      int64_t v;
      memcpy(&v, b + sizeof v * (size_t)p, sizeof v);
      r->sum[p] += v;
    }
    r->faults += h->arg;
    r->lent |= h->value;
    r->ups++;
  }
  mpb_msg_free(m);
}

static void on_down(mpb_state *st, mpb_msg *m, const mpb_chdr *h) {
  struct mpb_resync *r = rs_for(st, h->task);
  if (r && m->len == sizeof *h + sizeof *r->total * (size_t)st->size) {
    memcpy(r->total, m->buf + sizeof *h, sizeof *r->total * (size_t)st->size);
    r->renew = h->value;
    r->downs++;
  }
  mpb_msg_free(m);
}

static void on_where(mpb_state *st, mpb_msg *m, const mpb_chdr *h) {
  struct mpb_resync *r = rs_for(st, h->task);
  size_t len = m->len - sizeof *h;
  if (r && len % RECORD == 0) {
    bundle_add(st, r, m->buf + sizeof *h, len);
    r->wheres++;
  }
  mpb_msg_free(m);
}

void mpb_resync_handlers(mpb_state *st) {
  mpb_ctl_on(st, MPB_CTL_RS_UP, on_up);
  mpb_ctl_on(st, MPB_CTL_RS_DOWN, on_down);
  mpb_ctl_on(st, MPB_CTL_RS_WHERE, on_where);
}

/* --------------------------------------------------------------- waits */
/* A control wait: what it waits for comes with a wake-up. Rank 0 looks for
** dead ranks now and then (a dead rank never takes part). */
#define RS_WAIT (MPB_WAIT_NOABORT | MPB_WAIT_CTL)
/* The drain and MPI's own collectives: short steps (on a host with more
** ranks than cores, brief naps rather than yields: see chan/wait.c). */
#define RESYNC_WAIT (MPB_WAIT_NOABORT | MPB_WAIT_CTL | MPB_WAIT_HOT | MPB_WAIT_BRIEF)

typedef struct { int64_t task; int want, what; } rs_arg;
enum { W_UP, W_DOWN, W_WHERE };

static int rs_ready(mpb_state *st, void *ud) {
  const rs_arg *a = ud;
  if (st->rank == 0) mpb_where_check_dead(st);
  const struct mpb_resync *r = rs_of(st);
  if (r->task != a->task) return a->want == 0;
  int got = a->what == W_UP ? r->ups : a->what == W_DOWN ? r->downs : r->wheres;
  return got >= a->want;
}

static void rs_wait(lua_State *L, mpb_state *st, int64_t task, int want, int what) {
  rs_arg a = {task, want, what};
  mpb_wait(L, st, rs_ready, &a, RS_WAIT);
}

static int abort_received(mpb_state *st, void *ud) {
  (void)ud;
  return st->abort_task >= st->task;
}

#define REQS_MAX 2
typedef struct { MPI_Request *req; int n; } reqs;

static int reqs_done(mpb_state *st, void *ud) {
  const reqs *r = ud;
  MPI_Status s[REQS_MAX];
  int flag = 0, rc = MPI_Testall(r->n, r->req, &flag, s);
  if (rc != MPI_SUCCESS) mpb_fatal_mpi(st, rc, "the abort protocol failed");
  if (!flag && st->rank == 0) mpb_where_check_dead(st);
  return flag;
}

void mpb_wait_reqs(lua_State *L, mpb_state *st, MPI_Request *req, int n) {
  reqs r = {req, n < REQS_MAX ? n : REQS_MAX};
  mpb_wait(L, st, reqs_done, &r, RESYNC_WAIT);
}

void mpb_wait_req(lua_State *L, mpb_state *st, MPI_Request *req) { mpb_wait_reqs(L, st, req, 1); }

static int drained(mpb_state *st, void *ud) {
  int64_t expect = *(const int64_t *)ud, got = 0;
  if (st->rank == 0) mpb_where_check_dead(st);
  for (int p = 0; p < st->size; p++) got += st->recvd_from[p];
  if (got < expect) return 0;
  return st->sends == NULL && mpb_arrivals_idle(st) &&
         mpb_tasks_of(st)->nfault_msgs >= mpb_tasks_of(st)->nfault_expect;
}

/* Forget everything of the aborted epoch: queued messages and counts. */
static void clean(mpb_state *st) {
  mpb_inbox_clear(st, 1);
  memset(st->sent_to, 0, sizeof *st->sent_to * (size_t)st->size);
  memset(st->recvd_from, 0, sizeof *st->recvd_from * (size_t)st->size);
}

/* Steps 2 to 5 on a job of several ranks; the number of ranks that faulted. */
static int resync_tree(lua_State *L, mpb_state *st, int64_t task) {
  mpb_tasks *tk = mpb_tasks_of(st);
  int fan = st->rank == 0 ? st->nfan : tk->abort_fan; /* rank 0's, as ABORT carries it */
  if (fan < 1 || fan > st->size) fan = st->size;
  int first, last, parent = (st->rank - 1) / fan;
  mpb_tree_children(st->size, fan, st->rank, &first, &last);
  int nkids = last >= first ? last - first + 1 : 0;
  size_t vec = sizeof(int64_t) * (size_t)st->size;
  rs_wait(L, st, task, nkids, W_UP);
  struct mpb_resync *r = rs_for(st, task);
  for (int p = 0; p < st->size; p++) r->sum[p] += st->sent_to[p];
  r->faults += st->faulted;
  r->lent |= st->ccomm_lent;
  if (st->rank != 0) {
    mpb_ctl_send(st, parent, MPB_CTL_RS_UP, task, (int32_t)r->faults, r->lent, r->sum, vec);
    rs_wait(L, st, task, 1, W_DOWN);
  } else {
    memcpy(r->total, r->sum, vec);
    r->renew = r->lent;
  }
  for (int c = first; c < first + nkids; c++)
    mpb_ctl_send(st, c, MPB_CTL_RS_DOWN, task, 0, r->renew, r->total, vec);
  int64_t expect = r->total[st->rank];
  int nf = st->rank == 0 ? (int)(r->faults - st->faulted) : 0, renew = r->renew > 0;
  tk->nfault_expect = nf;
  mpb_wait(L, st, drained, &expect, RESYNC_WAIT);
  clean(st);
  /* Compiled extensions get a fresh communicator: whatever they left
  ** pending on the old one can never match after the abort. When no rank
  ** lent it since it was made, nothing can be pending on it. The new one is
  ** made before the old is freed: MPICH releases a freed communicator's
  ** context at once, pending receives or not, and the next one made would
  ** take it over, with those receives. */
  if (renew) {
    MPI_Comm old = st->ccomm;
    MPI_Request req;
    int rc = MPI_Comm_idup(st->base, &st->ccomm, &req);
    if (rc != MPI_SUCCESS) mpb_fatal_mpi(st, rc, "cannot renew the extensions' communicator");
    mpb_wait_req(L, st, &req);
    if ((rc = MPI_Comm_free(&old)) != MPI_SUCCESS)
      mpb_fatal_mpi(st, rc, "cannot renew the extensions' communicator");
    st->ccomm_lent = 0;
  }
  /* clean: the whereabouts go up, this rank's after its subtree's */
  rs_wait(L, st, task, nkids, W_WHERE);
  r = rs_for(st, task);
  char rec[RECORD];
  int32_t me = st->rank;
  memcpy(rec, &me, 4);
  mpb_where_mine(st, rec + 4);
  bundle_add(st, r, rec, sizeof rec);
  if (st->rank != 0) {
    mpb_ctl_send(st, parent, MPB_CTL_RS_WHERE, task, 0, 0, r->bundle, r->blen);
  } else {
    for (size_t i = 0; i + RECORD <= r->blen; i += RECORD) {
      int32_t who;
      memcpy(&who, r->bundle + i, 4);
      mpb_where_put(st, who, r->bundle + i + 4);
    }
  }
  return st->faulted + nf;
}

void mpb_resync(lua_State *L, mpb_state *st) {
  int64_t task = st->task;
  MPB_TRACE_SPAN(NULL, st, MPB_TR_RESYNC, 0, -1, (uint32_t)task, 0);
  st->naborts++;
  st->in_task = 0;
  mpb_tasks *tk = mpb_tasks_of(st);
  if (tk->on_abort) tk->on_abort(st); /* e.g. locks released: another rank may wait for them */
  mpb_where_begin(st);
  if (st->use_mpi && st->size > 1) {
    if (st->rank != 0) mpb_wait(L, st, abort_received, NULL, RS_WAIT);
    else mpb_where_check_dead_later(st);
    tk->nself = resync_tree(L, st, task);
  } else {
    clean(st);
    tk->nself = st->faulted;
  }
  mpb_where_end(st);
  /* every rank is out of the task: upper layers end what it left */
  mpb_task_ends(L, st, 1);
  st->faulted = 0;
  tk->nfault_expect = 0;
  /* an ABORT of the next task may have arrived since */
  st->aborting = st->abort_task > task;
  mpb_hook_arm(st, 0);
}
