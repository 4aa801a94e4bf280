/* SPDX-License-Identifier: MIT */
/*
** chan/, ground floor: the per-state runtime (one per lua_State, so one
** per rank), what a host decides, how failures are reported, the clock,
** and leaving a job (leave.c).
*/
#ifndef MPB_CHAN_STATE_H
#define MPB_CHAN_STATE_H

#include <mpi.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "lua.h"
#include "lauxlib.h"
#include "chan/msg.h"

struct mpb_wbuf;

/* ---------------------------------------------------------------- limits */
#define MPB_NFAN_DEFAULT 16
#define MPB_PENDING_MAX_BYTES ((size_t)64 << 20) /* send back-pressure */
#define MPB_ERRLEN 256
#define MPB_NSLOTS 4 /* layers above with a state of their own (mpb_state.slot) */
#define MPB_ARRIVAL_LOG 256 /* arrivals remembered by channel and sender (mpb_arrival_at) */

/* ------------------------------------------------------- host decisions */
/* What a host decides and the library only reports (interp/ fills these;
** with a NULL member the library does the quiet default named below). */
typedef struct mpb_progress {
  const char *what;  /* "mp.pool" */
  int64_t done;
  int64_t total;     /* -1: unknown */
  double elapsed;    /* seconds since the start */
  int final;         /* the last report of this run (only sent if one was before) */
} mpb_progress;

typedef struct mpb_host {
  /* A long operation's progress, every ~0.1 s after its first second.
  ** NULL: nothing is shown. */
  void (*progress)(lua_State *L, const mpb_progress *p, void *ud);
  /* A warning (e.g. messages dropped at the end of a task). NULL: Lua's own
  ** warning system (lua_warning), which the host may have turned off. */
  void (*warn)(lua_State *L, const char *msg, void *ud);
  /* A task faulted; its report (a string) is on top of the stack. Returns to
  ** let the caller raise it; may end the job instead (batch mode). NULL:
  ** raise it. */
  void (*fault)(lua_State *L, void *ud);
  void *ud;
} mpb_host;

/* Report a warning through the host (or lua_warning). */
void mpb_warn(lua_State *L, const char *fmt, ...);

/* --------------------------------------------------------------- state */
struct mpb_state;
/* A condition a wait waits for (wait.h), a nap checks (wake.h). */
typedef int (*mpb_ready)(struct mpb_state *st, void *ud);
/* A control-message handler (ctl.c): takes ownership of m. */
typedef void (*mpb_ctl_fn)(struct mpb_state *st, mpb_msg *m, const mpb_chdr *h);
/* The arrival hook (a layer above may take a user message before it is
** queued: posted irecvs). Returns 1 when it took m. */
typedef int (*mpb_arrival_fn)(struct mpb_state *st, mpb_msg *m);

typedef struct mpb_sendrec mpb_sendrec; /* a send in flight (send.c) */
typedef struct mpb_arrival mpb_arrival; /* a receive in flight (arrive.c) */
typedef struct mpb_wakeup mpb_wakeup; /* naps and wake-ups (wake.c) */

/* What a rank waits for while it waits for a message: the layers above
** describe their waits (mpb_wait_described); tasks/ reads it for reports and to
** tell a deadlock. op: the builtin ("mp.recv"); peer: the rank it waits on
** (-1: any); seq: a collective's number on its communicator (0: none). */
typedef struct mpb_waitdesc {
  const char *op;
  int peer;
  uint32_t comm, seq;
  struct mpb_want *want; /* a receive's: its message handed over as it arrives (mailbox.h) */
} mpb_waitdesc;

typedef struct mpb_waiting {
  const mpb_waitdesc *d;   /* NULL: not waiting for a message */
  uint32_t pause, turn;    /* nonzero: a pause (mpb_wait_paused), its number; its turn */
  lua_State *L;
  int (*ready)(struct mpb_state *st, void *ud);
  void *ud;
} mpb_waiting;

