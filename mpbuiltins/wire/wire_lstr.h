/* SPDX-License-Identifier: MIT */
/*
** Long strings Lua adopts (wire_lstr.c): the bytes of a long string
** received in a block of their own become the Lua string without a copy.
** Lua makes a long string with one call to its allocator for a block of
** H + len + 1 bytes, the bytes at its end, and copies them in; a wrapper
** around the state's allocator answers that one call with the block the
** bytes were received into, so the copy has the same source and
** destination (memcpy then moves nothing). H is found by a probe through
** the public API when the wrapper is installed; when the probe's
** assumptions fail (another Lua build), the feature is off and strings are
** copied as before.
*/
#ifndef MPB_WIRE_LSTR_H
#define MPB_WIRE_LSTR_H

#include <stddef.h>
#include <stdint.h>

struct lua_State;
typedef struct mpb_lstr mpb_lstr;

/* A long string of a message that was received into a place of its own:
** its bytes would begin at byte `at` of the body, which holds len % 8 bytes
** of gap in their stead (so what follows keeps its alignment); s is the
** place, NULL once Lua adopted its block. */
typedef struct mpb_wire_str {
  size_t at, len;
  char *s;
} mpb_wire_str;

/* The record of L (a userdata in its registry: it lives as long as L),
** made and probed on first use around the allocator L has then; the
** wrapper is L's allocator only while a string is made. A host that sets
** another allocator later gets strings copied. Raises when out of memory. */
mpb_lstr *mpb_lstr_of(struct lua_State *L);
/* Adoption works for L's build (the probe held). */
int mpb_lstr_on(const mpb_lstr *a);
/* The place for a long string of len bytes in a block Lua can adopt (from
** the allocator underneath); NULL when off or out of memory. */
char *mpb_lstr_alloc(mpb_lstr *a, size_t len);
/* Free such a place (not adopted). NULL is fine. */
void mpb_lstr_free(mpb_lstr *a, char *s, size_t len);
/* Push the string of len bytes at *s (a place from mpb_lstr_alloc): when
** Lua adopts its block, *s becomes NULL (the block is Lua's); otherwise the
** bytes were copied and *s is still the caller's. May raise a memory error
** (then too *s says who owns the block). */
void mpb_lstr_push(struct lua_State *L, mpb_lstr *a, char **s, size_t len);
/* Strings adopted so far. */
uint64_t mpb_lstr_adopted(const mpb_lstr *a);

#endif
