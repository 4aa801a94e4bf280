/* Shared by map.c (handles, calls, rank 0's assembly) and map_eval.c (jobs). */
#ifndef MPB_MAP_INT_H
#define MPB_MAP_INT_H

#include "mpb.h"

/* Evaluate jobs lo..hi of the mapper whose entry table is at `entry`; job j
** gets theta + toff[j - lo] (toff[j - lo + 1] - toff[j - lo] numbers) and phi
** (np numbers; passed to f only when has_phi). Pushes an f64 array of the
** jobs' records (map_eval.c). A job's error names the job and keeps its
** traceback; the abort error passes through. */
void mpb_map_eval(lua_State *L, int entry, int64_t lo, int64_t hi, int grad, int has_phi,
                  const double *phi, size_t np, const double *theta, const int64_t *toff);

#endif
