/* SPDX-License-Identifier: MIT */
/*
** Where the Lua library (the files of lib/: mplua.optim, mplua.hmc, ...) is: found from where
** this code was loaded, never from a path baked in at build time, so an
** installed tree can be moved and the build tree works uninstalled.
**
** dladdr names the file holding this function: libmplua.so (the library,
** or lib/lua/5.4/mp.so, a link to it, resolved first), mp.so itself (a
** LuaRocks tree: DIR/lib/lua/5.4/mp.so), or the executable of a host that
** linked libmplua.a. The library lives in DIR/lib or DIR/lib/<triplet>
** (installed) or BUILD/lib (the build tree), the executable in DIR/bin:
** DIR/share/lua/5.4 follows in every case (the build tree links
** share/lua/5.4 to the sources).
** MPLUA_LIBDIR overrides it unless the host opted out of the environment.
** The C modules of the library (the FFTW plug-in of mp.fft, mplua/fftw.so)
** live in DIR/lib/lua/5.4, beside mp.so: that directory joins package.cpath.
*/
#define _GNU_SOURCE /* dladdr */
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "embed.h"

static int has_lib(const char *dir) {
  char probe[2 * PATH_MAX];
  snprintf(probe, sizeof probe, "%s/mplua/optim.lua", dir);
  return access(probe, R_OK) == 0;
}

const char *host_libdir(int use_env) {
  static char dir[PATH_MAX]; /* the same for every state: where this library lies */
  const char *env = use_env ? getenv("MPLUA_LIBDIR") : NULL;
  if (env && *env) return env;
  Dl_info info;
  char real[PATH_MAX];
  if (!dladdr((void *)host_libdir, &info) || !info.dli_fname || !realpath(info.dli_fname, real))
    return NULL;
  static const char *const up[] = {"/../share/lua/5.4", "/../../share/lua/5.4",
                                   "/../../../share/lua/5.4"};
  char *slash = strrchr(real, '/');
  if (!slash) return NULL;
  *slash = '\0';
  for (size_t i = 0; i < sizeof up / sizeof up[0]; i++) {
    char cand[PATH_MAX + 32];
    snprintf(cand, sizeof cand, "%s%s", real, up[i]);
    if (has_lib(cand) && realpath(cand, dir)) return dir;
  }
  return NULL;
}

/* DIR/lib/lua/5.4 (where mp.so is), or NULL. */
static const char *host_cdir(void) {
  static char dir[PATH_MAX]; /* the same for every state: where this library lies */
  Dl_info info;
  char real[PATH_MAX];
  if (!dladdr((void *)host_libdir, &info) || !info.dli_fname || !realpath(info.dli_fname, real))
    return NULL;
  char *slash = strrchr(real, '/');
  if (!slash) return NULL;
  *slash = '\0';
  static const char *const up[] = {"/lua/5.4", "/../lib/lua/5.4"};
  for (size_t i = 0; i < sizeof up / sizeof up[0]; i++) {
    char cand[PATH_MAX + 32], probe[PATH_MAX + 48];
    snprintf(cand, sizeof cand, "%s%s", real, up[i]);
    snprintf(probe, sizeof probe, "%s/mp.so", cand);
    if (access(probe, R_OK) == 0 && realpath(cand, dir)) return dir;
  }
  return NULL;
}

/* Append "dir/?.ext" to package[field] unless it is there. */
static void add_path(lua_State *L, const char *field, const char *dir, const char *ext) {
  lua_getfield(L, -1, field);
  const char *path = lua_tostring(L, -1);
  lua_pushfstring(L, "%s/?.%s", dir, ext);
  if (!path || !strstr(path, lua_tostring(L, -1))) {
    lua_pushfstring(L, "%s;%s/?.%s", path ? path : "", dir, ext);
    lua_setfield(L, -4, field);
  }
  lua_pop(L, 2);
}

void host_add_libdir(lua_State *L, int use_env) {
  const char *cdir = host_cdir();
  if (cdir) {
    lua_getglobal(L, "package");
    if (lua_istable(L, -1)) add_path(L, "cpath", cdir, "so");
    lua_pop(L, 1);
  }
  const char *dir = host_libdir(use_env);
  if (!dir) return;
  lua_getglobal(L, "package");
  if (lua_istable(L, -1)) add_path(L, "path", dir, "lua");
  lua_pop(L, 1);
}
