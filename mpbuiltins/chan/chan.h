/* SPDX-License-Identifier: MIT */
/*
** chan/: the runtime's channel layer (DESIGN.md sections 3, 4 and 6), the
** one header the layers above include. chan/ stands in floors, each naming
** nothing above it (scripts/check_layers.sh checks the includes; no file of
** chan/ includes this header):
**   ground  class.h (making a Lua class), msg.h (a message, its headers, memory and queues), frame.h (the
**           framing of a message in parts), state.h (the per-state runtime,
**           failures, the clock; leave.c)
**   second  trace.h (the recorder), wake.h (naps and wake-ups), outbox.h
**           (sends in flight), mailbox.h (received user messages), codec.h
**           (the codec's entry points: values in and out of messages)
**   third   ctl.h (the control channel), arrive.h (receiving: the poll)
**   top     hook.h (the interrupt hook, raising the abort error), wait.h
**           (the one wait, taking a message), send.h (sending, which may
**           wait), start.h (the life cycle)
** Upper layers plug in by registration: control handlers (mpb_ctl_on), the
** arrival hook (st->on_arrival), on_idle, on_interrupt, settled, the abort
** error (MPB_ABORT_KEY), and the host through mpb_host.
*/
#ifndef MPB_CHAN_H
#define MPB_CHAN_H

#include "chan/class.h"
#include "chan/msg.h"
#include "chan/frame.h"
#include "chan/state.h"
#include "chan/trace.h"
#include "chan/wake.h"
#include "chan/outbox.h"
#include "chan/mailbox.h"
#include "chan/codec.h"
#include "chan/ctl.h"
#include "chan/arrive.h"
#include "chan/hook.h"
#include "chan/wait.h"
#include "chan/send.h"
#include "chan/start.h"

#endif
