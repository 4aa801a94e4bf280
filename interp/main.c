/* SPDX-License-Identifier: MIT */
/*
** mplua: the host executable.
**
** A thin client of the embedding API (mplua.h), shaped like Lua's own lua.c:
** the options are collected in plain C first, then every rank opens the
** state; workers idle in mplua_worker, and rank 0 runs the -j files, LUA_INIT,
** -e/-l and the script inside one protected call (so that even a memory error
** while building the `arg` table is reported rather than fatal), then the
** prompt, which protects itself. Every chunk goes through mplua_docall and
** every failure through mplua_report. Nothing here knows about MPI.
**
** With -n N the process is the front end instead (mplua_front): it opens no
** state and starts the job, whose rank 0 then attaches to it (mplua_attach).
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lua.h"
#include "lauxlib.h"
#include "lualib.h"
#include "host.h"
#include "mplua.h"
#ifdef MPLUA_JUPYTER
#include "jupyter.h"
#endif

/* argv[0] as given, for messages (as lua.c): the program's, one per process */
static const char *progname = "mplua";

/* Flags collected from the command line. */
enum {
  HAS_E_STAT = 1 << 0, /* -e */
  HAS_I = 1 << 1,      /* -i */
  HAS_V = 1 << 2,      /* -v */
  HAS_NOENV = 1 << 3,  /* -E */
  HAS_BATCH = 1 << 4,  /* -b */
  HAS_HELP = 1 << 5,   /* -h, --help */
  HAS_NOMPI = 1 << 6,  /* --nompi */
  HAS_W = 1 << 7,      /* -W */
  HAS_FRONT = 1 << 8,  /* -n N: the front end */
  HAS_JUPYTER = 1 << 9, /* --jupyter FILE: a notebook's kernel, or its job */
  HAS_LABELS = 1 << 10,  /* --labels */
  HAS_EXPLORE = 1 << 11  /* --explore N: the schedule explorer */
};

/* Why a command line is invalid. */
enum { ARGS_OK, ARGS_UNKNOWN, ARGS_NEEDARG, ARGS_BATCH_I, ARGS_BADN, ARGS_FRONT_NOMPI,
       ARGS_EXPLORE };

typedef struct Options {
  int flags;
  int nranks;      /* -n (after --explore: the explorer's ranks) */
  int seeds;       /* --explore */
  int script;      /* argv index of the script; argc when there is none */
  int error;       /* ARGS_* */
  const char *bad; /* the offending argument, for the message */
  const char *jupyter; /* --jupyter's connection file */
} Options;

/* Everything the protected main on rank 0 needs (passed as a light userdata
** because lua_pcall cannot carry C values). */
typedef struct Run {
  int argc;
  char **argv;
  Options opt;
} Run;

static const char usage_text[] =
    " [options] [script [args]]\n"
    "Available options are:\n"
    "  -e stat   execute string 'stat'\n"
    "  -i        enter interactive mode after executing 'script'\n"
    "  -l mod    require library 'mod' into global 'mod'\n"
    "  -l g=mod  require library 'mod' into global 'g'\n"
    "  -v        show version information\n"
    "  -E        ignore environment variables (LUA_INIT, LUA_PATH, ...)\n"
    "  -W        turn warnings on\n"
    "  -n N      start a job of N ranks and stay in front of it: line editing,\n"
    "            history, one ordered output, Ctrl-C interrupts (first option)\n"
    "  -j file   run 'file' on every rank as a parallel task, first of all\n"
    "  -b        batch mode: any error ends every rank with status 1;\n"
    "            never a prompt (stdin is the script if none is given)\n"
    "  --nompi   run without MPI (same as MPLUA_DISABLED=1)\n"
    "  --explore N [-n RANKS] script  run 'script' at RANKS ranks (3) under the\n"
    "            seeds 1..N of mp.mpi's scheduler; report the seeds whose outcome differs\n"
    "  --labels  start every line of output with its rank, \"[3] \", as mpiexec -l\n"
    "            (same as MPLUA_LABELS=1)\n"
    "  --jupyter FILE  be a Jupyter kernel for the connection FILE (with -n N)\n"
    "  --install-kernel [--user|--prefix DIR] [-n N] [--name NAME]  (first)\n"
    "            write the kernelspec that runs this program at N ranks\n"
    "  -h, --help  show this help and exit\n"
    "  --        stop handling options\n"
    "  -         stop handling options and execute stdin\n";


