/* SPDX-License-Identifier: MIT */
/*
** Where every rank is: deadlocks told exactly, the watchdog, and the
** whereabouts of every abort report (DESIGN.md section 9).
**
** When rank 0 has waited long enough to nap (a user wait, or the fan-in of
** its task), it asks every rank where it stands (SNAP, with back-off: the
** first after a few milliseconds, then doubling to one a second). A rank
** answers at once from its poll (STATE): running (with the Lua line it is
** at), blocked in a wait for a message (which, from whom, and the line that
** called it; its wait checked once more first), or finished its part, and
** its counts of user messages sent to and received from each rank it
** talked to (where_answer.h: an answer grows with a rank's peers, not with
** the job). Nothing of this costs anything until a wait naps.
**
** A deadlock is exact, not a guess: every rank blocked or finished, one at
** least blocked, and every message sent to a blocked rank received (counts
** per pair), in two answers in a row. A blocked rank sends nothing until it
** unblocks, and a message that could unblock one would show as sent and not
** received; so nothing can ever change, and rank 0 aborts the task with a
** report that names who waits for what.
**
** A pause (mpb_wait_paused: the schedule explorer's wildcard receive
** waiting for the candidates that can still come) is neither: in such a
** picture, with paused ranks among the blocked and finished ones, nothing
** can change until a paused rank goes on, so rank 0 lets one go (GO)
** instead of reporting a deadlock. One at a time, the lowest (turn, rank)
** first (the turn is the pausing layer's: the explorer's comes from
** its seed, so seeds also vary which receiver chooses first): a rank let go
** may send what another paused rank would take, and that rank chooses in
** the next such picture, whatever the timing.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tasks/tasks.h"
#include "tasks/where_answer.h"

#define WHERE MPB_WHERE_LEN
/* Looks for dead ranks: the first ALIVE_EVERY into a wait, then further
** apart as the wait lasts (ALIVE_GROWTH), at most ALIVE_MAX apart. */
#define ALIVE_EVERY 0.02
#define ALIVE_MAX 1.0
#define ALIVE_GROWTH 2.0
struct mpb_snap {
  mpb_state *st;           /* to unhook at collection */
  int64_t round;           /* the round under way or last done */
  int pending;             /* answers still to come */
  double started, next, gap;
  int size;                /* of answers and previous */
  mpb_answer **answers;    /* [size]: each rank's last answer, sized to it */
  mpb_answer **previous;   /* the last complete round, to compare (once deadlocked) */
  int have_previous;
  int64_t answer_bytes;    /* the last complete round's answers (mp.stats().where_answer_bytes) */
  double watchdog;         /* seconds (0: off) */
  int watchdog_abort;
  double watched;          /* the wait length last reported */
  double alive_check;      /* when to look next for ranks that died */
  double alive_gap;        /* the abort protocol's gap to the look after */
  int64_t alive_reads;     /* ranks looked at for dead ones (mp.stats().alive_looks) */
};

static mpb_answer *answer(mpb_answer **all, int r) { return all[r]; }

/* ------------------------------------------------------------ wording */
/* The prefix of a wait's op: "mpi.Recv(...)" names its module (mp.mpi's) */
static const char *module(const mpb_answer *h) {
  return strncmp(h->op, "mpi.", 4) == 0 ? "" : "mp.";
}

static void say_state(const mpb_answer *h, char *buf, size_t n) {
  /* worded for one rank; collapse() turns "has" into "have" for several */
  char peer[32] = "", seq[40] = "", at[112] = "";
  if (h->peer >= 0) snprintf(peer, sizeof peer, " from rank %d", h->peer);
  if (h->seq) snprintf(seq, sizeof seq, " (collective #%u)", (unsigned)h->seq);
  if (h->line[0]) snprintf(at, sizeof at, " at %s", h->line);
  switch (h->state) {
    case MPB_AT_BLOCKED:
      snprintf(buf, n, "waits in %s%s%s%s%s", module(h), h->op, peer, seq, at);
      break;
    case MPB_AT_PAUSED:
      snprintf(buf, n, "waits in %s%s (the scheduler's pause)%s", module(h), h->op, at);
      break;
    case MPB_AT_FINISHED: snprintf(buf, n, "has finished the task"); break;
    case MPB_AT_IDLE: snprintf(buf, n, "has not started the task"); break;
    default: snprintf(buf, n, "is running%s", at); break;
  }
}

