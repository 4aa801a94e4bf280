/*
** What the mpbuiltins/ files share: the per-state runtime (one per lua_State,
** so one per rank), the control channel, the one wait, user-message inboxes.
** Nothing here knows about a prompt.
*/
#ifndef MPB_H
#define MPB_H

#include <mpi.h>
#include <signal.h>
#include <sys/types.h>
#include <stdint.h>
#include <stddef.h>
#include "lua.h"
#include "lauxlib.h"

/* ---------------------------------------------------------------- limits */
#define MPB_NFAN_DEFAULT 16
#define MPB_PENDING_MAX_BYTES ((size_t)64 << 20) /* send back-pressure */
#define MPB_ERRLEN 256

/* User-comm channels (the MPI tag). Only MPB_CH_USER is visible to mp.recv. */
enum { MPB_CH_USER = 0, MPB_CH_HANDOUT, MPB_CH_HANDIN, MPB_CH_REPLY, MPB_CH_COLL,
       MPB_CH_CUSER,   /* send/recv on sub-communicators (comm.c) */
       MPB_CH_POOL,    /* mp.pool hand-out and results (pool.c) */
       MPB_CH_MAP,     /* mp.mapper data, parameters and results (map.c) */
       MPB_NCHAN };

/* Header flag: the message's large segments follow as separate messages. */
#define MPB_UF_SPLIT 0x80000000u

/* Control-channel message kinds (the MPI tag on the control communicator). */
enum {
  MPB_CTL_CMD = 1,   /* leader -> staff (tree): start a task */
  MPB_CTL_DONE,      /* staff -> boss (tree): my subtree finished */
  MPB_CTL_FAULT,     /* any -> 0: I raised an error */
  MPB_CTL_ABORT,     /* 0 -> every worker: stop the task */
  MPB_CTL_EXIT,      /* leader -> staff (tree): end the process */
  MPB_CTL_OUT        /* connected rank -> 0: text for the prompt */
};

/* Task operations carried by a CMD. */
enum { MPB_TASK_CALL = 1, MPB_TASK_CHUNK, MPB_TASK_REQUIRE, MPB_TASK_CD, MPB_TASK_LINE };

/* Every user message starts with this header; the body is wire-encoded. */
typedef struct mpb_uhdr {
  int64_t task;      /* task number it was sent in */
  uint32_t comm;     /* communicator id (0 = world) */
  uint32_t flags;
} mpb_uhdr;

/* Every control message starts with this header. */
typedef struct mpb_chdr {
  int64_t task;
  int32_t kind;
  int32_t arg;       /* CMD: op; DONE: unused; EXIT: status */
  int64_t value;     /* CMD: nfan; DONE: unreceived user messages in subtree */
} mpb_chdr;

/* A received message (user or control): header and body in one malloc'ed block. */
/* Long strings of a message received in parts, each in a block laid out as
** a Lua string so that Lua adopts it instead of copying (see adopt.c). */
typedef struct mpb_adopt {
  int n;
  struct { size_t pos, len; void *block; } s[];
} mpb_adopt;

typedef struct mpb_msg {
  struct mpb_msg *next;
  mpb_adopt *adopt;  /* or NULL */
  uint64_t seq;      /* arrival order */
  int src;           /* world rank */
  int chan;          /* channel or control kind */
  size_t len;        /* bytes in buf */
  char buf[];        /* header then body */
} mpb_msg;

typedef struct mpb_queue { mpb_msg *head, *tail; } mpb_queue;

/* A send in flight; buf freed when the request completes. */
typedef struct mpb_send {
  struct mpb_send *next;
  MPI_Request req;
  size_t len;
  char *buf;         /* malloc'ed, or NULL when ref anchors the data */
  int ref;           /* registry ref keeping zero-copy data alive, or LUA_NOREF */
  int dst;
  uint64_t id;
} mpb_send;

typedef struct mpb_fault {
  int rank;          /* -1: none */
  char *msg;         /* malloc'ed: message and traceback */
} mpb_fault;

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

