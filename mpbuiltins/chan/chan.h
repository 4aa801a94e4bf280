/* SPDX-License-Identifier: MIT */
/*
** chan/: the runtime's channel layer (DESIGN.md sections 3, 4 and 6). The
** per-state runtime (one per lua_State, so one per rank), the one wait, the
** control channel and its handler table, message framing (headers, parts),
** the mailbox of received user messages, and the one type that owns a
** received message. Nothing here names a layer above it: p2p/, coll/,
** tasks/ and map/ plug in through the handler table and the arrival hook,
** and the host through mpb_host.
*/
#ifndef MPB_CHAN_H
#define MPB_CHAN_H

#include <mpi.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "lua.h"
#include "lauxlib.h"

struct mpb_wbuf;

/* ---------------------------------------------------------------- limits */
#define MPB_NFAN_DEFAULT 16
#define MPB_PENDING_MAX_BYTES ((size_t)64 << 20) /* send back-pressure */
#define MPB_ERRLEN 256
#define MPB_ARRIVAL_LOG 256 /* arrivals remembered by channel and sender (mpb_arrival_at) */

/* User-comm channels (the MPI tag). Only MPB_CH_USER is visible to mp.recv. */
enum { MPB_CH_USER = 0, MPB_CH_HANDOUT, MPB_CH_HANDIN, MPB_CH_REPLY, MPB_CH_COLL,
       MPB_CH_CUSER,   /* send/recv on sub-communicators */
       MPB_CH_POOL,    /* mp.pool hand-out and results */
       MPB_CH_MAP,     /* mp.mapper data, parameters and results */
       MPB_CH_DIST,    /* layout/, topo/: transposes, halos, neighbourhood collectives */
       MPB_CH_MPI,     /* mp.mpi: tagged messages and their acknowledgements (mpi/) */
       MPB_NCHAN };

/* Control-channel message kinds (the MPI tag on the control communicator);
** what each means is decided by the layer that handles it (tasks/). */
enum { MPB_CTL_CMD = 1, MPB_CTL_DONE, MPB_CTL_FAULT, MPB_CTL_ABORT, MPB_CTL_EXIT,
       MPB_CTL_OUT, MPB_CTL_SNAP, MPB_CTL_STATE, MPB_NCTL };

/* Every user message starts with this header; the body is wire-encoded. */
typedef struct mpb_uhdr {
  int64_t task;      /* task number it was sent in */
  uint32_t comm;     /* communicator id (0 = world) */
  uint32_t flags;    /* MPB_UF_USER bits: the sender's layer (e.g. collective kind) */
  uint32_t seq;      /* the sender's layer: e.g. the collective's number on comm */
  int32_t aux;       /* the sender's layer: e.g. the collective's root */
} mpb_uhdr;
#define MPB_UF_USER 0x0000ffffu
#define MPB_UF_SPLIT 0x80000000u /* framing: parts follow (send.c) */

/* Every control message starts with this header. */
typedef struct mpb_chdr {
  int64_t task;
  int32_t kind;
  int32_t arg;       /* CMD: op; EXIT: status */
  int64_t value;     /* CMD: fan-out; DONE: unreceived user messages in subtree */
} mpb_chdr;

struct mpb_state;

/* ------------------------------------------------------------ messages */
/* Where a part of a message received in parts landed in its buf. */
typedef struct mpb_part {
  size_t pos, len;
} mpb_part;

struct mpb_msg_reserve;

/* A received message (user or control): header and body in one block. */
typedef struct mpb_msg {
  struct mpb_msg *next;
  uint64_t seq;      /* arrival order */
  int src;           /* rank in the runtime's communicator */
  int chan;          /* channel, or control kind */
  int nparts;
  int gc_paid;       /* Lua took its GC step before it was laid out (arrive.c) */
  uint32_t tk;       /* its ordinal from its sender while tracing (chan/trace.h), else 0 */
  mpb_part *parts;   /* received in parts: where they landed (owned) */
  size_t lost;       /* > 0: a message of that many bytes could not be received */
  int lost_why;      /* MPB_LOST_*: why */
  size_t len;        /* bytes in buf */
  size_t cap;        /* bytes allocated for buf */
  struct mpb_msg_reserve *home; /* a reserve's buffer lent: goes back there when freed */
  char buf[];        /* header then body */
} mpb_msg;