/* "ranks 1-3,7: text" for the ranks whose text (at stride bytes in texts,
** empty: none) is the same, texts in order of first appearance, sep between. */
static void collapse(const char *texts, size_t stride, int n, const char *sep, char *out,
                     size_t cap) {
  size_t len = 0;
  char *done = calloc((size_t)n ? (size_t)n : 1, 1);
  out[0] = '\0';
  for (int r = 0; r < n && done && len < cap; r++) {
    const char *t = texts + stride * (size_t)r;
    if (done[r] || !t[0]) continue;
    char ranks[256];
    size_t rl = 0;
    int count = 0;
    ranks[0] = '\0';
    for (int q = r; q < n; q++) {
      if (done[q] || strcmp(t, texts + stride * (size_t)q) != 0) continue;
      int e = q; /* a run q..e of the same text */
      while (e + 1 < n && !done[e + 1] && strcmp(t, texts + stride * (size_t)(e + 1)) == 0) e++;
      for (int k = q; k <= e; k++) done[k] = 1;
      if (rl + 24 < sizeof ranks)
        rl += (size_t)(e > q ? snprintf(ranks + rl, sizeof ranks - rl, "%s%d-%d", count ? "," : "", q, e)
                             : snprintf(ranks + rl, sizeof ranks - rl, "%s%d", count ? "," : "", q));
      count += e - q + 1;
      q = e;
    }
    const char *verb = t;
    char plural[WHERE];
    if (count > 1 && strncmp(t, "has ", 4) == 0) { /* ranks 1-3 have finished */
      snprintf(plural, sizeof plural, "have %s", t + 4);
      verb = plural;
    } else if (count > 1 && strncmp(t, "waits ", 6) == 0) {
      snprintf(plural, sizeof plural, "wait %s", t + 6);
      verb = plural;
    } else if (count > 1 && strncmp(t, "is ", 3) == 0) {
      snprintf(plural, sizeof plural, "are %s", t + 3);
      verb = plural;
    }
    len += (size_t)snprintf(out + len, cap - len, "%s%s %s%s%s", len ? sep : "",
                            count > 1 ? "ranks" : "rank", ranks, sep[0] == ',' ? " " : ": ", verb);
  }
  free(done);
}

/* --------------------------------------------------------- the verdict */
/* Blocked or paused: sends nothing until a message (or GO) comes. */
static int stuck(const mpb_answer *h) { return h->state == MPB_AT_BLOCKED || h->state == MPB_AT_PAUSED; }

/* Nothing can change: every rank stuck or finished, one at least stuck,
** nothing on its way to a stuck rank. */
static int deadlocked(mpb_state *st, mpb_answer **all) {
  int n = st->size, blocked = 0;
  for (int p = 0; p < n; p++) {
    mpb_answer *h = answer(all, p);
    if (h->task != st->task) return 0;
    if (stuck(h)) blocked++;
    else if (h->state != MPB_AT_FINISHED) return 0;
  }
  if (!blocked) return 0;
  /* nothing on its way to a blocked rank: every q sent to a blocked p what
  ** p received from q. A pair either lists is checked from that side; a pair
  ** neither lists is 0 and 0. */
  for (int p = 0; p < n; p++) {
    mpb_answer *h = answer(all, p);
    for (uint32_t i = 0; i < h->npeers; i++) {
      const mpb_count *c = &mpb_answer_counts(h)[i];
      mpb_answer *peer = answer(all, c->peer);
      if (stuck(h) && c->recvd != mpb_answer_sent(peer, p)) return 0;
      if (stuck(peer) && c->sent != mpb_answer_recvd(peer, p)) return 0;
    }
  }
  return 1;
}

