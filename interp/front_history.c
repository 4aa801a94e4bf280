/* SPDX-License-Identifier: MIT */
/*
** The front end's history (terminal only): MPLUA_HISTORY, default
** ~/.mplua_history (empty: none). Each complete chunk is appended as soon as
** it is run, so concurrent sessions and crashes lose nothing, as Julia's
** REPL does; its format is Julia's too: a "# time: ..." line, then the
** chunk's lines, each after a tab, so multi-line chunks come back whole.
*/
#define _GNU_SOURCE /* mkostemp */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "front.h"
#include "front_proto.h"

#ifdef MPLUA_READLINE
#include <readline/history.h>
#include <readline/readline.h>
#endif

#define HISTORY_KEEP 1000 /* entries kept; the file is cut back at twice that */

/* A process global: the front end process's one history file, or NULL. */
static char *path;

#ifdef MPLUA_READLINE

/* Rewrite the history file with the entries in memory: a temporary file
** made beside it (mkstemp: a fresh name, created by us, never a link
** someone planted), given the file's mode, then renamed over it. */
static void history_rewrite(mode_t mode) {
  size_t tl = strlen(path) + sizeof ".XXXXXX";
  char *tmp = malloc(tl);
  HIST_ENTRY **h = history_list();
  FILE *f = NULL;
  int fd = -1;
  if (tmp == NULL || h == NULL) {
    free(tmp);
    return;
  }
  snprintf(tmp, tl, "%s.XXXXXX", path);
  if ((fd = mkostemp(tmp, O_CLOEXEC)) < 0 || fchmod(fd, mode & 0777) != 0 ||
      (f = fdopen(fd, "w")) == NULL) {
    if (fd >= 0) {
      close(fd);
      unlink(tmp);
    }
    free(tmp);
    return;
  }
  for (int i = 0; h[i] != NULL; i++) {
    fputs("# time: 0\n\t", f);
    for (const char *c = h[i]->line; *c; c++) {
      if (*c == '\n')
        fputs("\n\t", f);
      else
        fputc(*c, f);
    }
    fputc('\n', f);
  }
  if (fclose(f) != 0 || rename(tmp, path) != 0)
    unlink(tmp);
  free(tmp);
}

/* Load the file's last HISTORY_KEEP entries; rewrite it if it has grown
** past twice that. */
static void history_load(void) {
  FILE *f = fopen(path, "r");
  char *line = NULL, *entry = NULL;
  size_t cap = 0, elen = 0;
  ssize_t n;
  int count = 0;
  struct stat sb;
  if (f == NULL)
    return;
  while ((n = getline(&line, &cap, f)) >= 0 || entry != NULL) {
    if (n < 0 || line[0] == '#') { /* an entry ends */
      if (entry != NULL) {
        add_history(entry);
        count++;
        free(entry);
        entry = NULL;
        elen = 0;
      }
      if (n < 0)
        break;
    }
    else if (line[0] == '\t') {
      size_t k = (size_t)n - 1 - (line[n - 1] == '\n');
      char *e = realloc(entry, elen + k + 2);
      if (e == NULL)
        continue;
      entry = e;
      if (elen > 0)
        entry[elen++] = '\n';
      memcpy(entry + elen, line + 1, k);
      elen += k;
      entry[elen] = '\0';
    }
  }
  free(line);
  if (count > 2 * HISTORY_KEEP && fstat(fileno(f), &sb) == 0) /* keep the last ones */
    history_rewrite(sb.st_mode);
  fclose(f);
}

void history_start(void) {
  const char *h = getenv("MPLUA_HISTORY"), *home = getenv("HOME");
  using_history();
  stifle_history(HISTORY_KEEP);
  if (h == NULL && home != NULL && home[0] != '\0') {
    size_t n = strlen(home) + sizeof "/.mplua_history";
    if ((path = malloc(n)) != NULL)
      snprintf(path, n, "%s/.mplua_history", home);
  }
  else if (h != NULL && h[0] != '\0')
    path = strdup(h);
  if (path != NULL)
    history_load();
}

#endif

void history_end(void) {
  free(path);
  path = NULL;
#ifdef MPLUA_READLINE
  if (fe.tty)
    clear_history();
#endif
}

void tty_history(const char *p, size_t n) {
#ifdef MPLUA_READLINE
  char *entry, *rec;
  size_t i, k = 0;
  if (!fe.tty || n == 0 || (entry = malloc(n + 1)) == NULL)
    return;
  memcpy(entry, p, n);
  entry[n] = '\0';
  add_history(entry);
  free(entry);
  if (path == NULL || (rec = malloc(2 * n + 64)) == NULL)
    return;
  k = (size_t)snprintf(rec, 64, "# time: %lld\n\t", (long long)time(NULL));
  for (i = 0; i < n; i++) {
    rec[k++] = p[i];
    if (p[i] == '\n')
      rec[k++] = '\t';
  }
  rec[k++] = '\n';
  int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
  if (fd >= 0) { /* one write: sessions appending together do not mix entries */
    (void)proto_write(fd, rec, k);
    close(fd);
  }
  free(rec);
#else
  (void)p, (void)n;
#endif
}
