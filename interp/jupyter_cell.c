/* SPDX-License-Identifier: MIT */
/*
** Rank 0 of a notebook's job: the prompt's loop with cells for lines
** (jupyter_proto.h). A cell is compiled as the prompt compiles a line
** (first as `return <cell>`, so an expression shows its value; chunk name
** In[n]), run through mplua_docall (a fault or an interrupt ends the cell
** only), and what it shows goes to the kernel as 'J' markers: its value's
** rich forms (show.h), mp.display's, or its error. If the cell ran tasks,
** every worker then writes a last line to stdout and stderr, so the kernel
** can tell when all of the cell's output has come.
*/
#define _GNU_SOURCE /* memrchr */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cjson/cJSON.h>

#include "lauxlib.h"
#include "host.h"
#include "mplua.h"
#include "show.h"
#include "jupyter.h"
#include "jupyter_proto.h"

/* The workers' last lines: rank 0 counts, through handin, who wrote them. */
static const char flush_lua[] =
    "local exec, line = ...\n"
    "return exec(function(l)\n"
    "  if mp.rank == 0 then return mp.handin(0), mp.handin(0) end\n"
    "  local o = io.stdout:flush() and io.stdout:write(l) and io.stdout:flush()\n"
    "  local e = io.stderr:flush() and io.stderr:write(l) and io.stderr:flush()\n"
    "  return mp.handin(o and 1 or 0), mp.handin(e and 1 or 0)\n"
    "end, line)\n";

static void send_json(cJSON *j) {
  char *text = cJSON_PrintUnformatted(j);
  if (text != NULL)
    link_mark('J', text, strlen(text));
  free(text);
  cJSON_Delete(j);
}

/* The forms table at idx as a JSON object of strings. */
static cJSON *forms_json(lua_State *L, int idx) {
  cJSON *d = cJSON_CreateObject();
  idx = lua_absindex(L, idx);
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    if (lua_type(L, -2) == LUA_TSTRING && lua_type(L, -1) == LUA_TSTRING)
      cJSON_AddStringToObject(d, lua_tostring(L, -2), lua_tostring(L, -1));
    lua_pop(L, 1);
  }
  return d;
}

/* mp.display's sink in a notebook: a display_data of the forms. */
static int display_sink(lua_State *L) {
  cJSON *j = cJSON_CreateObject();
  cJSON_AddStringToObject(j, "t", "display");
  cJSON_AddItemToObject(j, "data", forms_json(L, 1));
  send_json(j);
  return 0;
}

/* The cell's values: one shows its rich forms, several their text. */
static void send_result(lua_State *L, int n) {
  cJSON *j = cJSON_CreateObject();
  cJSON_AddStringToObject(j, "t", "result");
  if (n == 1 && show_forms(L, 1) == 0) {
    cJSON_AddItemToObject(j, "data", forms_json(L, -1));
    lua_pop(L, 1);
  }
  else {
    luaL_Buffer b;
    cJSON *d = cJSON_CreateObject();
    show_pretty_values(L, n);
    luaL_buffinit(L, &b);
    for (int i = 1; i <= n; i++) {
      if (i > 1)
        luaL_addchar(&b, '\t');
      luaL_tolstring(L, i, NULL);
      luaL_addvalue(&b);
    }
    luaL_pushresult(&b);
    cJSON_AddStringToObject(d, "text/plain", lua_tostring(L, -1));
    lua_pop(L, 1);
    cJSON_AddItemToObject(j, "data", d);
  }
  send_json(j);
}

/* The error on top: its kind, its first line and its report's lines. The
** report is the prompt's (through mplua_docall's message handler, which
** makes a task's error object its text); a task that failed shows in the
** runtime's count of aborts, and its report says why. */
static void send_error(lua_State *L, int status, int task) {
  cJSON *j = cJSON_CreateObject(), *tb = cJSON_CreateArray();
  const char *text = mplua_errmsg(L, -1), *nl, *p;
  const char *ename = status == LUA_ERRSYNTAX ? "SyntaxError" : task ? "TaskError" : "LuaError";
  if (strstr(text, "interrupted!") != NULL)
    ename = "Interrupted";
  else if (task && (strstr(text, "would wait forever") || strstr(text, "deadlock")))
    ename = "Deadlock";
  nl = strchr(text, '\n');
  cJSON_AddStringToObject(j, "t", "error");
  cJSON_AddStringToObject(j, "ename", ename);
  lua_pushlstring(L, text, nl != NULL ? (size_t)(nl - text) : strlen(text));
  cJSON_AddStringToObject(j, "evalue", lua_tostring(L, -1));
  lua_pop(L, 1);
  for (p = text; *p != '\0'; p = nl + 1) {
    nl = strchr(p, '\n');
    if (nl == NULL)
      nl = p + strlen(p);
    lua_pushlstring(L, p, (size_t)(nl - p));
    cJSON_AddItemToArray(tb, cJSON_CreateString(lua_tostring(L, -1)));
    lua_pop(L, 1);
    if (*nl == '\0')
      break;
  }
  cJSON_AddItemToObject(j, "traceback", tb);
  send_json(j);
}