/* The deadlock's words: one rank waiting on one finished peer says so as
** the wait would; else every rank's state. */
static void deadlock_message(mpb_state *st, mpb_answer **all, char *out, size_t cap) {
  int n = st->size, nb = 0, b = -1;
  for (int p = 0; p < n; p++)
    if (answer(all, p)->state == MPB_AT_BLOCKED) nb++, b = p;
  mpb_answer *h = answer(all, b);
  if (nb == 1) { /* one rank waits for others that are done */
    char who[64];
    if (h->peer >= 0) snprintf(who, sizeof who, "rank %d has", h->peer);
    else snprintf(who, sizeof who, n > 2 ? "every other rank has" : "the other rank has");
    snprintf(out, cap, "%s%s: [rank %d/%d] would wait forever: %s finished the task%s%s%s",
             module(h), h->op, b, n, who, h->line[0] ? " (at " : "", h->line,
             h->line[0] ? ")" : "");
    return;
  }
  char *texts = calloc(n > 0 ? (size_t)n : 1, WHERE);
  if (!texts) {
    snprintf(out, cap, "deadlock: every rank waits or has finished");
    return;
  }
  for (int p = 0; p < n; p++) say_state(answer(all, p), texts + WHERE * (size_t)p, WHERE);
  int k = snprintf(out, cap, "deadlock: ");
  collapse(texts, WHERE, n, ", ", out + k, cap - (size_t)k);
  free(texts);
}

static void whereabouts(mpb_state *st, mpb_answer **all, char *out, size_t cap) {
  char *texts = calloc(st->size > 0 ? (size_t)st->size : 1, WHERE);
  if (!texts) {
    out[0] = '\0';
    return;
  }
  for (int p = 0; p < st->size; p++) {
    mpb_answer *h = answer(all, p);
    if (h->round == mpb_tasks_of(st)->snap->round) say_state(h, texts + WHERE * (size_t)p, WHERE);
    else snprintf(texts + WHERE * (size_t)p, WHERE, "did not answer (busy in C code?)");
  }
  collapse(texts, WHERE, st->size, "\n  ", out, cap);
  free(texts);
}

/* -------------------------------------------------------------- rounds */
/* Let pause `pause` of rank r go. */
static void let_go(mpb_state *st, int r, uint32_t pause) {
  if (r == 0) st->go = pause;
  else mpb_ctl_send(st, r, MPB_CTL_GO, st->task, 0, pause, NULL, 0);
}

/* Rank 0's own answer, now, for the round under way. */
static void describe_mine(mpb_state *st, struct mpb_snap *s) {
  mpb_answer *h = mpb_answer_describe(st);
  if (!h) mpb_fatal(st, "out of memory in a whereabouts round");
  free(s->answers[0]);
  s->answers[0] = h;
  h->round = s->round;
}

/* The answers of rank 0's table into its copy to compare. */
static void keep_previous(mpb_state *st, struct mpb_snap *s) {
  for (int p = 0; p < st->size; p++) {
    size_t len = mpb_answer_size(s->answers[p]->npeers);
    mpb_answer *b = realloc(s->previous[p], len);
    if (!b) mpb_fatal(st, "out of memory in a whereabouts round");
    s->previous[p] = memcpy(b, s->answers[p], len);
  }
}

