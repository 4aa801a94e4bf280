# SPDX-License-Identifier: MIT
# Driving mplua in a real terminal: a tmux server of the test's own (its
# own socket), one window running the command, keys typed with send-keys and
# the screen read with capture-pane. Each step waits for what it expects to
# see with a bounded poll (the bound is a guard, never the synchronization).
# Sourced after common.bash. Not a test itself.
command -v tmux >/dev/null || { echo "FAIL ($N): tmux is not installed" >&2; exit 1; }
tsock="$tmp/tmux.sock"
trap 'tmux -S "$tsock" kill-server 2>/dev/null || true; rm -rf "$tmp"' EXIT

# term_start CMD: run CMD (a shell command line) in a fresh 200x50 terminal;
# when it ends, "EXIT <status>" is shown. The pane's shell catches SIGINT (a
# handler, so CMD still gets the default): a user's interactive shell puts
# CMD in a process group of its own, but the pane's `sh -c` shares CMD's, and
# dash, unlike bash, dies of the Ctrl-C meant for CMD.
term_sessions=0
term_start() {
  # a server of its own per session: kill-server returns before the old
  # server is gone, and a client that reaches it then fails ("server exited
  # unexpectedly")
  tmux -S "$tsock" kill-server 2>/dev/null || true
  term_sessions=$((term_sessions + 1))
  tsock="$tmp/tmux.$term_sessions.sock"
  tmux -S "$tsock" -f /dev/null new-session -d -x 200 -y 50 \
    "trap : INT; $1; echo \"EXIT \$?\"; exec cat >/dev/null"
  tmux -S "$tsock" set-option -g history-limit 10000 >/dev/null
}

# screen: what the terminal shows, with its scrollback, wrapped lines joined,
# no trailing blanks
screen() { tmux -S "$tsock" capture-pane -p -J -S - -t 0 | sed "s/[[:space:]]*\$//"; }

keys() { tmux -S "$tsock" send-keys -t 0 "$@"; }
# type TEXT: the characters of TEXT, literally
type_text() { tmux -S "$tsock" send-keys -t 0 -l -- "$1"; }

term_fail() {
  echo "FAIL ($N): $*" >&2
  echo "--- screen:" >&2
  screen >&2
  exit 1
}

# wait_screen DESC CMD...: until CMD (given the screen on stdin) succeeds;
# 120 s at most
wait_screen() {
  local desc=$1 end=$((SECONDS + 120))
  shift
  until screen | "$@"; do
    [ "$SECONDS" -lt "$end" ] || term_fail "timed out waiting for $desc"
    sleep 0.1
  done
}

# count TEXT: how many screen lines contain TEXT (fixed string)
count() { screen | grep -cF -- "$1" || true; }

# wait_count DESC TEXT N: until N lines show TEXT
wait_count() {
  local end=$((SECONDS + 120))
  until [ "$(count "$2")" -ge "$3" ]; do
    [ "$SECONDS" -lt "$end" ] || term_fail "timed out waiting for $1"
    sleep 0.1
  done
}

# last_line: the last non-empty line of the screen
last_line() { screen | sed '/^[[:space:]]*$/d' | tail -n 1; }

# wait_last DESC TEXT: until the last non-empty line is TEXT
wait_last() {
  local end=$((SECONDS + 120))
  until [ "$(last_line)" = "$2" ]; do
    [ "$SECONDS" -lt "$end" ] || term_fail "timed out waiting for $1"
    sleep 0.1
  done
}

# wait_prompt DESC: until the last line is an empty first-line prompt
wait_prompt() { wait_last "the prompt ($1)" ">"; }

# term_front: the front end running in the terminal, once it catches SIGINT
# (a Ctrl-C before that ends it, as it ends any program that has not started
# yet). It is the child of the pane's shell: never the front end of another
# session running side by side with the same command line.
term_front() {
  local sh p
  sh=$(tmux -S "$tsock" display-message -p -t 0 '#{pane_pid}') || return 1
  for p in $(pgrep -P "$sh" || true); do
    [ $((0x$(awk '/^SigCgt:/ {print $2}' "/proc/$p/status" 2>/dev/null || echo 0) & 2)) != 0 ] &&
      echo "$p" && return 0
  done
  return 1
}

# wait_front: until term_front finds it; prints its pid
wait_front() {
  local end=$((SECONDS + 120))
  until term_front; do
    [ "$SECONDS" -lt "$end" ] || term_fail "the front end never started"
    sleep 0.01
  done
}

# term_rank0 FRONT: rank 0 of the job under the front end FRONT
term_rank0() {
  local todo p
  todo=$(pgrep -P "$1" || true)
  while [ -n "$todo" ]; do
    set -- $todo
    todo=
    for p; do
      tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx 'PMI_RANK=0' && echo "$p" && return 0
      todo="$todo $(pgrep -P "$p" || true)"
    done
  done
  return 1
}

# term_stop PID: stop PID (SIGSTOP) and wait until it is stopped
term_stop() {
  local end=$((SECONDS + 120))
  kill -STOP "$1"
  until [ "$(awk '{print $3}' "/proc/$1/stat")" = T ]; do
    [ "$SECONDS" -lt "$end" ] || term_fail "process $1 did not stop"
    sleep 0.01
  done
}

# wait_idle PID: until PID sleeps in poll (a front end with nothing to do)
wait_idle() {
  local end=$((SECONDS + 120))
  until [ "$(awk '{print $3}' "/proc/$1/stat")" = S ] && grep -q poll "/proc/$1/wchan"; do
    [ "$SECONDS" -lt "$end" ] || term_fail "process $1 never went idle"
    sleep 0.01
  done
}