/* Where a task stands on this rank (tasks/ sets it). */
enum { MPB_PHASE_IDLE, MPB_PHASE_RUN, MPB_PHASE_FINISHED };


/* What a host lets the runtime do to its process (mpb_start). */
typedef struct mpb_opts {
  int use_mpi;       /* 0: the serial backend, MPI untouched */
  MPI_Comm comm;     /* the base communicator (an intra-communicator; MPI_COMM_NULL: world) */
  unsigned out;      /* MPB_OUT_* bits: what the runtime must leave alone */
} mpb_opts;
#define MPB_OUT_SIGNALS 1u   /* no signal handler (SIGINT, SIGUSR1, SIGALRM) is installed */
#define MPB_OUT_TIMER 2u     /* no interval timer: long Lua loops are polled by a count hook */

typedef struct mpb_state {
  int use_mpi, own_mpi;
  unsigned out;      /* MPB_OUT_* bits the host asked for */
  int no_finalize;   /* the host ends the process itself: stop without MPI_Finalize */
  int ends_process;  /* os.exit: the process ends after the stop, so MPI is finalized even
                     ** where the host started it (no one else can; a rank that leaves
                     ** without it is taken by the launcher for a crash) */
  int rank, size;
  MPI_Comm base;     /* the host's communicator (MPI_COMM_WORLD by default) */
  MPI_Comm ctl;      /* commands and the abort protocol */
  MPI_Comm user;     /* all mp messages (channels as tags) */
  MPI_Comm bulk;     /* the parts of messages sent in parts (never probed) */
  MPI_Comm ccomm;    /* for compiled extensions (mpb_ccomm); renewed after an abort */
  int ccomm_lent;    /* ccomm was handed out since it was made (tasks/abort.c) */
  int nfan;
  mpb_host host;
  mpb_wakeup *wake;
  int zero_copy;     /* parts sent in place, direct small sends (MPLUA_ZERO_COPY) */

  /* task */
  int64_t task;      /* number of the current or last task */
  int in_task;       /* inside a task's user code (p2p allowed) */
  int aborting;      /* told to stop the current task */
  int64_t abort_task;/* last task an ABORT was received for (workers) */
  int faulted;       /* this rank raised an error in the current task */
  int exit_seen;     /* rank 0's exit notice has been sent (rank 0) or has come */
  int closing;       /* workers: the program has ended; tasks fail (module.c) */
  int in_loop;       /* workers: in the idle loop (not running a program of their own) */
  int phase;         /* MPB_PHASE_* */
  mpb_waiting waiting;
  uint32_t pauses, go; /* pauses begun here; the last one rank 0 let go (tasks/where.c) */
  char where[192];   /* where this rank was when the abort reached it */
  /* Rank 0: its wait has nothing to do (called when it naps; tasks/ looks
  ** for a deadlock and runs the watchdog). */
  void (*on_idle)(struct mpb_state *st, double waited);
  /* an upper layer's answers still to come (checked before MPI ends) */
  int (*settled)(struct mpb_state *st);

  int64_t naborts;

  /* control */
  mpb_ctl_fn ctl_handler[MPB_NCTL];
  mpb_queue cmdq;    /* control messages the default handler keeps */
  mpb_sendrec *csends;  /* control sends in flight */

  /* user traffic */
  mpb_queue *inbox;  /* [MPB_NCHAN * size]: per channel and sender (mailbox.h) */
  mpb_chanq queued[MPB_NCHAN]; /* the same messages, per channel in arrival order */
  uint64_t seq;      /* arrival counter */
  struct { int chan, src; } arrival_log[MPB_ARRIVAL_LOG]; /* the last arrivals, at seq % LOG */
  uint64_t looks;    /* queues walked looking for a collective's messages (mp.stats) */
  uint64_t any_looks; /* queued messages and queues looked at from any source (mp.stats) */
  uint64_t user_arrivals;
  mpb_arrival_fn on_arrival;
  uint32_t arrival_chans; /* bit 1 << chan: on_arrival may take that channel's messages now
                             (the layers that register it say so); the others pass it by */
  struct mpb_want *want; /* the receive whose poll this is, or NULL (mailbox.h) */
  /* Rank 0 was interrupted inside a task: stop it everywhere (tasks/). */
  void (*on_interrupt)(struct mpb_state *st);
  /* An upper layer's name for a wait of L that one of its calls written in
  ** Lua makes (mp.mpi's "mpi.Gatherv(root 0)" for a wait in mp's gather):
  ** written into buf, returns 1; 0 when no such call is on L's stack. Reads
  ** the stack only when a wait is described (reports, deadlocks): free on
  ** the calls' path. No Lua error. NULL: waits keep their own words. */
  int (*call_name)(struct mpb_state *st, lua_State *L, char *buf, size_t n);
  int64_t *sent_to, *recvd_from;  /* user messages since the last resync */
  int64_t user_sent, user_taken;  /* MPB_CH_USER/CUSER/COLL in the current task */
  int64_t dropped;   /* stale user messages dropped here */
  int64_t dropped_job; /* rank 0: messages of finished tasks never received, job-wide */
  uint64_t bytes_sent, bytes_recv; /* through MPI, control channel included */
  mpb_sendrec *sends;   /* user sends in flight */
  mpb_sendrec *spare_send; /* a record ready for a direct send MPI still holds (send.c) */
  uint64_t send_ids;
  size_t send_bytes;
  size_t send_bytes_peak; /* the most send_bytes since mp.stats() last read it */
  uint64_t sends_done;  /* user sends MPI is done with (a window's clock: layout/xchg.c) */
  uint32_t *part_tag;/* [size]: next tag of a message in parts to each rank */
  int tag_ub;
  mpb_arrival *arrivals, **arrivals_tail; /* receives in flight, in probe order */
  mpb_arrival *arrival_spare; /* a record kept so that taking a message never fails (arrive.c) */
  mpb_msg_mem msgmem; /* received messages' spare and reserve (msg.c) */
  struct mpb_lstr *lstr; /* long strings received for Lua to adopt (wire/wire_lstr.h) */
  int *pending_from; /* [2 * size]: arrivals in flight per source (user, ctl) */
  uint32_t *arr_blocked, arr_pass; /* [2 * size]: delivery order (arrive.c) */
  int gc_wanted;     /* a large message waits for a collection: 1 a step, 2 a full one (arrive.c) */
  size_t gc_bytes;   /* the bytes of the messages that wait for it */
  int gc_skip, gc_skip_left; /* large messages that skip the step after a costly one */
  int wref;          /* registry ref of a reusable encode buffer (mp.WBuf) */
  int wbusy;         /* it holds a message not yet handed to MPI */
  struct mpb_wbuf *wscratch;
  char rbuf[4096];   /* small received bodies are decoded from here */
  int rbusy;
  char mpi_err[MPB_ERRLEN]; /* a failure met where nothing could raise (mpb_note) */
  lua_State *L;      /* main thread */
  struct mpb_trace *trace; /* the recorder while tracing, else NULL (chan/trace.h) */
  struct {           /* the interrupt hook of this state (hook.c) */
    lua_State *main; /* the main thread, between mpb_hook_init and mpb_hook_close */
    int armed;       /* a task runs: ticks poll */
    int count_mode;  /* no timer: a count hook polls during a task */
    int poll_ms;     /* the timer's period */
    lua_Hook user_fn; /* the main thread's hook when the task began, put back at its end */
    int user_mask, user_count;
  } hook;
  /* The state each layer above owns, registered at its opening in the slot
  ** its header names (the memory is the layer's: a userdata it keeps in the
  ** registry, alive as long as this state). */
  void *slot[MPB_NSLOTS];
} mpb_state;

