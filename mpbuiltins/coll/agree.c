/* SPDX-License-Identifier: MIT */
/*
** Agreements: the step before a blocking MPI collective (MPI_Win_create,
** MPI_Win_fence, MPI_File_open, ...), which waits for every member and
** cannot be interrupted. Every member sends its vote straight to every
** other member, numbered by the communicator's collective sequence, and
** makes the MPI call only when it holds every other member's vote. The
** members must all make the call or none may: one that stays away leaves
** the others in MPI for ever, deaf to the abort protocol.
**
** An abort (ABORT, Ctrl-C on rank 0, an MPI failure noted) that reaches a
** member inside an agreement is decided so:
**   - it has not sent its vote: it sends none, ever, and unwinds;
**   - it has, and misses the votes of a set S: it asks each x of S (a
**     control message naming the task, communicator and number) and waits,
**     abort notwithstanding, for x's vote or x's answer. x answers from its
**     control handler (which runs in every wait, in the count hook and in
**     the abort protocol, and never waits): "voted" when it sent its vote in
**     that agreement, else "never", and from then on x votes in no agreement
**     of that task. A member in the MPI call sent its vote before entering
**     (MPI progresses it there), so it needs not answer: its vote comes.
**   - every vote came: it returns like any agreement, the caller makes the
**     MPI call (and records what it made, for the abort protocol to free)
**     and the abort is taken at the next wait or hook; else it unwinds.
** Every member thus decides alike: a vote sent is eventually seen by every
** member that asks; a member that answered "never" has not sent one and
** never will, so nobody holds all the votes, and a member holding them all
** had none refused. All this happens before the member joins the abort
** protocol, while its control handlers keep forwarding ABORT down the
** fan-out tree and answering others.
**
** Nothing may stand between holding every vote and the MPI call: no wait,
** no raise. A member in the call forwards no ABORT, so the ranks below it
** in the tree learn of an abort only once the call ends; the call ends
** because every member comes, which holds only if no member that holds
** every vote waits for anything (an abort least of all).
*/
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "coll/coll.h"

#define AGREE_KEY "mp.coll.agree"

enum { ASK = 0, VOTED = 1, NEVER = 2 };
enum { LATE = 1, EARLY, HOLD, SIGINT_IN, NOTED_SIGINT }; /* the test knob's modes (mp._agree_fault) */

/* The last two agreements this rank voted in on one communicator (a member
** waits in at most one agreement it voted in, and a peer can have run ahead
** of it by at most one: answers need no more). */
typedef struct voted { uint32_t comm, seq[2]; } voted;

typedef struct agree_state {
  int64_t task;          /* the task of vote[] */
  int64_t refused;       /* answered "never" in this task: votes in none of it */
  int nvote, capvote;
  voted *vote;
  /* the agreement this rank resolves (answers are kept for it alone) */
  int64_t wtask;
  uint32_t wcomm, wseq;
  int active;
  signed char *answer;   /* [st->size]: VOTED, NEVER, or 0: none yet */
  int fault;             /* the test knob (mp._agree_fault): LATE, EARLY, HOLD or 0 */
  int64_t fault_task;
  int hold_peer;         /* HOLD: the world rank whose vote is kept back */
  int64_t hold_pid;      /* HOLD: 0 tell rank 0, > 0 SIGINT to it, once peer voted */
  int holding, asked;    /* HOLD: under way; hold_peer asked */
  int sigint_in;         /* SIGINT_IN, NOTED_SIGINT: armed for this rank's vote wait */
} agree_state;

static agree_state *state_of(mpb_state *st) { return st->slot[MPB_SLOT_AGREE]; }

static voted *voted_on(agree_state *a, int64_t task, uint32_t comm) {
  if (a->task != task) return NULL;
  for (int i = 0; i < a->nvote; i++)
    if (a->vote[i].comm == comm) return &a->vote[i];
  return NULL;
}

/* Room for one more communicator's record (before voting: it may fail). */
static int reserve(agree_state *a) {
  if (a->nvote < a->capvote) return 1;
  int cap = a->capvote ? 2 * a->capvote : 8;
  voted *p = realloc(a->vote, sizeof *p * (size_t)cap);
  if (!p) return 0;
  a->vote = p, a->capvote = cap;
  return 1;
}

/* Remember a vote as it is sent (room reserved: nothing fails). */
static void note_vote(agree_state *a, int64_t task, uint32_t comm, uint32_t seq) {
  if (a->task != task) a->task = task, a->nvote = 0;
  voted *v = voted_on(a, task, comm);
  if (!v) {
    v = &a->vote[a->nvote++];
    v->comm = comm, v->seq[0] = v->seq[1] = 0;
  }
  v->seq[0] = v->seq[1], v->seq[1] = seq;
}

