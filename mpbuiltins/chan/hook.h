/* SPDX-License-Identifier: MIT */
/*
** chan/, top floor: the interrupt hook and signals (hook.c), and raising
** the abort error, a value the abort protocol (tasks/) registers.
*/
#ifndef MPB_CHAN_HOOK_H
#define MPB_CHAN_HOOK_H

#include "chan/state.h"

/* Arm/disarm the periodic poll of long Lua computations on the main thread
** (at a task's start and end); SIGINT handling on rank 0. */
void mpb_hook_arm(mpb_state *st, int on);
/* Install the signal handlers (start-up). */
void mpb_hook_init(lua_State *L, mpb_state *st);
void mpb_hook_close(mpb_state *st);
/* An interrupt is pending (rank 0): a process global, because the signal
** handler sets it. */
extern volatile sig_atomic_t mpb_sigint;
/* Interrupt rank 0's running command as Ctrl-C does (async-signal-safe: a
** host's signal handler may call it). */
void mpb_interrupt(void);
/* Drop a pending interrupt: it belonged to a command that is over. */
void mpb_interrupt_clear(void);
/* Consume a pending interrupt (rank 0) and raise "interrupted!". */
void mpb_check_interrupt(lua_State *L, mpb_state *st);
/* The same for sig, the flag as the caller read it (0: nothing to take). */
void mpb_take_interrupt(lua_State *L, mpb_state *st, int sig);
/* Raise the abort error, and keep raising it at the main thread's every
** instruction until the task runner has it (mpb_hook_arm(st, 0) stops). */
void mpb_raise_abort_hooked(lua_State *L);
/* The thread whose stack says where this rank runs: st's main thread. */
lua_State *mpb_running(const mpb_state *st);
/* Raise the abort error (registered in the registry under MPB_ABORT_KEY by
** tasks/; a plain message when none is). */
int mpb_raise_abort(lua_State *L);
#define MPB_ABORT_KEY "mp.abort_error"

#endif