/*
** {==================================================================
** Option parsing: plain C, no Lua state, no MPI, so that every rank
** reaches the same verdict before anything is started.
** ===================================================================
*/

/* The argument of option argv[*i] (glued or next word); advances *i. */
static const char *optarg_of(char **argv, int *i) {
  if (argv[*i][2] != '\0')
    return argv[*i] + 2;
  return argv[++*i];
}

static int fail(Options *o, int why, const char *arg) {
  o->error = why;
  o->bad = arg;
  return 0;
}

/* Options taking an argument accept it glued ("-efoo") or as the next word;
** like lua, the next word may not look like an option. */
static int needs_arg(Options *o, int argc, char **argv, int *i) {
  if (argv[*i][2] != '\0')
    return 1;
  if (*i + 1 >= argc || argv[*i + 1] == NULL || argv[*i + 1][0] == '-')
    return fail(o, ARGS_NEEDARG, argv[*i]);
  (*i)++;
  return 1;
}

/* Fill `o` from argv; returns 0 (with o->error set) on an invalid line.
** Stops at the first non-option, which is the script. */
static int collectargs(int argc, char **argv, Options *o) {
  int i;
  memset(o, 0, sizeof *o);
  o->script = argc;
  for (i = 1; i < argc && argv[i] != NULL; i++) {
    const char *a = argv[i];
    if (a[0] != '-')
      break; /* the script */
    if (a[1] == '\0')
      break; /* "-": stdin is the script */
    switch (a[1]) {
    case '-':
      if (a[2] == '\0') { /* "--": the script, if any, is next */
        o->script = i + 1;
        goto done;
      }
      if (strcmp(a, "--help") == 0)
        o->flags |= HAS_HELP;
      else if (strcmp(a, "--nompi") == 0)
        o->flags |= HAS_NOMPI;
      else if (strcmp(a, "--jupyter") == 0) {
        if (i + 1 >= argc || argv[i + 1] == NULL)
          return fail(o, ARGS_NEEDARG, a);
        o->jupyter = argv[++i];
        o->flags |= HAS_JUPYTER;
      }
      else if (strcmp(a, "--labels") == 0)
        o->flags |= HAS_LABELS;
      else if (strcmp(a, "--explore") == 0) {
        char *end;
        long n = i + 1 < argc && argv[i + 1] ? strtol(argv[i + 1], &end, 10) : 0;
        if (n < 1 || n > 1000000 || *end != '\0')
          return fail(o, ARGS_EXPLORE, a);
        o->seeds = (int)n;
        o->nranks = 3;
        o->flags |= HAS_EXPLORE;
        i++;
      }
      else
        return fail(o, ARGS_UNKNOWN, a);
      break;
    case 'E': case 'i': case 'v': case 'b': case 'h': case 'W':
      if (a[2] != '\0')
        return fail(o, ARGS_UNKNOWN, a);
      o->flags |= a[1] == 'E' ? HAS_NOENV
                : a[1] == 'i' ? HAS_I | HAS_V /* -i implies -v, as in lua */
                : a[1] == 'v' ? HAS_V
                : a[1] == 'b' ? HAS_BATCH
                : a[1] == 'W' ? HAS_W
                : HAS_HELP;
      break;
    case 'n': { /* only first, so that the ranks' command line is the rest */
      char *end;
      long n;
      if (i != 1 && !(o->flags & HAS_EXPLORE))
        return fail(o, ARGS_BADN, a);
      if (!needs_arg(o, argc, argv, &i))
        return 0;
      n = strtol(a[2] != '\0' ? a + 2 : argv[i], &end, 10);
      if (*end != '\0' || n < 1 || n > 1000000)
        return fail(o, ARGS_BADN, a);
      o->nranks = (int)n;
      if (!(o->flags & HAS_EXPLORE)) /* after --explore: the explorer's ranks */
        o->flags |= HAS_FRONT;
      break;
    }
    case 'e':
      o->flags |= HAS_E_STAT;
      /* FALLTHROUGH */
    case 'l': case 'j':
      if (!needs_arg(o, argc, argv, &i))
        return 0;
      break;
    default:
      return fail(o, ARGS_UNKNOWN, a);
    }
  }
  o->script = i;
done:
  if (o->script > argc)
    o->script = argc;
  if ((o->flags & HAS_BATCH) && (o->flags & HAS_I))
    return fail(o, ARGS_BATCH_I, "-i");
  if ((o->flags & HAS_FRONT) && (o->flags & HAS_NOMPI))
    return fail(o, ARGS_FRONT_NOMPI, "-n");
  if ((o->flags & HAS_EXPLORE) && (o->script >= argc || (o->flags & HAS_FRONT)))
    return fail(o, ARGS_EXPLORE, "--explore");
  return 1;
}

