/* SPDX-License-Identifier: MIT */
/*
** chan/, second floor: the codec's entry points for messages (codec.c):
** Lua values into the reusable encoding buffer, a received message into
** Lua values, and the one Lua type that owns a received message. The
** codec itself is wire/.
*/
#ifndef MPB_CHAN_CODEC_H
#define MPB_CHAN_CODEC_H

#include "chan/state.h"

struct mpb_wire_items;

/* Encode values first..first+n-1 into the reusable buffer, after hdrlen
** bytes of header room; raises "bad argument #arg to 'mp.fname' (...)" on
** unserializable values (arg 0: no argument number). Leaves the buffer's
** userdata on the stack. */
struct mpb_wbuf *mpb_encode_msg(lua_State *L, int first, int n, const char *fname,
                                int arg, size_t hdrlen);
/* The same for values that are all scalars (nil, booleans, numbers, strings
** not sent in place), the codec's short way; NULL when they are not (or the
** reusable buffer is in use): use mpb_encode_msg. Pushes nothing. */
struct mpb_wbuf *mpb_encode_small(lua_State *L, mpb_state *st, int first, int n,
                                  const char *fname, size_t hdrlen);
/* b's bytes have been handed over: the reusable buffer is free again. */
void mpb_encode_done(mpb_state *st, struct mpb_wbuf *b);
/* Push a copy of the value at idx made as a message makes it (encoded and
** decoded: tables, functions and arrays copied), for a value a rank keeps
** where other ranks get theirs by message, so that both get the same, and a
** value that cannot travel raises as with mpb_encode_msg. */
void mpb_push_copy(lua_State *L, mpb_state *st, int idx, const char *fname, int arg);
/* Push the values b holds (the whole body, encoded after no header room),
** decoded as a receiver would; b's userdata at bidx is removed, what is
** above it too, and the buffer is free again. Returns their count. */
int mpb_push_encoded(lua_State *L, mpb_state *st, struct mpb_wbuf *b, int bidx, const char *fname);
/* A message of items (wire.h's mpb_wire_items: each encoded as if sent
** alone) in the reusable buffer: mpb_encode_items claims it (its userdata
** pushed, hdrlen bytes of header room) and opens the body; mpb_encode_item
** adds the n values at first.. (bidx: b's userdata), or returns -1 with err
** saying what cannot travel (the buffer is then free again: the caller
** raises, naming the item); mpb_wire_items_close ends the body. */
struct mpb_wbuf *mpb_encode_items(lua_State *L, struct mpb_wire_items *it, const char *fname,
                                  size_t hdrlen);
int mpb_encode_item(lua_State *L, struct mpb_wbuf *b, int bidx, struct mpb_wire_items *it,
                    int first, int n, char *err, size_t errlen);
/* Push a userdata ("mp.Msg") that owns m from now on (freed by the GC, or
** at once by mpb_msg_release); returns it, inert when m is NULL. */
mpb_msg **mpb_msg_hold(lua_State *L, mpb_msg *m);
/* Free the message held by the "mp.Msg" at idx now (big buffers should not
** wait for the GC). */
void mpb_msg_release(lua_State *L, int idx);
/* Push the values of m (taking it); returns their count. Raises, naming
** fname and the sender, when m is malformed or was lost. */
int mpb_push_msg(lua_State *L, mpb_state *st, mpb_msg *m, const char *fname);
/* When m was lost, raise "mp.fname: [rank r/n] ..." saying why (its size,
** its sender); fname NULL: "mp:". m is not freed (its holder frees it). */
void mpb_msg_check_lost(lua_State *L, mpb_state *st, const mpb_msg *m,
                        const char *fname);

#endif