/* ------------------------------------------------------------- the state */
typedef struct mpb_state {
  int use_mpi, own_mpi;
  int rank, size;
  MPI_Comm ctl;      /* commands and the abort protocol */
  MPI_Comm user;     /* all mp traffic (channels as tags) */
  MPI_Comm ccomm;    /* for compiled extensions; renewed after each abort */
  int nfan;
  mpb_host host;
  pid_t *local_pid;  /* pid of each rank on this host, 0 elsewhere */
  int **nap_of;      /* each local rank's "napping" word (node-shared), or NULL */
  int *nap_self;
  MPI_Comm node;     /* the ranks of this host */
  MPI_Win napwin;
  int all_local;     /* every rank on this host */
  int connect;       /* rank 0: the rank chunks are routed to (0: none) */

  /* task */
  int64_t task;      /* number of the current or last task */
  int in_task;       /* inside a task's user code (p2p allowed) */
  int aborting;      /* told to stop the current task */
  int64_t abort_task;/* last task an ABORT was received for (workers) */
  int faulted;       /* this rank raised an error in the current task */
  int exit_now;      /* EXIT received */
  int exit_status;

  /* rank 0: faults of the current task */
  mpb_fault first;
  int nfault_msgs;   /* FAULT messages received for the current task */
  int nfault_expect; /* FAULT messages sent, known after the resync exchange */
  int nself;         /* ranks that faulted on their own in the last abort */
  int64_t naborts;
  int done_count;    /* DONE messages received for the current task */
  int64_t unrecv;    /* unreceived user messages reported by staff */

  /* user traffic */
  mpb_queue *inbox;  /* [MPB_NCHAN * size] */
  uint64_t seq;      /* arrival counter */
  uint64_t user_arrivals;
  int64_t *sent_to, *recvd_from;  /* since the last resync, all channels */
  int64_t user_sent, user_taken;  /* MPB_CH_USER in the current task */
  int64_t dropped;   /* stale user messages dropped */
  uint64_t bytes_sent, bytes_recv; /* through MPI, control channel included */
  mpb_send *sends;   /* user sends in flight */
  uint64_t send_ids;
  size_t send_bytes;
  mpb_send *csends;  /* control sends in flight */
  mpb_queue cmdq;    /* control messages waiting for the idle loop */
  int wref;          /* registry ref of a reusable encode buffer (mp.WBuf) */
  int wbusy;         /* it holds a message not yet handed to MPI */
  void *wscratch;    /* that buffer */
  char rbuf[4096];   /* small received bodies are decoded from here */
  size_t stroff;     /* offset of a long string's bytes in its block; 0: no adoption */
  int rbusy;
  struct mpb_req *posted; /* irecv requests waiting for a message (request.c) */
  lua_State *L;      /* main thread */
} mpb_state;

/* The state of L (stored in the registry); raises if mp is not open. */
mpb_state *mpb_get(lua_State *L);

/* --------------------------------------------------------------- chan.c */
int mpb_chan_init(lua_State *L, mpb_state *st, int use_mpi, int *argc, char ***argv);
void mpb_chan_close(mpb_state *st);
/* Send a control message (copied). */
void mpb_ctl_send(mpb_state *st, int dst, int kind, int64_t task, int32_t arg,
                  int64_t value, const void *body, size_t len);
/* Receive what has arrived: control messages are dispatched, user messages
** queued. Returns the number of events (arrivals, completed sends). */
int mpb_poll(mpb_state *st);
/* The same, looking at the control channel only when ctl is non-zero. */
int mpb_poll_ctl(mpb_state *st, int ctl);

/* The one wait: returns when ready(L, ud) is true. Progresses all traffic,
** watches the control channel, backs off to sleeping. Unless flags has
** MPB_WAIT_NOABORT, raises the abort error when the task is being stopped,
** and "interrupted" on rank 0 after SIGINT. */
typedef int (*mpb_ready)(mpb_state *st, void *ud);
#define MPB_WAIT_NOABORT 1
#define MPB_WAIT_CTL 2     /* waiting mostly for control messages */
#define MPB_WAIT_HOT 4     /* a short protocol step: yield, never sleep */
void mpb_wait(lua_State *L, mpb_state *st, mpb_ready ready, void *ud, int flags);
/* Raise the abort error / check for abort or interrupt and raise. */
int mpb_raise_abort(lua_State *L);
void mpb_check_abort(lua_State *L, mpb_state *st);
/* Is v the abort error? */
int mpb_is_abort(lua_State *L, int idx);
/* Arm/disarm the periodic poll of long Lua computations, SIGINT handling. */
void mpb_hook_arm(mpb_state *st, int on);
extern volatile sig_atomic_t mpb_sigint;
/* Interrupt rank 0's running command as Ctrl-C does (async-signal-safe: a
** host's signal handler may call it). */
void mpb_interrupt(void);

/* ---------------------------------------------------------------- p2p.c */
void mpb_queue_push(mpb_queue *q, mpb_msg *m);
mpb_msg *mpb_queue_pop(mpb_queue *q);
void mpb_queue_clear(mpb_queue *q);
/* Free a message and whatever long strings it still owns. */
void mpb_msg_free(mpb_msg *m);
mpb_queue *mpb_inbox(mpb_state *st, int chan, int src);
/* Encode values first..first+n-1 into a fresh message with a user header;
** raises "bad argument #arg to 'fname' (...)" on unserializable values.
** Leaves the buffer userdata on the stack and returns it. */
struct mpb_wbuf *mpb_encode_msg(lua_State *L, int first, int n, const char *fname,
                                int arg, size_t hdrlen);
/* b's bytes have been handed over: the reusable buffer is free again. */
void mpb_encode_done(mpb_state *st, struct mpb_wbuf *b);
/* Send the message in b (header filled here) to world rank dst on chan; when
** last, b's bytes are taken instead of copied. b's userdata must be on top. */
void mpb_user_send(lua_State *L, mpb_state *st, int dst, int chan,
                   struct mpb_wbuf *b, int last);
/* The same with the header's communicator id and flags (sub-communicators,
** collectives). */
void mpb_user_send_hdr(lua_State *L, mpb_state *st, int dst, int chan,
                       struct mpb_wbuf *b, int last, uint32_t comm, uint32_t flags);