/* MPLUA_DISABLED=1 (any value but empty or "0") means --nompi. */
static int mpi_disabled(const Options *o) {
  const char *d = getenv("MPLUA_DISABLED");
  if (o->flags & (HAS_NOMPI | HAS_EXPLORE)) /* the explorer starts its own jobs */
    return 1;
  return d != NULL && d[0] != '\0' && strcmp(d, "0") != 0;
}

/* }================================================================== */


/*
** {==================================================================
** -E: the package library reads LUA_PATH/LUA_CPATH when mplua_open
** loads it, before we could set the registry's LUA_NOENV flag, so the
** variables are hidden from the process environment while the state is
** opened and put back afterwards (os.getenv still sees them, as in lua).
** ===================================================================
*/

#define LUA_VERSUFFIX "_" LUA_VERSION_MAJOR "_" LUA_VERSION_MINOR

static const char *const path_vars[] = {
    "LUA_PATH" LUA_VERSUFFIX, "LUA_PATH",
    "LUA_CPATH" LUA_VERSUFFIX, "LUA_CPATH"};
#define NPATHVARS (sizeof path_vars / sizeof path_vars[0])

static void hide_path_vars(char *saved[NPATHVARS]) {
  size_t k;
  for (k = 0; k < NPATHVARS; k++) {
    const char *v = getenv(path_vars[k]);
    saved[k] = v != NULL ? strdup(v) : NULL;
    if (saved[k] != NULL) /* (never hide what could not be put back) */
      unsetenv(path_vars[k]);
  }
}

static void restore_path_vars(char *saved[NPATHVARS]) {
  size_t k;
  for (k = 0; k < NPATHVARS; k++) {
    if (saved[k] != NULL)
      setenv(path_vars[k], saved[k], 1);
    free(saved[k]);
  }
}

/* }================================================================== */


/*
** {==================================================================
** Rank 0: running the command line (everything below runs inside
** the protected call `pmain`)
** ===================================================================
*/

static void print_usage(FILE *f) {
  fprintf(f, "usage: %s%s", progname, usage_text);
  fflush(f);
}

static void print_version(void) {
  fputs(MPLUA_VERSION "  " LUA_COPYRIGHT "\n", stdout);
  fflush(stdout);
}

/* Report a failed status (load or run); returns it. */
static int report(lua_State *L, int status) {
  if (status != LUA_OK)
    mplua_report(L, status);
  return status;
}

/* Run the chunk just loaded with `status`, discarding its results. */
static int dochunk(lua_State *L, int status) {
  if (status == LUA_OK)
    status = mplua_docall(L, 0, 0);
  return report(L, status);
}

static int dofile(lua_State *L, const char *name) {
  return dochunk(L, luaL_loadfile(L, name));
}

static int dostring(lua_State *L, const char *s, const char *name) {
  return dochunk(L, luaL_loadbuffer(L, s, strlen(s), name));
}

