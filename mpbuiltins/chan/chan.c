/*
** The control channel and the one wait (DESIGN.md sections 3-4).
**
** Two private duplicates of MPI_COMM_WORLD: `ctl` carries commands and the
** abort protocol, `user` carries every mp message (channels are MPI tags).
** Nothing on a user path blocks inside MPI: mpb_wait polls both communicators
** with nonblocking probes, spins briefly, then yields, then sleeps, so idle
** and oversubscribed ranks stay cheap. Long pure-Lua computations are polled
** by a count hook that a periodic SIGALRM arms (lua.c's SIGINT technique: the
** signal handler only sets the hook; the hook runs at a safe point).
*/
#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "chan/chan.h"
#include "wire/wire.h"

volatile sig_atomic_t mpb_sigint = 0;
static lua_State *volatile hook_L = NULL; /* the state the signals hook */
static int poll_ms = 50;

static const char ABORT_KEY[] = "mp.abort_error";

/* ------------------------------------------------------------ start/stop */
/* ------------------------------------------------------------ start/stop */
/* Waking sleepers. An idle rank must cost no CPU, yet start a task within a
** millisecond; waking up every millisecond to probe costs ~2% of a core in a
** VM (context switches). So each rank publishes, in a word of node-shared
** memory, whether it is napping; a control message to a napping rank on the
** same host is followed by a SIGURG (ignored by default, so harmless before
** the handler exists) that cuts the nap short, and control waits of ranks
** whose control traffic is all local nap up to NAP_LONG_NS. Ranks that are
** not napping are not signalled: a signal costs a busy rank microseconds. */
static void on_wake(int sig) { (void)sig; }

static int learn_neighbours(mpb_state *st) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  sa.sa_handler = on_wake;
  sigaction(SIGURG, &sa, NULL);
  int nn;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &st->node);
  MPI_Comm_size(st->node, &nn);
  int *mine = NULL;
  MPI_Win_allocate_shared(sizeof(int), sizeof(int), MPI_INFO_NULL, st->node, &mine, &st->napwin);
  *mine = 0;
  st->nap_self = mine;
  struct { int rank, pid; } me = {st->rank, (int)getpid()}, *all = malloc(sizeof me * (size_t)nn);
  st->local_pid = calloc((size_t)st->size, sizeof *st->local_pid);
  st->nap_of = calloc((size_t)st->size, sizeof *st->nap_of);
  if (!all || !st->local_pid || !st->nap_of) {
    free(all);
    return -1;
  }
  MPI_Allgather(&me, 2, MPI_INT, all, 2, MPI_INT, st->node);
  for (int i = 0; i < nn; i++) {
    MPI_Aint size;
    int disp;
    int *p = NULL;
    MPI_Win_shared_query(st->napwin, i, &size, &disp, &p);
    st->local_pid[all[i].rank] = (pid_t)all[i].pid;
    st->nap_of[all[i].rank] = p;
  }
  st->all_local = nn == st->size;
  free(all);
  MPI_Barrier(st->node); /* every flag is initialized before anyone reads it */
  return 0;
}

static int abort_tostring(lua_State *L) {
  lua_getfield(L, 1, "message");
  return 1;
}

