/* SPDX-License-Identifier: MIT */
/*
** What the kernel (`mplua -n N --jupyter FILE`, jupyter_kernel.c) and the
** job's ranks say to each other, over the front end's link (front_proto.h)
** and the launcher's pipes.
**
** Rank 0 runs the notebook's requests as the prompt runs lines
** (jupyter_cell.c). It asks for the next one with the prompt JUP_READY;
** the kernel answers with a line holding a JSON object:
**   {"code": "...", "count": n, "silent": false, "nonce": "<hex>"}
** Queries ('Q', complete and inspect) come while it waits. While a cell
** runs, rank 0 says what the notebook shows with 'J' markers, one JSON
** object each:
**   {"t": "result", "data": {mime: text}}         the cell's value
**   {"t": "display", "data": {mime: text}}        mp.display
**   {"t": "error", "ename", "evalue", "traceback": [lines]}
**   {"t": "done", "flush": [out, err]}            the cell has ended; the
**       kernel replies once it has seen `out` lines JUP_END<nonce> on the
**       launcher's stdout and `err` on its stderr: the workers wrote them
**       last, after everything else they wrote in the cell.
** Its own output is its stream on the link, as at the prompt.
**
** Workers (jupyter_label.c) write every line of stdout and stderr as
** JUP_LABEL <rank> BEL <line>, so the kernel knows whose it is.
*/
#ifndef MPLUA_JUPYTER_PROTO_H
#define MPLUA_JUPYTER_PROTO_H

#define JUP_READY "\001mplua-jupyter\001" /* rank 0 waits for a request */
#define JUP_LABEL "\033]mplua@"           /* a worker's line: JUP_LABEL rank BEL line */
#define JUP_END "\033]mplua-end;"         /* JUP_END nonce BEL: a worker's last line of a cell */
#define JUP_NONCE_LEN 32                  /* hex digits */

#endif
