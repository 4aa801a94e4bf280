/* SPDX-License-Identifier: MIT */
/*
** chan/, top floor: sending a message (send.c). A send may wait (until MPI
** is done with parts sent in place, or for back-pressure), so it sits
** above the wait.
*/
#ifndef MPB_CHAN_SEND_H
#define MPB_CHAN_SEND_H

#include "chan/state.h"

/* Send the message in b to rank dst on chan, with the header h (its task is
** set here; NULL: world, no flags). Large arrays and strings go as parts,
** in place. ids NULL: return when MPI is done with those parts (the caller
** may then write its arrays); else the range of sends made goes to ids
** (ids[0] > ids[1]: none) and they anchor what they read. When last, b's
** bytes may be taken rather than copied. b's userdata must be on top when
** b has segments (mpb_encode_msg leaves it there; mpb_encode_small makes
** none). */
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
/* Send a small message (len bytes, header first, copied) to dst, another
** rank, from where nothing may raise or wait (an arrival hook). Returns
** MPI's code; a failure is also noted (raised by the next wait). */
int mpb_send_quiet(mpb_state *st, int dst, int chan, const void *buf, size_t len);
/* Send a received message on to dst unchanged, its parts in place (no copy);
** the sends made go to ids, as mpb_send's. m must outlive them: wait with
** mpb_sends_gone before freeing or decoding it. Its long strings must be in
** its buffer (mpb_msg_inline_strs). */
void mpb_msg_forward(lua_State *L, mpb_state *st, const mpb_msg *m, int dst, int chan,
                     uint64_t ids[2]);

#endif