static void complete(mpb_state *st) {
  struct mpb_snap *s = mpb_tasks_of(st)->snap;
  describe_mine(st, s);
  s->answer_bytes = 0;
  for (int p = 0; p < st->size; p++) s->answer_bytes += (int64_t)mpb_answer_size(s->answers[p]->npeers);
  int dead = deadlocked(st, s->answers);
  if (dead && s->have_previous) { /* the same picture twice: final */
    int same = 1;
    for (int p = 0; p < st->size && same; p++) {
      mpb_answer *a = answer(s->answers, p), *b = answer(s->previous, p);
      same = a->state == b->state && a->pause == b->pause &&
             mpb_answer_same_counts(a, b);
    }
    int p = -1;
    for (int q = 0; q < st->size && same; q++) {
      mpb_answer *h = answer(s->answers, q);
      if (h->state == MPB_AT_PAUSED && (p < 0 || h->turn < answer(s->answers, p)->turn)) p = q;
    }
    if (same && p >= 0) { /* not a deadlock: the first pause goes on */
      let_go(st, p, answer(s->answers, p)->pause);
      s->have_previous = 0;
      s->next = 0;
      return;
    }
    if (same && !st->aborting) {
      char msg[1024];
      deadlock_message(st, s->answers, msg, sizeof msg);
      mpb_fault_record(st, MPB_DEADLOCK, msg, strlen(msg));
      mpb_abort_begin(st);
      return;
    }
  }
  if (dead) keep_previous(st, s);
  s->have_previous = dead;
  if (dead) s->next = 0; /* confirm at once */
}

static void on_state(mpb_state *st, mpb_msg *m, const mpb_chdr *h) {
  struct mpb_snap *s = mpb_tasks_of(st)->snap;
  mpb_answer *a = NULL;
  if (s && s->answers && m->len >= sizeof *h && h->value == s->round && s->pending > 0 &&
      m->src > 0 && m->src < st->size)
    a = mpb_answer_read(m->buf + sizeof *h, m->len - sizeof *h, st->size);
  if (a) {
    free(s->answers[m->src]);
    s->answers[m->src] = a;
    if (--s->pending == 0) complete(st);
  }
  mpb_msg_free(m);
}

static void on_snap(mpb_state *st, mpb_msg *m, const mpb_chdr *h) {
  mpb_answer *a = mpb_answer_describe(st);
  if (a) {
    a->round = h->value;
    mpb_ctl_send(st, 0, MPB_CTL_STATE, h->task, 0, h->value, a, mpb_answer_size(a->npeers));
    free(a);
  }
  mpb_msg_free(m);
}

/* Rank 0: a rank has begun a pause: look at once, and soon again. */
static void look_soon(mpb_state *st) {
  struct mpb_snap *s = mpb_tasks_of(st)->snap;
  if (!s) return;
  s->next = 0;
  s->gap = 0.004;
}

static void on_pause(mpb_state *st, mpb_msg *m, const mpb_chdr *h) {
  if (h->task == st->task) look_soon(st);
  mpb_msg_free(m);
}

static void on_go(mpb_state *st, mpb_msg *m, const mpb_chdr *h) {
  if (h->task == st->task) st->go = (uint32_t)h->value;
  mpb_msg_free(m);
}

uint32_t mpb_where_pause(mpb_state *st) {
  uint32_t pause = ++st->pauses ? st->pauses : ++st->pauses; /* never 0 */
  if (st->rank == 0) look_soon(st);
  else mpb_ctl_send(st, 0, MPB_CTL_PAUSE, st->task, 0, pause, NULL, 0);
  return pause;
}

static void watchdog_report(mpb_state *st, double waited) {
  struct mpb_snap *s = mpb_tasks_of(st)->snap;
  char text[4096];
  describe_mine(st, s);
  whereabouts(st, s->answers, text, sizeof text);
  char head[128];
  snprintf(head, sizeof head, "mp: the task has waited %.0f s (MPLUA_WATCHDOG): where the ranks are", waited);
  if (s->watchdog_abort && !st->aborting) {
    char msg[4300];
    snprintf(msg, sizeof msg, "watchdog: waited %.0f s\n  %s", waited, text);
    mpb_fault_record(st, MPB_DEADLOCK, msg, strlen(msg));
    mpb_abort_begin(st);
    return;
  }
  char msg[4300];
  snprintf(msg, sizeof msg, "%s\n  %s", head, text);
  mpb_warn(st->L, "%s", msg);
}