/* ------------------------------------------------------ control handler */
/* ASK (answered: this rank never waits here) or an answer to this rank's. */
static void on_agree(mpb_state *st, mpb_msg *m, const mpb_chdr *h) {
  agree_state *a = state_of(st);
  uint32_t comm = (uint32_t)h->value, seq = (uint32_t)h->arg;
  int what = (int)(h->value >> 32);
  if (what == ASK) {
    voted *v = voted_on(a, h->task, comm);
    int ans = v && (v->seq[0] == seq || v->seq[1] == seq) ? VOTED : NEVER;
    if (ans == NEVER && h->task > a->refused) a->refused = h->task;
    if (a->holding && m->src == a->hold_peer) a->asked = 1;
    mpb_ctl_send(st, m->src, MPB_CTL_AGREE, h->task, h->arg,
                 (int64_t)comm | (int64_t)ans << 32, NULL, 0);
  } else if (a->active && h->task == a->wtask && comm == a->wcomm && seq == a->wseq &&
             m->src >= 0 && m->src < st->size) {
    a->answer[m->src] = (signed char)what;
  }
  mpb_msg_free(m);
}

/* ---------------------------------------------------------------- waits */
/* What makes the one wait raise (mpb_check_abort). */
static int abort_due(const mpb_state *st) {
  return (st->aborting && st->in_task) || (mpb_sigint && st->rank == 0) || st->mpi_err[0];
}

/* r's message of x (its vote, or another call's: a mismatch) has come. */
static int has_msg(mpb_state *st, const mpb_coll *x, int r) {
  mpb_queue *q = mpb_inbox(st, MPB_CH_COLL, x->c->ranks[r]);
  for (const mpb_msg *m = q->head; m; m = m->next) {
    mpb_uhdr h = mpb_msg_hdr(m);
    if (h.comm == x->c->id && h.task == st->task && h.seq == x->seq) return 1;
  }
  return 0;
}

typedef struct {
  const mpb_coll *x;
  int next;             /* the members before have voted */
  int never;            /* a member answered "never" */
  mpb_waitdesc *d;      /* NULL, or what the wait says it waits for (the first vote missing) */
} votes_arg;

/* Every vote here (from next on: those before are). */
static int all_votes(mpb_state *st, void *ud) {
  votes_arg *v = ud;
  const mpb_comm *c = v->x->c;
  for (; v->next < c->size; v->next++)
    if (v->next != c->rank && !has_msg(st, v->x, v->next)) {
      if (v->d) v->d->peer = c->ranks[v->next];
      return 0;
    }
  return 1;
}

/* Every vote here, or an abort due. */
static int votes_in(mpb_state *st, void *ud) { return all_votes(st, ud) || abort_due(st); }

/* votes_in, and a SIGINT right after it found no abort and one vote missing
** (the test knob's "sigint": where a signal from outside may land, between
** the wait's look and its abort check). */
static int votes_in_sigint(mpb_state *st, void *ud) {
  if (votes_in(st, ud)) return 1;
  const votes_arg *v = ud;
  const mpb_coll *x = v->x;
  int missing = 0;
  for (int r = v->next; r < x->c->size; r++) missing += r != x->c->rank && !has_msg(st, x, r);
  if (missing == 1 && state_of(st)->sigint_in) state_of(st)->sigint_in = 0, raise(SIGINT);
  return 0;
}

/* votes_in, and once a vote is missing: a fault noted, then SIGINT (the
** test knob's "noted": the signal lands after the wait read the interrupt
** flag and before its abort check, which the noted fault makes). */
static int votes_in_noted(mpb_state *st, void *ud) {
  if (votes_in(st, ud)) return 1;
  agree_state *a = state_of(st);
  if (a->sigint_in) {
    a->sigint_in = 0;
    mpb_note(st, "mp._agree_fault: a fault injected in mp.%s", ((votes_arg *)ud)->x->fname);
    raise(SIGINT);
  }
  return 0;
}

/* Every missing member has voted or answered; any "never" ends it. */
static int resolved(mpb_state *st, void *ud) {
  votes_arg *v = ud;
  agree_state *a = state_of(st);
  const mpb_comm *c = v->x->c;
  for (int r = 0; r < c->size; r++) {
    if (a->answer[c->ranks[r]] == NEVER) return v->never = 1;
    if (r != c->rank && !has_msg(st, v->x, r)) return 0;
  }
  return 1;
}