enum { MPB_LOST_PART,    /* a part was not the size its header announced */
       MPB_LOST_FRAME,   /* its header's table of parts was malformed */
       MPB_LOST_MEMORY }; /* this rank had no memory for it (its parts were drained) */

typedef struct mpb_queue { mpb_msg *head, *tail; } mpb_queue;

/* msg.c. NULL when out of memory. */
mpb_msg *mpb_msg_new(size_t len);
/* The bytes of the kept buffer of the last large message (0: none) / free it. */
size_t mpb_msg_spare(void);
void mpb_msg_drop_spare(void);
/* A buffer for a message of MPB_MSG_RESERVE bytes or fewer, kept for when
** malloc fails: mpb_msg_new, or the reserve's buffer while it is not lent
** (NULL: neither); mpb_msg_free gives it back. */
#define MPB_MSG_RESERVE ((size_t)256 << 10)
typedef struct mpb_msg_reserve { mpb_msg *kept; int out; } mpb_msg_reserve;
int mpb_msg_reserve_init(mpb_msg_reserve *r);
void mpb_msg_reserve_free(mpb_msg_reserve *r);
mpb_msg *mpb_msg_new_or_reserve(mpb_msg_reserve *r, size_t len);
/* How many buffers of 1 MiB or more messages hold (the spare not counted). */
int mpb_msg_live_big(void);
/* Ask for huge pages on a large block of fresh memory. */
void mpb_bigmem_advise(void *p, size_t len);
/* Free a message and whatever parts it still owns (NULL is fine). */
void mpb_msg_free(mpb_msg *m);
void mpb_queue_push(mpb_queue *q, mpb_msg *m);
mpb_msg *mpb_queue_pop(mpb_queue *q);
void mpb_queue_clear(mpb_queue *q);
/* The user header of m (zeros when m is too short to hold one). */
static inline mpb_uhdr mpb_msg_hdr(const mpb_msg *m) {
  mpb_uhdr h = {0, 0, 0, 0, 0};
  if (m->len >= sizeof h) __builtin_memcpy(&h, m->buf, sizeof h);
  return h;
}
/* Push a userdata ("mp.Msg") that owns m from now on (freed by the GC, or
** at once by mpb_msg_release); returns it, inert when m is NULL. */
mpb_msg **mpb_msg_hold(lua_State *L, mpb_msg *m);
/* Free the message held by the "mp.Msg" at idx now (big buffers should not
** wait for the GC). */
void mpb_msg_release(lua_State *L, int idx);
/* Push the values of m (taking it); returns their count. Raises, naming
** fname and the sender, when m is malformed or was lost. */
int mpb_push_msg(lua_State *L, struct mpb_state *st, mpb_msg *m, const char *fname);
/* When m was lost, raise "mp.fname: [rank r/n] ..." saying why (its size,
** its sender); fname NULL: "mp:". m is not freed (its holder frees it). */
void mpb_msg_check_lost(lua_State *L, struct mpb_state *st, const mpb_msg *m,
                        const char *fname);

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
/* A control-message handler (ctl.c): takes ownership of m. */
typedef void (*mpb_ctl_fn)(struct mpb_state *st, mpb_msg *m, const mpb_chdr *h);
/* The arrival hook (a layer above may take a user message before it is
** queued: posted irecvs). Returns 1 when it took m. */
typedef int (*mpb_arrival_fn)(struct mpb_state *st, mpb_msg *m);

typedef struct mpb_sendrec mpb_sendrec; /* a send in flight (send.c) */
typedef struct mpb_arrival mpb_arrival; /* a receive in flight (arrive.c) */
typedef struct mpb_wakeup mpb_wakeup; /* naps and wake-ups (wake.c) */

/* What a rank waits for while it waits for a message: the layers above
** describe their waits (mpb_wait_msg); tasks/ reads it for reports and to
** tell a deadlock. op: the builtin ("mp.recv"); peer: the rank it waits on
** (-1: any); seq: a collective's number on its communicator (0: none). */
typedef struct mpb_waitdesc {
  const char *op;
  int peer;
  uint32_t comm, seq;
} mpb_waitdesc;