/* ---------------------------------------------------------- dead ranks */
/* A rank killed by a signal never answers. Under hydra's default the
** launcher kills every rank at once, but whenever rank 0 outlives it (the
** launcher is slower, or cleans up nothing: mpiexec -disable-auto-cleanup)
** rank 0 says which rank died and ends the job, instead of waiting for an
** answer that cannot come. Ranks on other hosts are not watched. */
/* all: every rank (the abort protocol waits for every one), else those
** that have not answered the round under way. */
static void check_alive(mpb_state *st, struct mpb_snap *s, int all) {
  for (int r = 1; r < st->size; r++) {
    if (!all && answer(s->answers, r)->round == s->round) continue;
    int pid = mpb_local_pid(st, r);
    if (pid <= 0) continue;
    s->alive_reads++;
    if (!mpb_pid_gone(pid)) continue;
    fflush(stdout);
    fprintf(stderr, "mplua: rank %d/%d (pid %d) has died: killed by a signal, or it crashed; "
            "ending the job\n", r, st->size, pid);
    mpb_abort_job(st->base, 1);
  }
}

/* A look reads /proc for every rank (milliseconds at 64 ranks, on the
** path every rank of the abort protocol waits on): a protocol that ends
** within ALIVE_EVERY needs none, and one that lasts looks ever less often
** (at 20, 60, 140, ... ms: O(log t) looks in t seconds, then one a second). */
void mpb_where_check_dead_later(mpb_state *st) {
  struct mpb_snap *s = mpb_tasks_of(st)->snap;
  if (!s) return;
  s->alive_check = mpb_now() + ALIVE_EVERY;
  s->alive_gap = ALIVE_EVERY * ALIVE_GROWTH;
}

int64_t mpb_where_alive_looks(mpb_state *st) {
  struct mpb_snap *s = mpb_tasks_of(st)->snap;
  return s ? s->alive_reads : 0;
}

int64_t mpb_where_answer_bytes(mpb_state *st) {
  struct mpb_snap *s = mpb_tasks_of(st)->snap;
  return s ? s->answer_bytes : 0;
}

void mpb_where_check_dead(mpb_state *st) {
  struct mpb_snap *s = mpb_tasks_of(st)->snap;
  if (!s || st->size == 1) return;
  double now = mpb_now();
  if (now < s->alive_check) return;
  if (s->alive_gap < ALIVE_EVERY) s->alive_gap = ALIVE_EVERY;
  s->alive_check = now + s->alive_gap;
  s->alive_gap = s->alive_gap * ALIVE_GROWTH < ALIVE_MAX ? s->alive_gap * ALIVE_GROWTH : ALIVE_MAX;
  check_alive(st, s, 1);
}

/* Rank 0 naps in a wait: look around, now and then. */
static void on_idle(mpb_state *st, double waited) {
  struct mpb_snap *s = mpb_tasks_of(st)->snap;
  if (!s || st->size == 1 || st->phase == MPB_PHASE_IDLE) return;
  if (st->aborting) { /* a wait that outlasts an abort (an agreement's): not for a dead rank */
    mpb_where_check_dead(st);
    return;
  }
  if (!s->answers) return;
  double now = mpb_now();
  if (s->pending > 0 && now - s->started > 2.0) s->pending = 0; /* a rank that never
                                                                   answered: try anew */
  /* The ranks that have not answered a round under way for ALIVE_EVERY:
  ** are they alive? A rank that answered is (so, between rounds, nothing
  ** is read), and the looks come further apart as rank 0's wait lasts
  ** (about 10 in its first second, then one a second): a look costs the
  ** silent ranks, and a long wait O(log t) looks, not one every 20 ms. */
  if (s->pending > 0 && now - s->started >= ALIVE_EVERY && now >= s->alive_check) {
    double gap = waited / ALIVE_GROWTH;
    s->alive_check = now + (gap < ALIVE_EVERY ? ALIVE_EVERY : gap > ALIVE_MAX ? ALIVE_MAX : gap);
    check_alive(st, s, 0);
  }
  if (s->pending > 0) { /* a round under way: answers come from polls */
    if (s->watchdog > 0 && waited >= s->watchdog && now - s->started > 1.0 &&
        waited >= 2 * s->watched) { /* someone does not answer: say so anyway */
      s->watched = waited;
      watchdog_report(st, waited);
    }
    return;
  }
  if (s->watchdog > 0 && waited >= s->watchdog && waited >= 2 * s->watched &&
      answer(s->answers, 0)->round == s->round) {
    s->watched = waited;
    watchdog_report(st, waited);
  }
  if (now < s->next) return;
  s->round++;
  s->started = now;
  s->next = now + s->gap;
  if (s->gap < 1.0) s->gap *= 2;
  s->pending = st->size - 1;
  for (int r = 1; r < st->size; r++) mpb_ctl_send(st, r, MPB_CTL_SNAP, st->task, 0, s->round, NULL, 0);
}