/* -l: `mod` sets global mod = require("mod"); `g=mod` sets g instead. */
static int dolibrary(lua_State *L, const char *spec) {
  const char *eq = strchr(spec, '=');
  const char *modname = eq != NULL ? eq + 1 : spec;
  size_t globlen = eq != NULL ? (size_t)(eq - spec) : strlen(spec);
  int status;
  lua_getglobal(L, "require");
  lua_pushstring(L, modname);
  status = mplua_docall(L, 1, 1);
  if (status == LUA_OK) {
    lua_pushlstring(L, spec, globlen);
    lua_insert(L, -2);
    lua_setglobal(L, lua_tostring(L, -2));
    lua_pop(L, 1); /* the name */
  }
  return report(L, status);
}

/* The global `arg`: arg[0] is the script, arg[1..] its arguments, negative
** indices the interpreter and the options. With no script, arg[0] is the
** program name and all options are positive, as in lua. */
static void createargtable(lua_State *L, char **argv, int argc, int script) {
  int i;
  if (script == argc)
    script = 0;
  lua_createtable(L, argc - (script + 1) > 0 ? argc - (script + 1) : 0,
                  script + 1);
  for (i = 0; i < argc; i++) {
    lua_pushstring(L, argv[i]);
    lua_rawseti(L, -2, i - script);
  }
  lua_setglobal(L, "arg");
}

/* Push arg[1..n] (read back from the global, which LUA_INIT may have
** changed) as the script's `...`; returns n. */
static int pushargs(lua_State *L) {
  int i, n;
  if (lua_getglobal(L, "arg") != LUA_TTABLE)
    luaL_error(L, "'arg' is not a table");
  n = (int)luaL_len(L, -1);
  luaL_checkstack(L, n + 3, "too many arguments to script");
  for (i = 1; i <= n; i++)
    lua_rawgeti(L, -i, i);
  lua_remove(L, -i); /* the table */
  return n;
}

static int handle_script(lua_State *L, char **argv, int script) {
  const char *fname = argv[script];
  int status;
  /* "-" is stdin, unless it follows "--" (then it is a file named "-") */
  if (strcmp(fname, "-") == 0 && strcmp(argv[script - 1], "--") != 0)
    fname = NULL;
  status = luaL_loadfile(L, fname);
  if (status == LUA_OK)
    status = mplua_docall(L, pushargs(L), 0);
  return report(L, status);
}

/* LUA_INIT_5_4, else LUA_INIT: "@file" runs the file, anything else is a
** chunk. */
static int handle_luainit(lua_State *L) {
  const char *name = "=LUA_INIT" LUA_VERSUFFIX;
  const char *init = getenv(name + 1);
  if (init == NULL) {
    name = "=LUA_INIT";
    init = getenv(name + 1);
  }
  if (init == NULL)
    return LUA_OK;
  if (init[0] == '@')
    return dofile(L, init + 1);
  return dostring(L, init, name);
}

/* -j files, on every rank, in order; they come before anything else. */
static int run_jobs(lua_State *L, char **argv, int script) {
  int i;
  for (i = 1; i < script; i++) {
    if (argv[i][0] == '-' && argv[i][1] == 'j') {
      if (mplua_run_all(L, optarg_of(argv, &i)) != 0)
        return 0;
    }
    else if (argv[i][0] == '-' && (argv[i][1] == 'e' || argv[i][1] == 'l'))
      (void)optarg_of(argv, &i); /* skip the argument: it may be "-j" */
  }
  return 1;
}

/* -e, -l and -W, in the order given. */
static int runargs(lua_State *L, char **argv, int script) {
  int i;
  for (i = 1; i < script; i++) {
    int opt = argv[i][0] == '-' ? argv[i][1] : 0;
    if (opt == 'W')
      lua_warning(L, "@on", 0); /* warnings on, from here */
    else if (opt == 'e' || opt == 'l' || opt == 'j') {
      const char *extra = optarg_of(argv, &i);
      int status = opt == 'e' ? dostring(L, extra, "=(command line)")
                 : opt == 'l' ? dolibrary(L, extra)
                 : LUA_OK; /* -j already ran */
      if (status != LUA_OK)
        return 0;
    }
  }
  return 1;
}