/* The communicator lent to compiled extensions: what they leave pending on
** it must never match after an abort, so the abort protocol renews it, when
** it was lent since it was made. */
static inline MPI_Comm mpb_ccomm(mpb_state *st) {
  st->ccomm_lent = 1;
  return st->ccomm;
}

/* ------------------------------------------------------------- state.c */
/* The state of L (kept in its extra space: every mp call reads it, inline);
** raises if mp is not open. */
void mpb_get_failed(lua_State *L);
static inline mpb_state *mpb_get(lua_State *L) {
  mpb_state *st = *(mpb_state **)lua_getextraspace(L);
  if (__builtin_expect(st == NULL, 0)) mpb_get_failed(L);
  return st;
}
/* The running state of L, or NULL (looked up in the registry: safe in any
** Lua state, whatever its extra space holds). */
mpb_state *mpb_find(lua_State *L);
/* Whether MPI_Finalize can hang in a job that spans hosts: MPICH before 4.2
** with UCX, read from MPI_Get_library_version (leave.c). */
int mpb_finalize_may_hang(void);
/* Tell the process manager this rank is done, for a rank that leaves
** without MPI_Finalize (leave.c): 1 acknowledged, 0 no PMI connection to
** tell, -1 no answer. */
int mpb_pmi_leave(void);
/* The one monotonic clock, in seconds. */
double mpb_now(void);
/* MPI's error string for rc into out (n bytes). */
void mpb_mpi_string(int rc, char *out, size_t n);
/* "[rank r/n] " prefix of every runtime error. */
#define MPB_RANKFMT "[rank %d/%d]"
/* Raise "mp.fname: [rank r/n] what: <MPI's error string>" for rc. */
int mpb_mpi_raise(lua_State *L, mpb_state *st, int rc, const char *fname, const char *what);
/* Record an MPI failure met where nothing can raise (raised by the next
** wait); returns rc. */
int mpb_mpi_note(mpb_state *st, int rc, const char *what);
/* Record a failure met where nothing can raise (raised by the next wait, as
** mpb_mpi_note's). */
void mpb_note(mpb_state *st, const char *fmt, ...);
/* When one member of a collective step fails, every member raises at once
** (none waits for a rank that may catch its error): the failing rank its
** own error (MPB_ERR_OWN), the others an echo of it (MPB_ERR_ECHO: "mp.save:
** [rank 1/4] rank 3 of the communicator failed"). The fault report takes
** the rank's own error over an echo (tasks/abort.c), and reports the own
** error even when the abort an echo started reached its rank first. */
enum { MPB_ERR_OWN = 1, MPB_ERR_ECHO };
int mpb_raise_as(lua_State *L, int kind, const char *fmt, ...);
/* The kind of the error value at idx when it is the last error of its kind
** mpb_raise_as raised, else 0. */
int mpb_error_kind(lua_State *L, int idx);
/* Say on stderr that an MPI call failed where nothing can raise and nothing
** depends on it (shutdown); returns rc. */
int mpb_mpi_warn(mpb_state *st, int rc, const char *what);
/* A failure the runtime cannot recover from (the control channel): print
** and end the job. */
void mpb_fatal(mpb_state *st, const char *fmt, ...);
/* mpb_fatal for an MPI failure: "what: <MPI's error string>". */
void mpb_fatal_mpi(mpb_state *st, int rc, const char *what);
/* MPI_Abort(comm, status), once what this rank wrote to stdout and stderr
** has been taken by the launcher. Does not return. */
void mpb_abort_job(MPI_Comm comm, int status);
/* "file.lua:12": the innermost Lua function running on L, past the runtime's own
** Lua ("=mp..." chunks) when a user's line is under it (empty: none). */
void mpb_lua_line(lua_State *L, char *buf, size_t n);
/* Where the state lives in the registry (state.c, start.c). */
#define MPB_STATE_KEY "mp.state"

#endif