typedef struct mpb_waiting {
  const mpb_waitdesc *d;   /* NULL: not waiting for a message */
  lua_State *L;
  int (*ready)(struct mpb_state *st, void *ud);
  void *ud;
} mpb_waiting;

/* Where a task stands on this rank (tasks/ sets it). */
enum { MPB_PHASE_IDLE, MPB_PHASE_RUN, MPB_PHASE_FINISHED };

typedef struct mpb_fault {
  int rank;          /* -1: none; MPB_DEADLOCK: no rank faulted, they all wait;
                        MPB_INTERRUPTED: rank 0's user interrupted the task */
  char *msg;         /* malloc'ed: message and traceback */
  char *value;       /* malloc'ed: the error value, wire-encoded (NULL: not sent) */
  size_t vlen;
  int64_t job;       /* the map job that raised it (0: none) */
} mpb_fault;
#define MPB_DEADLOCK (-2)
#define MPB_INTERRUPTED (-3)

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
  int connect;       /* rank 0: the rank chunks are routed to (0: none) */
  int optimal;       /* parts sent in place, direct small sends (MPLUA_OPTIMAL_PATH) */

  /* task */
  int64_t task;      /* number of the current or last task */
  int in_task;       /* inside a task's user code (p2p allowed) */
  int aborting;      /* told to stop the current task */
  int64_t abort_task;/* last task an ABORT was received for (workers) */
  int faulted;       /* this rank raised an error in the current task */
  int exit_seen;     /* workers: rank 0's exit notice has come */
  int closing;       /* workers: the program has ended; tasks fail (module.c) */
  int phase;         /* MPB_PHASE_* */
  mpb_waiting waiting;
  char where[192];   /* where this rank was when the abort reached it */
  /* Rank 0: its wait has nothing to do (called when it naps; tasks/ looks
  ** for a deadlock and runs the watchdog). */
  void (*on_idle)(struct mpb_state *st, double waited);
  /* an upper layer's answers still to come (checked before MPI ends) */
  int (*settled)(struct mpb_state *st);
  struct mpb_snap *snap;  /* rank 0: the looking around (tasks/where.c) */
  char *wheres;      /* rank 0: every rank's `where` after an abort [size][192] */

  /* rank 0: faults of the current task */
  mpb_fault first;
  int nfault_msgs;   /* FAULT messages received for the current task */
  int nfault_expect; /* FAULT messages sent, known after the resync exchange */
  int nself;         /* ranks that faulted on their own in the last abort */
  int64_t naborts;
  int done_count;    /* DONE messages received for the current task */
  int64_t unrecv;    /* unreceived user messages reported by the subtree */

  /* control */
  mpb_ctl_fn ctl_handler[MPB_NCTL];
  mpb_queue cmdq;    /* control messages the default handler keeps */
  mpb_sendrec *csends;  /* control sends in flight */

  /* user traffic */
  mpb_queue *inbox;  /* [MPB_NCHAN * size] */
  uint64_t seq;      /* arrival counter */
  struct { int chan, src; } arrival_log[MPB_ARRIVAL_LOG]; /* the last arrivals, at seq % LOG */
  uint64_t looks;    /* queues walked looking for a collective's messages (mp.stats) */
  uint64_t user_arrivals;
  mpb_arrival_fn on_arrival;
  struct mpb_req *posted; /* the arrival hook's own list (p2p/request.c) */
  /* Rank 0 was interrupted inside a task: stop it everywhere (tasks/). */
  void (*on_interrupt)(struct mpb_state *st);
  int64_t *sent_to, *recvd_from;  /* user messages since the last resync */
  int64_t user_sent, user_taken;  /* MPB_CH_USER/CUSER/COLL in the current task */
  int64_t dropped;   /* stale user messages dropped here */
  int64_t dropped_job; /* rank 0: messages of finished tasks never received, job-wide */
  uint64_t bytes_sent, bytes_recv; /* through MPI, control channel included */
  mpb_sendrec *sends;   /* user sends in flight */
  mpb_sendrec *spare_send; /* a record ready for a direct send MPI still holds (send.c) */
  uint64_t send_ids;
  size_t send_bytes;
  uint32_t *part_tag;/* [size]: next tag of a message in parts to each rank */
  uint32_t comm_ids; /* communicator ids used in task comm_ids_task (p2p/comm.c) */
  int64_t comm_ids_task;
  int tag_ub;
  mpb_arrival *arrivals, **arrivals_tail; /* receives in flight, in probe order */
  mpb_arrival *arrival_spare; /* a record kept so that taking a message never fails (arrive.c) */
  mpb_msg_reserve reserve; /* a buffer kept for a small message when malloc fails (arrive.c) */
  int *pending_from; /* [2 * size]: arrivals in flight per source (user, ctl) */
  uint32_t *arr_blocked, arr_pass; /* [2 * size]: delivery order (arrive.c) */
  int gc_wanted;     /* a large message waits for a collection: 1 a step, 2 a full one (arrive.c) */
  size_t gc_step_kb; /* the step's size */
  int wref;          /* registry ref of a reusable encode buffer (mp.WBuf) */
  int wbusy;         /* it holds a message not yet handed to MPI */
  struct mpb_wbuf *wscratch;
  char rbuf[4096];   /* small received bodies are decoded from here */
  int rbusy;
  char mpi_err[MPB_ERRLEN]; /* a failure met where nothing could raise (mpb_note) */
  lua_State *L;      /* main thread */
  struct mpb_trace *trace; /* the recorder while tracing, else NULL (chan/trace.h) */
} mpb_state;

