/* SPDX-License-Identifier: MIT */
/*
** The wire codec: Lua values <-> bytes (DESIGN.md section 6). No MPI here.
**
** A message body is: a format byte, a value count, then the values. Tables
** keep shared and cyclic references; functions travel as bytecode plus their
** upvalues (Lua functions recursively, C functions of the standard library and
** of the mp/ad modules by name, the sender's globals as "_ENV of the
** receiver"); typed arrays as a small header plus their raw, 8-byte-aligned
** elements. The decoder checks every length, count and depth.
*/
#ifndef MPB_WIRE_H
#define MPB_WIRE_H

#include <stddef.h>
#include <stdint.h>
#include "lua.h"
#include "wire/wire_lstr.h"

/* A growable byte buffer owned by a Lua userdata ("mp.WBuf"), so that an error
** raised while it is alive leaks nothing: the GC frees it. */
typedef struct mpb_wseg {
  size_t at;         /* insert after this many inline bytes */
  const void *ptr;   /* external bytes (a typed array's elements, a long string) */
  size_t len;
  int str;           /* the bytes of a string (said in the frame; informative) */
} mpb_wseg;

typedef struct mpb_wbuf {
  char *data;        /* inline bytes */
  size_t len, cap;
  mpb_wseg *seg;     /* external segments, in increasing `at` order */
  int nseg, segcap;
  size_t extlen;     /* sum of seg[i].len */
} mpb_wbuf;

/* Push a new empty buffer userdata; returns it. */
mpb_wbuf *mpb_wbuf_push(lua_State *L);
/* Free what b holds (b becomes empty and stays usable); its __gc does this. */
void mpb_wbuf_release(mpb_wbuf *b);
/* The buffer userdata at idx, or raises. */
mpb_wbuf *mpb_wbuf_check(lua_State *L, int idx);
/* Make room for n more bytes; returns a pointer to the free space at data+len
** (the caller advances len), or NULL when out of memory. */
char *mpb_wbuf_grow(mpb_wbuf *b, size_t n);
static inline char *mpb_wbuf_reserve(mpb_wbuf *b, size_t n) {
  if (b->cap - b->len >= n && b->data) return b->data + b->len;
  return mpb_wbuf_grow(b, n);
}
/* Take ownership of the bytes out of b (b becomes empty); the caller frees
** the result with free(). */
char *mpb_wbuf_steal(mpb_wbuf *b, size_t *len);

/* The logical message is the inline bytes with each external segment spliced
** in at its `at` position; its length is len + extlen. Typed arrays of at
** least MPB_WIRE_EXTMIN bytes are not copied but referenced as segments (the
** arrays are kept alive in the buffer userdata's user value until it is
** collected), so a sender can hand the pieces to MPI without a copy. */
#define MPB_WIRE_EXTMIN 4096
/* Strings of at least this many bytes are external segments too (a Lua
** string never changes, so it is referenced, not copied). */
#define MPB_WIRE_STREXT (64 << 10)
/* Copy the logical message into dst (len + extlen bytes). */
void mpb_wbuf_flatten(const mpb_wbuf *b, char *dst);

/* Append the encoding of the n values at stack slots first..first+n-1 to b.
** Returns 0, or -1 with a message in err naming what could not be sent and
** where, e.g. "cannot send a userdata (at value #2 [3].x)". The stack is left
** as it was. Lua memory errors may still be raised (b stays owned by its
** userdata). */
int mpb_wire_encode(lua_State *L, int first, int n, mpb_wbuf *b, int bidx,
                    char *err, size_t errlen);
/* bidx: stack index of b's userdata (external segments are anchored there). */

