/* SPDX-License-Identifier: MIT */
/*
** The front end's protocol: what `mplua -n N` (front.c) and rank 0 (link.c)
** say to each other over the one TCP connection rank 0 opens to it.
**
** The front end listens and passes its address to the job in the
** environment: MPLUA_FRONT=<port>:<token>:<host>[,<host>...]. Rank 0 tries
** the hosts in turn; it sends the greeting "mplua1 <token>\n" and the front
** end answers "ok <tty>\n" (tty: 1 when its stdin is a terminal), or closes
** the connection when the token is wrong. Then:
**
** Rank 0 -> front end: rank 0's stdout and stderr themselves (both are the
** socket, so what it writes keeps its order), with in-band markers
**   ESC "]mplua;" <token> ";" <kind> ";" <decimal length> ";" <payload> BEL
** (an OSC sequence: a terminal that ever saw one would not show it; the
** token keeps user output from forging one). Kinds:
**   'R'  rank 0 reads stdin and has nothing buffered: payload "<seq>;p<prompt>"
**        for the prompt, "<seq>;r" for a plain read (io.read). seq counts
**        the requests from 1.
**   'H'  a complete chunk for the history.
**   'P'  the progress line (empty payload: clear it).
**   'A'  the answer to a query ('Q').
**   'J'  a notebook's message (a JSON object: jupyter_proto.h).
**
** Front end -> rank 0: frames, one kind byte, a 4-byte big-endian length,
** the payload:
**   'L'  the answer to the last request: a line (with its newline)
**   'E'  the answer: end of input
**   'C'  the answer: Ctrl-C (the prompt drops what was typed; a plain read
**        interrupts the running command)
**   'I'  Ctrl-C while a command runs: payload the decimal seq of the last
**        request answered. Rank 0 interrupts its command only if it has sent
**        no request since, so a late Ctrl-C never hits the next command.
**   'Q'  a query, while rank 0 waits for an answer: 'c' and the text before
**        the cursor (Tab: complete), or 'i', the cursor's byte offset, ';'
**        and the text (inspect). Rank 0 answers with one 'A' marker and
**        goes on waiting (show.h has the answers' form).
*/
#ifndef MPLUA_FRONT_PROTO_H
#define MPLUA_FRONT_PROTO_H

#define FRONT_ENV "MPLUA_FRONT"
#define FRONT_GREETING "mplua1 "
#define FRONT_MARK "\033]mplua;"
#define FRONT_TOKEN_LEN 32 /* hex digits */
#define FRONT_FRAME_HDR 5
#define FRONT_MAX_PAYLOAD (16u << 20)

#include <stddef.h>
#include <stdint.h>

/* front_proto.c: write or read all n bytes (retrying after signals);
** 0, or -1 on error or end of file. */
int proto_write(int fd, const void *p, size_t n);
int proto_read(int fd, void *p, size_t n);
/* A frame's header: kind and big-endian length. */
void proto_header(unsigned char h[FRONT_FRAME_HDR], char kind, uint32_t n);
uint32_t proto_length(const unsigned char h[FRONT_FRAME_HDR]);

#endif