/* The communicator lent to compiled extensions: what they leave pending on
** it must never match after an abort, so the abort protocol renews it, when
** it was lent since it was made. */
static inline MPI_Comm mpb_ccomm(mpb_state *st) {
  st->ccomm_lent = 1;
  return st->ccomm;
}

/* ------------------------------------------------------------- state.c */
/* The state of L; raises if mp is not open. */
mpb_state *mpb_get(lua_State *L);
/* The running state of L, or NULL (looked up in the registry: safe in any
** Lua state, whatever its extra space holds). */
mpb_state *mpb_find(lua_State *L);
/* Start/stop the runtime for L (the embedding API calls these before
** luaopen_mp). mpb_start pushes nothing; returns NULL with a message in
** err on failure (every rank fails together). */
mpb_state *mpb_start(lua_State *L, const mpb_opts *o, int *argc, char ***argv, char *err,
                     size_t errlen);
void mpb_stop(lua_State *L);
/* Whether MPI_Finalize can hang in a job that spans hosts: MPICH before 4.2
** with UCX, read from MPI_Get_library_version (leave.c). */
int mpb_finalize_may_hang(void);
/* Tell the process manager this rank is done, for a rank that leaves
** without MPI_Finalize (leave.c): 1 acknowledged, 0 no PMI connection to
** tell, -1 no answer. */
int mpb_pmi_leave(void);
/* The one monotonic clock, in seconds. */
double mpb_now(void);
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

/* -------------------------------------------------------------- ctl.c */
/* Send a control message (body copied); wakes the receiver if it naps. */
void mpb_ctl_send(mpb_state *st, int dst, int kind, int64_t task, int32_t arg,
                  int64_t value, const void *body, size_t len);
/* Handle control messages of this kind with fn (NULL: keep them in cmdq). */
void mpb_ctl_on(mpb_state *st, int kind, mpb_ctl_fn fn);
/* Dispatch a received control message (arrive.c). */
void mpb_ctl_dispatch(mpb_state *st, mpb_msg *m);

/* ------------------------------------------------------------ arrive.c */
/* Receive what has arrived: control messages are dispatched, user messages
** go to the mailbox, parts to their messages; sends are progressed.
** Returns the number of events. */
int mpb_poll(mpb_state *st);
/* The same, looking at the control channel only when ctl is non-zero. */
int mpb_poll_ctl(mpb_state *st, int ctl);
/* Run a collection (L; NULL: none) and post the parts of large messages
** that waited for one (st->gc_wanted): see arrive.c. */
void mpb_arrivals_collect(lua_State *L, mpb_state *st);
/* Nothing is being received (no message in parts half way). */
int mpb_arrivals_idle(const mpb_state *st);
void mpb_arrivals_free(mpb_state *st);

