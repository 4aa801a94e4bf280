/* SPDX-License-Identifier: MIT */
/*
** mplua as a Jupyter kernel (messaging protocol 5.3): what the kernel's
** files share. The kernel is the front end's process (`mplua -n N
** --jupyter FILE`, front.c with the notebook as its face): it owns the
** notebook's sockets and the job, and rank 0 runs the cells.
**   jupyter_wire.c    the connection file, the sockets, signed messages
**   jupyter_kernel.c  the requests (one handler per type) and their order
**   jupyter_face.c    the job's output and input as the notebook's messages
**   jupyter_spec.c    --install-kernel: the kernelspec
**   jupyter_cell.c    rank 0: runs cells, says what they show
**   jupyter_label.c   the workers: labelled lines
** Nothing outside these (and main.c's entry points) includes this.
*/
#ifndef MPLUA_JUPYTER_H
#define MPLUA_JUPYTER_H

#include <stddef.h>
#include "lua.h"

/* ------------------------------------------------ entry points (main.c) */
/* The kernel: start a job of nranks ranks (argv as the front end's) and
** serve the notebook of the connection file until shutdown. */
int mplua_jupyter(int nranks, int argc, char **argv, const char *connection_file);
/* mplua --install-kernel [--user | --prefix DIR] [-n N] [--name NAME]
** [--labels] [--interrupt-mode signal|message]: write the kernelspec. */
int jupyter_install(int argc, char **argv);
/* Rank 0 of a notebook's job: run requests until the kernel ends it. */
int jupyter_leader(lua_State *L);
/* A worker of a notebook's job: label every line it writes. */
void jupyter_label_output(lua_State *L, int rank);

#ifdef MPLUA_JUPYTER_KERNEL /* the kernel's own files */
#include <cjson/cJSON.h>

/* ------------------------------------------------------ jupyter_wire.c */
typedef struct jmsg {
  char **ids;     /* routing identities (ROUTER) */
  size_t *idlen;
  int nids;
  cJSON *header, *parent, *metadata, *content;
} jmsg;

enum { JW_SHELL, JW_CONTROL, JW_STDIN, JW_IOPUB, JW_HB, JW_NSOCK };

/* Read the connection file; 0, or -1 with a message in err. */
int jw_config(const char *file, char *err, size_t errlen);
/* Bind the five sockets (and answer heartbeats in a thread of their own). */
int jw_bind(char *err, size_t errlen);
/* The descriptor that polls readable when socket s may have messages. */
int jw_fd(int s);
/* The next message on s, verified (1), none (0); a message that is not a
** Jupyter message or has a bad signature is dropped and logged. */
int jw_recv(int s, jmsg *m);
void jw_free(jmsg *m);
/* Send msg_type with content (taken) on s, as a reply to parent (NULL:
** none); routed to parent's identities (iopub: a topic). */
void jw_send(int s, const jmsg *parent, const char *msg_type, cJSON *content);
/* The same with metadata (taken) and, on iopub, no parent's identities. */
void jw_send_meta(int s, const jmsg *parent, const char *msg_type, cJSON *content, cJSON *meta);
/* msg_type of a message ("" when none). */
const char *jw_type(const jmsg *m);
/* A fresh random hex string of n digits (n < size). */
void jw_random_hex(char *out, size_t n);

/* ----------------------------------------------------- jupyter_kernel.c */
/* Rank 0 waits at JUP_READY (1) or not; a request may go to it. */
void jk_rank0_ready(int ready);
/* Rank 0's marker 'J' (a JSON object) and its answer 'A' to a query. */
void jk_rank0_message(const char *p, size_t n);
void jk_rank0_answer(const char *p, size_t n);
/* The request rank 0 works on (a parent for what the cell shows), or NULL. */
const jmsg *jk_current(void);
/* The job has ended: answer what is pending, say why. */
void jk_job_ended(void);
/* The current cell may take input (allow_stdin). */
int jk_allow_stdin(void);
/* The cell has ended and its output has come: reply to it. */
void jk_cell_over(void);
/* Take the messages waiting on shell and control, handle what can be. */
void jk_poll(void);

/* ------------------------------------------------------- jupyter_face.c */
extern const struct front_face jupyter_face;
/* Publish what is held of rank 0's unfinished line. */
void jf_flush(void);
/* A cell starts: its workers' last lines will carry nonce. */
void jf_cell_begin(const char *nonce);
/* It has ended: `out` such lines come on stdout, `err` on stderr. Returns
** 1 when they have all come (else jk_cell_over is called once they have). */
int jf_cell_end(int out, int err);
/* The sockets could not be bound. */
int jf_failed(void);
#endif

#endif
