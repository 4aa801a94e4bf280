/*
** Communicators ("mp.Comm") as the collective, request and pool files see
** them. A communicator is a list of world ranks plus an id carried in every
** message header (mpb_uhdr.comm): all traffic still goes over st->user, and
** a receiver takes only the messages of the communicator it waits on. No MPI
** communicator is created, so thousands of aborts spend no context id.
*/
#ifndef MPB_COMM_H
#define MPB_COMM_H

#include "chan/chan.h"

#define MPB_COMM_MT "mp.Comm"

typedef struct mpb_comm {
  uint32_t id;       /* 0: world */
  int64_t task;      /* task it was made in; -1: world (lives for ever) */
  int rank, size;    /* this rank's place in it, its size */
  int64_t child_task;/* task of the children counter below */
  uint32_t nchild;   /* split/dup calls so far in child_task: part of their ids */
  int *ranks;        /* comm rank -> world rank [size] */
  int *of_world;     /* world rank -> comm rank, or -1 [world size] */
} mpb_comm;

/* The communicator at idx, checked to be usable now ("communicator from an
** earlier task" otherwise); fname names the caller in errors. */
mpb_comm *mpb_comm_check(lua_State *L, mpb_state *st, int idx, const char *fname);
/* Push mp.world. */
void mpb_comm_pushworld(lua_State *L);
/* Check a comm rank argument. */
/* The channel of send/recv on c. */
static inline int mpb_comm_user_chan(const mpb_comm *c) {
  return c->id ? MPB_CH_CUSER : MPB_CH_USER;
}
/* The destinations of comm:send/isend at stack slot 2: a rank of c or a list
** of them, checked (errors name fname); returns how many. */
lua_Integer mpb_comm_dests(lua_State *L, mpb_state *st, const mpb_comm *c, const char *fname);
/* Destination i (1..count) of those, as a rank of c. */
int mpb_comm_dest(lua_State *L, lua_Integer i);
int mpb_comm_checkrank(lua_State *L, mpb_state *st, const mpb_comm *c, int arg,
                       const char *fname);

/* Encode values first..first+n-1 (leaves the buffer userdata on top) / send
** it to comm rank r on chan with flags (last: the buffer may be taken). */
void mpb_comm_send(lua_State *L, mpb_state *st, const mpb_comm *c, int r, int chan,
                   uint32_t flags, struct mpb_wbuf *b, int last);
/* The oldest queued message of c on chan from comm rank src (-1: any), or
** NULL; taken out of its inbox when take. */
mpb_msg *mpb_comm_peek(mpb_state *st, const mpb_comm *c, int chan, int src, int take);
/* Wait (the one wait) for such a message and take it. */
mpb_msg *mpb_comm_take(lua_State *L, mpb_state *st, const mpb_comm *c, int chan, int src,
                       const char *fname);
/* The flags of m's header. */
uint32_t mpb_msg_flags(const mpb_msg *m);

/* The methods table of communicators (request.c adds to it). */
#define MPB_COMM_METHODS "mp.Comm.methods"
/* methods[name] = f and mp[name] = f applied to mp.world (mpt: index of the
** mp table). */
void mpb_comm_setboth(lua_State *L, int mpt, const char *name, lua_CFunction f);
/* coll.c: registers the collectives (methods and mp.X). */
void mpb_coll_methods(lua_State *L, int mpt);

/* coll.c: every member's len bytes, in comm rank order, into out. */
void mpb_coll_allgather_raw(lua_State *L, mpb_state *st, const mpb_comm *c,
                            const void *mine, size_t len, void *out, const char *fname);

#endif