/* ----------------------------------------------------------- mailbox.c */
static inline mpb_queue *mpb_inbox(mpb_state *st, int chan, int src) {
  return &st->inbox[chan * st->size + src];
}
/* Queue an arrived user message, or drop it if it is stale. */
void mpb_user_arrived(mpb_state *st, mpb_msg *m);
/* The channel and sender of the user message that arrived as number s
** (st->seq counts them): 1, or 0 when s is not among the last
** MPB_ARRIVAL_LOG (a waiter that fell that far behind scans its queues).
** A wait that looks only at what arrived since it last looked does O(1)
** work per arrival, whatever the number of ranks it waits for. */
static inline int mpb_arrival_at(const mpb_state *st, uint64_t s, int *chan, int *src) {
  if (s == 0 || s > st->seq || st->seq - s >= MPB_ARRIVAL_LOG) return 0;
  *chan = st->arrival_log[s % MPB_ARRIVAL_LOG].chan;
  *src = st->arrival_log[s % MPB_ARRIVAL_LOG].src;
  return 1;
}
/* Forget queued messages of earlier tasks (task start) / all (resync). */
void mpb_inbox_clear(mpb_state *st, int all);
/* Wait for the oldest message on chan from src (-1: any) and take it. */
mpb_msg *mpb_user_take(lua_State *L, mpb_state *st, int chan, int src, const char *fname);

/* -------------------------------------------------------------- send.c */
/* Encode values first..first+n-1 into the reusable buffer, after hdrlen
** bytes of header room; raises "bad argument #arg to 'mp.fname' (...)" on
** unserializable values (arg 0: no argument number). Leaves the buffer's
** userdata on the stack. */
struct mpb_wbuf *mpb_encode_msg(lua_State *L, int first, int n, const char *fname,
                                int arg, size_t hdrlen);
/* b's bytes have been handed over: the reusable buffer is free again. */
void mpb_encode_done(mpb_state *st, struct mpb_wbuf *b);
/* Send the message in b to rank dst on chan, with the header h (its task is
** set here; NULL: world, no flags). Large arrays and strings go as parts,
** in place. ids NULL: return when MPI is done with those parts (the caller
** may then write its arrays); else the range of sends made goes to ids
** (ids[0] > ids[1]: none) and they anchor what they read. When last, b's
** bytes may be taken rather than copied. b's userdata must be on top. */
void mpb_send(lua_State *L, mpb_state *st, int dst, int chan, struct mpb_wbuf *b, int last,
              const mpb_uhdr *h, uint64_t ids[2]);
static inline void mpb_user_send(lua_State *L, mpb_state *st, int dst, int chan,
                                 struct mpb_wbuf *b, int last) {
  mpb_send(L, st, dst, chan, b, last, NULL, NULL);
}
/* Send len bytes (a whole message, header first); takes buf (malloc'ed) when
** own, else copies it. */
void mpb_send_bytes(lua_State *L, mpb_state *st, int dst, int chan, char *buf, size_t len,
                    int own);
/* Send a received message on to dst unchanged, its parts in place (no copy);
** the sends made go to ids, as mpb_send's. m must outlive them: wait with
** mpb_sends_gone before freeing or decoding it. */
void mpb_msg_forward(lua_State *L, mpb_state *st, const mpb_msg *m, int dst, int chan,
                     uint64_t ids[2]);
/* Ready functions: no send with an id in ((uint64_t *)ud)[0..1] is in flight /
** no user send at all. */
int mpb_sends_gone(mpb_state *st, void *ud);
int mpb_sends_done(mpb_state *st, void *ud);
/* Progress sends in flight; returns how many completed. */
int mpb_sends_progress(mpb_state *st);
/* Free the records of every send (shutdown). */
void mpb_sends_free(mpb_state *st);