/* A body built an item (a few values) at a time, each item encoded as it is
** added and apart from the others, as if it were sent alone: no item refers
** to another's tables or functions (a table two items hold travels in
** each), and one changed after its item was added travels as it was then.
** open: the format byte and room for the count (-1: out of memory); add:
** the n values at first.. (0, or -1 with err saying what could not be sent
** and where inside its value: "cannot send a thread (at [3].x)", b as it
** was); close: the count written. The body is an ordinary one. */
typedef struct mpb_wire_items {
  size_t count_at, base;  /* where the count goes, where the body starts */
  uint32_t count;         /* values so far */
  lua_Integer nextid;     /* the next object's number (numbered through the body) */
} mpb_wire_items;
int mpb_wire_items_open(mpb_wbuf *b, mpb_wire_items *it);
int mpb_wire_items_add(lua_State *L, int first, int n, mpb_wbuf *b, int bidx, mpb_wire_items *it,
                       char *err, size_t errlen);
void mpb_wire_items_close(mpb_wbuf *b, const mpb_wire_items *it);

/* Decode a whole message body, pushing its values; returns their count, or -1
** with a message in err ("truncated string at byte 17") and nothing pushed.
** owner_idx: stack index of a Lua value owning `buf` (typed arrays become
** views into it, no copy), or 0 to copy array data. */
int mpb_wire_decode(lua_State *L, const void *buf, size_t len, int owner_idx,
                    char *err, size_t errlen);

/* The same, counting in *views the arrays made views into buf: with none,
** the owner need not outlive the values (strings are copied, or adopted
** from places of their own, never views). */
int mpb_wire_decode_views(lua_State *L, const void *buf, size_t len, int owner_idx,
                          int *views, char *err, size_t errlen);

/* The same for a body whose long strings strs[0..nstrs-1] (in order) were
** received apart (wire_lstr.h): each becomes its Lua string through lstr,
** adopted when it can be (its s set to NULL: Lua owns the block). */
int mpb_wire_decode_strs(lua_State *L, const void *buf, size_t len, int owner_idx,
                         mpb_wire_str *strs, int nstrs, mpb_lstr *lstr, int *views, char *err,
                         size_t errlen);

/* The short way for messages of scalars (wire_scalar.c), the same bytes as
** the general way. Encode: append the body of the n values at first.. to
** b when they are all nil, booleans, numbers or strings of fewer than
** MPB_WIRE_STREXT bytes and n < 128; returns 0, 1 when they are not (b
** unchanged: take the general way), -1 out of memory. Decode: push the
** values of a body of such values and return their count, or return -1
** (nothing pushed) for any other body, valid or not: the general decoder
** then reads it or says what is wrong. */
int mpb_wire_encode_scalars(lua_State *L, int first, int n, mpb_wbuf *b);
int mpb_wire_decode_scalars(lua_State *L, const void *buf, size_t len);

/* Limits checked on both sides. */
#define MPB_WIRE_MAXDEPTH 200

/* ---- Added by the wire module (additions only) */

/* The first byte of every message body (the format version). */
#define MPB_WIRE_FORMAT 1
/* Empty b for reuse, keeping its allocation (a sender reusing one buffer per
** peer avoids a malloc per message); drops the anchored arrays of the user
** value of b's userdata at bidx (0: leave the user value alone). */
void mpb_wbuf_reset(lua_State *L, mpb_wbuf *b, int bidx);
/* Note on mpb_wbuf_steal: when b has external segments, the result is the
** flattened logical message (len + extlen bytes, one copy); otherwise the
** inline bytes themselves (no copy). NULL when out of memory (b unchanged). */

/* Drop the cache of names under which C functions and module tables are
** sent if modules were loaded since it was built (tasks call it as they
** start: it costs a walk over package.loaded). */
void mpb_wire_names_check(lua_State *L);
/* Mark the Lua functions that are fields of the table at tidx as the
** runtime's own, defined by its compiled-in chunks: where they are a
** module's fields, they travel by name as its C functions do. The runtime
** calls it on the modules it makes, before any user code runs; nothing
** else makes a function the runtime's own (not its chunk's name). */
void mpb_wire_own(lua_State *L, int tidx);

#endif