int mpb_chan_init(lua_State *L, mpb_state *st, int use_mpi, int *argc, char ***argv) {
  st->use_mpi = use_mpi;
  st->rank = 0;
  st->size = 1;
  st->nfan = MPB_NFAN_DEFAULT;
  st->first.rank = -1;
  st->L = L;
  if (use_mpi) {
    int inited = 0;
    MPI_Initialized(&inited);
    if (!inited) {
      if (MPI_Init(argc, argv) != MPI_SUCCESS) return -1;
      st->own_mpi = 1;
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &st->rank);
    if (st->rank != 0) { /* at once: hydra forwards Ctrl-C to every rank */
      signal(SIGINT, SIG_IGN);
      signal(SIGUSR1, SIG_IGN);
    }
    MPI_Comm_size(MPI_COMM_WORLD, &st->size);
    MPI_Comm_dup(MPI_COMM_WORLD, &st->ctl);
    MPI_Comm_dup(MPI_COMM_WORLD, &st->user);
    MPI_Comm_dup(MPI_COMM_WORLD, &st->ccomm);
    MPI_Comm_set_errhandler(st->user, MPI_ERRORS_RETURN);
    if (learn_neighbours(st) != 0) return -1;
  }
  size_t n = (size_t)st->size;
  st->inbox = calloc(n * MPB_NCHAN, sizeof *st->inbox);
  st->sent_to = calloc(n, sizeof *st->sent_to);
  st->recvd_from = calloc(n, sizeof *st->recvd_from);
  if (!st->inbox || !st->sent_to || !st->recvd_from) return -1;
  const char *ms = getenv("MPLUA_POLL_MS");
  if (ms && atoi(ms) > 0) poll_ms = atoi(ms);
  /* The abort error: a unique value user code cannot forge. */
  lua_newtable(L);
  lua_pushliteral(L, "mp: task stopped (another rank faulted)");
  lua_setfield(L, -2, "message");
  luaL_newmetatable(L, "mp.AbortError");
  lua_pushcfunction(L, abort_tostring);
  lua_setfield(L, -2, "__tostring");
  lua_setmetatable(L, -2);
  lua_setfield(L, LUA_REGISTRYINDEX, ABORT_KEY);
  return 0;
}

static void free_sends(mpb_send **list) {
  while (*list) {
    mpb_send *s = *list;
    *list = s->next;
    free(s->buf);
    free(s);
  }
}

void mpb_chan_close(mpb_state *st) {
  mpb_hook_arm(st, 0);
  if (st->inbox)
    for (int i = 0; i < st->size * MPB_NCHAN; i++) mpb_queue_clear(&st->inbox[i]);
  mpb_queue_clear(&st->cmdq);
  if (st->use_mpi) {
    /* Complete what is in flight so MPI_Finalize has nothing pending. */
    while (st->sends || st->csends) mpb_poll(st);
    if (st->nap_self) {
      MPI_Win_free(&st->napwin);
      MPI_Comm_free(&st->node);
      st->nap_self = NULL;
    }
    MPI_Comm_free(&st->ctl);
    MPI_Comm_free(&st->user);
    MPI_Comm_free(&st->ccomm);
    if (st->own_mpi) MPI_Finalize();
  }
  free_sends(&st->sends);
  free(st->inbox);
  free(st->sent_to);
  free(st->recvd_from);
  free(st->first.msg);
  free(st->local_pid);
  free(st->nap_of);
  st->inbox = NULL;
}