/* Everything a valid command line asks for, up to the prompt (exclusive). */
static int run_line(lua_State *L, Run *r, int *repl) {
  char **argv = r->argv;
  int script = r->opt.script, flags = r->opt.flags;
  if (flags & HAS_V)
    print_version();
  if (flags & HAS_NOENV) { /* for any later user of the package library */
    lua_pushboolean(L, 1);
    lua_setfield(L, LUA_REGISTRYINDEX, "LUA_NOENV");
  }
  if (flags & HAS_EXPLORE)
    return mplua_explore(L, argv[0], r->opt.seeds, r->opt.nranks, argv + script,
                         r->argc - script);
  createargtable(L, argv, r->argc, script);
  if (!run_jobs(L, argv, script)
      || (!(flags & HAS_NOENV) && handle_luainit(L) != LUA_OK)
      || !runargs(L, argv, script)
      || (script < r->argc && handle_script(L, argv, script) != LUA_OK))
    return 1;
  if (flags & HAS_I)
    *repl = 1;
  else if (script == r->argc && !(flags & (HAS_E_STAT | HAS_V))) {
    if (flags & HAS_BATCH) /* batch mode: stdin is the script */
      return dofile(L, NULL) != LUA_OK;
    if (mplua_stdin_tty())
      print_version();
    *repl = 1;
  }
  return 0;
}

/* The protected main of rank 0. Returns the exit status as an integer and
** whether the prompt comes next: the prompt runs after it, outside this
** call, so that tracebacks at the prompt show only the prompt's own frame. */
static int pmain(lua_State *L) {
  Run *r = (Run *)lua_touserdata(L, 1);
  int status = 0, repl = 0;
  lua_settop(L, 0);
  luaL_checkversion(L); /* the headers match the library */
  if (r->opt.error != ARGS_OK) {
    if (r->opt.error == ARGS_NEEDARG)
      fprintf(stderr, "%s: '%s' needs argument\n", progname, r->opt.bad);
    else if (r->opt.error == ARGS_BATCH_I)
      fprintf(stderr, "%s: '-i' cannot be used with '-b' "
                      "(batch mode never prompts)\n", progname);
    else if (r->opt.error == ARGS_BADN)
      fprintf(stderr, "%s: '-n' needs a number of ranks (1 or more) "
                      "and must be the first option\n", progname);
    else if (r->opt.error == ARGS_EXPLORE)
      fprintf(stderr, "%s: '--explore' needs a number of seeds (1 or more), then "
                      "[-n RANKS] and a script\n", progname);
    else if (r->opt.error == ARGS_FRONT_NOMPI)
      fprintf(stderr, "%s: '-n' cannot be used with '--nompi'\n", progname);
    else
      fprintf(stderr, "%s: unrecognized option '%s'\n", progname, r->opt.bad);
    print_usage(stderr);
    status = 1;
  }
  else if (r->opt.flags & HAS_HELP)
    print_usage(stdout);
  else
    status = run_line(L, r, &repl);
  lua_pushinteger(L, status);
  lua_pushboolean(L, repl);
  return 2;
}

static int leader(lua_State *L, Run *r) {
  int status, repl;
  lua_pushcfunction(L, pmain);
  lua_pushlightuserdata(L, r);
  status = lua_pcall(L, 1, 2, 0);
  if (status != LUA_OK) { /* only errors outside any chunk get here */
    mplua_report(L, status);
    return 1;
  }
  repl = lua_toboolean(L, -1);
  status = (int)lua_tointeger(L, -2);
  lua_pop(L, 2);
#ifdef MPLUA_JUPYTER
  if (r->opt.flags & HAS_JUPYTER) /* a notebook's cells instead of the prompt */
    return status != 0 ? status : jupyter_leader(L);
#endif
  return repl ? mplua_repl(L) : status;
}