/* mp.stats()[what]: tasks started or aborted so far (-1 when unknown). */
static lua_Integer stat(lua_State *L, const char *what) {
  lua_Integer n = -1;
  lua_getfield(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
  if (lua_getfield(L, -1, "mp") == LUA_TTABLE && lua_getfield(L, -1, "stats") == LUA_TFUNCTION) {
    if (lua_pcall(L, 0, 1, 0) == LUA_OK && lua_istable(L, -1)) {
      lua_getfield(L, -1, what);
      n = lua_tointeger(L, -1);
      lua_pop(L, 1);
    }
  }
  lua_pop(L, 3);
  return n;
}

/* Each worker's last line of the cell; how many wrote it to stdout, stderr. */
static void flush_workers(lua_State *L, const char *nonce, int out[2]) {
  int top = lua_gettop(L);
  out[0] = out[1] = 0;
  if (luaL_loadbufferx(L, flush_lua, sizeof flush_lua - 1, "=flush", "t") != LUA_OK) {
    lua_settop(L, top);
    return;
  }
  lua_getfield(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
  lua_getfield(L, -1, "mp");
  lua_getfield(L, -1, "exec");
  lua_replace(L, -3);
  lua_pop(L, 1);
  lua_pushfstring(L, JUP_END "%s\a\n", nonce);
  mplua_interrupt_clear();
  if (lua_pcall(L, 2, 2, 0) == LUA_OK) {
    out[0] = (int)lua_tointeger(L, -2);
    out[1] = (int)lua_tointeger(L, -1);
  }
  lua_settop(L, top);
}

/* Compile `text` with `return ` put at `at` (the whole text: as it is). */
static int load_with_return(lua_State *L, const char *code, size_t len, size_t at,
                            const char *name) {
  int status;
  lua_pushlstring(L, code, at);
  lua_pushstring(L, at < len ? "return " : "");
  lua_pushlstring(L, code + at, len - at);
  lua_pushstring(L, at < len ? ";" : "");
  lua_concat(L, 4);
  status = luaL_loadbufferx(L, lua_tostring(L, -1), lua_rawlen(L, -1), name, "t");
  lua_remove(L, -2);
  return status;
}

/* Compile as the prompt does, `return <code>` first; then, as a notebook's
** cells do, statements whose last line is an expression show its value;
** then the statements as they are. */
static int load_cell(lua_State *L, const char *code, size_t len, const char *name) {
  const char *last;
  size_t at, end = len;
  int status = load_with_return(L, code, len, 0, name);
  if (status == LUA_OK)
    return status;
  lua_pop(L, 1);
  while (end > 0 && (code[end - 1] == '\n' || code[end - 1] == ' ' || code[end - 1] == '\t'))
    end--;
  last = end > 0 ? memrchr(code, '\n', end) : NULL;
  at = last != NULL ? (size_t)(last - code) + 1 : 0;
  if (at > 0 && load_with_return(L, code, end, at, name) == LUA_OK)
    return LUA_OK;
  if (at > 0)
    lua_pop(L, 1);
  return load_with_return(L, code, len, len, name);
}

static void run_cell(lua_State *L, const cJSON *req) {
  const cJSON *c = cJSON_GetObjectItemCaseSensitive(req, "code");
  const cJSON *nc = cJSON_GetObjectItemCaseSensitive(req, "nonce");
  const char *code = cJSON_IsString(c) ? c->valuestring : "";
  const char *nonce = cJSON_IsString(nc) ? nc->valuestring : "";
  int silent = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(req, "silent"));
  int flushed[2] = {0, 0}, status;
  lua_Integer before = stat(L, "task"), aborts = stat(L, "aborts");
  char name[64];
  cJSON *done;
  snprintf(name, sizeof name, "=In[%d]",
           (int)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(req, "count")));
  lua_settop(L, 0);
  status = load_cell(L, code, strlen(code), name);
  if (status == LUA_OK) {
    mplua_interrupt_clear(); /* one pressed between cells belonged to none */
    status = mplua_target(L) ? mplua_remote(L) : mplua_docall(L, 0, LUA_MULTRET);
  }
  fflush(stdout);
  if (status != LUA_OK)
    send_error(L, status, stat(L, "aborts") != aborts);
  else if (lua_gettop(L) > 0 && !silent)
    send_result(L, lua_gettop(L));
  lua_settop(L, 0);
  if (mplua_size(L) > 1 && stat(L, "task") != before)
    flush_workers(L, nonce, flushed);
  done = cJSON_CreateObject();
  cJSON_AddStringToObject(done, "t", "done");
  cJSON_AddItemToObject(done, "flush", cJSON_CreateIntArray(flushed, 2));
  send_json(done);
}

int jupyter_leader(lua_State *L) {
  int one = 1;
  /* stdout is the link: a cell's markers are small writes in a row, which
  ** must not wait for each other's acks (Nagle's algorithm) */
  setsockopt(STDOUT_FILENO, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  mplua_set_interactive(L, 1); /* reports carry no program name */
  show_open(L, display_sink);
  link_on_query(show_serve_query, L);
  for (;;) {
    const char *p;
    size_t n;
    cJSON *req;
    int kind = link_ask(JUP_READY, &p, &n);
    if (kind == 'E')
      break;
    if (kind != 'L')
      continue;
    req = cJSON_ParseWithLength(p, n);
    if (req != NULL)
      run_cell(L, req);
    cJSON_Delete(req);
  }
  mplua_set_interactive(L, 0);
  return 0;
}