/* ------------------------------------------------------- control sends */
void mpb_ctl_send(mpb_state *st, int dst, int kind, int64_t task, int32_t arg,
                  int64_t value, const void *body, size_t len) {
  mpb_send *s = malloc(sizeof *s);
  char *buf = malloc(sizeof(mpb_chdr) + len);
  if (!s || !buf) { /* the control channel cannot lose messages */
    fprintf(stderr, "mplua: [rank %d] out of memory on the control channel\n", st->rank);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  mpb_chdr h = {task, kind, arg, value};
  memcpy(buf, &h, sizeof h);
  if (len) memcpy(buf + sizeof h, body, len);
  s->buf = buf;
  s->ref = LUA_NOREF;
  s->len = sizeof h + len;
  s->dst = dst;
  MPI_Isend(buf, (int)s->len, MPI_BYTE, dst, kind, st->ctl, &s->req);
  st->bytes_sent += s->len;
  s->next = st->csends;
  st->csends = s;
  int done; /* push it out now, then wake the receiver if it naps */
  MPI_Test(&s->req, &done, MPI_STATUS_IGNORE);
  if (st->nap_of && st->nap_of[dst] && __atomic_load_n(st->nap_of[dst], __ATOMIC_SEQ_CST))
    kill(st->local_pid[dst], SIGURG);
}

static int progress_sends(mpb_state *st, mpb_send **list, int user) {
  int n = 0;
  for (mpb_send **p = list; *p;) {
    int done = 0;
    MPI_Test(&(*p)->req, &done, MPI_STATUS_IGNORE);
    if (done) {
      mpb_send *s = *p;
      *p = s->next;
      if (user) st->send_bytes -= s->len;
      if (s->ref != LUA_NOREF) luaL_unref(st->L, LUA_REGISTRYINDEX, s->ref);
      free(s->buf);
      free(s);
      n++;
    } else {
      p = &(*p)->next;
    }
  }
  return n;
}

/* ----------------------------------------------------------- dispatch */
static void ctl_dispatch(mpb_state *st, mpb_msg *m) {
  mpb_chdr h;
  memcpy(&h, m->buf, sizeof h);
  switch (h.kind) {
    case MPB_CTL_CMD:
    case MPB_CTL_EXIT:
    case MPB_CTL_OUT:
      mpb_queue_push(&st->cmdq, m);
      return;
    case MPB_CTL_DONE:
      if (h.task == st->task) {
        st->done_count++;
        st->unrecv += h.value;
      }
      break;
    case MPB_CTL_FAULT:
      if (h.task == st->task && st->rank == 0) {
        st->nfault_msgs++;
        mpb_fault_record(st, m->src, m->buf + sizeof h, m->len - sizeof h);
        if (!st->aborting) mpb_abort_begin(st);
      }
      break;
    case MPB_CTL_ABORT:
      if (h.task > st->abort_task) {
        st->abort_task = h.task;
        if (h.task >= st->task) {
          st->task = h.task;
          st->aborting = 1;
        }
      }
      break;
  }
  free(m);
}

static mpb_msg *recv_probed(MPI_Message *mm, MPI_Status *s) {
  int n = 0;
  MPI_Get_count(s, MPI_BYTE, &n);
  mpb_msg *m = malloc(sizeof *m + (size_t)n);
  if (!m) {
    fprintf(stderr, "mplua: out of memory receiving %d bytes\n", n);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPI_Mrecv(m->buf, n, MPI_BYTE, mm, MPI_STATUS_IGNORE);
  m->next = NULL;
  m->adopt = NULL;
  m->src = s->MPI_SOURCE;
  m->chan = s->MPI_TAG;
  m->len = (size_t)n;
  return m;
}

/* Probing a second communicator costs as much as the first (ch4:ucx), so a
** wait for user messages looks at the control channel every CTL_EVERY polls
** only: aborts are not latency-critical at the microsecond scale. */
#define CTL_EVERY 16

int mpb_poll(mpb_state *st) {
  return mpb_poll_ctl(st, 1);
}

int mpb_poll_ctl(mpb_state *st, int ctl) {
  if (!st->use_mpi) return 0;
  int events = 0, flag;
  MPI_Message mm;
  MPI_Status s;
  for (; ctl;) {
    MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, st->ctl, &flag, &mm, &s);
    if (!flag) break;
    mpb_msg *m = recv_probed(&mm, &s);
    st->bytes_recv += m->len;
    ctl_dispatch(st, m);
    events++;
  }
  for (;;) {
    MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, st->user, &flag, &mm, &s);
    if (!flag) break;
    mpb_msg *m = recv_probed(&mm, &s);
    st->bytes_recv += m->len;
    mpb_uhdr h;
    if (m->len >= sizeof h) {
      memcpy(&h, m->buf, sizeof h);
      if (h.flags & MPB_UF_SPLIT) m = mpb_user_unsplit(st, m);
    }
    mpb_user_arrived(st, m);
    events++;
  }
  if (st->sends) events += progress_sends(st, &st->sends, 1);
  if (st->csends) events += progress_sends(st, &st->csends, 0);
  return events;
}