/* --jupyter FILE without a job around it: be the kernel, in front of a job
** of -n N ranks (1 without -n). */
static int kernel(Options *o, int argc, char **argv) {
#ifdef MPLUA_JUPYTER
  char **v;
  int status;
  if (o->flags & HAS_FRONT)
    return mplua_jupyter(o->nranks, argc, argv, o->jupyter);
  if ((v = calloc((size_t)argc + 2, sizeof *v)) == NULL)
    return EXIT_FAILURE;
  v[0] = argv[0];
  v[1] = "-n1"; /* the front end passes on what follows -n */
  for (int i = 1; i < argc; i++)
    v[i + 1] = argv[i];
  status = mplua_jupyter(1, argc + 1, v, o->jupyter);
  free(v);
  return status;
#else
  (void)o, (void)argc;
  fprintf(stderr, "%s: this mplua was built without Jupyter (ZeroMQ, cJSON and "
                  "OpenSSL's libcrypto were not found)\n", argv[0]);
  return EXIT_FAILURE;
#endif
}

/* }================================================================== */


int main(int argc, char **argv) {
  Run r;
  char *saved[NPATHVARS];
  lua_State *L;
  int status;
  host_restore_hangup(); /* a closed terminal ends mplua, as it ends lua */
  /* Parse before mplua_open: it decides whether MPI starts at all. An
  ** invalid line still opens the state, so that under mpiexec every rank
  ** starts and finalizes MPI and rank 0 alone prints the usage. */
  if (argc > 1 && argv[1] != NULL && strcmp(argv[1], "--install-kernel") == 0) {
#ifdef MPLUA_JUPYTER
    return jupyter_install(argc, argv);
#else
    return kernel(&r.opt, argc, argv); /* says why not */
#endif
  }
  collectargs(argc, argv, &r.opt);
  if ((r.opt.flags & HAS_JUPYTER) && r.opt.error == ARGS_OK && getenv("MPLUA_FRONT") == NULL)
    return kernel(&r.opt, argc, argv); /* starts the job below, serves the notebook */
  if ((r.opt.flags & HAS_FRONT) && r.opt.error == ARGS_OK)
    return mplua_front(r.opt.nranks, argc, argv); /* starts the job below */
  if (r.opt.flags & HAS_JUPYTER) /* a notebook's job: the kernel labels the lines */
    unsetenv("MPLUA_LABELS");
  else if ((r.opt.flags & HAS_LABELS) && r.opt.error == ARGS_OK)
    setenv("MPLUA_LABELS", "1", 1); /* read where stdout is set up (mplua_open) */
  if (r.opt.flags & HAS_NOENV)
    hide_path_vars(saved);
  L = mplua_open(&argc, &argv, !mpi_disabled(&r.opt));
  if (r.opt.flags & HAS_NOENV)
    restore_path_vars(saved);
  if (L == NULL)
    return EXIT_FAILURE; /* mplua_open has said why */
  /* MPI_Init may have removed its own arguments: parse the final argv (the
  ** verdict is the same on every rank, since they all get the same line) */
  collectargs(argc, argv, &r.opt);
  if (argv[0] != NULL && argv[0][0] != '\0')
    progname = argv[0];
  r.argc = argc;
  r.argv = argv;
  if (r.opt.flags & HAS_BATCH)
    mplua_set_batch(L, 1);
  if (mplua_attach(L) < 0) /* rank 0 of a job whose front end is gone */
    status = EXIT_FAILURE;
  else if (mplua_rank(L) != 0) {
    if (r.opt.flags & HAS_W) /* rank 0 turns them on in the order of -e/-l */
      lua_warning(L, "@on", 0);
#ifdef MPLUA_JUPYTER
    if (r.opt.flags & HAS_JUPYTER) /* the notebook shows whose lines they are */
      jupyter_label_output(L, mplua_rank(L));
#endif
    status = mplua_worker(L);
  }
  else
    status = leader(L, &r);
  return mplua_close(L, status);
}