/* The same without waiting for zero-copy parts (nonblocking sends): the MPI
** sends made are those with ids ids[0]..ids[1] (none when ids[0] > ids[1]);
** they anchor the arrays and strings they read until they complete. */
void mpb_user_isend_hdr(lua_State *L, mpb_state *st, int dst, int chan,
                        struct mpb_wbuf *b, int last, uint32_t comm, uint32_t flags,
                        uint64_t ids[2]);
/* Ready function: no send with an id in ((uint64_t *)ud)[0..1] is in flight. */
int mpb_sends_gone(mpb_state *st, void *ud);
/* Send len bytes (header first) to dst on chan; takes buf when own. */
void mpb_user_send_bytes(lua_State *L, mpb_state *st, int dst, int chan, char *buf,
                         size_t len, int own);
/* Wait for the oldest message on chan from src (-1: any) and take it. */
mpb_msg *mpb_user_take(lua_State *L, mpb_state *st, int chan, int src,
                       const char *fname);
/* Push the values of m (taking ownership of m); returns their count. */
int mpb_push_msg(lua_State *L, mpb_state *st, mpb_msg *m, const char *fname);
/* Reassemble a message sent in parts (MPB_UF_SPLIT): receives the parts
** straight into place. Takes m, returns the whole message. */
mpb_msg *mpb_user_unsplit(mpb_state *st, mpb_msg *m);
/* Queue an arrived user message, or drop it if it is stale. */
void mpb_user_arrived(mpb_state *st, mpb_msg *m);
/* Forget queued messages of earlier tasks (task start) / all (resync). */
void mpb_inbox_clear(mpb_state *st, int all);
void mpb_check_rank(lua_State *L, mpb_state *st, int arg, lua_Integer r,
                    const char *fname);
void mpb_check_task(lua_State *L, mpb_state *st, const char *fname);
int mpb_sends_done(mpb_state *st, void *ud);

/* --------------------------------------------------------------- task.c */
/* lua.c's message handler: adds a traceback; passes the abort error as is. */
int mpb_msgh(lua_State *L);
/* The staff of rank r in the fan-out tree: ranks first..last (none if first > last). */
void mpb_staff(const mpb_state *st, int r, int *first, int *last);
/* Rank 0: run a task on every rank: op with its wire-encoded arguments at the
** top n stack slots; leaves rank 0's results; raises the report on a fault. */
int mpb_task_run(lua_State *L, mpb_state *st, int op, int n, const char *fname);
/* Workers: the idle loop; returns the exit status rank 0 sent. */
int mpb_worker_loop(lua_State *L, mpb_state *st);
/* Rank 0: tell every worker to exit. */
void mpb_task_exit(mpb_state *st, int status);

/* -------------------------------------------------------------- abort.c */
/* Bring every rank back to a clean, synchronized state after task T faulted. */
void mpb_resync(lua_State *L, mpb_state *st);
/* Rank 0: record a fault (first one wins); takes msg (copied). */
void mpb_fault_record(mpb_state *st, int rank, const char *msg, size_t len);
/* Rank 0: start the abort of the current task. */
void mpb_abort_begin(mpb_state *st);
/* Rank 0: push the error report of the last abort. */
void mpb_fault_report(lua_State *L, mpb_state *st, const char *fname);

/* -------------------------------------------------------------- adopt.c */
/* Wrap L's allocator so received long strings can be adopted (when L uses
** the standard allocator); learns the layout of a Lua string. */
void mpb_adopt_init(lua_State *L, mpb_state *st);
/* A block for a received string of len bytes (NULL: adoption is off or no
** memory; the caller lands the bytes in the message instead); its bytes go
** at block + st->stroff. */
void *mpb_adopt_block(mpb_state *st, size_t len);
/* Decode m's body with its adoptable strings (wire decode hook). */
int mpb_adopt_decode(lua_State *L, mpb_state *st, mpb_msg *m, const char *body, size_t len,
                     int owner, char *err, size_t errlen);

/* ---------------------------------------------------- registration lists */
void mpb_open_p2p(lua_State *L);
void mpb_open_task(lua_State *L);
void mpb_open_abort(lua_State *L);
void mpb_open_comm(lua_State *L);    /* comm.c, coll.c */
void mpb_open_request(lua_State *L); /* request.c */
/* request.c: give an arrived user message to the oldest posted irecv it
** matches (returns 1: taken), else 0 (it goes to its inbox). */
int mpb_req_arrived(mpb_state *st, mpb_msg *m);
void mpb_open_pool(lua_State *L);    /* pool.c */
void mpb_open_map(lua_State *L);     /* map.c */
void mpb_open_connect(lua_State *L);
/* The task body of a connected chunk (connect.c). */
int mpb_remote_body(lua_State *L);

/* luaopen_mp: the module (mp.c). */
int luaopen_mp(lua_State *L);
/* Start/stop the runtime for L (called by the embedding API before luaopen). */
mpb_state *mpb_start(lua_State *L, int use_mpi, int *argc, char ***argv);
void mpb_stop(lua_State *L);

#endif