/* A round's answers still on their way would be left unmatched at exit. */
static int settled(mpb_state *st) {
  struct mpb_snap *s = mpb_tasks_of(st)->snap;
  return !s || !s->answers || s->pending <= 0 || mpb_now() - s->started > 2.0;
}

static int settled_ud(mpb_state *st, void *ud) {
  (void)ud;
  return settled(st);
}

void mpb_where_reset(mpb_state *st) {
  struct mpb_snap *s = mpb_tasks_of(st)->snap;
  st->where[0] = '\0';
  if (!s) return;
  s->pending = 0;
  s->have_previous = 0;
  s->gap = 0.004;
  s->next = mpb_now() + 0.002;
  s->watched = 0;
}

/* --------------------------------------------------------- whereabouts */
void mpb_where_begin(mpb_state *st) {
  if (!st->where[0]) {
    /* idle: the abort came before this rank began the task, or after it finished */
    const char *w = st->phase == MPB_PHASE_RUN                ? "was stopped"
                    : mpb_tasks_of(st)->begun < st->task ? "had not begun the task"
                                                          : "had finished the task";
    snprintf(st->where, sizeof st->where, "%s", w);
  }
  if (st->rank != 0) return;
  free(mpb_tasks_of(st)->wheres);
  mpb_tasks_of(st)->wheres = calloc(st->size > 0 ? (size_t)st->size : 1, WHERE);
  if (!mpb_tasks_of(st)->wheres) mpb_fatal(st, "out of memory in the abort protocol");
}

void mpb_where_mine(mpb_state *st, char *out) { memcpy(out, st->where, WHERE); }

void mpb_where_put(mpb_state *st, int r, const char *text) {
  char *all = mpb_tasks_of(st)->wheres;
  if (all && r >= 0 && r < st->size) memcpy(all + WHERE * (size_t)r, text, WHERE);
}

void mpb_where_end(mpb_state *st) {
  char *all = mpb_tasks_of(st)->wheres;
  if (all)
    for (int p = 0; p < st->size; p++) all[WHERE * (size_t)p + WHERE - 1] = '\0';
  st->where[0] = '\0'; /* said: a late abort of the next task starts afresh */
}

void mpb_where_text(mpb_state *st, int skip, char *out, size_t cap) {
  out[0] = '\0';
  if (!mpb_tasks_of(st)->wheres) return;
  char *texts = calloc(st->size > 0 ? (size_t)st->size : 1, WHERE);
  if (!texts) return;
  for (int p = 0; p < st->size; p++)
    if (p != skip) memcpy(texts + WHERE * (size_t)p, mpb_tasks_of(st)->wheres + WHERE * (size_t)p, WHERE);
  collapse(texts, WHERE, st->size, "\n  ", out, cap);
  free(texts);
}

/* ---------------------------------------------------------- mp.watchdog */
/* The longest watchdog: a year (a longer one would never fire in a job). */
#define WATCHDOG_MAX (365 * 86400.0)

