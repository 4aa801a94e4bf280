/* SPDX-License-Identifier: MIT */
/*
** trace/: the upper half of tracing (DESIGN.md section 9). chan/trace.h
** records events on each rank; this wing starts and stops a recording on
** every rank (a task), measures the ranks' clock offsets, gathers the rings
** to rank 0 and writes them as Chrome/Perfetto trace-event JSON, and keeps
** the communication matrix for mp.trace.matrix.
*/
#ifndef MPB_TRACER_H
#define MPB_TRACER_H

#include "coll/coll.h"

/* What a rank ships to rank 0 when a recording stops (one string):
** this header, then nev events, then nstr bytes of strings (NUL-ended, in id
** order), then MPB_TR_KINDS * size * 2 counters (messages and bytes sent by
** kind and destination). */
typedef struct mpb_tr_blob {
  int64_t t_start, t_stop; /* ns of this rank's clock */
  uint64_t nev, lost;      /* events shipped; older ones the ring overwrote */
  uint64_t nstr, over;     /* bytes of strings; spans too deep to record */
  int32_t rank, size;
} mpb_tr_blob;

/* Named kinds of the matrix: a message's channel or collective -> index
** (MPB_TRK_COLL0 + a coll.h kind: the collectives, then transpose, halo and
** the neighbourhood collectives, each a kind of its own). */
enum { MPB_TRK_P2P, MPB_TRK_MAP, MPB_TRK_POOL, MPB_TRK_OTHER, MPB_TRK_COLL0 };
#define MPB_TRK_N (MPB_TRK_COLL0 + MPB_NCOLL) /* a matrix per collective kind */
int mpb_trk_of(int raw);             /* raw: chan, or MPB_NCHAN + collective kind */
const char *mpb_trk_name(int k);     /* NULL past the last */
int mpb_trk_is_coll(int k);

/* The recorder keeps NUL-ended strings: a user's region or mark name is
** kept with each NUL as MPB_TRACE_ESC 0x80 and each byte MPB_TRACE_ESC as
** MPB_TRACE_ESC MPB_TRACE_ESC (0xC0 never begins UTF-8), and written back whole. */
#define MPB_TRACE_ESC 0xC0

/* trace_write.c: rank 0 writes the gathered blobs (Lua strings in the table
** at index blobs, 1..size) to path with the clock offsets (ns, rank minus
** rank 0) measured at start (index os, may be nil) and stop (index oe).
** Fills matrix[MPB_TRK_N][size][size][2]. Returns the number of events
** written, or -1 with err set. */
int64_t mpb_trace_write(lua_State *L, const char *path, int blobs, int os, int oe,
                        uint64_t *matrix, char *err, size_t errlen);

/* trace_api.c: opens mp.trace. */
void mpb_open_trace(lua_State *L);

#endif
