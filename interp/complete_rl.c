/* SPDX-License-Identifier: MIT */
/*
** Tab at a readline prompt: the word is the identifier before the cursor
** ('.' and ':' break words, so `mp.ex` completes `ex` among mp's fields),
** and its completions come from a query answered by show.c's complete
** (complete.lua), here or on rank 0. Nothing is appended after a match: a
** name is as often followed by '.', ':' or '(' as by a space.
*/
#include <stdlib.h>
#include <string.h>

#include "complete_rl.h"

#ifdef MPLUA_READLINE
#include <stdio.h> /* readline.h needs FILE */
#include <readline/readline.h>

/* Process globals: readline's completion callbacks take no context. */
static complete_ask asker;
static char *answer;   /* the query's answer: start line, then one match per line */
static char *next;     /* the next match in it */

static char *generate(const char *text, int state) {
  (void)text;
  while (next != NULL && *next != '\0') {
    char *nl = strchr(next, '\n'), *m;
    size_t n = nl != NULL ? (size_t)(nl - next) : strlen(next);
    m = n > 0 ? malloc(n + 1) : NULL;
    if (m != NULL) {
      memcpy(m, next, n);
      m[n] = '\0';
    }
    next = nl != NULL ? nl + 1 : NULL;
    if (m != NULL)
      return m;
  }
  (void)state;
  return NULL;
}

static char **attempt(const char *text, int start, int end) {
  size_t qn = (size_t)end + 1, alen = 0;
  char *q = malloc(qn), **matches;
  (void)start;
  rl_attempted_completion_over = 1; /* never file names */
  rl_completion_append_character = '\0';
  if (q == NULL)
    return NULL;
  q[0] = 'c';
  memcpy(q + 1, rl_line_buffer, (size_t)end);
  free(answer);
  answer = asker(q, qn, &alen);
  free(q);
  if (answer == NULL)
    return NULL;
  next = strchr(answer, '\n'); /* past the start: readline found the same word */
  if (next != NULL)
    next++;
  matches = rl_completion_matches(text, generate);
  free(answer);
  answer = next = NULL;
  return matches;
}

void complete_rl_init(complete_ask ask) {
  asker = ask;
  rl_attempted_completion_function = attempt;
  rl_basic_word_break_characters = " \t\n\"\\'`@$><=;|&{}()[],+-*/%^~#.:";
  rl_completer_word_break_characters = rl_basic_word_break_characters;
}

#else

void complete_rl_init(complete_ask ask) { (void)ask; }

#endif
