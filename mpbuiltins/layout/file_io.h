/* SPDX-License-Identifier: MIT */
/*
** What the files that reach MPI-IO share (mp.save and mp.load in file.c,
** mp.mpi's files in mpi/mpi_file.c): the agreement that makes MPI's blocking
** collective calls safe, a layout box as a file view, the wait for MPI-IO's
** requests, and MPI-IO's errors in words.
**
** MPI's collective file calls (open, set_view, close) block until every
** member calls them: a rank that faulted would leave the others waiting for
** ever. So the members first agree (coll/agree.c's mpb_coll_agree:
** interruptible, and an abort that comes during it makes every member
** return from it or none), which also checks that they make the same call,
** and only then call MPI, with no wait before the call. ROMIO's requests can be
** neither cancelled nor abandoned: once started, I/O is waited to its end
** (mpb_file_wait), and an abort is honoured after it.
*/
#ifndef MPB_FILE_IO_H
#define MPB_FILE_IO_H

#include "layout/laylib.h"

/* What a rank brings to an agreement: its call's signature and how its
** part went (0: well, else an error of its own). */
typedef struct mpb_file_vote { uint64_t sig; int64_t status; } mpb_file_vote;

/* FNV-1a over n bytes, from h (MPB_FILE_HASH0 to start): signatures. */
#define MPB_FILE_HASH0 14695981039346656037u
uint64_t mpb_file_hash(uint64_t h, const void *p, size_t n);

/* Every member's vote into all[] (a collective step on c); returns the first
** rank whose signature differs from this rank's or whose status is not 0,
** or -1. */
int mpb_file_agree(lua_State *L, mpb_comm *c, const char *fname, mpb_file_vote mine,
                   mpb_file_vote *all);
/* Raise on every member when the agreement found rank bad (>= 0): mine
** (this rank's own failure) when not NULL; else, when bad calls it with
** another signature, "mp.fname: [rank r/n] rank k of the communicator calls
** it with another <differs>"; else (bad failed: its status is not 0 and it
** raises mine) "rank k of the communicator failed (it says why)", an echo
** (chan/state.h), so the report names bad and its own reason. Returns when
** bad < 0. */
void mpb_file_verdict(lua_State *L, const char *fname, const mpb_file_vote *all, int bad,
                      const char *mine, const char *differs);

/* MPI's type of an element of dtype. */
MPI_Datatype mpb_file_etype(int dtype);
/* Raise (naming fname, argument arg) when an extent of y is beyond what
** MPI's int-count subarray types describe. */
void mpb_file_layout_ok(lua_State *L, const mpb_lay *y, int arg, const char *fname);
/* The box of rank me of layout y as a file view after *disp: *ftype a
** committed subarray of y's etype (*own 1: the caller frees it), or, when
** the box is one run of the file, the etype itself with *disp moved to the
** run (*own 0). Returns MPI's code; *what names the call that failed. */
int mpb_file_box(const mpb_lay *y, int me, MPI_Offset *disp, MPI_Datatype *ftype, int *own,
                 const char **what);
/* Wait (the one wait, serving the control channel, never raising) for n
** MPI-IO requests to complete; returns MPI's code. status: NULL, or n of them. */
int mpb_file_wait(lua_State *L, MPI_Request *req, int n, MPI_Status *status);
/* Push "what 'path': <reason>" for MPI-IO's error rc: the system's words
** for the error classes that have them (No such file or directory...). */
const char *mpb_file_message(lua_State *L, int rc, const char *what, const char *path);

#endif