/* mp.watchdog{seconds = s, abort = false}: when a task has waited s seconds
** (rank 0 in a wait), print where every rank is (or abort with it). 0 or
** nil turns it off. Returns the previous seconds. */
static int mp_watchdog(lua_State *L) {
  mpb_state *st = mpb_get(L);
  struct mpb_snap *s = mpb_tasks_of(st)->snap;
  double old = s ? s->watchdog : 0;
  if (!lua_isnoneornil(L, 1)) {
    if (!lua_istable(L, 1))
      return luaL_error(L, "bad argument #1 to 'mp.watchdog' (" MPB_RANKFMT " options table "
                        "expected, got %s)", st->rank, st->size, luaL_typename(L, 1));
    lua_getfield(L, 1, "seconds");
    int ok;
    double secs = lua_tonumberx(L, -1, &ok);
    if ((!ok && !lua_isnil(L, -1)) || (ok && !(secs >= 0 && secs <= WATCHDOG_MAX)))
      return luaL_error(L, "bad argument #1 to 'mp.watchdog' (" MPB_RANKFMT " field 'seconds' "
                        "must be a number of seconds in 0..%d (0 or nil: off), got %s)",
                        st->rank, st->size, (int)WATCHDOG_MAX, luaL_tolstring(L, -1, NULL));
    if (s) {
      s->watchdog = ok ? secs : 0;
      lua_getfield(L, 1, "abort");
      s->watchdog_abort = lua_toboolean(L, -1);
    }
  }
  lua_pushnumber(L, old);
  return 1;
}

static int snap_gc(lua_State *L) {
  struct mpb_snap *s = lua_touserdata(L, 1);
  if (s->st && mpb_tasks_of(s->st)->snap == s) { /* lua_close: take the answers under way, then unhook */
    if (s->st->L) mpb_wait_bounded(s->st, settled_ud, NULL, 2.0);
    mpb_tasks_of(s->st)->snap = NULL;
    free(mpb_tasks_of(s->st)->wheres); /* the last report's whereabouts */
    mpb_tasks_of(s->st)->wheres = NULL;
    s->st->on_idle = NULL;
    s->st->settled = NULL;
  }
  for (int p = 0; p < s->size; p++) {
    if (s->answers) free(s->answers[p]);
    if (s->previous) free(s->previous[p]);
  }
  free(s->answers);
  free(s->previous);
  s->answers = s->previous = NULL;
  return 0;
}

void mpb_open_where(lua_State *L) {
  mpb_state *st = mpb_get(L);
  lua_pushcfunction(L, mp_watchdog);
  lua_setfield(L, -2, "watchdog");
  mpb_ctl_on(st, MPB_CTL_SNAP, on_snap);
  mpb_ctl_on(st, MPB_CTL_GO, on_go);
  if (st->rank != 0) return;
  mpb_ctl_on(st, MPB_CTL_PAUSE, on_pause);
  struct mpb_snap *s = lua_newuserdatauv(L, sizeof *s, 0);
  memset(s, 0, sizeof *s); /* inert until its buffers exist */
  lua_newtable(L);
  lua_pushcfunction(L, snap_gc);
  lua_setfield(L, -2, "__gc");
  lua_setmetatable(L, -2);
  lua_setfield(L, LUA_REGISTRYINDEX, "mp.snap");
  s->answers = calloc((size_t)st->size, sizeof *s->answers);
  s->previous = calloc((size_t)st->size, sizeof *s->previous);
  if (s->answers && s->previous) /* no answer yet: round 0, no counts */
    for (s->size = 0; s->size < st->size; s->size++)
      if (!(s->answers[s->size] = calloc(1, sizeof(mpb_answer)))) break;
  if (!s->answers || !s->previous || s->size < st->size) luaL_error(L, "mp: out of memory");
  const char *w = getenv("MPLUA_WATCHDOG");
  if (w && *w) {
    s->watchdog = atof(w);
    s->watchdog_abort = getenv("MPLUA_WATCHDOG_ABORT") && atoi(getenv("MPLUA_WATCHDOG_ABORT"));
  }
  s->st = st;
  mpb_tasks_of(st)->snap = s;
  st->on_idle = on_idle;
  st->settled = settled;
  mpb_ctl_on(st, MPB_CTL_STATE, on_state);
  mpb_where_reset(st);
}