/* -------------------------------------------------------------- wait.c */
/* The one wait: returns when ready(st, ud) is true. Progresses all traffic,
** watches the control channel, backs off to sleeping. Unless flags has
** MPB_WAIT_NOABORT, raises the abort error when the task is being stopped,
** and "interrupted!" on rank 0 after SIGINT. */
typedef int (*mpb_ready)(mpb_state *st, void *ud);
#define MPB_WAIT_NOABORT 1
#define MPB_WAIT_CTL 2     /* waiting for control messages only */
#define MPB_WAIT_HOT 4     /* a short protocol step: yield, never sleep */
#define MPB_WAIT_BRIEF 8   /* with HOT, on a host with more ranks than cores: naps of at
                              most 1 ms instead (MPI's collectives in progress wake no one) */
void mpb_wait(lua_State *L, mpb_state *st, mpb_ready ready, void *ud, int flags);
/* The same for a message: the wait is described by d while it lasts. */
void mpb_wait_msg(lua_State *L, mpb_state *st, mpb_ready ready, void *ud,
                  const mpb_waitdesc *d);
/* "file.lua:12": the innermost Lua function running on L (empty: none). */
void mpb_lua_line(lua_State *L, char *buf, size_t n);
/* The same without Lua (shutdown): gives up after timeout seconds; returns
** whether ready became true. */
int mpb_wait_bounded(mpb_state *st, mpb_ready ready, void *ud, double timeout);
/* Raise the abort error / check for abort, interrupt or a noted MPI failure,
** and raise. */
int mpb_raise_abort(lua_State *L);
void mpb_check_abort(lua_State *L, mpb_state *st);
/* Is the value at idx the abort error? */
int mpb_is_abort(lua_State *L, int idx);
/* Create the abort error (state.c, at start). */
void mpb_abort_error_init(lua_State *L);

/* -------------------------------------------------------------- wake.c */
/* Learn the ranks of this host, publish nap flags and a wake-up address.
** Collective over st->base. Returns 0, or -1 (message in err). Then, after
** a collective that follows it on every rank, mpb_wake_ready (the host's
** shared words have been mapped by all: the host's first rank stops
** lending them). */
int mpb_wake_init(mpb_state *st, char *err, size_t errlen);
void mpb_wake_ready(mpb_state *st);
void mpb_wake_close(mpb_state *st);
/* Sleep up to ns nanoseconds unless woken (a message for us was sent, or a
** signal came); ready is checked once more after saying we nap. Returns 1
** if ready was true. */
int mpb_nap(mpb_state *st, long ns, mpb_ready ready, void *ud, int ctl);
/* A control (ctl) or user message was just sent to dst: wake it if it naps. */
void mpb_wake(mpb_state *st, int dst, int ctl);
/* Wake-up datagrams taken from the job's ranks, and from elsewhere (refused). */
void mpb_wake_counts(const mpb_state *st, uint64_t *woken, uint64_t *refused);
/* Every rank of the job is on this host / this host has more ranks than cores. */
int mpb_all_local(const mpb_state *st);
/* The process id of rank r when it runs on this host (same kernel and
** namespaces), else 0. */
int mpb_local_pid(const mpb_state *st, int r);
int mpb_oversubscribed(const mpb_state *st);
/* Where runtime rank r ran when the runtime started: *host the lowest rank
** on its host (the same boot id and host name), *cpu the
** CPU it ran on and *numa that CPU's NUMA node (-1: unknown; without the
** runtime's exchange, one process alone: host 0, and only this rank's CPU). */
void mpb_where(const mpb_state *st, int r, int *host, int *cpu, int *numa);

/* -------------------------------------------------------------- hook.c */
/* Arm/disarm the periodic poll of long Lua computations on the main thread
** (at a task's start and end); SIGINT handling on rank 0. */
void mpb_hook_arm(mpb_state *st, int on);
/* Install the signal handlers (start-up). */
void mpb_hook_init(lua_State *L, mpb_state *st);
void mpb_hook_close(mpb_state *st);
extern volatile sig_atomic_t mpb_sigint;
/* Interrupt rank 0's running command as Ctrl-C does (async-signal-safe: a
** host's signal handler may call it). */
void mpb_interrupt(void);
/* Drop a pending interrupt: it belonged to a command that is over. */
void mpb_interrupt_clear(void);
/* Consume a pending interrupt (rank 0) and raise "interrupted!". */
void mpb_check_interrupt(lua_State *L, mpb_state *st);
/* Raise the abort error, and keep raising it at the main thread's every
** instruction until the task runner has it (mpb_hook_arm(st, 0) stops). */
void mpb_raise_abort_hooked(lua_State *L);
/* The thread whose stack says where this rank runs: the main thread. */
lua_State *mpb_running(void);

#include "chan/trace.h"

#endif