/* ----------------------------------------------------------- the wait */
static double now_sec(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Backoff: spin (latency close to raw MPI), then yield the core (when
** oversubscribed), then sleep with growing naps up to 1 ms (idle ranks). */
#define SPIN_SEC 50e-6
#define YIELD_SEC 2e-3
#define NAP_MAX_NS 1000000L
#define NAP_LONG_NS 50000000L /* control waits when every sender can wake us */

void mpb_wait(lua_State *L, mpb_state *st, mpb_ready ready, void *ud, int flags) {
  double t0 = 0;
  long nap = 1000;
  unsigned spins = 0;
  int ctl_every = (flags & MPB_WAIT_CTL) ? 1 : CTL_EVERY;
  for (unsigned it = 0;; it++) {
    int ev = mpb_poll_ctl(st, it % ctl_every == 0);
    if (ready(st, ud)) return;
    if (!(flags & MPB_WAIT_NOABORT)) mpb_check_abort(L, st);
    if (ev) {
      t0 = 0;
      spins = 0;
      nap = 1000;
      continue;
    }
    if (!st->use_mpi) luaL_error(L, "mp: [rank 0/1] wait would never end (no MPI)");
    if (++spins < 64) continue; /* cheap: no clock read */
    double t = now_sec();
    if (t0 == 0) t0 = t;
    if (t - t0 < SPIN_SEC) continue;
    if (t - t0 < YIELD_SEC || (flags & MPB_WAIT_HOT)) {
      sched_yield();
      continue;
    }
    struct timespec ts = {nap / 1000000000L, nap % 1000000000L};
    if (st->nap_self) { /* say so, then look once more: a sender may have missed it */
      __atomic_store_n(st->nap_self, 1, __ATOMIC_SEQ_CST);
      if (mpb_poll_ctl(st, 1) || ready(st, ud)) {
        __atomic_store_n(st->nap_self, 0, __ATOMIC_SEQ_CST);
        t0 = 0, spins = 0, nap = 1000;
        continue;
      }
    }
    nanosleep(&ts, NULL);
    if (st->nap_self) __atomic_store_n(st->nap_self, 0, __ATOMIC_SEQ_CST);
    long max = (flags & MPB_WAIT_CTL) && st->all_local ? NAP_LONG_NS : NAP_MAX_NS;
    if (nap < max) nap *= 2;
    if (nap > max) nap = max;
  }
}

/* ------------------------------------------------------------ warnings */
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

/* ------------------------------------------------------- abort error */
int mpb_raise_abort(lua_State *L) {
  lua_getfield(L, LUA_REGISTRYINDEX, ABORT_KEY);
  return lua_error(L);
}

int mpb_is_abort(lua_State *L, int idx) {
  idx = lua_absindex(L, idx);
  lua_getfield(L, LUA_REGISTRYINDEX, ABORT_KEY);
  int r = lua_rawequal(L, idx, -1);
  lua_pop(L, 1);
  return r;
}

void mpb_check_abort(lua_State *L, mpb_state *st) {
  if (st->aborting && st->in_task) mpb_raise_abort(L);
  if (mpb_sigint && st->rank == 0) {
    mpb_sigint = 0;
    luaL_error(L, "interrupted!");
  }
}

/* -------------------------------------------------------------- hooks */
static void poll_hook(lua_State *L, lua_Debug *ar) {
  (void)ar;
  lua_sethook(L, NULL, 0, 0);
  mpb_state *st = mpb_get(L);
  mpb_poll(st);
  if (st->aborting && st->in_task) {
    /* keep raising until the task runner has it, even through user pcalls */
    lua_sethook(L, poll_hook, LUA_MASKCOUNT, 1000);
    mpb_raise_abort(L);
  }
  if (mpb_sigint && st->rank == 0) {
    mpb_sigint = 0;
    luaL_error(L, "interrupted!");
  }
}

static void set_hook(void) {
  lua_State *L = hook_L;
  if (L) lua_sethook(L, poll_hook, LUA_MASKCALL | LUA_MASKRET | LUA_MASKCOUNT, 1);
}

static void on_alarm(int sig) {
  (void)sig;
  set_hook();
}

void mpb_interrupt(void) {
  mpb_sigint = 1;
  set_hook();
}

static void on_sigint(int sig) {
  (void)sig;
  mpb_interrupt();
}

void mpb_hook_arm(mpb_state *st, int on) {
  static int installed = 0;
  if (!installed) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    sa.sa_handler = on_alarm;
    sigaction(SIGALRM, &sa, NULL);
    /* SIGUSR1 too: hydra forwards it to the ranks as often as it comes,
    ** while a second SIGINT makes it kill the job */
    sa.sa_handler = st->rank == 0 ? on_sigint : SIG_IGN;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGUSR1, &sa, NULL);
    installed = 1;
  }
  hook_L = on ? st->L : (st->rank == 0 ? st->L : NULL);
  struct itimerval it;
  memset(&it, 0, sizeof it);
  if (on && st->use_mpi && st->size > 1) {
    it.it_interval.tv_sec = poll_ms / 1000;
    it.it_interval.tv_usec = (poll_ms % 1000) * 1000;
    it.it_value = it.it_interval;
  }
  setitimer(ITIMER_REAL, &it, NULL);
}