/* An abort reached this rank after it voted and before every vote came:
** ask the members missing and learn whether all voted. Returns 1 when
** they did. */
static int resolve(lua_State *L, mpb_state *st, const mpb_coll *x) {
  agree_state *a = state_of(st);
  const mpb_comm *c = x->c;
  memset(a->answer, 0, (size_t)st->size);
  a->wtask = st->task, a->wcomm = c->id, a->wseq = x->seq, a->active = 1;
  for (int r = 0; r < c->size; r++)
    if (r != c->rank && !has_msg(st, x, r))
      mpb_ctl_send(st, c->ranks[r], MPB_CTL_AGREE, st->task, (int32_t)x->seq,
                   (int64_t)c->id | (int64_t)ASK << 32, NULL, 0);
  votes_arg v = {x, 0, 0, NULL};
  mpb_wait(L, st, resolved, &v, MPB_WAIT_NOABORT);
  a->active = 0;
  return !v.never;
}

/* ------------------------------------------------------------ test knob */
/* mp._agree_fault(mode [, peer [, pid]]) arms this rank's next agreement of
** the task (inject below runs right after its votes are sent):
**   "early": a fault at once, then a message (true) to every other member,
**            which the test makes wait for it before its own call: no other
**            member has voted yet;
**   "late":  a fault once a message from peer has come (a "hold" member's
**            word that it holds every vote: in MPI, were it not holding);
**   "hold":  the vote to member peer (a rank of mp.world) is kept back until
**            peer asks for it, as a slow network may deliver it; once this
**            rank holds every vote: pid nil, a message (true) to peer; 0, a
**            message to rank 0, which the test makes abort; > 0, SIGINT to
**            that process (rank 0's);
**   "sigint": SIGINT to this process (rank 0) inside its wait for the votes,
**            the first time the wait looks and finds no abort and one vote
**            missing (a "hold" member's);
**   "noted": a fault noted (as an MPI failure is) and SIGINT to this
**            process (rank 0) inside its wait for the votes, the first time
**            it finds one missing: the wait's abort check, made for the
**            fault, raises the fault, and the signal is the next round's.
** The knob never waits for an abort: a member that holds every vote must
** go on to MPI (the abort may come only through the members in MPI). */
static void send_true(lua_State *L, mpb_state *st, int dst) {
  uint64_t ids[2];
  lua_pushboolean(L, 1);
  struct mpb_wbuf *b = mpb_encode_msg(L, lua_gettop(L), 1, "_agree_fault", 0, sizeof(mpb_uhdr));
  mpb_send(L, st, dst, MPB_CH_USER, b, 1, NULL, ids);
  st->user_sent++;
  lua_pop(L, 2);
}

static int word_from(mpb_state *st, void *ud) {
  return mpb_inbox(st, MPB_CH_USER, *(int *)ud)->head != NULL;
}

static int asked(mpb_state *st, void *ud) {
  (void)ud;
  return state_of(st)->asked;
}

/* held: the comm rank whose vote is kept back, its message in buf (HOLD). */
static void inject(lua_State *L, mpb_state *st, const mpb_coll *x, int held, char *buf,
                   size_t mlen) {
  agree_state *a = state_of(st);
  int mode = a->fault;
  a->fault = 0;
  if (mode == SIGINT_IN || mode == NOTED_SIGINT) {
    a->sigint_in = mode;
    return;
  }
  if (mode == HOLD) {
    if (held < 0) return;
    votes_arg v = {x, 0, 0, NULL};
    mpb_wait(L, st, all_votes, &v, MPB_WAIT_NOABORT);
    if (a->hold_pid > 0) kill((pid_t)a->hold_pid, SIGINT);
    else send_true(L, st, a->hold_pid == 0 ? 0 : a->hold_peer);
    mpb_wait(L, st, asked, NULL, MPB_WAIT_NOABORT);
    a->holding = 0;
    mpb_send_bytes(L, st, x->c->ranks[held], MPB_CH_COLL, buf, mlen, 1);
    st->user_sent++;
    return;
  }
  if (mode == LATE && a->hold_peer >= 0 && a->hold_peer < st->size)
    mpb_wait(L, st, word_from, &a->hold_peer, MPB_WAIT_NOABORT);
  mpb_note(st, "mp._agree_fault: a fault injected in mp.%s", x->fname);
  if (mode == EARLY)
    for (int r = 0; r < x->c->size; r++)
      if (r != x->c->rank) send_true(L, st, x->c->ranks[r]);
}

