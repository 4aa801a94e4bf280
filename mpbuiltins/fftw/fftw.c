/* SPDX-License-Identifier: MIT */
/*
** The FFTW plug-in of mp.fft (layout/fft_backend.h): the Lua C module
** "mplua.fftw", built only when FFTW 3 is found, and the only code of mplua
** that links it. FFTW is GPL-2+: a program that loads this module is subject
** to FFTW's licence; mplua's library, which never links FFTW, is not.
**
** require "mplua.fftw" sets the registry's MPB_FFT_BACKEND_KEY to this
** table (mp.fft requires the module on first use) and returns the FFTW
** version. Plans use FFTW's guru64 interface in double (fftw_) or single
** (fftwf_) precision; planning is not thread-safe in FFTW, and mplua runs
** one Lua state per process.
*/
#include <fftw3.h>
#include <stdio.h>
#include <stdlib.h>

#include "lauxlib.h"
#include "lua.h"
#include "layout/fft_backend.h"

static unsigned flags_of(int effort) {
  switch (effort) {
    case MPB_FFT_MEASURE: return FFTW_MEASURE;
    case MPB_FFT_PATIENT: return FFTW_PATIENT;
    default: return FFTW_ESTIMATE;
  }
}

/* The plans of one precision: P is fftw or fftwf. */
#define PLANNER(P, REAL, CPLX)                                                           \
  static void *plan_##P(int kind, int sign, int rank, const mpb_fft_dim *dims, int hr,    \
                        const mpb_fft_dim *how, void *in, void *out, unsigned flags) {     \
    P##_iodim64 d[8], h[8];                                                              \
    if (rank < 1 || rank > 8 || hr < 0 || hr > 8) return NULL;                           \
    for (int k = 0; k < rank; k++) d[k].n = dims[k].n, d[k].is = dims[k].is, d[k].os = dims[k].os; \
    for (int k = 0; k < hr; k++) h[k].n = how[k].n, h[k].is = how[k].is, h[k].os = how[k].os; \
    switch (kind) {                                                                      \
      case MPB_FFT_C2C:                                                                  \
        return P##_plan_guru64_dft(rank, d, hr, h, (CPLX *)in, (CPLX *)out, sign, flags); \
      case MPB_FFT_R2C:                                                                  \
        return P##_plan_guru64_dft_r2c(rank, d, hr, h, (REAL *)in, (CPLX *)out, flags);   \
      default:                                                                           \
        return P##_plan_guru64_dft_c2r(rank, d, hr, h, (CPLX *)in, (REAL *)out, flags);   \
    }                                                                                    \
  }
PLANNER(fftw, double, fftw_complex)
PLANNER(fftwf, float, fftwf_complex)

/* A plan and what it needs to be run again: its kind and precision. */
typedef struct {
  int kind, single;
  void *p;
} plan_rec;

static void *plan(int kind, int single, int sign, int rank, const mpb_fft_dim *dims, int hr,
                  const mpb_fft_dim *how, void *in, void *out, int effort, char *err,
                  size_t errlen) {
  plan_rec *r = malloc(sizeof *r);
  if (!r) {
    snprintf(err, errlen, "out of memory");
    return NULL;
  }
  unsigned fl = flags_of(effort);
  r->kind = kind;
  r->single = single;
  r->p = single ? plan_fftwf(kind, sign, rank, dims, hr, how, in, out, fl)
                : plan_fftw(kind, sign, rank, dims, hr, how, in, out, fl);
  if (!r->p) {
    snprintf(err, errlen, "FFTW made no plan for this transform (rank %d, %d loops)", rank, hr);
    free(r);
    return NULL;
  }
  return r;
}

static void execute(void *pl, void *in, void *out) {
  plan_rec *r = pl;
  if (r->single) {
    switch (r->kind) {
      case MPB_FFT_C2C: fftwf_execute_dft(r->p, in, out); break;
      case MPB_FFT_R2C: fftwf_execute_dft_r2c(r->p, in, out); break;
      default: fftwf_execute_dft_c2r(r->p, in, out); break;
    }
  } else {
    switch (r->kind) {
      case MPB_FFT_C2C: fftw_execute_dft(r->p, in, out); break;
      case MPB_FFT_R2C: fftw_execute_dft_r2c(r->p, in, out); break;
      default: fftw_execute_dft_c2r(r->p, in, out); break;
    }
  }
}

static void destroy(void *pl) {
  plan_rec *r = pl;
  if (!r) return;
  if (r->single) fftwf_destroy_plan(r->p);
  else fftw_destroy_plan(r->p);
  free(r);
}

static int alignment_of(const void *p, int single) {
  return single ? fftwf_alignment_of((float *)p) : fftw_alignment_of((double *)p);
}

static const mpb_fft_backend backend = {MPB_FFT_BACKEND_VERSION, "FFTW 3", plan, execute, destroy,
                                        alignment_of};

/* FFTW's planner keeps its tables (twiddles, wisdom) for the process until
** fftw_cleanup. They are released when the last Lua state that loaded this
** module closes: a count, because FFTW's planner is itself one per process.
** The sentinel is made when the module loads, before any plan, so Lua
** finalizes it after every plan (and before the module is unloaded). */
static int states;

static int cleanup(lua_State *L) {
  (void)L;
  if (--states == 0) {
    fftw_cleanup();
    fftwf_cleanup();
  }
  return 0;
}

int luaopen_mplua_fftw(lua_State *L) {
  lua_newuserdatauv(L, 0, 0);
  lua_newtable(L);
  lua_pushcfunction(L, cleanup);
  lua_setfield(L, -2, "__gc");
  lua_setmetatable(L, -2);
  lua_setfield(L, LUA_REGISTRYINDEX, "mplua.fftw.cleanup");
  states++;
  lua_pushlightuserdata(L, (void *)&backend);
  lua_setfield(L, LUA_REGISTRYINDEX, MPB_FFT_BACKEND_KEY);
  lua_pushstring(L, fftw_version);
  return 1;
}