/* ------------------------------------------------------------ agreeing */
void mpb_coll_agree(lua_State *L, mpb_coll *x, const void *mine, size_t len, void *out) {
  mpb_state *st = x->st;
  agree_state *a = state_of(st);
  int n = x->c->size, me = x->c->rank;
  memcpy((char *)out + (size_t)me * len, mine, len);
  int knob = a->fault && a->fault_task == st->task, held = -1;
  if (n == 1) {
    if (knob) inject(L, st, x, -1, NULL, 0);
    a->sigint_in = 0;
    return;
  }
  if (knob && a->fault == HOLD)
    for (int r = 0; r < n; r++)
      if (r != me && x->c->ranks[r] == a->hold_peer) held = r, a->asked = 0, a->holding = 1;
  /* everything that can fail or wait comes before the first vote */
  size_t mlen = sizeof(mpb_uhdr) + len;
  if (st->send_bytes + (size_t)n * mlen > MPB_PENDING_MAX_BYTES)
    mpb_wait(L, st, mpb_sends_below_max, NULL, 0);
  char **buf = lua_newuserdatauv(L, sizeof *buf * (size_t)n, 0);
  memset(buf, 0, sizeof *buf * (size_t)n);
  int bidx = lua_gettop(L);
  int ok = 1;
  for (int k = 1; k < n && ok; k++) ok = (buf[k] = malloc(mlen)) != NULL;
  if (ok) ok = reserve(a);
  if (!ok || abort_due(st) || a->refused == st->task) {
    for (int k = 1; k < n; k++) free(buf[k]);
    if (!ok) luaL_error(L, "mp.%s: " MPB_RANKFMT " out of memory", x->fname, st->rank, st->size);
    if (abort_due(st)) mpb_check_abort(L, st);
    mpb_wait_abort(L, st); /* refused: the abort is on its way */
  }
  mpb_uhdr h;
  mpb_coll_header(x, &h);
  h.task = st->task;
  note_vote(a, st->task, x->c->id, x->seq);
  char *kept = NULL;
  for (int k = 1; k < n; k++) { /* the votes: sent all, never waiting */
    int r = (me + k) % n;
    memcpy(buf[k], &h, sizeof h);
    memcpy(buf[k] + sizeof h, mine, len);
    if (r == held) kept = buf[k];
    else mpb_send_bytes(L, st, x->c->ranks[r], MPB_CH_COLL, buf[k], mlen, 1), st->user_sent++;
    buf[k] = NULL;
  }
  lua_settop(L, bidx - 1);
  votes_arg v = {x, 0, 0, NULL};
  if (knob) inject(L, st, x, held, kept, mlen);
  mpb_waitdesc d = {x->fname, -1, x->c->id, x->seq, NULL};
  v.d = &d;
  if (!votes_in(st, &v))
    mpb_wait_described(L, st, a->sigint_in == NOTED_SIGINT ? votes_in_noted
                              : a->sigint_in ? votes_in_sigint : votes_in, &v, &d);
  a->sigint_in = 0;
  v.d = NULL;
  v.next = 0;
  if (!all_votes(st, &v) && !resolve(L, st, x)) mpb_check_abort(L, st); /* raises */
  for (int k = 1; k < n; k++) {
    int r = (me - k + n) % n;
    mpb_coll_take_raw(L, x, r, (char *)out + (size_t)r * len, len);
  }
}

/* mp._agree_fault(mode [, peer [, pid]]): the test knob (inject above). */
static int agree_fault(lua_State *L) {
  static const char *const modes[] = {"late", "early", "hold", "sigint", "noted", NULL};
  mpb_state *st = mpb_get(L);
  agree_state *a = state_of(st);
  int mode = 1 + luaL_checkoption(L, 1, NULL, modes);
  if ((mode == SIGINT_IN || mode == NOTED_SIGINT) && st->rank != 0) /* a worker's SIGINT is not an interrupt */
    return luaL_error(L, "mp._agree_fault: " MPB_RANKFMT " \"%s\" is rank 0's", st->rank,
                      st->size, modes[mode - 1]);
  a->fault = mode;
  a->hold_peer = (int)luaL_optinteger(L, 2, -1);
  a->hold_pid = luaL_optinteger(L, 3, -1);
  a->fault_task = st->task;
  return 0;
}

static int agree_gc(lua_State *L) {
  agree_state *a = lua_touserdata(L, 1);
  free(a->vote);
  a->vote = NULL, a->nvote = a->capvote = 0;
  return 0;
}

void mpb_open_agree(lua_State *L) {
  mpb_state *st = mpb_get(L);
  agree_state *a = lua_newuserdatauv(L, sizeof *a + (size_t)st->size, 0);
  memset(a, 0, sizeof *a);
  lua_createtable(L, 0, 1);
  lua_pushcfunction(L, agree_gc);
  lua_setfield(L, -2, "__gc");
  lua_setmetatable(L, -2);
  a->answer = (signed char *)(a + 1);
  a->refused = -1;
  a->task = -1;
  lua_setfield(L, LUA_REGISTRYINDEX, AGREE_KEY);
  st->slot[MPB_SLOT_AGREE] = a;
  mpb_ctl_on(st, MPB_CTL_AGREE, on_agree);
  lua_pushcfunction(L, agree_fault);
  lua_setfield(L, -2, "_agree_fault");
}
